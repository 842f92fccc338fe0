package claude

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// Pool makes the structured calls of one schema and model (the judge's) on
// long-lived `claude -p --input-format stream-json` processes, one call at
// a time each, instead of starting a one-shot process per call: the CLI's
// start-up (about half a CPU-second, and up to a second or two of wall on a
// busy 2-core machine) is paid once per process rather than once per call,
// and the first processes start ahead of the calls that will need them.
//
// Every call is the first message after the CLI's /clear, which starts a
// new conversation in the process: the model sees that one prompt (after
// the CLI's record of the command, "The command below was run directly in
// Claude Code… /clear"), never an earlier call's, and total_cost_usd counts
// from 0 again, so a call's cost and tokens are its own (verified on
// 2.1.328; TestPoolCallsAreIndependent). Each process runs in the caller's
// jail in its own empty folder, as a one-shot call does.
//
// Calls of another schema or model go to the one-shot Caller, and so does
// every call once a process could not be started or cleared (a CLI without
// /clear in print mode).
type Pool struct {
	caller        Caller
	schema, model string
	// maxIdle is how many cleared processes wait for calls at most (each
	// holds some 200 MB); one more finishing its call is closed.
	maxIdle int

	ctx    context.Context // ends with Close: stops warm-ups and clears
	cancel context.CancelFunc
	mu     sync.Mutex
	cond   *sync.Cond // a process became ready, or will not
	idle   []*pooled
	// coming are the processes starting or clearing, ready soon; waiting
	// the calls waiting for one of them.
	coming, waiting int
	broken          bool // a process could not be made ready: one-shot calls only
	closed          bool
	wg              sync.WaitGroup // background warm-ups and clears
	// started counts the processes started.
	started atomic.Int64
}

// PoolIdleMax bounds a pool's ready processes where its user has no better
// bound (each process holds some 200 MB).
const PoolIdleMax = 8

// ClearRecordChars is the length of what the CLI puts before each pooled
// call's prompt in the same user message: the record of /clear (a caveat,
// the command, its empty output; 2.1.328).
const ClearRecordChars = 395

// pooled is one process of the pool and its folder.
type pooled struct {
	s   *Session
	dir string
}

// NewPool starts a pool for the calls of schema and model through c, with
// ready processes for the first calls (at most maxIdle; maxIdle < 1 is 1).
// A call that finds none ready starts one, which stays for later calls.
func NewPool(c Caller, schema, model string, ready, maxIdle int) *Pool {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{caller: c, schema: schema, model: model, maxIdle: max(maxIdle, 1), ctx: ctx, cancel: cancel}
	p.cond = sync.NewCond(&p.mu)
	for range min(ready, p.maxIdle) {
		p.warm()
	}
	return p
}

// PooledArgs is the argv of a pool's process: StructuredArgs with no
// prompt, reading the calls as stream-json user messages on stdin.
func PooledArgs(schema, model string) []string {
	args := StructuredArgs("", schema, model)
	// StructuredArgs starts "-p", prompt: keep -p, drop the empty prompt.
	return append([]string{"-p", "--input-format", "stream-json"}, args[2:]...)
}

// Structured makes one call, as Caller.Structured does.
func (p *Pool) Structured(ctx context.Context, prompt, schema, model string) (Turn, error) {
	if schema != p.schema || model != p.model {
		return p.caller.Structured(ctx, prompt, schema, model)
	}
	w, ok := p.take()
	if !ok {
		return p.caller.Structured(ctx, prompt, schema, model)
	}
	if w == nil {
		var err error
		if w, err = p.start(ctx); err != nil {
			if ctx.Err() != nil {
				return Turn{}, err
			}
			p.mu.Lock()
			p.broken = true
			p.mu.Unlock()
			return p.caller.Structured(ctx, prompt, schema, model)
		}
	}
	out, err := w.s.Send(ctx, prompt, nil, p.caller.Timeout)
	out.Turn = p.caller.priced(out.Turn)
	if w.s.dead {
		// Send ended the process (a failed, timed-out or stopped call).
		w.close()
	} else {
		p.release(w)
	}
	if err != nil {
		return out.Turn, err
	}
	return out.Turn, structuredFailure(out, p.caller.Timeout)
}

// take hands out a ready process (nil: none is, start one), or says the
// pool is not to be used. While more processes are on their way (a clear
// takes some 20–100 ms, a start up to seconds) than calls wait for them,
// it waits for one rather than start another.
func (p *Pool) take() (*pooled, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if p.broken || p.closed {
			return nil, false
		}
		if n := len(p.idle); n > 0 {
			w := p.idle[n-1]
			p.idle = p.idle[:n-1]
			return w, true
		}
		if p.coming <= p.waiting {
			return nil, true
		}
		p.waiting++
		p.cond.Wait()
		p.waiting--
	}
}

// arrived ends one process's way to ready (put or closed after it).
func (p *Pool) arrived() {
	p.mu.Lock()
	p.coming--
	p.mu.Unlock()
	p.cond.Broadcast()
}

// warm starts a process in the background, ready for a later call.
func (p *Pool) warm() {
	p.mu.Lock()
	p.coming++
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer p.arrived()
		w, err := p.start(p.ctx)
		if err != nil {
			if p.ctx.Err() == nil {
				p.mu.Lock()
				p.broken = true
				p.mu.Unlock()
			}
			return
		}
		p.put(w)
	}()
}

// release clears a process after its call and puts it back, in the
// background: the caller has its answer already.
func (p *Pool) release(w *pooled) {
	p.mu.Lock()
	p.coming++
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer p.arrived()
		if err := w.clear(p.ctx, p.caller); err != nil {
			w.close()
			return
		}
		p.put(w)
	}()
}

// put makes a cleared process ready, or closes it when the pool is full or
// closed.
func (p *Pool) put(w *pooled) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < p.maxIdle {
		p.idle = append(p.idle, w)
		w = nil
	}
	p.mu.Unlock()
	if w != nil {
		w.close()
	}
}

// start starts a process in a new folder and clears it.
func (p *Pool) start(ctx context.Context) (*pooled, error) {
	dir, err := os.MkdirTemp("", "work-")
	if err != nil {
		return nil, fmt.Errorf("creating a folder for the call: %w", err)
	}
	c := p.caller
	inv := Invocation{Binary: c.Binary, Args: PooledArgs(p.schema, p.model), Env: c.Env(dir), Dir: dir, Grace: c.Grace}
	if c.Jail != nil {
		j := c.Jail.With("", dir, []string{dir}, nil)
		inv.Jail = &j
	}
	s, err := StartSession(inv)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p.started.Add(1)
	w := &pooled{s: s, dir: dir}
	if err := w.clear(ctx, c); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// clear sends /clear and checks the CLI ran it.
func (w *pooled) clear(ctx context.Context, c Caller) error {
	out, err := w.s.Send(ctx, "/clear", nil, c.Timeout)
	if err != nil {
		return err
	}
	if f := out.Turn.Failure(out.ExitCode); f != "" || out.Turn.LocalCommand != "clear" {
		return fmt.Errorf("the CLI did not clear the call's process (local_command %q%s)", out.Turn.LocalCommand, stderrHint(w.s.Stderr()))
	}
	return nil
}

func (w *pooled) close() {
	w.s.Close()
	os.RemoveAll(w.dir)
}

// Started is how many processes the pool has started.
func (p *Pool) Started() int { return int(p.started.Load()) }

// Close ends every process of the pool: those starting or clearing are
// stopped, the ready ones closed. Calls after Close are one-shot.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
	p.cancel()
	p.wg.Wait()
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	// At once: each takes its exit's time (some 100 ms), and the run's
	// end waits for the last.
	var wg sync.WaitGroup
	for _, w := range idle {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.close()
		}()
	}
	wg.Wait()
}
