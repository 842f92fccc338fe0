package compare

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// scored makes conversations scored on the total and one criterion "c".
func scored(totals ...[2]int) []Scored {
	var out []Scored
	for _, t := range totals {
		u := stats.Unit{Passed: t[0], Judged: t[1]}
		out = append(out, Scored{Total: u, "c": u})
	}
	return out
}

func TestDecideRejectsADropAndNamesIt(t *testing.T) {
	base := scored([2]int{4, 4}, [2]int{4, 4}, [2]int{3, 4}, [2]int{4, 4}, [2]int{4, 4}, [2]int{4, 4})
	cand := scored([2]int{1, 4}, [2]int{0, 4}, [2]int{1, 4}, [2]int{2, 4}, [2]int{0, 4}, [2]int{1, 4})
	res := Decide(base, cand, []string{"c"}, 0.05)
	if !res.Reject || res.Undecided != "" || len(res.Measures) != 2 {
		t.Fatalf("a collapse was not rejected: %+v", res)
	}
	for _, m := range res.Measures {
		if !m.Reject || m.Adjusted > 0.05 || m.Adjusted < m.P {
			t.Errorf("%s: reject %v p %v adjusted %v", m.Name, m.Reject, m.P, m.Adjusted)
		}
	}
	// The same runs the other way round: an improvement is never a drop.
	if res := Decide(cand, base, []string{"c"}, 0.05); res.Reject {
		t.Errorf("an improvement was rejected: %+v", res)
	}
}

func TestDecideAcceptsTheSameRunsAndIsRepeatable(t *testing.T) {
	base := scored([2]int{4, 4}, [2]int{3, 4}, [2]int{4, 4}, [2]int{2, 4}, [2]int{4, 4})
	res := Decide(base, base, []string{"c"}, 0.05)
	if res.Reject || res.Measures[0].Adjusted < 0.5 {
		t.Errorf("a run against itself: %+v", res)
	}
	a, b := Decide(base, scored([2]int{1, 4}, [2]int{3, 4}, [2]int{2, 4}), nil, 0.05), Decide(base, scored([2]int{1, 4}, [2]int{3, 4}, [2]int{2, 4}), nil, 0.05)
	if a.Measures[0].P != b.Measures[0].P || a.Measures[0].Adjusted != b.Measures[0].Adjusted {
		t.Errorf("the same runs got different p-values: %v and %v", a.Measures[0], b.Measures[0])
	}
}

func TestDecideUndecidedBelowTwoConversations(t *testing.T) {
	res := Decide(scored([2]int{4, 4}), scored([2]int{0, 4}, [2]int{0, 4}), nil, 0.05)
	if res.Reject || !strings.Contains(res.Undecided, "at least 2 scored conversations") {
		t.Errorf("%+v", res)
	}
}

// A base run given again through a link, or as a copy, is the same run
// counted twice: the pooled base then looked twice as precise, and a
// candidate it accepted (p = 0.123) was rejected (adjusted p = 0.048).
// The candidate may be a copy of a base run (an A/A check).
func TestLoadRefusesABaseRunTwice(t *testing.T) {
	base := testenv.CopyOfRun(t, "not-enough-evidence")
	cand := testenv.RecordedRun(t, "decay")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(base, link); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(cp, os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	for what, second := range map[string]string{"a link": link, "a copy": cp} {
		if _, err := Load([]string{base, second, cand}); err == nil || !strings.Contains(err.Error(), "a run counted twice") {
			t.Errorf("%s of a base run among the base runs: %v", what, err)
		}
	}
	if _, err := Load([]string{base, cp}); err != nil {
		t.Errorf("a copy of the base run as the candidate (A/A): %v", err)
	}
}

// A merged suite's run holds its shards' conversations: a shard given
// beside it pooled one conversation twice (the base showed n=4 for three).
// Among the base runs that is refused; a candidate sharing conversations
// with the base is warned of.
func TestOneConversationInTwoRuns(t *testing.T) {
	merged := testenv.CopyOfRun(t, "held")
	shard := testenv.CopyOfRun(t, "decay")
	mr, err := record.Load(merged)
	if err != nil {
		t.Fatal(err)
	}
	sr, err := record.Load(shard)
	if err != nil {
		t.Fatal(err)
	}
	sr.Conversations[0].SessionID = mr.Conversations[1].SessionID
	if err := record.WriteJSON(filepath.Join(shard, "run.json"), sr); err != nil {
		t.Fatal(err)
	}
	cand := testenv.RecordedRun(t, "not-enough-evidence")
	if _, err := Load([]string{merged, shard, cand}); err == nil || !strings.Contains(err.Error(), "hold the same conversation (session "+mr.Conversations[1].SessionID+")") {
		t.Errorf("a conversation in two base runs: %v", err)
	}
	samples, err := Load([]string{merged, shard})
	if err != nil {
		t.Fatal(err)
	}
	cmp := Runs(samples[:1], samples[1], 0.05)
	if !slices.ContainsFunc(cmp.Notes, func(n string) bool {
		return strings.Contains(n, fmt.Sprintf("WARNING: 1 conversation of the candidate's %d are also in the base runs", len(sr.Conversations)))
	}) {
		t.Errorf("a candidate sharing a conversation with the base, notes: %q", cmp.Notes)
	}
}

// A candidate asked other tasks than the base is warned of: it was
// compared in silence, and called an A/A check when its skill was the
// same.
func TestTasksThatDifferAreWarned(t *testing.T) {
	dir := testenv.CopyOfRun(t, "held")
	other := testenv.CopyOfRun(t, "held")
	r, err := record.Load(other)
	if err != nil {
		t.Fatal(err)
	}
	r.Plan.Probes[1].Task = "What is the capital of France?"
	if err := record.WriteJSON(filepath.Join(other, "run.json"), r); err != nil {
		t.Fatal(err)
	}
	warned := func(cand string) bool {
		runs, err := Load([]string{dir, cand})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range Runs(runs[:1], runs[1], 0.05).Notes {
			if strings.Contains(n, "WARNING: the tasks differ") {
				return true
			}
		}
		return false
	}
	if !warned(other) {
		t.Error("a candidate asked another probe: no warning")
	}
	if warned(testenv.RecordedRun(t, "held")) {
		t.Error("the same tasks: warned")
	}
}

// The run folders' names are printed as other text from outside is: an
// escape sequence in one (a folder named by a script, say) never reaches
// the terminal, nor in the cannot-decide line that names them.
func TestWriteStripsEscapesFromFolderNames(t *testing.T) {
	parent := t.TempDir()
	named := func(recorded, name string) string {
		dir := filepath.Join(parent, name)
		if err := os.CopyFS(dir, os.DirFS(testenv.RecordedRun(t, recorded))); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	base := named("held", "base\x1b]0;PWNED\x07")
	cand := named("decay", "cand\r\x1b[2K\u202e")
	runs, err := Load([]string{base, cand})
	if err != nil {
		t.Fatal(err)
	}
	cmp := Runs(runs[:1], runs[1], 0.05)
	cmp.Undecided = "the runs measure different skills (" + base + ")" // as runs.go words it
	var b strings.Builder
	cmp.Write(&b)
	out := b.String()
	for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Errorf("compare output carries %q:\n%q", bad, out)
		}
	}
	if !strings.Contains(out, "base]0;PWNED") {
		t.Errorf("the folder's printable name should stay:\n%s", out)
	}
}

// TestDecideUndecidedWhereNoScoresCanReject: at sizes where the smallest
// p-value a relabelling test can give is above alpha, a candidate that
// failed every turn must not be accepted (exit 0 would pass it in CI).
func TestDecideUndecidedWhereNoScoresCanReject(t *testing.T) {
	all := func(n, passed int) []Scored {
		var out [][2]int
		for range n {
			out = append(out, [2]int{passed, 4})
		}
		return scored(out...)
	}
	for _, c := range []struct {
		base, cand int
		alpha      float64
		undecided  string // "" where the collapse must be rejected
	}{
		{2, 2, 0.05, "with 2 base and 2 candidate conversations the test cannot reject at alpha 0.05 whatever the scores: its smallest p-value is 1/6 = 0.167"},
		{6, 3, 0.01, "its smallest p-value is 1/84 = 0.0119"},
		{3, 6, 0.01, "its smallest p-value is 1/84 = 0.0119"},
		{4, 4, 0.05, ""},
		{6, 3, 0.05, ""},
	} {
		res := Decide(all(c.base, 4), all(c.cand, 0), []string{"c"}, c.alpha)
		switch {
		case c.undecided == "" && (!res.Reject || res.Undecided != ""):
			t.Errorf("%d against %d at %v: a collapse was not rejected: %+v", c.base, c.cand, c.alpha, res)
		case c.undecided != "" && (res.Reject || !strings.Contains(res.Undecided, c.undecided)):
			t.Errorf("%d against %d at %v: got reject %v, undecided %q; want undecided %q", c.base, c.cand, c.alpha, res.Reject, res.Undecided, c.undecided)
		}
		if c.undecided != "" {
			for _, m := range res.Measures {
				if m.Reject {
					t.Errorf("%d against %d: measure %s rejected in an undecided comparison", c.base, c.cand, m.Name)
				}
			}
		}
	}
}

// The gate counts the conversations as the test relabels them: the
// scored ones. A conversation with no scored total is no unit: relabelled
// with the rest (3 scored and 1 unscored against 2 and 1), the smallest
// p-value was 2/35, above 0.05, while the gate counted 1/35 and let an
// accept through; counted apart from the test, the gate said "cannot
// reject" where the test could.
func TestDecideGateCountsWhatTheTestRelabels(t *testing.T) {
	base := append(scored([2]int{4, 4}, [2]int{4, 4}, [2]int{4, 4}), Scored{})
	cand := append(scored([2]int{0, 4}, [2]int{0, 4}), Scored{})
	res := Decide(base, cand, []string{"c"}, 0.05)
	if res.Reject || !strings.Contains(res.Undecided, "with 3 base and 2 candidate conversations the test cannot reject at alpha 0.05 whatever the scores: its smallest p-value is 1/10") {
		t.Errorf("3 and 2 scored, 1 unscored each: reject %v, undecided %q", res.Reject, res.Undecided)
	}
	base = append(base, scored([2]int{4, 4})...)
	cand = append(cand, scored([2]int{0, 4})...)
	if res := Decide(base, cand, []string{"c"}, 0.05); !res.Reject || res.Measures[0].Adjusted != 1.0/35 {
		t.Errorf("4 against 3 scored, each with an unscored one: reject %v, adjusted p %v, want 1/35", res.Reject, res.Measures[0].Adjusted)
	}
}
