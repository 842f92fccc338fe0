package suite

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vibe-test/vibe-test/internal/record"
)

func TestShardUnitsDealEveryUnitOnce(t *testing.T) {
	skills := []record.ShardSkill{{Name: "b", Conversations: 4}, {Name: "a", Conversations: 3}, {Name: "c", Conversations: 1}}
	seen := map[record.Unit]int{}
	for i := 1; i <= 3; i++ {
		units := ShardUnits(skills, i, 3)
		// 8 units over 3 shards: 3, 3, 2.
		if want := []int{3, 3, 2}[i-1]; len(units) != want {
			t.Errorf("shard %d/3: %d units %v, want %d", i, len(units), units, want)
		}
		for _, u := range units {
			seen[u]++
		}
	}
	if len(seen) != 8 {
		t.Fatalf("%d distinct units, want 8: %v", len(seen), seen)
	}
	for u, n := range seen {
		if n != 1 {
			t.Errorf("%+v dealt %d times", u, n)
		}
	}
	// Sorted by skill name, then index: a1 a2 a3 b1 b2 b3 b4 c1.
	firstShard := []record.Unit{{Skill: "a", Index: 1}, {Skill: "b", Index: 1}, {Skill: "b", Index: 4}}
	if got := ShardUnits(skills, 1, 3); !slices.Equal(got, firstShard) {
		t.Errorf("shard 1/3: %v", got)
	}
	// The order skills are given in does not matter.
	slices.Reverse(skills)
	if got := ShardUnits(skills, 1, 3); !slices.Equal(got, firstShard) {
		t.Errorf("shard 1/3, skills reversed: %v", got)
	}
}

func TestDiscoverFindsSkillsBelowAFolder(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, name string) {
		p := filepath.Join(dir, rel, "SKILL.md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: d\n---\nDo it.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/zeta", "zeta")
	write("lib/group/alpha", "alpha")
	write("lib/group/alpha/examples/inner", "inner") // inside a skill: part of it
	write("lib/vibe-runs/x/alpha", "alpha")          // an earlier run's copy
	write("lib/.hidden/h", "h")
	write("other/alpha", "alpha") // the same name elsewhere
	skills, err := Discover([]string{filepath.Join(dir, "lib"), filepath.Join(dir, "other", "alpha", "SKILL.md"), filepath.Join(dir, "lib", "zeta")}, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range skills {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"alpha", "alpha-2", "zeta"}) {
		t.Errorf("skills %v, want alpha, alpha-2, zeta (zeta named twice, run once)", names)
	}
	if _, err := Discover([]string{filepath.Join(dir, "lib", "vibe-runs", "none")}, ""); err == nil {
		t.Error("a missing path was accepted")
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Discover([]string{empty}, ""); err == nil {
		t.Error("a folder with no skill was accepted")
	}
}

// A skill is named after its folder as it is, so the suite's names for
// its skills' folders are made fit for a file system: apart whatever the
// case (Foo and foo shared one folder on macOS's), short enough for a
// file name (eighty CJK characters), one line. A refused skill named twice
// is counted and named once.
func TestDiscoverNamesFitFolders(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, front, body string) string {
		p := filepath.Join(dir, rel, "SKILL.md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("---\n"+front+"description: d\n---\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	long := strings.Repeat("库", 80)
	write("s/Foo", "", "Do it.\n")
	write("s/bar", "name: foo\n", "Do it.\n")
	write("s/"+long, "", "Do it.\n")
	write("s/new\nline", "", "Do it.\n")
	skills, err := Discover([]string{filepath.Join(dir, "s")}, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range skills {
		names = append(names, s.Name)
		if len(s.Name) > 64 || !utf8.ValidString(s.Name) || strings.ContainsRune(s.Name, '\n') {
			t.Errorf("suite name %q: not fit for a folder name", s.Name)
		}
	}
	if !slices.Equal(names, []string{"Foo", "foo-2", "new-line", strings.Repeat("库", 21)}) {
		t.Errorf("names %q", names)
	}
	empty := write("r/empty", "", "")
	_, err = Discover([]string{empty, filepath.Dir(empty), write("r/hidden", "disable-model-invocation: yes\n", "Do it.\n")}, "")
	if err == nil || !strings.HasPrefix(err.Error(), "2 of 2 skills cannot run: (1) ") || !strings.Contains(err.Error(), " (2) ") || strings.Count(err.Error(), "empty body") != 1 {
		t.Errorf("refusals, numbered (a message may hold \"; \" itself): %v", err)
	}
}

func TestIsSuite(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "one"), 0o755)
	os.WriteFile(filepath.Join(dir, "one", "SKILL.md"), []byte("x"), 0o644)
	for _, c := range []struct {
		paths []string
		want  bool
	}{
		{[]string{filepath.Join(dir, "one")}, false},
		{[]string{filepath.Join(dir, "one", "SKILL.md")}, false},
		{[]string{dir}, true},
		{[]string{filepath.Join(dir, "one"), filepath.Join(dir, "one")}, true},
		{[]string{filepath.Join(dir, "missing")}, false}, // the single run's error names it
	} {
		if got := IsSuite(c.paths); got != c.want {
			t.Errorf("IsSuite(%v) = %v, want %v", c.paths, got, c.want)
		}
	}
}

func TestWorstExit(t *testing.T) {
	for _, c := range []struct {
		codes []int
		want  int
	}{
		{nil, 0},
		{[]int{0, 2, 0}, 2},
		{[]int{2, 1, 0}, 1},
		{[]int{1, 3, 2}, 3},
		{[]int{3, 130, 1}, 130},
		{[]int{0, 7}, 3}, // an unknown code is a tool error
	} {
		if got := record.WorstExit(c.codes...); got != c.want {
			t.Errorf("WorstExit(%v) = %d, want %d", c.codes, got, c.want)
		}
	}
}

// A suite's dry run names each skill as the suite does: two skills that
// share a name get the suite's x and x-2, as their run folders will.
func TestDryRunNamesAsTheSuite(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"a", "b"} {
		p := filepath.Join(dir, sub, "x", "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("---\nname: x\ndescription: d\n---\nDo "+sub+".\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := Settings{Paths: []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}}
	s.Conversations, s.JudgeRepeats, s.Isolation = 1, 1, "none"
	ests, err := DryRun(context.Background(), s, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ests {
		names = append(names, e.Skill)
	}
	if !slices.Equal(names, []string{"x", "x-2"}) {
		t.Errorf("dry-run blocks %v, want x and x-2", names)
	}
}
