package suite

import (
	"context"
	"fmt"
	"time"

	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/term"
)

// Resume continues every unfinished skill run of the suite folder dir
// (engine.Resume each, side by side), under one limit and one budget again:
// the runs' recorded --concurrency and --max-budget-usd (the suite's), or
// rs.MaxBudgetUSD. A skill that stopped before its run began has nothing to
// resume: its entry keeps why, and the suite's exit code counts it.
func Resume(ctx context.Context, dir string, rs engine.ResumeSettings, stdio engine.IO, h Hooks) (*record.Suite, error) {
	idx, err := record.LoadSuite(dir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	type todo struct {
		i   int
		dir string
		run *record.Run
	}
	var work []todo
	// What every skill spent so far: the budget is the suite's, all its
	// skills together. Each resumed run added only its own record, as it
	// started: a resume without a new budget spent the first run's budget
	// again on the unfinished skills, and one run could start before
	// another's record was counted.
	var settled float64
	for i, e := range idx.Skills {
		rd := e.Dir(dir)
		r, err := record.SkillRun(dir, e)
		if err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		if r != nil {
			engine.TallyCosts(r)
			settled += r.Costs.Total
		}
		if r == nil || len(r.Conversations) == 0 {
			fmt.Fprintf(stdio.Stderr, "vibe-test: %s stopped before its conversations began, so it cannot be resumed: run it again on its own (%s)\n", term.Line(e.Name), term.Line(e.Path))
			idx.Skills[i].NeverBegan() // counted: exit 3, not a pass
			continue
		}
		if engine.Finished(r) {
			idx.Skills[i] = record.EntryOf(e, r)
			continue
		}
		work = append(work, todo{i, rd, r})
	}
	if len(work) == 0 {
		finish(ctx, idx)
		return idx, nil
	}
	budget := work[0].run.Config.MaxBudgetUSD
	if rs.MaxBudgetUSD != nil {
		budget = *rs.MaxBudgetUSD
	}
	rs.Shared = engine.NewShared(work[0].run.Config.Concurrency, budget)
	rs.Shared.Budget.Spend(settled)
	rs.Shared.Counted = true
	idx.Status, idx.FinishedAt = record.StatusRunning, time.Time{}
	if err := record.SaveSuite(dir, idx); err != nil {
		return idx, exit.With(exit.Tool, err)
	}
	var jobs []job
	for _, w := range work {
		jobs = append(jobs, job{i: w.i, run: func(sio engine.IO, eh engine.Hooks) (*record.Run, error) {
			return engine.Resume(ctx, w.dir, w.run, rs, sio, eh)
		}})
	}
	if err := runSide(ctx, dir, idx, jobs, stdio, h); err != nil {
		return idx, err
	}
	if ctx.Err() != nil {
		return idx, exit.Errorf(exit.Interrupted, "interrupted: `vibe-test resume %s` continues the suite", term.Arg(dir))
	}
	return idx, nil
}
