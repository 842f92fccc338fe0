package suite

import (
	"context"
	"sync"
	"time"

	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
)

// job is one skill's run in a suite: its entry in the index, and what runs
// it (engine.Start or engine.Resume) with the skill's own output and hooks.
type job struct {
	i   int // its entry in idx.Skills
	run func(stdio engine.IO, h engine.Hooks) (*record.Run, error)
	// new: a run that never began (no record) is an error, or interrupted,
	// in the index; a resumed one keeps the status it had.
	new bool
}

// runSide runs the jobs side by side, one goroutine a skill, each skill's
// lines prefixed with its name. As each ends its entry is recorded, the
// index saved to dir and h.Done told; when all have ended the index is
// finished (exit code, status) and saved again. It returns the first save
// error (exit 3).
func runSide(ctx context.Context, dir string, idx *record.Suite, jobs []job, stdio engine.IO, h Hooks) error {
	var mu, outMu sync.Mutex
	var wg sync.WaitGroup
	var saveErr error
	for _, j := range jobs {
		sio := skillIO(stdio, &outMu, idx.Skills[j.i].Name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var eh engine.Hooks
			if h.Show != nil {
				eh.Show = func(dir string, r *record.Run) error { return h.Show(dir, r, sio.Stderr) }
			}
			if h.Progress != nil {
				eh.Progress = h.Progress(sio.Stderr)
			}
			r, err := j.run(sio, eh)
			sio.Stdout.(*prefixWriter).flush()
			sio.Stderr.(*prefixWriter).flush()
			mu.Lock()
			defer mu.Unlock()
			e := idx.Skills[j.i]
			if r != nil {
				e = record.EntryOf(e, r)
				e.Error = ""
			}
			if err != nil {
				e.ExitCode, e.Error = exit.Code(err), err.Error()
				if r == nil && j.new {
					e.Status = record.StatusError
					if e.ExitCode == exit.Interrupted {
						e.Status = record.StatusInterrupted
					}
				}
			}
			idx.Skills[j.i] = e
			if err := record.SaveSuite(dir, idx); err != nil && saveErr == nil {
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
	if err := record.SaveSuite(dir, idx); err != nil {
		return exit.With(exit.Tool, err)
	}
	if saveErr != nil {
		return exit.With(exit.Tool, saveErr)
	}
	return nil
}
