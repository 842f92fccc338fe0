package fillers

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// forbidden matches words that would tell the agent it is being watched,
// including as parts of longer words ("latest", "skillet", "medieval"), so
// the check is deliberately stricter than a whole-word match.
var forbidden = regexp.MustCompile(`(?i)` + strings.Join(forbiddenWords, "|"))

var forbiddenWords = []string{"test", "eval", "probe", "vibe", "benchmark", "experiment", "skill"}

// hasForbidden is forbidden.MatchString for large texts: the work chores'
// files are a megabyte, which the regexp takes seconds over under -race.
func hasForbidden(s string) bool {
	lower := strings.ToLower(s)
	return slices.ContainsFunc(forbiddenWords, func(w string) bool { return strings.Contains(lower, w) })
}

// requestWords are the verbs that mark a final paragraph as a request even
// when it is phrased as an instruction rather than a question.
var requestWords = []string{"summarize", "compare", "list", "explain", "outline", "suggest"}

func lastParagraph(text string) string {
	paras := strings.Split(strings.TrimSpace(text), "\n\n")
	return strings.TrimSpace(paras[len(paras)-1])
}

func TestBuiltinCorpus(t *testing.T) {
	ps := Builtin()
	if len(ps) < 12 {
		t.Fatalf("Builtin() has %d passages, want >= 12", len(ps))
	}
	seen := map[string]bool{}
	for i, p := range ps {
		if seen[p.ID] {
			t.Errorf("duplicate ID %q", p.ID)
		}
		seen[p.ID] = true
		if i > 0 && ps[i-1].ID >= p.ID {
			t.Errorf("not sorted by ID: %q before %q", ps[i-1].ID, p.ID)
		}
		if p.Title == "" || p.Title == p.ID {
			t.Errorf("%s: want a real title, got %q", p.ID, p.Title)
		}
		if p.Text != strings.TrimSpace(p.Text) {
			t.Errorf("%s: Text not trimmed", p.ID)
		}
		if strings.HasPrefix(p.Text, "#") {
			t.Errorf("%s: Text still contains the title line", p.ID)
		}
		if n := WordCount(p.Text); n < 300 || n > 700 {
			t.Errorf("%s: %d words, want 300-700", p.ID, n)
		}
		last := lastParagraph(p.Text)
		lower := strings.ToLower(last)
		isRequest := strings.HasSuffix(last, "?") || slices.ContainsFunc(requestWords, func(w string) bool {
			return strings.Contains(lower, w)
		})
		if !isRequest || last == p.Text {
			t.Errorf("%s: last paragraph is not a separate request: %q", p.ID, last)
		}
		for field, s := range map[string]string{"id": p.ID, "title": p.Title, "text": p.Text} {
			if m := forbidden.FindAllString(s, -1); m != nil {
				t.Errorf("%s: forbidden word(s) %q in %s", p.ID, m, field)
			}
		}
	}
}

// The embedded file names are what an agent would see if a path ever
// leaked, so they are checked directly rather than via the IDs.
func TestEmbeddedFileNames(t *testing.T) {
	entries, err := corpusFS.ReadDir("corpus")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if forbidden.MatchString(e.Name()) {
			t.Errorf("forbidden word in file name %q", e.Name())
		}
	}
	if forbidden.MatchString("corpus") {
		t.Error("forbidden word in directory name")
	}
}

func TestRequiredTopics(t *testing.T) {
	byID := map[string]Passage{}
	for _, p := range Builtin() {
		byID[p.ID] = p
	}
	required := map[string][]string{
		"refrigerator-cycle":    {"refrigerant", "compressor", "condenser", "evaporator"},
		"multi-city-train-trip": {"train", "Amsterdam", "Vienna", "ticket"},
		"photosynthesis":        {"chlorophyll", "carbon dioxide", "oxygen", "sugar"},
	}
	for id, words := range required {
		p, ok := byID[id]
		if !ok {
			t.Errorf("required passage %q missing", id)
			continue
		}
		for _, w := range words {
			if !strings.Contains(p.Text, w) {
				t.Errorf("%s: expected the passage to mention %q", id, w)
			}
		}
	}
}

func TestBuiltinReturnsCopy(t *testing.T) {
	a := Builtin()
	a[0].ID = "changed"
	if Builtin()[0].ID == "changed" {
		t.Fatal("Builtin() exposes shared state")
	}
}

func ids(ps []Passage) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func TestPickDeterministicAndDistinct(t *testing.T) {
	pool := Builtin()
	for seed := int64(-5); seed < 50; seed++ {
		for _, n := range []int{0, 1, 6, len(pool)} {
			a, err := Pick(pool, n, seed)
			if err != nil {
				t.Fatalf("Pick(n=%d, seed=%d): %v", n, seed, err)
			}
			b, _ := Pick(pool, n, seed)
			if !slices.Equal(ids(a), ids(b)) {
				t.Fatalf("Pick not deterministic for n=%d seed=%d: %v vs %v", n, seed, ids(a), ids(b))
			}
			if len(a) != n {
				t.Fatalf("Pick returned %d passages, want %d", len(a), n)
			}
			got := ids(a)
			slices.Sort(got)
			if len(slices.Compact(got)) != n {
				t.Fatalf("Pick returned duplicates for n=%d seed=%d: %v", n, seed, ids(a))
			}
		}
	}
}

func TestPickDoesNotModifyPool(t *testing.T) {
	pool := Builtin()
	before := ids(pool)
	if _, err := Pick(pool, len(pool), 42); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, ids(pool)) {
		t.Fatal("Pick reordered the caller's pool")
	}
}

func TestPickErrors(t *testing.T) {
	pool := Builtin()
	if _, err := Pick(pool, len(pool)+1, 1); err == nil {
		t.Error("Pick with n > len(pool) succeeded")
	}
	if _, err := Pick(nil, 1, 1); err == nil {
		t.Error("Pick from empty pool succeeded")
	}
	if _, err := Pick(pool, -1, 1); err == nil {
		t.Error("Pick with negative n succeeded")
	}
}

// Conversations draw their fillers by a recorded seed, so neighbouring seeds
// must not collapse onto the same selection.
func TestPickSeedsVary(t *testing.T) {
	pool := Builtin()
	const seeds, n = 200, 6
	differ := 0
	used := map[string]bool{}
	prev, _ := Pick(pool, n, 0)
	for seed := int64(1); seed <= seeds; seed++ {
		cur, _ := Pick(pool, n, seed)
		a, b := ids(prev), ids(cur)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			differ++
		}
		for _, id := range b {
			used[id] = true
		}
		prev = cur
	}
	if differ < seeds*95/100 {
		t.Errorf("only %d of %d consecutive seeds gave a different set", differ, seeds)
	}
	if len(used) != len(pool) {
		t.Errorf("only %d of %d passages were ever picked over %d seeds", len(used), len(pool), seeds)
	}
}

func TestPickCycle(t *testing.T) {
	for _, pool := range [][]Passage{Builtin(), Work()} {
		before := ids(pool)
		for seed := int64(-3); seed < 30; seed++ {
			full, err := Pick(pool, len(pool), seed)
			if err != nil {
				t.Fatal(err)
			}
			long := PickCycle(pool, 3*len(pool)+5, seed)
			if len(long) != 3*len(pool)+5 {
				t.Fatalf("PickCycle gave %d items, want %d", len(long), 3*len(pool)+5)
			}
			if !slices.Equal(ids(long[:len(pool)]), ids(full)) {
				t.Fatalf("seed %d: the first cycle %v is not Pick's %v", seed, ids(long[:len(pool)]), ids(full))
			}
			for i := range long {
				if long[i].ID != full[i%len(full)].ID {
					t.Fatalf("seed %d: item %d is %s, want %s (the permutation repeated)", seed, i, long[i].ID, full[i%len(full)].ID)
				}
			}
			for _, n := range []int{1, len(pool) - 1, len(pool), len(pool) + 1, 2 * len(pool)} {
				if got := PickCycle(pool, n, seed); !slices.Equal(ids(got), ids(long[:n])) {
					t.Fatalf("seed %d: PickCycle(n=%d) is not a prefix of a longer cycle", seed, n)
				}
			}
		}
		if !slices.Equal(before, ids(pool)) {
			t.Fatal("PickCycle reordered the caller's pool")
		}
	}
	if got := PickCycle(Work(), 0, 1); got != nil {
		t.Errorf("PickCycle(n=0) = %v, want nil", ids(got))
	}
	if got := PickCycle(Work(), -2, 1); got != nil {
		t.Errorf("PickCycle(n=-2) = %v, want nil", ids(got))
	}
	if got := PickCycle(nil, 3, 1); got != nil {
		t.Errorf("PickCycle(empty pool) = %v, want nil", ids(got))
	}
}

// Existing runs recorded their seeds: Pick must keep choosing exactly what
// it chose before PickCycle existed.
func TestPickUnchanged(t *testing.T) {
	got, err := Pick(Builtin(), 6, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"houseplant-care", "bee-communication", "moving-budget", "backyard-composting", "postal-service-history", "city-water-cycle"}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("Pick(Builtin(), 6, 7) = %q, want %q", ids(got), want)
	}
}

func TestWordCount(t *testing.T) {
	for s, want := range map[string]int{
		"":                         0,
		"   \n\t ":                 0,
		"one":                      1,
		"one two\nthree\t four  ":  4,
		"well-known words, count.": 3,
	} {
		if got := WordCount(s); got != want {
			t.Errorf("WordCount(%q) = %d, want %d", s, got, want)
		}
	}
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "garden.md", "# My garden\n\nTomatoes need sun.\n\nCould you list what they need?\n")
	write(t, dir, "notes.txt", "\uFEFFNo title here.\r\nJust text.\r\n")
	write(t, dir, "ignored.json", "{}")
	if err := os.Mkdir(filepath.Join(dir, "sub.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sub.md"), "deep.md", "# Deep\n\nnot loaded")

	ps, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Passage{
		{ID: "custom-garden", Title: "My garden", Text: "Tomatoes need sun.\n\nCould you list what they need?"},
		{ID: "custom-notes", Title: "custom-notes", Text: "No title here.\nJust text."},
	}
	if !reflect.DeepEqual(ps, want) {
		t.Fatalf("LoadDir = %#v\nwant %#v", ps, want)
	}
}

func TestLoadDirErrors(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files map[string]string) string {
		d := filepath.Join(root, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, body := range files {
			write(t, d, f, body)
		}
		return d
	}
	cases := []struct {
		name      string
		dir       string
		wantPath  string
		wantWords string
	}{
		{"missing dir", filepath.Join(root, "nope"), filepath.Join(root, "nope"), "cannot read directory"},
		{"empty dir", mk("empty", nil), filepath.Join(root, "empty"), "no .md or .txt files"},
		{"only other files", mk("other", map[string]string{"a.json": "{}"}), filepath.Join(root, "other"), "no .md or .txt files"},
		{"empty file", mk("emptyfile", map[string]string{"a.md": ""}), filepath.Join(root, "emptyfile", "a.md"), "empty passage"},
		{"blank file", mk("blank", map[string]string{"a.txt": " \n\t\n"}), filepath.Join(root, "blank", "a.txt"), "empty passage"},
		{"title only", mk("titleonly", map[string]string{"a.md": "# Just a title\n\n"}), filepath.Join(root, "titleonly", "a.md"), "empty passage"},
		{"empty title", mk("notitle", map[string]string{"a.md": "#\n\nbody"}), filepath.Join(root, "notitle", "a.md"), "empty title"},
		{"duplicate id", mk("dup", map[string]string{"a.md": "one", "a.txt": "two"}), filepath.Join(root, "dup", "a.txt"), "already used"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps, err := LoadDir(c.dir)
			if err == nil {
				t.Fatalf("LoadDir succeeded with %v", ids(ps))
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if !strings.HasPrefix(msg, "fillers: "+c.wantPath+": ") {
				t.Errorf("error %q does not start with the path %q", msg, c.wantPath)
			}
			if !strings.Contains(msg, c.wantWords) {
				t.Errorf("error %q does not mention %q", msg, c.wantWords)
			}
		})
	}
}

// The exact message for an empty file is documented, so pin it.
func TestLoadDirEmptyFileMessage(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a.md", "")
	_, err := LoadDir(dir)
	if err == nil || err.Error() != "fillers: "+p+": empty passage" {
		t.Fatalf("got %v", err)
	}
}

func TestLoadedPassagesCanBePicked(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "x.md", "# X\n\nbody x")
	custom, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool := append(Builtin(), custom...)
	got, err := Pick(pool, len(pool), 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(got, func(p Passage) bool { return p.ID == "custom-x" }) {
		t.Fatal("custom passage missing from a full pick")
	}
}
