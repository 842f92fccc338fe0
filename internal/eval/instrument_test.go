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

// A cell that failed in this eval stops it (exit 3: run it again); one
// read from a stored baseline does not count among them, since running
// this eval again cannot mend it (its grades count as errors, ungraded).
func TestStoredCellErrorsAreNotThisEvals(t *testing.T) {
	for _, tc := range []struct {
		name           string
		baseOK, candOK bool
		wantErrors     int
	}{
		{"all ok", true, true, 0},
		{"the stored baseline's cell failed", false, true, 0},
		{"this eval's cell failed", true, false, 1},
	} {
		dir := t.TempDir()
		cell := func(run string, ok bool) {
			status := `"status": "ok", "grades": [{"measure": "M1", "result": "pass"}]`
			if !ok {
				status = `"status": "error", "error": "the generator failed"`
			}
			p := filepath.Join(dir, run, "widgets", "1.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(`{"case": "widgets", "repeat": 1, `+status+`}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cell(filepath.Join("baseline", "base-1"), tc.baseOK)
		cell("candidate", tc.candOK)
		rec := &Record{Mode: ModeRun, Cases: SetInfo{Measures: []MeasureInfo{{ID: "M1", Label: "M1"}}, Main: []string{"widgets"}},
			Runs: []RunInfo{{Label: "base 1", Dir: filepath.Join("baseline", "base-1"), Arm: ArmBase, Stored: true}, {Label: "candidate", Dir: "candidate", Arm: ArmCandidate}}}
		res, err := Evaluate(dir, rec)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.CellErrors != tc.wantErrors {
			t.Errorf("%s: %d failed cells counted, want %d", tc.name, res.CellErrors, tc.wantErrors)
		}
	}
}

// The instrument works only when the second base run is accepted and the
// control rejected; either check failing is exit 2, each with its advice.
func TestInstrumentVerdictNeedsBothChecks(t *testing.T) {
	accept, reject := evalstats.Decision{Verdict: evalstats.Accept}, evalstats.Decision{Verdict: evalstats.Reject}
	for _, tc := range []struct {
		name          string
		in            evalstats.Instrument
		code          int
		verdict, says string
	}{
		{"both hold", evalstats.Instrument{Second: accept, SecondAccepted: true, Control: reject, ControlRejected: true}, exit.OK, "instrument-ok", ""},
		{"noise", evalstats.Instrument{Second: reject, Control: reject, ControlRejected: true}, exit.Indeterminate, "instrument-doubtful", "noise is larger"},
		{"no skill passes too", evalstats.Instrument{Second: accept, SecondAccepted: true, Control: accept}, exit.Indeterminate, "instrument-doubtful", "cannot tell the skill from no skill"},
	} {
		code, verdict, sentence := instrumentVerdict(tc.in)
		if code != tc.code || verdict != tc.verdict || !strings.Contains(sentence, tc.says) {
			t.Errorf("%s: exit %d %s %q, want exit %d %s saying %q", tc.name, code, verdict, sentence, tc.code, tc.verdict, tc.says)
		}
	}
}

// One cell whose generator or reader failed leaves no verdict: exit 3,
// whatever the decision without it, as for more.
func TestOneFailedCellIsNoVerdict(t *testing.T) {
	for _, n := range []int{1, 2} {
		res := &Result{Dir: "evals/x", Record: &Record{Mode: ModeRun}, CellErrors: n}
		decide(res)
		if res.Exit != exit.Tool || res.Verdict != evalstats.ToolFail {
			t.Errorf("%d failed cells: exit %d %s, want %d %s: %s", n, res.Exit, res.Verdict, exit.Tool, evalstats.ToolFail, res.Sentence)
		}
	}
}

// A cell's error reaches the live log cleaned: an API error body that
// held an escape sequence (a window title) went to the terminal whole.
func TestProgressLineIsCleaned(t *testing.T) {
	rec := &Record{Runs: []RunInfo{{Label: "base-1"}}}
	c := &Cell{Case: "bolts\x1b[2J", Status: CellError, Error: "api_error (HTTP 400): bad key \x1b]0;TITLE\x07 <script>\u009b31m"}
	line := progressLine(rec, job{run: 0, repeat: 1}, c)
	if strings.ContainsAny(line, "\x1b\x07\u009b") {
		t.Errorf("progress line keeps control characters: %q", line)
	}
	if !strings.Contains(line, "bad key") || !strings.Contains(line, "bolts") {
		t.Errorf("progress line lost its text: %q", line)
	}
}

// The CLIs an eval ran, with their versions, for report.html's subtitle:
// it said "claude " for an eval on codex, and never codex's version.
func TestCLIVersions(t *testing.T) {
	r := &Record{Versions: Versions{Claude: "2.1.328", Codex: "0.171.0", Gemini: "0.61.0"}}
	for _, c := range []struct {
		agent, judge, want string
	}{
		{"", "", "claude 2.1.328"},
		{"codex", "codex", "codex 0.171.0"},
		{"codex", "", "codex 0.171.0 · claude 2.1.328"},
		{"gemini", "codex", "gemini 0.61.0 · codex 0.171.0"},
	} {
		r.Agent, r.JudgeAgent = c.agent, c.judge
		if got := strings.Join(r.CLIVersions(), " · "); got != c.want {
			t.Errorf("agent %q judge %q: %s, want %s", c.agent, c.judge, got, c.want)
		}
	}
}
