package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// A run that failed while drafting its tasks is redrawn as it was saved:
// status error, its cause in the sentence, exit 3, not "completed".
func TestRedecideKeepsAnEarlyError(t *testing.T) {
	r := &record.Run{Status: record.StatusError, Error: "drafting the tasks: the API refused the credentials (HTTP 401)"}
	Redecide(r)
	if r.Status != record.StatusError || r.Outcome.Exit != 3 || !strings.Contains(r.Outcome.Sentence, "HTTP 401") {
		t.Errorf("status %s, outcome %+v", r.Status, r.Outcome)
	}
	saved := &record.Run{Status: record.StatusError, Error: "x", Outcome: record.Outcome{Exit: 3, Verdict: "error", Sentence: "No verdict: x"}}
	Redecide(saved)
	if saved.Outcome.Sentence != "No verdict: x" {
		t.Errorf("the saved outcome was replaced: %+v", saved.Outcome)
	}
	// A run that stopped on an error mid-way stays an error after Decide.
	mid := &record.Run{Status: record.StatusError, Error: "refused", Conversations: []record.Conversation{{Index: 1, Status: record.StatusCompleted}}}
	Redecide(mid)
	if mid.Status != record.StatusError {
		t.Errorf("mid-run error redrawn as %s", mid.Status)
	}
	// Its outcome is no verdict, exit 3, as the run exited: Decide alone
	// said held or decay on conversations that had all finished.
	held := testenv.CopyOfRun(t, "held")
	r2, err := record.Load(held)
	if err != nil {
		t.Fatal(err)
	}
	r2.Error = "judging: the API refused the credentials (HTTP 401)"
	Redecide(r2)
	if r2.Status != record.StatusError || r2.Outcome.Exit != exit.Tool || r2.Outcome.Verdict != record.VerdictError || !strings.Contains(r2.Outcome.Sentence, "HTTP 401") {
		t.Errorf("a finished run that stopped on an error: status %s, outcome exit %d %s %q", r2.Status, r2.Outcome.Exit, r2.Outcome.Verdict, r2.Outcome.Sentence)
	}
}

// A suite's skill whose run.json cannot be read is an error naming it, not
// a skill that "stopped before its run began" keeping suite.json's old
// verdict; nor is a run.json gone whose judged probes suite.json records.
func TestSuiteRefusesALostRunRecord(t *testing.T) {
	for name, spoil := range map[string]func(dir string) error{
		"cut short": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"schema_version": 3, "status": `), 0o644)
		},
		"removed": func(dir string) error { return os.Remove(filepath.Join(dir, "run.json")) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := testenv.CopyOfRun(t, "suite")
			idx, err := record.LoadSuite(dir)
			if err != nil {
				t.Fatal(err)
			}
			var e record.SuiteEntry
			for _, s := range idx.Skills {
				if s.Diluted.Probes > 0 {
					e = s
					break
				}
			}
			if e.Name == "" {
				t.Fatal("no skill of the recorded suite has judged probes")
			}
			if err := spoil(e.Dir(dir)); err != nil {
				t.Fatal(err)
			}
			_, err = Suite(dir, func(string, *record.Run) {})
			if exit.Code(err) != exit.Tool || !strings.Contains(fmt.Sprint(err), e.Dir(dir)) || strings.Contains(fmt.Sprint(err), "\n") {
				t.Errorf("%s: %v (exit %d), want one line naming %s, exit 3", name, err, exit.Code(err), e.Dir(dir))
			}
		})
	}
	// A skill that never had a run.json nor judged probes stopped before
	// its run began: suite.json keeps why.
	dir := testenv.CopyOfRun(t, "suite")
	if _, err := Suite(dir, func(string, *record.Run) {}); err != nil {
		t.Errorf("the recorded suite: %v", err)
	}
}

// A suite whose process died before a skill's run began left that skill
// pending with exit 0: report (and resume) then passed the suite on a
// skill never measured. It counts as exit 3 now.
func TestSuiteCountsASkillThatNeverBegan(t *testing.T) {
	dir := testenv.CopyOfRun(t, "suite")
	idx, err := record.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Every skill pending, its run folder never made: the process was
	// killed at once.
	for i := range idx.Skills {
		e := &idx.Skills[i]
		if err := os.RemoveAll(e.Dir(dir)); err != nil {
			t.Fatal(err)
		}
		e.Status, e.ExitCode, e.Verdict, e.Diluted, e.Fresh = record.StatusPending, 0, "", record.Rate{}, record.Rate{}
	}
	idx.Status, idx.ExitCode = record.StatusRunning, 0
	if err := record.SaveSuite(dir, idx); err != nil {
		t.Fatal(err)
	}
	got, err := Suite(dir, func(string, *record.Run) {})
	if err != nil {
		t.Fatal(err)
	}
	if got.ExitCode != exit.Tool || got.Skills[0].Status != record.StatusError || !strings.Contains(got.Skills[0].Error, "nothing was measured") {
		t.Errorf("a suite none of whose skills began: exit %d, first skill %+v", got.ExitCode, got.Skills[0])
	}
}

// A suite's report settles its status from its skills as the suite did:
// report recomputed the exit code and kept suite.json's status, so a
// suite whose record said "error" (a skill since resumed on its own)
// reported error beside its skills' codes.
func TestSuiteReportSettlesTheStatus(t *testing.T) {
	dir := testenv.CopyOfRun(t, "suite")
	idx, err := record.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := idx.Status
	idx.Status, idx.ExitCode = record.StatusError, exit.Tool
	if err := record.SaveSuite(dir, idx); err != nil {
		t.Fatal(err)
	}
	got, err := Suite(dir, func(string, *record.Run) {})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != want || got.ExitCode == exit.Tool {
		t.Errorf("status %s, exit %d; want the skills' %s", got.Status, got.ExitCode, want)
	}
}

// A run killed mid-way kept its last tally of costs (a run sums them at
// its end): redrawn, it shows what its turns spent, not $0.
func TestRedecideTalliesAKilledRunsCosts(t *testing.T) {
	r, err := record.Load(testenv.CopyOfRun(t, "held"))
	if err != nil {
		t.Fatal(err)
	}
	want := r.Costs
	r.Status, r.Costs = record.StatusRunning, record.Costs{}
	Redecide(r)
	if r.Costs.Total <= 0 || math.Abs(r.Costs.Agent-want.Agent) > 1e-9 || math.Abs(r.Costs.Judge-want.Judge) > 1e-9 {
		t.Errorf("a killed run's costs: %+v, want its turns' %+v", r.Costs, want)
	}
}
