// Package report redraws saved runs with the current code, with no model
// call: a run's shapes, statistics and verdict are decided again from its
// record (Redecide), what the record never held is named rather than
// invented (Gaps), and a suite's table is rebuilt from its skills' run
// folders (Suite).
package report

import (
	"os"
	"path/filepath"

	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// Redecide recomputes a saved run's verdict, except what the record alone
// knows: a run that stopped before its conversations began (drafting the
// tasks failed, say) keeps its status and outcome, which Decide would turn
// into "completed" with nothing to decide; a run that stopped on an error
// stays an error.
func Redecide(r *record.Run) {
	if len(r.Conversations) == 0 && (r.Status == record.StatusError || r.Status == record.StatusInterrupted) {
		switch {
		case r.Outcome.Verdict != "":
		case r.Status == record.StatusInterrupted:
			r.Outcome = record.Outcome{Exit: exit.Interrupted, Verdict: "interrupted", Sentence: "Interrupted before the conversations began."}
		default:
			r.Outcome = record.Outcome{Exit: exit.Tool, Verdict: "error", Sentence: "No verdict: " + r.Error}
		}
		return
	}
	// A run killed mid-way kept the costs of its last tally (a run sums
	// them at its end): its turns' own say what it spent, and report
	// showed $0 for a run that had spent $0.32.
	if r.Status != record.StatusCompleted {
		engine.TallyCosts(r)
	}
	verdict.Decide(r)
	verdict.StoppedOnError(r)
}

// Gaps lists what this run's record does not hold.
func Gaps(dir string, r *record.Run) []string {
	var out []string
	if r.Rubric == nil {
		out = append(out, "the rubric's criterion texts (run.json has no rubric): failed criteria are shown by id")
	}
	if len(r.Fresh) == 0 && len(r.Conversations) > 0 {
		out = append(out, "a decay verdict: this run never asked its probes fresh (it predates the fresh arm), so dilution cannot be told from task difficulty")
	}
	traces, transcripts := true, true
	for _, c := range r.Conversations {
		for _, t := range c.Turns {
			if t.ToolCalls == nil {
				traces = false
			}
			if _, err := os.Stat(filepath.Join(dir, t.Transcript)); err != nil {
				transcripts = false
			}
		}
	}
	if !traces {
		out = append(out, "the condensed tool-call traces (this run did not record them in run.json)")
	}
	if !transcripts {
		out = append(out, "some raw transcripts are missing from the run folder, so `rejudge` cannot redo those turns")
	}
	return out
}

// Suite loads the suite folder dir and decides each skill's run again from
// its run folder, calling redrawn with each (to draw its chart again); a
// skill that stopped before its run began keeps what suite.json says. The
// suite's exit code is the worst of its skills' (record.WorstExit); a
// shard's verdicts are partial, so only its errors and interruptions
// count.
func Suite(dir string, redrawn func(dir string, r *record.Run)) (*record.Suite, error) {
	idx, err := record.LoadSuite(dir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	for i, e := range idx.Skills {
		rd := e.Dir(dir)
		r, err := record.SkillRun(dir, e)
		if err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		if r == nil {
			// The skill stopped before its run began: suite.json keeps why,
			// or it never said (its process died), and nothing passed.
			idx.Skills[i].NeverBegan()
			continue
		}
		Redecide(r)
		redrawn(rd, r)
		idx.Skills[i] = record.EntryOf(e, r)
	}
	// Its status too, from its skills', as the suite settles it: report
	// recomputed the exit code and kept suite.json's status (an error
	// beside exit 0 once its skills were resumed one by one).
	idx.Settle(false)
	return idx, nil
}
