package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// ReportOptions are `vibe-test report`'s.
type ReportOptions struct {
	Dir    string // the run's folder, or a suite's
	Output Output
}

func reportOptions(c *cli.Context) (ReportOptions, error) {
	if c.NArg() != 1 {
		return ReportOptions{}, exit.Errorf(exit.Tool, "report: expected one RUN_DIR, got %d arguments", c.NArg())
	}
	return ReportOptions{Dir: c.Args().First(), Output: outputFrom(c)}, nil
}

// runReport re-renders a saved run with the current code: no model call.
// Derived figures (shapes, statistics, the verdict) are recomputed from the
// record; what the record never held is named, not invented.
func runReport(_ context.Context, o ReportOptions, stdio IO) error {
	dir := o.Dir
	if record.IsSuite(dir) {
		return reportSuite(o, stdio)
	}
	r, err := record.Load(dir)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	if r.Versions.VibeTest != Version {
		fmt.Fprintf(stdio.Stderr, "vibe-test: this run was made by vibe-test %s (run.json schema %d) and is redrawn by %s: shapes, statistics and the verdict are recomputed from the record\n",
			orUnknown(r.Versions.VibeTest), r.SchemaVersion, Version)
	}
	for _, gap := range gaps(dir, r) {
		fmt.Fprintf(stdio.Stderr, "vibe-test: cannot be shown: %s\n", gap)
	}
	redecide(r)
	if r.Error != "" {
		fmt.Fprintf(stdio.Stderr, "vibe-test: the run stopped with an error: %s\n", r.Error)
	}
	if err := o.Output.show(dir, r, stdio); err != nil {
		return exit.With(exit.Tool, err)
	}
	return outcomeError(r)
}

// redecide recomputes a saved run's verdict, except what the record alone
// knows: a run that stopped before its conversations began (drafting the
// tasks failed, say) keeps its status and outcome, which Decide would turn
// into "completed" with nothing to decide; a run that stopped on an error
// stays an error.
func redecide(r *record.Run) {
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
	verdict.Decide(r)
	if r.Error != "" {
		r.Status = record.StatusError
	}
}

// gaps lists what this run's record does not hold.
func gaps(dir string, r *record.Run) []string {
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

func orUnknown(s string) string {
	if s == "" {
		return "(unknown version)"
	}
	return s
}
