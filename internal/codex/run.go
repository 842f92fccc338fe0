package codex

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/proc"
)

// Invocation is one run of the CLI.
type Invocation struct {
	Binary string // the native binary (Native)
	Args   []string
	Env    []string // the complete environment: nothing is inherited
	Dir    string
	// Stdout receives the raw stream as it arrives (the saved transcript).
	Stdout io.Writer
	// Timeout bounds the whole invocation; 0 means none. Codex waits
	// forever for a server that never sends headers (PROTOCOL.md §7.2):
	// only this bounds that.
	Timeout time.Duration
	// Grace is how long SIGTERM is given before SIGKILL.
	Grace time.Duration
	// Jail, when set, runs the process in a bubblewrap jail.
	Jail *jail.Spec
}

// run starts the CLI, streams its stdout to inv.Stdout while parsing it,
// and stops it with SIGTERM then SIGKILL when ctx ends or the timeout
// passes. The child runs in its own session and process group so the
// signal reaches its helpers; in the jail, its PID namespace ends every
// process left. A non-nil error means the process could not be run.
// turnStarted says whether the stream showed the turn start.
func run(ctx context.Context, inv Invocation) (out Outcome, turnStarted bool, err error) {
	runCtx := ctx
	cancel := context.CancelFunc(func() {})
	if inv.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, inv.Timeout)
	}
	defer cancel()

	var prompt string
	inv.Args, prompt = promptOnStdin(inv.Args)
	cmd, started, err := inv.command()
	if err != nil {
		return out, false, err
	}
	cmd.Stdin = nil // /dev/null: exec reads stdin to EOF before it starts (PROTOCOL.md §1)
	if prompt != "" {
		cmd.Stdin = strings.NewReader(prompt)
	}
	var stderr proc.Stderr
	cmd.Stderr = &stderr
	// A helper that outlives codex holding its stderr must not keep Wait
	// (and the turn) waiting once codex itself has exited.
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		started()
		return out, false, fmt.Errorf("codex stdout: %w", err)
	}
	err = cmd.Start()
	started()
	if err != nil {
		return out, false, fmt.Errorf("starting %s: %w", inv.Binary, err)
	}

	watch := proc.WatchContext(runCtx, func(done <-chan struct{}) { proc.StopGroup(cmd.Process.Pid, done, inv.grace()) })

	var src io.Reader = stdout
	if inv.Stdout != nil {
		src = io.TeeReader(stdout, inv.Stdout)
	}
	turn, turnStarted, perr := parseTurn(src)
	_, _ = io.Copy(io.Discard, src) // the child never blocks on a full pipe
	werr := cmd.Wait()
	stopped := watch.Done()

	out.Turn = turn
	out.Stderr = stderr.String()
	out.TimedOut = stopped && ctx.Err() == nil // our timeout, not the caller's cancel
	out.ExitCode = proc.ExitCode(werr)
	if werr != nil && !proc.IsExit(werr) {
		return out, turnStarted, fmt.Errorf("waiting for codex: %w", werr)
	}
	return out, turnStarted, perr
}

// command is the process of inv, inside the jail when there is one, in its
// own session (no controlling terminal, its own process group; Pdeathsig
// kills it if vibe-test dies without stopping it).
// Call started once the process started or failed to (jail.Process).
func (inv Invocation) command() (cmd *exec.Cmd, started func(), err error) {
	return jail.Process(inv.Jail, inv.Binary, inv.Args, inv.Env, inv.Dir)
}

// promptOnStdin moves a prompt longer than claude.MaxArgPrompt (the last
// argument, after "--") to what the process reads on stdin: Linux refuses
// one argument over 128 KiB, and a rubric's prompt carries the whole
// SKILL.md. "-" in its place makes exec read it there (codex exec --help:
// "if `-` is used, instructions are read from stdin").
func promptOnStdin(args []string) ([]string, string) {
	n := len(args)
	if n < 2 || len(args[n-1]) <= claude.MaxArgPrompt || !slices.Contains(args, "--") {
		return args, ""
	}
	return append(slices.Clone(args[:n-1]), "-"), args[n-1]
}

func (inv Invocation) grace() time.Duration {
	return proc.Grace(inv.Grace)
}
