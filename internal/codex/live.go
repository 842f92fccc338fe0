package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/proc"
)

// AppServerArgs is the argv of a live conversation's process: codex's
// JSON-RPC server on stdio, with the same config.toml as exec.
func AppServerArgs() []string { return []string{"app-server", "--strict-config"} }

// clientName is what the app-server is told the client is (it becomes the
// requests' originator); nothing the agent sees may name the tool that
// drives it.
const clientName = "agent_client"

// Live is one `codex app-server` process for a whole conversation
// (PROTOCOL.md §6.2): the first Send starts or resumes the thread, each
// Send is one turn/start on it. A turn that does not complete (an error,
// a timeout, the context cancelled, the process gone) stops the process,
// as claude's live session does; start another, resuming the thread, to
// go on.
type Live struct {
	inv    Invocation
	spec   agent.TurnSpec
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	lines  <-chan []byte // stdout, one line each; closed at EOF
	stderr proc.Stderr
	waited chan struct{}
	werr   error
	dead   bool

	nextID int
	thread string
	model  string
	// costBase is the thread's estimated cost before this process (a
	// resumed thread's rollout); callCost what this process's calls cost.
	costBase, callCost float64
	// total is the thread's token total at the last usage update (-1
	// before the first), which tells a model call from a repeat.
	total int64
}

var _ agent.Live = (*Live)(nil)

// StartLive starts the app-server for a conversation; it waits for the
// first Send. spec.Resume, when set, is the thread to continue.
func (a Agent) StartLive(spec agent.TurnSpec) (agent.Live, error) {
	inv, err := a.invocation(spec, AppServerArgs())
	if err != nil {
		return nil, err
	}
	l := &Live{inv: inv, spec: spec, waited: make(chan struct{}), total: -1}
	if spec.Resume != "" {
		if path, err := RolloutFile(CodexHome(spec.Home), spec.Resume); err == nil {
			if ro, err := ReadRollout(path); err == nil {
				l.costBase = ro.ThreadCost()
			}
		}
	}
	cmd, started, err := inv.command()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = &l.stderr
	stdin, pr, err := proc.StartPiped(cmd, "codex", inv.Binary)
	started()
	if err != nil {
		return nil, err
	}
	l.cmd, l.stdin, l.stdout = cmd, stdin, pr
	l.lines = proc.ReadLines(pr, 64)
	go func() {
		l.werr = cmd.Wait()
		close(l.waited)
	}()
	return l, nil
}

// send writes one JSON-RPC message; a request gets the next id.
func (l *Live) send(method string, params any, request bool) (int, error) {
	msg := map[string]any{"method": method}
	if params != nil {
		msg["params"] = params
	}
	id := 0
	if request {
		l.nextID++
		id = l.nextID
		msg["id"] = id
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return 0, err
	}
	_, err = l.stdin.Write(append(b, '\n'))
	return id, err
}

// Send runs one turn: prompt as the next user message of the thread,
// every line the server sends until the turn completes copied to stdout
// (the transcript ParseTurn reads). timeout bounds the turn (0: none),
// the first one's handshake and thread start included.
func (l *Live) Send(ctx context.Context, prompt string, stdout io.Writer, timeout time.Duration) (Outcome, error) {
	input := []map[string]any{{"type": "text", "text": prompt, "text_elements": []any{}}}
	return l.turn(ctx, stdout, timeout, "turn/start", map[string]any{"threadId": "", "input": input})
}

// Compact compacts the thread as codex's /compact does (thread/compact/
// start): one summary call, after which the history is the user's
// messages and the summary. It runs as a turn of its own; the Turn has
// LocalCommand "compact" and the compaction (trigger manual), as claude's
// /compact turn has.
func (l *Live) Compact(ctx context.Context, stdout io.Writer, timeout time.Duration) (Outcome, error) {
	out, err := l.turn(ctx, stdout, timeout, "thread/compact/start", map[string]any{"threadId": ""})
	out.Turn.LocalCommand = "compact"
	for i := range out.Turn.Compactions {
		out.Turn.Compactions[i].Trigger = "manual"
	}
	return out, err
}

// turn starts the thread when it is not yet, sends the request that
// starts a turn (its threadId filled in), and reads until that turn
// completes.
func (l *Live) turn(ctx context.Context, stdout io.Writer, timeout time.Duration, method string, params map[string]any) (Outcome, error) {
	var out Outcome
	if l.dead {
		return out, errors.New("the codex session has already ended")
	}
	p := newParser()
	p.prevTotal = l.total
	var werr error
	save := func(line []byte) {
		p.line(line)
		if stdout != nil && werr == nil {
			if _, err := stdout.Write(line); err != nil {
				werr = fmt.Errorf("writing transcript: %w", err)
			}
		}
	}
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	// wait reads lines until done says the one it wants has come, and
	// returns it; every server request is refused (none is expected
	// under approval never).
	wait := func(done func(gjson.Result) bool) (gjson.Result, error) {
		for {
			select {
			case line, ok := <-l.lines:
				if !ok {
					return gjson.Result{}, io.EOF
				}
				save(line)
				if werr != nil {
					return gjson.Result{}, werr
				}
				m := gjson.ParseBytes(bytes.TrimSpace(line))
				if m.Get("method").Exists() && m.Get("id").Exists() {
					b, _ := json.Marshal(map[string]any{"id": json.RawMessage(m.Get("id").Raw),
						"error": map[string]any{"code": -32601, "message": "not supported by this client"}})
					_, _ = l.stdin.Write(append(b, '\n'))
					continue
				}
				if done(m) {
					return m, nil
				}
			case <-timer:
				out.TimedOut = true
				return gjson.Result{}, context.DeadlineExceeded
			case <-ctx.Done():
				return gjson.Result{}, ctx.Err()
			}
		}
	}
	// call sends a request and waits for its response; an error response
	// is an error.
	call := func(method string, params any) (gjson.Result, error) {
		id, err := l.send(method, params, true)
		if err != nil {
			return gjson.Result{}, err
		}
		m, err := wait(func(m gjson.Result) bool { return m.Get("id").Int() == int64(id) && !m.Get("method").Exists() })
		if err == nil {
			if e := m.Get("error"); e.Exists() && e.Type != gjson.Null {
				err = &rpcError{method: method, msg: e.Get("message").String()}
			}
		}
		return m, err
	}

	var err error
	if l.thread == "" {
		err = l.begin(call)
	}
	turnID := ""
	if err == nil {
		params["threadId"] = l.thread
		var m gjson.Result
		if m, err = call(method, params); err == nil {
			turnID = m.Get("result.turn.id").String()
		}
	}
	if err == nil {
		_, err = wait(func(m gjson.Result) bool {
			return m.Get("method").String() == "turn/completed" &&
				(turnID == "" || m.Get("params.turn.id").String() == turnID)
		})
	}
	if werr != nil && err == nil {
		err = werr
	}
	turn := p.finish()
	l.total = p.prevTotal
	l.price(p.calls)
	if err == nil && Failure(turn, 0) == "" {
		l.fill(&turn, p.started)
		out.Turn = turn
		return out, nil
	}
	// Failed, stopped or gone: end the process and read its last lines.
	l.stop()
	l.collect(save)
	turn = p.finish()
	l.fill(&turn, p.started)
	var re *rpcError
	if errors.As(err, &re) && !turn.HasResult {
		// A refused request (a thread that cannot be resumed, ...): the
		// turn failed with codex's message.
		turn.HasResult, turn.IsError = true, true
		turn.TerminalReason = "error"
		turn.Errors = append(turn.Errors, re.Error())
	}
	out.Turn = turn
	out.ExitCode = proc.ExitCode(l.werr)
	out.Stderr = l.Stderr()
	if werr != nil {
		return out, werr
	}
	if w := l.werr; w != nil && !proc.IsExit(w) {
		return out, fmt.Errorf("waiting for codex: %w", w)
	}
	return out, nil
}

// rpcError is an error response of the app-server.
type rpcError struct{ method, msg string }

func (e *rpcError) Error() string {
	return fmt.Sprintf("codex app-server refused %s: %s", e.method, e.msg)
}

// begin is the handshake: initialize, initialized, then thread/start (a
// new thread in the sandbox) or thread/resume (spec.Resume).
func (l *Live) begin(call func(string, any) (gjson.Result, error)) error {
	if _, err := call("initialize", map[string]any{"clientInfo": map[string]any{"name": clientName, "title": nil, "version": "1"}}); err != nil {
		return err
	}
	if _, err := l.send("initialized", nil, false); err != nil {
		return err
	}
	method, params := "thread/start", map[string]any{"cwd": l.spec.Dir}
	if l.spec.Resume != "" {
		method, params = "thread/resume", map[string]any{"threadId": l.spec.Resume, "cwd": l.spec.Dir}
	}
	m, err := call(method, params)
	if err != nil {
		return err
	}
	l.thread = m.Get("result.thread.id").String()
	l.model = m.Get("result.model").String()
	if l.thread == "" {
		return errors.New("codex app-server started no thread")
	}
	return nil
}

// price adds the estimated cost of this process's calls.
func (l *Live) price(calls []CallUsage) {
	if p, ok := PriceOf(l.model); ok {
		for _, c := range calls {
			l.callCost += p.Cost(c)
		}
	}
}

// fill adds what the process knows beyond the turn's own lines: the
// thread, its model, the running cost; and, from the rollout, the skills
// codex injected (its userMessage items carry the prompt only), when the
// turn started: the rollout's newest turn is the previous one otherwise.
func (l *Live) fill(t *Turn, turnStarted bool) {
	if t.SessionID == "" {
		t.SessionID = l.thread
	}
	if t.Model == "" {
		t.Model = l.model
	}
	t.CostUSD = l.costBase + l.callCost
	if l.thread == "" {
		return
	}
	if path, err := RolloutFile(CodexHome(l.spec.Home), l.thread); err == nil {
		if ro, err := ReadRollout(path); err == nil {
			if turnStarted {
				t.Skills = ro.Skills
			}
			if t.CLIVersion == "" {
				t.CLIVersion = ro.CLIVersion
			}
		}
	}
}

// stop ends the process group: SIGTERM, then SIGKILL after the grace
// period. Safe to call more than once.
func (l *Live) stop() {
	if l.dead {
		return
	}
	l.dead = true
	_ = l.stdin.Close()
	proc.StopGroup(l.cmd.Process.Pid, l.waited, l.inv.grace())
}

// collect reads the lines the process printed until its stdout closed; a
// helper that outlived it holding the pipe is cut off after the grace
// period.
func (l *Live) collect(save func([]byte)) {
	proc.Drain(l.lines, l.waited, l.stdout, l.inv.grace(), save)
}

// Stderr is what the process wrote to stderr so far (its first 64 KiB).
func (l *Live) Stderr() string {
	return l.stderr.String()
}

// Close ends a session whose turns all succeeded: closing stdin lets the
// app-server exit by itself; it is stopped (SIGTERM) if it has not after
// the grace period, and killed after another. A no-op after a failed Send.
func (l *Live) Close() {
	if l.dead {
		return
	}
	l.dead = true
	proc.CloseInput(l.stdin, l.stdout, l.lines, l.waited, l.cmd.Process.Pid, l.inv.grace())
}
