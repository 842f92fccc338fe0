package claude

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

	"github.com/vibe-test/vibe-test/internal/jsonline"
	"github.com/vibe-test/vibe-test/internal/proc"
)

// The session modes of an agent conversation.
const (
	// SessionResume runs each turn as its own `claude -p --resume <id>`
	// process. Every new process re-injects the whole SKILL.md when the
	// agent invokes the skill again, which refreshes it.
	SessionResume = "resume"
	// SessionInteractive runs one long-lived process per conversation
	// (--input-format stream-json) and writes each turn to it as one user
	// message, as a person's session behaves: a second invocation of the
	// skill is answered "already loaded above", and the agent must find the
	// instructions back up its context.
	SessionInteractive = "interactive"
)

// CheckSessionMode refuses anything but the two modes, in the words of a
// flag error ("--session: …").
func CheckSessionMode(mode string) error {
	if mode != SessionInteractive && mode != SessionResume {
		return fmt.Errorf("--session: %q, expected %q or %q", mode, SessionInteractive, SessionResume)
	}
	return nil
}

// DefaultSessionMode is what --session defaults to (README: "Session
// modes" has the measurements behind the choice).
const DefaultSessionMode = SessionInteractive

// InteractiveArgs is the argv of a long-lived agent session: AgentArgs with
// no prompt, reading user messages as stream-json lines on stdin.
func InteractiveArgs(resumeSession, model string, tools []string) []string {
	args := AgentArgs("", resumeSession, model, tools)
	// AgentArgs starts "-p", prompt: keep -p, drop the empty prompt.
	args = append([]string{"-p", "--input-format", "stream-json"}, args[2:]...)
	return args
}

// UserMessage is the stdin line that sends prompt as one user message of an
// interactive session (verified on 2.1.328, PROTOCOL.md §9).
func UserMessage(prompt string) []byte {
	b, _ := json.Marshal(map[string]any{
		"type":    "user",
		"message": map[string]any{"role": "user", "content": prompt},
	})
	return append(b, '\n')
}

// Session is one long-lived `claude -p --input-format stream-json` process:
// each Send writes one user message and reads the events up to its result.
// A turn that does not end in a successful result (an error, a timeout, a
// cancelled context, the process gone) stops the process: the CLI would
// otherwise merge the failed prompt into the next message. Start a new
// Session (resuming the session, cut back first) to go on.
type Session struct {
	inv    Invocation
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	lines  <-chan []byte // stdout, one line each; closed at EOF
	stderr proc.Stderr
	waited chan struct{} // closed once the process has been waited for
	werr   error
	cpu    time.Duration // set before waited is closed
	dead   bool
}

// StartSession starts the process of inv (whose Args are InteractiveArgs;
// Stdout and Timeout are per turn and ignored here). The process waits for
// its first message.
func StartSession(inv Invocation) (*Session, error) {
	s := &Session{inv: inv, waited: make(chan struct{})}
	cmd, jailed, err := inv.command(inv.Args)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = &s.stderr
	// The meter only adds the jail's CPU report pipe to cmd (ExtraFiles).
	meter, err := inv.meter(cmd, jailed)
	if err != nil {
		return nil, err
	}
	stdin, pr, err := proc.StartPiped(cmd, "claude", inv.Binary)
	if err != nil {
		meter.close()
		return nil, err
	}
	meter.started()
	s.cmd, s.stdin, s.stdout = cmd, stdin, pr
	s.lines = proc.ReadLines(pr, 64)
	go func() {
		s.werr = cmd.Wait()
		s.cpu = meter.used(cmd.ProcessState)
		close(s.waited)
	}()
	return s, nil
}

// Send writes prompt as the next user message and reads the events up to
// its result line, copying each line to stdout as it arrives. timeout
// bounds the turn (0: none). When the turn fails, times out or ctx ends,
// the process is stopped (SIGTERM, then SIGKILL after the grace period),
// its last lines are read into the turn, and the Session is closed; the
// Outcome then carries its exit code. A non-nil error means the process
// could not be driven at all.
func (s *Session) Send(ctx context.Context, prompt string, stdout io.Writer, timeout time.Duration) (Outcome, error) {
	var out Outcome
	if s.dead {
		return out, errors.New("the claude session has already ended")
	}
	var buf bytes.Buffer
	save := func(line []byte) error {
		buf.Write(line)
		if stdout != nil {
			if _, err := stdout.Write(line); err != nil {
				return fmt.Errorf("writing transcript: %w", err)
			}
		}
		return nil
	}
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	var werr error
	if _, err := s.stdin.Write(UserMessage(prompt)); err != nil {
		// The process is gone: read what it left and report its exit.
		werr = err
	}
	gotResult := false
	for werr == nil && !gotResult {
		select {
		case line, ok := <-s.lines:
			if !ok {
				werr = io.EOF
				break
			}
			if err := save(line); err != nil {
				s.stop()
				s.collect(save)
				return out, err
			}
			if isResult(line) {
				gotResult = true
			}
		case <-timer:
			out.TimedOut = true
			werr = context.DeadlineExceeded
		case <-ctx.Done():
			werr = ctx.Err()
		}
	}
	turn, perr := ParseTurn(bytes.NewReader(buf.Bytes()))
	if gotResult && turn.Failure(0) == "" {
		out.Turn = turn
		return out, perr
	}
	// Failed, stopped or gone: end the process and read its last lines
	// into the turn (a killed turn's tool results, as the one-shot runner
	// keeps them).
	s.stop()
	s.collect(save)
	turn, perr = ParseTurn(bytes.NewReader(buf.Bytes()))
	out.Turn = turn
	out.ExitCode = s.exitCode()
	out.Stderr = s.Stderr()
	out.CPU = s.cpu
	if perr != nil {
		return out, perr
	}
	if w := s.werr; w != nil && !proc.IsExit(w) {
		return out, fmt.Errorf("waiting for claude: %w", w)
	}
	return out, nil
}

func isResult(line []byte) bool {
	line = bytes.TrimSpace(line)
	return jsonline.Valid(line) && gjson.GetBytes(line, "type").String() == "result"
}

// stop ends the process group: SIGTERM, then SIGKILL after the grace
// period. Safe to call more than once.
func (s *Session) stop() {
	if s.dead {
		return
	}
	s.dead = true
	_ = s.stdin.Close()
	proc.StopGroup(s.cmd.Process.Pid, s.waited, s.inv.grace())
}

// collect reads the lines the process printed until its stdout closed. A
// helper that outlived the CLI could hold the pipe open: once the CLI is
// gone, what arrives within the grace period is kept and the rest dropped.
func (s *Session) collect(save func([]byte) error) {
	proc.Drain(s.lines, s.waited, s.stdout, s.inv.grace(), func(line []byte) { _ = save(line) })
}

func (s *Session) exitCode() int {
	<-s.waited
	return proc.ExitCode(s.werr)
}

// Stderr is what the process wrote to stderr so far (its first 64 KiB).
func (s *Session) Stderr() string {
	return s.stderr.String()
}

// Close ends a session whose turns all succeeded: stdin is closed, which
// lets the CLI exit by itself; it is stopped (SIGTERM) if it has not after
// the grace period, and killed after another. Whatever it still prints is
// dropped. Close after a failed Send (which stopped the process) is a
// no-op.
func (s *Session) Close() {
	if s.dead {
		return
	}
	s.dead = true
	proc.CloseInput(s.stdin, s.stdout, s.lines, s.waited, s.cmd.Process.Pid, s.inv.grace())
}

// ProcessState is the ended process's state (its CPU time, for the
// benchmark); nil while it runs.
func (s *Session) ProcessState() *os.ProcessState {
	select {
	case <-s.waited:
		return s.cmd.ProcessState
	default:
		return nil
	}
}

// CPU is the CPU time of the ended process and of the processes it waited
// for (Outcome.CPU); 0 while it runs.
func (s *Session) CPU() time.Duration {
	select {
	case <-s.waited:
		return s.cpu
	default:
		return 0
	}
}
