package suite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/vibe-test/vibe-test/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/term"
	"github.com/vibe-test/vibe-test/result"
)

// Resume continues every unfinished skill run of the suite folder dir
// (engine.Resume each, side by side), under one limit and one budget again:
// the runs' recorded --concurrency and --max-budget-usd (the suite's), or
// rs.MaxBudgetUSD. A skill that stopped before its run began has nothing to
// resume: its entry keeps why, and the suite's exit code counts it.
func Resume(ctx context.Context, dir string, rs engine.ResumeSettings, stdio engine.IO, h Hooks) (*result.Suite, error) {
	idx, err := result.LoadSuite(dir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	type todo struct {
		i   int
		dir string
		run *result.Run
	}
	var work []todo
	for i, e := range idx.Skills {
		rd := filepath.Join(dir, filepath.Clean("/" + e.RunDir)[1:])
		r, err := result.Load(rd)
		if err != nil || r.Plan == nil || len(r.Conversations) == 0 {
			fmt.Fprintf(stdio.Stderr, "vibe-test: %s stopped before its conversations began, so it cannot be resumed: run it again on its own (%s)\n", term.Line(e.Name), term.Line(e.Path))
			continue
		}
		if engine.Finished(r) {
			idx.Skills[i] = result.EntryOf(e, r)
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
	idx.Status, idx.FinishedAt = result.StatusRunning, time.Time{}
	if err := result.SaveSuite(dir, idx); err != nil {
		return idx, exit.With(exit.Tool, err)
	}
	var mu, outMu sync.Mutex
	var wg sync.WaitGroup
	var saveErr error
	for _, w := range work {
		name := idx.Skills[w.i].Name
		sio := skillIO(stdio, &outMu, name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			eh := engine.Hooks{Show: h.Show}
			if h.Progress != nil {
				eh.Progress = h.Progress(sio.Stderr)
			}
			r, err := engine.Resume(ctx, w.dir, w.run, rs, sio, eh)
			sio.Stdout.(*prefixWriter).flush()
			sio.Stderr.(*prefixWriter).flush()
			mu.Lock()
			defer mu.Unlock()
			e := idx.Skills[w.i]
			if r != nil {
				e = result.EntryOf(e, r)
				e.Error = ""
			}
			if err != nil {
				e.ExitCode, e.Error = exit.Code(err), err.Error()
			}
			idx.Skills[w.i] = e
			if err := result.SaveSuite(dir, idx); err != nil && saveErr == nil {
				saveErr = err
			}
			if h.Done != nil {
				// Done writes beside the other skills' lines.
				outMu.Lock()
				h.Done(e)
				outMu.Unlock()
			}
		}()
	}
	wg.Wait()
	idx.FinishedAt = time.Now().UTC()
	finish(ctx, idx)
	if err := result.SaveSuite(dir, idx); err != nil {
		return idx, exit.With(exit.Tool, err)
	}
	if saveErr != nil {
		return idx, exit.With(exit.Tool, saveErr)
	}
	if ctx.Err() != nil {
		return idx, exit.Errorf(exit.Interrupted, "interrupted: `vibe-test resume %s` continues the suite", dir)
	}
	return idx, nil
}
