package gemini

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
	"github.com/vibe-test/vibe-test/internal/jsonline"
	"github.com/vibe-test/vibe-test/internal/proc"
)

// LiveArgs is the argv of a live session: the CLI as an ACP agent
// (JSON-RPC 2.0, one message a line, on stdin and stdout), the model
// pinned. The session itself is made (or loaded, to resume) over ACP.
func LiveArgs(model string) []string {
	if model == "" {
		model = DefaultModel
	}
	return []string{"--acp", "--model", model}
}

// Live is one long-lived `gemini --acp` process holding one session: each
// Send is a session/prompt, answered when its response (stopReason or an
// error) comes. The handshake (initialize, then session/new or, to resume,
// session/load) runs in the first Send and counts to its timeout (the CLI
// takes some 5 s to initialize). A turn that does not succeed stops the
// process, as claude's live session does; start a new Live resuming the
// session to go on. Transcripts hold the CLI's own ACP lines (the
// handshake's in the first turn's), then the turn_end line with the
// session records, which carry what ACP does not send: the tool calls'
// arguments and results, and the tokens of each model call.
type Live struct {
	spec   agent.TurnSpec
	inv    invocation
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	lines  <-chan []byte // the CLI's stdout, a line each; closed at EOF
	stderr proc.Stderr
	waited chan struct{}
	werr   error
	dead   bool

	nextID    int
	sessionID string
	ready     bool
}

var _ agent.Live = (*Live)(nil)

// StartLive starts the process; its first Send is the first turn.
func (a Agent) StartLive(spec agent.TurnSpec) (agent.Live, error) {
	if err := checkHome(spec); err != nil {
		return nil, err
	}
	if spec.Resume != "" {
		if err := keepForLoad(spec.Home, spec.Resume); err != nil {
			return nil, err
		}
	}
	l := &Live{spec: spec, inv: specInvocation(spec, LiveArgs(spec.Model)),
		waited: make(chan struct{}), nextID: 1}
	cmd, started, err := l.inv.command()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = &l.stderr
	stdin, pr, err := proc.StartPiped(cmd, "gemini", spec.Binary)
	started()
	if err != nil {
		return nil, err
	}
	l.cmd, l.stdin, l.stdout = cmd, stdin, pr
	l.lines = proc.ReadLines(pr, 256)
	go func() {
		l.werr = cmd.Wait()
		close(l.waited)
	}()
	return l, nil
}

// SessionID is the ACP session's id (the CLI's session id, which -r and
// session/load take); "" before the first turn's handshake.
func (l *Live) SessionID() string { return l.sessionID }

// errTurnOver ends the read loop of a turn normally.
var errTurnOver = errors.New("turn over")

// Send runs one turn: prompt as a session/prompt, its messages copied to
// stdout as they arrive, then the turn_end line. timeout bounds the turn
// (with the handshake in the first); DefaultTimeout when 0. A non-nil
// error means the process could not be driven at all.
func (l *Live) Send(ctx context.Context, prompt string, stdout io.Writer, timeout time.Duration) (agent.Outcome, error) {
	var out agent.Outcome
	if l.dead {
		return out, errors.New("the gemini session has already ended")
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	turnCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var buf bytes.Buffer
	var writeErr error
	save := func(line []byte) {
		buf.Write(line)
		if stdout != nil && writeErr == nil {
			if _, err := stdout.Write(line); err != nil {
				writeErr = fmt.Errorf("writing the transcript: %w", err)
			}
		}
	}
	before := takeSnapshot(l.spec.Home)

	err := l.handshake(turnCtx)
	if err == nil {
		id := l.send("session/prompt", map[string]any{
			"sessionId": l.sessionID,
			"prompt":    []map[string]string{{"type": "text", "text": prompt}},
		})
		err = l.readUntil(turnCtx, id, save)
	}
	ended := errors.Is(err, errTurnOver)
	if !ended {
		if errors.Is(turnCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			out.TimedOut = true
		}
		l.stop()
		l.collect(save)
	}
	end := turnEnd(l.spec.Home, l.sessionID, before)
	if !ended {
		code := l.exitCode()
		end.ExitCode = &code
		out.ExitCode = code
	}
	end.Retries = countRetries(l.Stderr())
	save(end.line())
	turn, perr := ParseTurn(bytes.NewReader(buf.Bytes()))
	if turn.SessionID == "" {
		turn.SessionID = l.sessionID
	}
	out.Turn = turn
	out.Stderr = l.Stderr()
	if ended && turn.Failure(0) != "" {
		// As with claude, a failed turn ends the process: its history
		// would carry the failed prompt into the next.
		l.stop()
		out.ExitCode = l.exitCode()
	}
	switch {
	case writeErr != nil:
		return out, writeErr
	case perr != nil:
		return out, perr
	case err != nil && !ended && !errors.Is(err, io.EOF) && turnCtx.Err() == nil:
		return out, err
	}
	return out, nil
}

// handshake initializes the agent and makes (or loads) the session, once.
// Its messages are not part of any turn's transcript. A loaded session is
// replayed to the client as session/update notifications (every message
// of its history, sent on after the load's response): they are read and
// dropped until the CLI has been quiet for replayQuiet, so none is taken
// for the first turn's.
func (l *Live) handshake(ctx context.Context) error {
	if l.ready {
		return nil
	}
	save := func([]byte) {}
	id := l.send("initialize", map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
	})
	if err := l.readUntil(ctx, id, save); !errors.Is(err, errTurnOver) {
		return err
	}
	params := map[string]any{"cwd": l.spec.Dir, "mcpServers": []any{}}
	method := "session/new"
	if l.spec.Resume != "" {
		method = "session/load"
		params["sessionId"] = l.spec.Resume
	}
	id = l.send(method, params)
	var resp gjson.Result
	err := l.readUntilResp(ctx, id, save, &resp)
	if !errors.Is(err, errTurnOver) {
		return err
	}
	if e := resp.Get("error"); e.Exists() {
		return fmt.Errorf("gemini %s: %s", method, e.Get("message").String())
	}
	l.sessionID = resp.Get("result.sessionId").String()
	if l.spec.Resume != "" {
		l.sessionID = l.spec.Resume
	}
	if l.sessionID == "" {
		return fmt.Errorf("gemini %s answered no session id", method)
	}
	if l.spec.Resume != "" {
		if err := l.drainReplay(ctx); err != nil {
			return err
		}
	}
	l.ready = true
	return nil
}

// replayQuiet is how long the CLI must say nothing after a session/load
// before the replay of its history counts as over: it writes the replay in
// one loop, a message after the other, so a pause this long means it is
// done (the first turn's own messages come only after a model call).
const replayQuiet = time.Second

func (l *Live) drainReplay(ctx context.Context) error {
	t := time.NewTimer(replayQuiet)
	defer t.Stop()
	for {
		select {
		case _, ok := <-l.lines:
			if !ok {
				return io.EOF
			}
			t.Reset(replayQuiet)
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// send writes one JSON-RPC request and returns its id.
func (l *Live) send(method string, params any) int {
	id := l.nextID
	l.nextID++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	_, _ = l.stdin.Write(append(b, '\n'))
	return id
}

func (l *Live) reply(id gjson.Result, result any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id.Raw), "result": result})
	_, _ = l.stdin.Write(append(b, '\n'))
}

func (l *Live) replyError(id gjson.Result, code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id.Raw),
		"error": map[string]any{"code": code, "message": msg}})
	_, _ = l.stdin.Write(append(b, '\n'))
}

func (l *Live) readUntil(ctx context.Context, id int, save func([]byte)) error {
	var resp gjson.Result
	return l.readUntilResp(ctx, id, save, &resp)
}

// readUntilResp reads the CLI's messages until the response to request
// id (errTurnOver), answering its requests on the way: a permission
// request is refused (the policy grants what the turn may use), anything
// else is an unknown method.
func (l *Live) readUntilResp(ctx context.Context, id int, save func([]byte), resp *gjson.Result) error {
	for {
		select {
		case line, ok := <-l.lines:
			if !ok {
				return io.EOF
			}
			save(line)
			msg := bytes.TrimSpace(line)
			if !jsonline.Valid(msg) {
				continue
			}
			m := gjson.ParseBytes(msg)
			method := m.Get("method").String()
			switch {
			case method == "session/request_permission" && m.Get("id").Exists():
				l.reply(m.Get("id"), map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": rejectOption(m)}})
			case method != "" && m.Get("id").Exists():
				l.replyError(m.Get("id"), -32601, "method not supported by this client")
			case method == "" && m.Get("id").Int() == int64(id) && m.Get("id").Exists():
				*resp = m
				return errTurnOver
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// rejectOption is the id of a permission request's refusing option.
func rejectOption(m gjson.Result) string {
	for _, o := range m.Get("params.options").Array() {
		if k := o.Get("kind").String(); k == "reject_once" || k == "reject_always" {
			return o.Get("optionId").String()
		}
	}
	return "cancel"
}

// stop ends the process (see stop in run.go); safe to call twice.
func (l *Live) stop() {
	if l.dead {
		return
	}
	l.dead = true
	_ = l.stdin.Close()
	stop(l.cmd.Process.Pid, l.waited, l.inv.graceOr())
}

// collect reads the lines the process printed until its stdout closed; a
// shell child still holding the pipe is given the grace period.
func (l *Live) collect(save func([]byte)) {
	proc.Drain(l.lines, l.waited, l.stdout, l.inv.graceOr(), save)
}

func (l *Live) exitCode() int {
	<-l.waited
	return proc.ExitCode(l.werr)
}

// Stderr is what the process wrote to stderr so far (its first 64 KiB).
func (l *Live) Stderr() string {
	return l.stderr.String()
}

// Close ends a session whose turns succeeded: stdin is closed, on which
// the CLI exits; if it has not after the grace period it is stopped (see
// stop). After a failed Send (which stopped the process) it is a no-op.
func (l *Live) Close() {
	if l.dead {
		return
	}
	l.dead = true
	_ = l.stdin.Close()
	go func() {
		for range l.lines { // whatever it still prints is dropped
		}
	}()
	t := time.NewTimer(l.inv.graceOr())
	defer t.Stop()
	select {
	case <-l.waited:
	case <-t.C:
		stop(l.cmd.Process.Pid, l.waited, l.inv.graceOr())
		<-l.waited
	}
}
