package app

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/term"
)

func resumeFlags() []cli.Flag {
	return append(outputFlags(),
		&cli.Float64Flag{Name: "max-budget-usd", Category: catLimits, Usage: "the run's budget, counting what it already spent", DefaultText: "the run's own"},
		&cli.IntFlag{Name: "turn-retries", Category: catLimits, Value: 3, Usage: "rerun a turn this often after a transient API error"},
		&cli.DurationFlag{Name: "retry-backoff", Category: catLimits, Value: 10 * time.Second, Usage: "the first wait before rerunning a turn"},
	)
}

// ResumeOptions are `vibe-test resume`'s.
type ResumeOptions struct {
	Dir string // the run's folder, or a suite's
	engine.ResumeSettings
	Output Output
}

func resumeOptions(c *cli.Context) (ResumeOptions, error) {
	if c.NArg() != 1 {
		return ResumeOptions{}, exit.Errorf(exit.Tool, "resume: expected one RUN_DIR, got %d arguments", c.NArg())
	}
	o := ResumeOptions{Dir: c.Args().First(), Output: outputFrom(c), ResumeSettings: engine.ResumeSettings{
		TurnRetries: c.Int("turn-retries"), RetryBackoff: c.Duration("retry-backoff"),
	}}
	if err := checkRetries(o.TurnRetries, o.RetryBackoff); err != nil {
		return o, exit.With(exit.Tool, err)
	}
	if c.IsSet("max-budget-usd") {
		v := c.Float64("max-budget-usd")
		if err := checkBudget(v); err != nil {
			return o, exit.With(exit.Tool, err)
		}
		if v == 0 {
			return o, exit.With(exit.Tool, zeroBudget)
		}
		o.MaxBudgetUSD = &v
	}
	return o, nil
}

// runResume continues an interrupted or crashed run: each unfinished
// conversation goes on from its last completed turn with its saved session
// and config dir, and unjudged turns are judged.
func runResume(ctx context.Context, o ResumeOptions, stdio IO) error {
	if err := o.Output.checkFiles("", recordedInputs(o.Dir)...); err != nil {
		return err
	}
	// Nor over its pages: --markdown RUN/chart.html replaced the chart.
	if err := o.Output.checkOutside(o.Dir); err != nil {
		return err
	}
	dir := o.Dir
	if record.IsSuite(dir) {
		return resumeSuite(ctx, o, stdio)
	}
	if eval.IsEvalDir(dir) {
		return resumeEval(ctx, dir, o.Output, stdio)
	}
	r, err := record.Load(dir)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	if finished(r) {
		fmt.Fprintf(stdio.Stdout, "%s: nothing to resume: the run finished (status %s); `%s report %s` shows it again\n", dir, r.Status, stdio.prog(), term.Arg(dir))
		return nil
	}
	if demo.IsRun(r) {
		return exit.Errorf(exit.Tool, "%s: a demo run cannot be resumed (its skill and scripted model existed only while it ran): run `%s demo` again", dir, stdio.prog())
	}
	r, err = engine.Resume(ctx, dir, r, o.ResumeSettings, engineIO(stdio), hooks(o.Output, stdio))
	if err != nil {
		return err
	}
	return outcomeError(r)
}

// finished says whether a run has nothing left to resume.
func finished(r *record.Run) bool { return engine.Finished(r) }
