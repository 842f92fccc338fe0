package fillers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The bounds on what a chore's command prints. The ceiling stays under the
// 30,000 characters the pinned CLI shows inline (see Work).
const (
	minOutput = 8 << 10
	maxOutput = 27 << 10
)

// backticked finds the commands in a prompt.
var backticked = regexp.MustCompile("`([^`]*)`")

// asksNoChange is how a prompt tells the agent to leave things alone.
var asksNoChange = regexp.MustCompile(`(?i)\b(don't|do not)\b[^.]*\b(change|modify|edit|touch)\b|no changes`)

func TestWorkCorpus(t *testing.T) {
	ps := Work()
	if len(ps) < 14 || len(ps) > 20 {
		t.Fatalf("Work() has %d chores, want about 16", len(ps))
	}
	owner := map[string]string{} // file -> chore
	for i, p := range ps {
		if i > 0 && ps[i-1].ID >= p.ID {
			t.Errorf("not sorted by ID or not unique: %q before %q", ps[i-1].ID, p.ID)
		}
		if !strings.HasPrefix(p.ID, workPrefix) {
			t.Errorf("%s: ID lacks the %q prefix", p.ID, workPrefix)
		}
		if p.Title == "" || p.Title == p.ID {
			t.Errorf("%s: want a real title, got %q", p.ID, p.Title)
		}
		if p.Text != strings.TrimSpace(p.Text) || p.Text == "" {
			t.Errorf("%s: Text empty or not trimmed", p.ID)
		}
		if strings.Count(p.Text, "`") != 2 || len(backticked.FindAllString(p.Text, -1)) != 1 {
			t.Errorf("%s: want exactly one command in backticks: %q", p.ID, p.Text)
		}
		if !asksNoChange.MatchString(p.Text) {
			t.Errorf("%s: the prompt does not ask to change nothing: %q", p.ID, p.Text)
		}
		if strings.Contains(p.Text, "{dir}") {
			t.Errorf("%s: placeholder left in the prompt", p.ID)
		}
		if len(p.Files) == 0 {
			t.Errorf("%s: no files", p.ID)
		}
		for field, s := range map[string]string{"id": p.ID, "title": p.Title, "text": p.Text} {
			if m := forbidden.FindAllString(s, -1); m != nil {
				t.Errorf("%s: forbidden word(s) %q in %s", p.ID, m, field)
			}
		}
		for name, content := range p.Files {
			if !filepath.IsLocal(name) || path.Clean(name) != name || strings.Contains(name, `\`) ||
				!strings.HasPrefix(name, WorkDir+"/") {
				t.Errorf("%s: path %q is not a clean relative path under %s/", p.ID, name, WorkDir)
			}
			if prev, ok := owner[name]; ok {
				t.Errorf("%s: file %s also belongs to %s", p.ID, name, prev)
			}
			owner[name] = p.ID
			if content == "" || !strings.HasSuffix(content, "\n") {
				t.Errorf("%s: %s is empty or lacks a final newline", p.ID, name)
			}
			if m := forbidden.FindAllString(name, -1); m != nil {
				t.Errorf("%s: forbidden word(s) %q in path %s", p.ID, m, name)
			}
			if !hasForbidden(content) {
				continue
			}
			if m := forbidden.FindAllStringIndex(content, -1); m != nil {
				for _, at := range m[:min(len(m), 5)] {
					t.Errorf("%s: forbidden word in %s: %q", p.ID, name, content[max(at[0]-30, 0):min(at[1]+30, len(content))])
				}
			}
		}
	}
	// A file may not sit where another chore needs a folder.
	for name := range owner {
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if other, ok := owner[dir]; ok {
				t.Errorf("%s is a file of %s and a folder of %s", dir, other, owner[name])
			}
		}
	}
}

// TestWorkCommandsReadOnly checks each command by its words: a program that
// only reads, no shell syntax that could redirect, chain or expand, and
// operands that are the chore's own files or folders holding only its files.
func TestWorkCommandsReadOnly(t *testing.T) {
	ps := Work()
	owner := map[string]string{}
	for _, p := range ps {
		for name := range p.Files {
			owner[name] = p.ID
		}
	}
	for _, p := range ps {
		m := backticked.FindStringSubmatch(p.Text)
		if m == nil {
			t.Errorf("%s: no command", p.ID)
			continue
		}
		words, err := shellWords(m[1])
		if err != nil {
			t.Errorf("%s: %q: %v", p.ID, m[1], err)
			continue
		}
		opts, ok := readOnlyPrograms[words[0]]
		if !ok {
			t.Errorf("%s: %q runs %s, which is not on the read-only list", p.ID, m[1], words[0])
			continue
		}
		var operands []string
		for i := 1; i < len(words); i++ {
			w := words[i]
			switch {
			case slices.Contains(opts, w):
				i++
			case words[0] == "sort" && (strings.HasPrefix(w, "--output") ||
				strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "o")):
				// The only one of these programs that can write a file.
				t.Errorf("%s: %q writes a file", p.ID, m[1])
			case strings.HasPrefix(w, "-") && len(w) > 1:
			default:
				operands = append(operands, w)
			}
		}
		if words[0] == "grep" && !slices.Contains(words, "-e") && len(operands) > 0 {
			operands = operands[1:]
		}
		if len(operands) == 0 {
			t.Errorf("%s: %q names no file", p.ID, m[1])
		}
		for _, o := range operands {
			if owner[o] == p.ID {
				continue
			}
			var mine, others int
			for name, id := range owner {
				if strings.HasPrefix(name, o+"/") {
					if id == p.ID {
						mine++
					} else {
						others++
					}
				}
			}
			if mine == 0 || others > 0 || !strings.HasPrefix(o, WorkDir+"/") {
				t.Errorf("%s: operand %q of %q is not this chore's own file or folder (%d of its files, %d of others)", p.ID, o, m[1], mine, others)
			}
		}
	}
}

// readOnlyPrograms are the programs a chore may run, each with its options
// that take a value; whatever else is not an option is an operand. grep's
// first operand is its pattern.
var readOnlyPrograms = map[string][]string{
	"cat": nil, "head": {"-n"}, "tail": {"-n"}, "cut": {"-d", "-f"}, "sort": {"-t", "-k"}, "grep": {"-e"},
}

// shellWords splits a command line the way the shell would for the simple
// commands the chores use, and refuses anything else: unquoted characters
// that redirect, pipe, chain, substitute or glob.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote")
			}
			quoted := s[i+1 : i+1+end]
			if c == '"' && strings.ContainsAny(quoted, "$`\\") {
				return nil, fmt.Errorf("expansion inside double quotes: %q", quoted)
			}
			cur.WriteString(quoted)
			inWord = true
			i += end + 1
		case strings.IndexByte("|&;<>()$`\\*?[]{}~#!\t\n", c) >= 0:
			return nil, fmt.Errorf("unquoted %q", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return words, nil
}

func TestShellWords(t *testing.T) {
	for in, want := range map[string][]string{
		`cat ops/a.txt`:                      {"cat", "ops/a.txt"},
		`grep -E "WARN|ERROR" ops/x.log`:     {"grep", "-E", "WARN|ERROR", "ops/x.log"},
		`grep '"action":"delete"' ops/a.log`: {"grep", `"action":"delete"`, "ops/a.log"},
		`grep -E '" 5[0-9]{2} ' ops/b.log`:   {"grep", "-E", `" 5[0-9]{2} `, "ops/b.log"},
	} {
		got, err := shellWords(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`cat a > b`, `cat a | sh`, `cat a; rm b`, `cat $(x)`, `cat *.log`, `cat "$HOME"`, `cat 'a`, ``, `cat a && rm b`} {
		if got, err := shellWords(in); err == nil {
			t.Errorf("shellWords(%q) = %q, want an error", in, got)
		}
	}
}

// TestWorkCommandsOutput runs every chore's command with bash in a folder
// holding every chore's files, as the sandbox will after a long
// conversation: it must succeed quietly, print within the bounds and the
// size its chore documents, and show what the question asks about.
func TestWorkCommandsOutput(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bash is needed to run the chores' commands: %v", err)
		}
		t.Skipf("no bash to run the chores' commands: %v", err)
	}
	dir := t.TempDir()
	ps := Work()
	for _, p := range ps {
		for name, content := range p.Files {
			full := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	byID := map[string]chore{}
	for _, c := range chores {
		byID[c.id] = c
	}
	for _, p := range ps {
		command := backticked.FindStringSubmatch(p.Text)[1]
		// Never run what TestWorkCommandsReadOnly would refuse.
		words, err := shellWords(command)
		if err != nil {
			t.Errorf("%s: not running %q: %v", p.ID, command, err)
			continue
		}
		if _, ok := readOnlyPrograms[words[0]]; !ok {
			t.Errorf("%s: not running %q: %s is not on the read-only list", p.ID, command, words[0])
			continue
		}
		cmd := exec.Command(bash, "-c", command)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("%s: %s: %v, stderr %q", p.ID, command, err, stderr.String())
			continue
		}
		out := stdout.String()
		c := byID[p.ID]
		t.Logf("%-24s %6d bytes (%2d KB)  %s", p.ID, len(out), c.outKB, command)
		if len(out) < minOutput || len(out) > maxOutput {
			t.Errorf("%s: %s prints %d bytes, want %d to %d", p.ID, command, len(out), minOutput, maxOutput)
		}
		if got := (len(out) + 512) / 1024; got != c.outKB {
			t.Errorf("%s: %s prints %d bytes, about %d KB; the chore says %d KB", p.ID, command, len(out), got, c.outKB)
		}
		for _, s := range c.shows {
			if !strings.Contains(out, s) {
				t.Errorf("%s: the output of %s lacks %q, which the question is about", p.ID, command, s)
			}
		}
	}
}

func TestWorkDeterministic(t *testing.T) {
	a, b := buildWork(), buildWork()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two generations of the work chores differ")
	}
	if !reflect.DeepEqual(Work(), a) {
		t.Fatal("Work() differs from a fresh generation")
	}
}

func TestWorkReturnsCopy(t *testing.T) {
	a := Work()
	for name := range a[0].Files {
		a[0].Files[name] = "changed"
	}
	a[1].ID = "changed"
	b := Work()
	if b[1].ID == "changed" || slices.Contains(slicesOfValues(b[0].Files), "changed") {
		t.Fatal("Work() exposes shared state")
	}
}

func slicesOfValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// workDigest is the SHA-256 of the whole corpus. A resumed run rebuilds its
// fillers by ID, so a chore's content must not drift by accident (a Go
// release changing a generator's stream would do it silently). Editing a
// chore on purpose means updating this value.
const workDigest = "5ba7f043bed8a761bbb5e20630ce59c4523ec41e9c764ea73a6a661d7496deda"

func TestWorkPinned(t *testing.T) {
	h := sha256.New()
	for _, p := range Work() {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", p.ID, p.Title, p.Text)
		names := slices.Sorted(func(yield func(string) bool) {
			for name := range p.Files {
				if !yield(name) {
					return
				}
			}
		})
		for _, name := range names {
			fmt.Fprintf(h, "%s\x00%d\x00%s", name, len(p.Files[name]), p.Files[name])
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != workDigest {
		t.Fatalf("the work corpus changed: digest %s, pinned %s; if the change is deliberate, update workDigest", got, workDigest)
	}
}

func TestHasForbidden(t *testing.T) {
	for _, s := range []string{"", "ok", "Latest", "medIEVAL", "ProbeS", "a vibe", "BENCHMARKS", "skillet", "fine words", "Tomás Ruiz"} {
		if hasForbidden(s) != forbidden.MatchString(s) {
			t.Errorf("hasForbidden(%q) = %t, the regexp says %t", s, hasForbidden(s), forbidden.MatchString(s))
		}
	}
}

// Passages and chores may share a pool (a resumed run looks fillers up by
// ID), so their IDs must not collide.
func TestPassagesHaveNoFiles(t *testing.T) {
	for _, p := range Builtin() {
		if p.Files != nil {
			t.Errorf("%s: a passage with files", p.ID)
		}
		if strings.HasPrefix(p.ID, workPrefix) {
			t.Errorf("%s: a passage with the work chores' prefix", p.ID)
		}
	}
}

// BenchmarkWork measures generating the whole corpus, which a run does
// once; it should stay far below 50 ms.
func BenchmarkWork(b *testing.B) {
	for b.Loop() {
		buildWork()
	}
}
