// Package proc is what the drivers of the three agent CLIs (packages
// claude, codex and gemini) share about running a CLI as a child process:
// its environment list (Environ), its command in a new session (Command,
// SysProcAttr), a copy of its stderr bounded to its first 64 KiB
// (Stderr), a live process's piped stdin and stdout (StartPiped) with its
// stdout as lines (ReadLines, Drain), its exit code, a stop of its whole
// process group with a grace period (StopGroup, on a context's end with
// WatchContext, after its input with CloseInput; Grace), and `binary
// --version`. What differs between the CLIs (argv, events, sessions, how
// a turn ends) stays in their packages.
package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// StderrLimit is how much of a CLI's stderr is kept.
const StderrLimit = 64 << 10

// Stderr keeps the first StderrLimit bytes written to it and drops the
// rest, so a chatty CLI cannot grow it without bound. It may be read
// (String) while the process still writes.
type Stderr struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *Stderr) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := min(len(p), StderrLimit-s.buf.Len()); k > 0 {
		s.buf.Write(p[:k])
	}
	return len(p), nil
}

// String is what was kept so far.
func (s *Stderr) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Command is the process of a CLI: name with args (the CLI itself, or
// bwrap with the jail around it), its environment and folder, in a new
// session (SysProcAttr).
func Command(name string, args, env []string, dir string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.SysProcAttr = SysProcAttr()
	return cmd
}

// DefaultGrace is how long a stopped CLI gets between SIGTERM and SIGKILL
// unless its caller says otherwise.
const DefaultGrace = 2 * time.Second

// Grace is d, or DefaultGrace when d is not set.
func Grace(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultGrace
}

// Environ is vars, with each KEY=VALUE of extra set over them (in vars
// itself), as a sorted environment list (a child's environment is built as a map of the
// variables it is allowed, then the caller's additions).
func Environ(vars map[string]string, extra []string) []string {
	for _, kv := range extra {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// StartPiped starts cmd with a pipe to its stdin and one from its stdout,
// for a long-lived CLI driven a message at a time. The stdout pipe is one
// of our own rather than cmd.StdoutPipe: Wait must not close the read end
// while the last lines of a stopped turn are still in it. name is the
// CLI's, for the errors; binary what was started.
func StartPiped(cmd *exec.Cmd, name, binary string) (io.WriteCloser, *os.File, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("%s stdin: %w", name, err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("%s stdout: %w", name, err)
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	pw.Close() // the child has its own copy
	return stdin, pr, nil
}

// ReadLines sends every line r yields (with its newline; the last one
// without, if r ends mid-line) on the channel it returns, which is closed
// when r ends. buffer is the channel's capacity.
func ReadLines(r io.Reader, buffer int) <-chan []byte {
	lines := make(chan []byte, buffer)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return lines
}

// Drain passes the lines still coming from a process (ReadLines of its
// stdout) to save until they end. Once waited is closed (the process was
// waited for), a child that still holds the pipe is given grace, then
// stdout is closed, which ends the lines.
func Drain(lines <-chan []byte, waited <-chan struct{}, stdout io.Closer, grace time.Duration, save func([]byte)) {
	ended := waited // nil once seen, so the select stops taking it
	var timeout <-chan time.Time
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				<-waited
				return
			}
			save(line)
		case <-ended:
			ended = nil
			t := time.NewTimer(grace)
			defer t.Stop()
			timeout = t.C
		case <-timeout:
			_ = stdout.Close()
			timeout = nil
		}
	}
}

// CloseInput ends a live process whose work is done: its stdin is closed,
// which lets it exit by itself, and whatever it still prints is dropped;
// if it has not exited after grace its group gets SIGTERM, and SIGKILL
// after each further grace. It returns once the process was waited for
// (waited closed) and its stdout drained (Drain).
func CloseInput(stdin io.Closer, stdout io.Closer, lines <-chan []byte, waited <-chan struct{}, pgid int, grace time.Duration) {
	_ = stdin.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	sig := syscall.SIGTERM
	dropped := lines // nil once closed: then the exit is waited for alone
	for {
		select {
		case <-waited:
			Drain(lines, waited, stdout, grace, func([]byte) {})
			return
		case _, ok := <-dropped:
			if !ok {
				dropped = nil
			}
		case <-t.C:
			_ = syscall.Kill(-pgid, sig)
			sig = syscall.SIGKILL
			t.Reset(grace)
		}
	}
}

// A Watch stops a process once a context ends, until the process was
// waited for (Done).
type Watch struct {
	done            chan struct{}
	mu              sync.Mutex
	waited, stopped bool
}

// WatchContext calls stop (on its own goroutine, with a channel closed by
// Done) once ctx ends, unless Done was called first: once the process was
// waited for no stop starts (its group id may be another's by then).
func WatchContext(ctx context.Context, stop func(done <-chan struct{})) *Watch {
	w := &Watch{done: make(chan struct{})}
	go func() {
		select {
		case <-w.done:
			return
		case <-ctx.Done():
		}
		w.mu.Lock()
		if w.waited {
			w.mu.Unlock()
			return
		}
		w.stopped = true
		w.mu.Unlock()
		stop(w.done)
	}()
	return w
}

// Done is called once the process was waited for; it reports whether the
// context ended it (stop was called).
func (w *Watch) Done() (stopped bool) {
	w.mu.Lock()
	w.waited = true
	stopped = w.stopped
	w.mu.Unlock()
	close(w.done)
	return stopped
}

// StopGroup sends SIGTERM to the process group pgid, then SIGKILL when it
// has not ended (done closed) within grace.
func StopGroup(pgid int, done <-chan struct{}, grace time.Duration) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// ExitCode is a waited process's exit code: 128+signal when a signal
// ended it, 0 when err is nil or not an exit.
func ExitCode(err error) int {
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return 0
	}
	if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return exitErr.ExitCode()
}

// IsExit reports whether err is the process's own ending (an exit code or
// a signal) rather than a failure to run or wait for it.
func IsExit(err error) bool {
	var e *exec.ExitError
	return errors.As(err, &e)
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+`)

// FindVersion is the first dotted version (1.2.3) in s, or "".
func FindVersion(s string) string { return versionRE.FindString(s) }

// Version runs `binary --version` with env (nil: vibe-test's own) and
// returns the version it prints ("2.1.328"), within 30 seconds.
func Version(ctx context.Context, binary string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--version")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w (%s)", binary, err, strings.TrimSpace(stderr.String()))
	}
	v := FindVersion(string(b))
	if v == "" {
		return "", fmt.Errorf("%s --version printed %q, not a version", binary, strings.TrimSpace(string(b)))
	}
	return v, nil
}
