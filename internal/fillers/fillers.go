// Package fillers supplies the unrelated everyday passages that pad a
// conversation between the turns that matter.
//
// A conversation only shows whether an agent keeps following its
// instructions if enough ordinary material has pushed those instructions
// far back in the context. Fillers are that material: long, self-contained
// prose on everyday topics (refrigerators, train trips, tides, compost...),
// each written as a user sharing notes in a chat and ending with a natural
// request that can be answered from the passage alone. Because the agent
// must not realise it is being watched, the passages, their titles and
// their file names deliberately avoid any vocabulary that would give the
// purpose of the conversation away.
//
// Passages come from two places: a built-in corpus embedded in the binary
// (Builtin) and an author's own directory of passages (LoadDir). Pick then
// draws a reproducible selection from either pool, keyed by a seed the
// caller records so a run can be replayed exactly.
//
// Work is the other kind of filler: ordinary coding chores (tail a log,
// grep a source tree, sort a CSV) that fill the context with a tool call
// and its output, as real sessions do, instead of with prose. A chore is a
// Passage whose Text is the request and whose Files must be written into
// the sandbox, under WorkDir, before it is asked. PickCycle draws from
// either pool for conversations whose number of fillers is open-ended.
package fillers

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/vibe-test/vibe-test/internal/readfile"
)

// MaxFileSize bounds one filler file: a passage is a page of prose.
const MaxFileSize = 256 << 10

// Passage is one filler passage.
type Passage struct {
	// ID is the file name without its extension. Passages loaded with
	// LoadDir carry a "custom-" prefix so they never collide with built-ins
	// when both pools are merged.
	ID string
	// Title comes from the "# Title" first line; for custom files without
	// one it falls back to the ID.
	Title string
	// Text is the passage body without the title line, trimmed of
	// surrounding whitespace. This is what gets sent as a user turn.
	Text string
	// Files are written into the sandbox before the turn is asked: path
	// relative to the sandbox root (slash-separated) to content. Passages
	// have none; a work chore (Work) brings the files its command reads.
	Files map[string]string
	// Output is about how many characters a work chore's command prints:
	// what its turn adds to the context (its files may hold more). 0 for
	// passages.
	Output int
}

// customPrefix keeps author-supplied IDs out of the built-in namespace.
const customPrefix = "custom-"

//go:embed corpus/*.md
var corpusFS embed.FS

// builtin parses the embedded corpus once. The corpus is compiled in and
// covered by the package's tests, so a malformed file is a programming
// error and panicking at first use is the honest response.
var builtin = sync.OnceValue(func() []Passage {
	entries, err := fs.ReadDir(corpusFS, "corpus")
	if err != nil {
		panic("fillers: reading embedded corpus: " + err.Error())
	}
	var out []Passage
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".md" {
			continue
		}
		name := path.Join("corpus", e.Name())
		data, err := corpusFS.ReadFile(name)
		if err != nil {
			panic("fillers: reading embedded " + name + ": " + err.Error())
		}
		p, err := parse(strings.TrimSuffix(e.Name(), ".md"), string(data), true)
		if err != nil {
			panic(fmt.Sprintf("fillers: embedded %s: %v", name, err))
		}
		out = append(out, p)
	}
	sortByID(out)
	return out
})

// Builtin returns the embedded corpus sorted by ID. Each call returns a
// fresh slice so callers may reorder or trim it without affecting others.
func Builtin() []Passage {
	return slices.Clone(builtin())
}

// LoadDir reads the author's own fillers: every *.md or *.txt file directly
// inside dir (subdirectories are ignored so a stray notes folder cannot leak
// in). The format is the same as the built-in corpus, except that the
// "# Title" line is optional. IDs get the "custom-" prefix. Results are
// sorted by ID so the pool, and therefore Pick, is stable across runs.
//
// Every error is a single line naming the offending path and what was
// expected, because it is shown directly to the author.
func LoadDir(dir string) ([]Passage, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("fillers: %s: cannot read directory of passages: %v", dir, unwrapPath(err))
	}
	var out []Passage
	seen := map[string]string{} // ID -> file that produced it
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if ext != ".md" && ext != ".txt" {
			continue
		}
		file := filepath.Join(dir, e.Name())
		info, err := os.Stat(file) // follows symlinks, unlike DirEntry.Type
		if err != nil {
			return nil, fmt.Errorf("fillers: %s: cannot read file: %v", file, unwrapPath(err))
		}
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := readfile.Regular(file, MaxFileSize)
		if err != nil {
			return nil, fmt.Errorf("fillers: %v", err)
		}
		id := customPrefix + strings.TrimSuffix(e.Name(), filepath.Ext(e.Name()))
		p, err := parse(id, string(data), false)
		if err != nil {
			return nil, fmt.Errorf("fillers: %s: %v", file, err)
		}
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("fillers: %s: id %q already used by %s; expected unique file names ignoring extension", file, id, prev)
		}
		seen[id] = file
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("fillers: %s: no .md or .txt files", dir)
	}
	sortByID(out)
	return out, nil
}

// Pick returns n distinct passages from pool, chosen pseudo-randomly but
// deterministically for a given (pool, n, seed): the caller records the seed
// so a conversation can be rebuilt with the same fillers. The result depends
// on the order of pool, which is why Builtin and LoadDir both sort by ID.
// "Distinct" means distinct positions in pool; duplicate entries in pool are
// the caller's business.
func Pick(pool []Passage, n int, seed int64) ([]Passage, error) {
	if n < 0 {
		return nil, fmt.Errorf("fillers: cannot pick %d passages; expected n >= 0", n)
	}
	if n > len(pool) {
		return nil, fmt.Errorf("fillers: cannot pick %d distinct passages from a pool of %d", n, len(pool))
	}
	// A fixed second PCG word keeps the stream a pure function of seed.
	// Partial Fisher-Yates over indices: O(n) draws and no repeats, without
	// touching the caller's slice.
	r := rand.New(rand.NewPCG(uint64(seed), pcgStream))
	idx := make([]int, len(pool))
	for i := range idx {
		idx[i] = i
	}
	out := make([]Passage, n)
	for i := range n {
		j := i + r.IntN(len(idx)-i)
		idx[i], idx[j] = idx[j], idx[i]
		out[i] = pool[idx[i]]
	}
	return out, nil
}

// PickCycle returns n fillers for a conversation whose length is not known
// in advance, such as one diluted until its context reaches a given size:
// the seeded permutation Pick(pool, len(pool), seed), repeated as often as
// needed. Its first len(pool) items are exactly that Pick, and a shorter
// n gives a prefix of a longer one, so a run can stop anywhere and a
// resumed run picks up the same sequence. No item recurs before every
// other has been used once. It returns nil when n <= 0 or pool is empty.
func PickCycle(pool []Passage, n int, seed int64) []Passage {
	if n <= 0 || len(pool) == 0 {
		return nil
	}
	perm, err := Pick(pool, len(pool), seed)
	if err != nil {
		panic("fillers: a full Pick cannot fail: " + err.Error())
	}
	out := make([]Passage, 0, n)
	for len(out) < n {
		out = append(out, perm[:min(len(perm), n-len(out))]...)
	}
	return out
}

// pcgStream is the constant second seed word for Pick's PCG. Changing it
// changes every recorded selection, so it must stay fixed.
const pcgStream = 0x9e3779b97f4a7c15

// WordCount counts whitespace-separated words, the same rough measure a
// person uses when asked for "300 to 700 words".
func WordCount(s string) int {
	return len(strings.Fields(s))
}

// parse splits a passage file into title and body. When requireTitle is
// false a missing "# " line means the whole file is the body and the title
// falls back to the ID.
func parse(id, raw string, requireTitle bool) (Passage, error) {
	raw = strings.TrimPrefix(raw, "\uFEFF") // editors on Windows add a BOM
	raw = strings.ReplaceAll(raw, "\r\n", "\n")
	if strings.TrimSpace(raw) == "" {
		return Passage{}, errors.New("empty passage")
	}
	body := strings.TrimLeft(raw, " \t\n")
	first, rest, _ := strings.Cut(body, "\n")
	title := id
	switch {
	case strings.HasPrefix(first, "# ") || strings.TrimSpace(first) == "#":
		title = strings.TrimSpace(strings.TrimPrefix(first, "#"))
		if title == "" {
			return Passage{}, errors.New(`empty title; expected "# Title" on the first line`)
		}
		body = rest
	case requireTitle:
		return Passage{}, errors.New(`missing title; expected "# Title" on the first line`)
	}
	text := strings.TrimSpace(body)
	if text == "" {
		return Passage{}, errors.New("empty passage; expected text after the title line")
	}
	return Passage{ID: id, Title: title, Text: text}, nil
}

func sortByID(ps []Passage) {
	slices.SortFunc(ps, func(a, b Passage) int { return strings.Compare(a.ID, b.ID) })
}

// unwrapPath drops the *fs.PathError wrapper so messages name the file once.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
