package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/evalstats"
	"github.com/vibe-test/vibe-test/internal/exit"
)

// An instrument check the rule cannot decide (too many grade errors, too
// few graded cases) is no verdict, exit 3, and stores no baseline: it said
// "instrument doubtful" (exit 2) with advice about noise, and stored a
// baseline no --against could be decided on.
func TestInstrumentUndecidedIsNoVerdict(t *testing.T) {
	cannot := evalstats.Decision{Verdict: evalstats.ToolFail, Exit: exit.Tool, Sentence: "Cannot decide: 67% of the baseline's grades and 60% of the candidate's are errors (at most 50% can be decided on)"}
	for name, in := range map[string]evalstats.Instrument{
		"second run": {Second: cannot, Control: evalstats.Decision{Verdict: evalstats.Reject}, ControlRejected: true},
		"control":    {Second: evalstats.Decision{Verdict: evalstats.Accept}, SecondAccepted: true, Control: cannot},
	} {
		code, verdict, sentence := instrumentVerdict(in)
		if code != exit.Tool || verdict != evalstats.ToolFail || !strings.HasPrefix(sentence, "No verdict: the instrument check cannot be decided: 67% of the baseline's grades") || !strings.Contains(sentence, "the baseline is not stored") {
			t.Errorf("%s: exit %d %s %q", name, code, verdict, sentence)
		}
	}
	if code, _, _ := instrumentVerdict(evalstats.Instrument{Second: evalstats.Decision{Verdict: evalstats.NotEnuf}}); code != exit.Indeterminate {
		t.Errorf("a second run not accepted: exit %d, want 2", code)
	}
}

// A stored grade that is none of the four results is refused, naming the
// file and the field: read as n/a, a baseline's "PASS" left its measure
// out of one side and flipped a verdict to reject (exit 1, not 3).
func TestCellResultsChecked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "1.json")
	write := func(result string) {
		b := []byte(`{"case": "widgets", "repeat": 1, "status": "ok", "grades": [{"measure": "M1", "result": "pass"}, {"measure": "M2", "result": "` + result + `"}]}`)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, ok := range []string{ResultPass, ResultFail, ResultNA, ResultError} {
		write(ok)
		if _, err := loadCell(path); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	write("PASS")
	_, err := loadCell(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+`: field "grades[1].result": "PASS", expected "pass", "fail", "n/a" or "error"`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("a stored %q: %v", "PASS", err)
	}
}
