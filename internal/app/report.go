package app

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/report"
	"github.com/vibe-test/vibe-test/internal/term"
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
	if err := o.Output.checkFiles("", recordedInputs(o.Dir)...); err != nil {
		return err
	}
	// Nor over its pages: --markdown RUN/chart.html replaced the chart.
	if err := o.Output.checkOutside(o.Dir); err != nil {
		return err
	}
	dir := o.Dir
	if record.IsSuite(dir) {
		return reportSuite(o, stdio)
	}
	if eval.IsEvalDir(dir) {
		return reportEval(dir, o.Output, stdio)
	}
	r, err := record.Load(dir)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	if r.Versions.VibeTest != Version {
		fmt.Fprintf(stdio.Stderr, "vibe-test: this run was made by vibe-test %s (run.json schema %d) and is redrawn by %s: shapes, statistics and the verdict are recomputed from the record\n",
			term.Line(orUnknown(r.Versions.VibeTest)), r.SchemaVersion, Version)
	}
	for _, gap := range report.Gaps(dir, r) {
		fmt.Fprintf(stdio.Stderr, "vibe-test: cannot be shown: %s\n", gap)
	}
	report.Redecide(r)
	if r.Error != "" {
		// It may quote a CLI's stderr: no escape sequence reaches the
		// terminal.
		fmt.Fprintf(stdio.Stderr, "vibe-test: the run stopped with an error: %s\n", term.Line(r.Error))
	}
	if err := o.Output.show(dir, r, stdio); err != nil {
		return exit.With(exit.Tool, err)
	}
	return outcomeError(r)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown version)"
	}
	return s
}
