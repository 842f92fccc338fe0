package app

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/compare"
	"github.com/vibe-test/vibe-test/internal/exit"
)

func compareFlags() []cli.Flag {
	return []cli.Flag{&cli.Float64Flag{Name: "alpha", Category: catVerdict, Value: 0.05, Usage: "the chance of rejecting an unchanged skill"}}
}

// CompareOptions are `vibe-test compare`'s.
type CompareOptions struct {
	// Runs are the run folders: the base runs, pooled, then the candidate.
	Runs  []string
	Alpha float64
}

func compareOptions(c *cli.Context) (CompareOptions, error) {
	o := CompareOptions{Runs: c.Args().Slice(), Alpha: c.Float64("alpha")}
	if len(o.Runs) < 2 {
		return o, exit.Errorf(exit.Tool, "compare: expected BASE_RUN [BASE_RUN2 ...] CANDIDATE_RUN, got %d arguments", len(o.Runs))
	}
	if !(o.Alpha > 0 && o.Alpha < 0.5) { // NaN fails it
		return o, exit.Errorf(exit.Tool, "compare: --alpha: %v, expected a level between 0 and 0.5", o.Alpha)
	}
	return o, nil
}

// runCompare applies the compare package's rule between skill versions:
// the last run is the candidate, the others are base runs, pooled. Exit 0
// accepts, 1 rejects, 2 cannot decide, 3 bad input.
func runCompare(_ context.Context, o CompareOptions, stdio IO) error {
	runs, err := compare.Load(o.Runs)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	cmp := compare.Runs(runs[:len(runs)-1], runs[len(runs)-1], o.Alpha)
	cmp.Write(stdio.Stdout)
	switch {
	case cmp.Undecided != "":
		return exit.Errorf(exit.Indeterminate, "compare: cannot decide: %s", cmp.Undecided)
	case cmp.Rejected():
		return exit.Errorf(exit.Decay, "compare: candidate rejected: %s", strings.Join(cmp.Failures(), "; "))
	}
	return nil
}
