package claude

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/proc"
)

// VerifiedVersion is the Claude Code version whose stream-json this package
// was verified against (its recordings are claude/testdata/transcripts,
// made by `make fixtures`). The same version is
// pinned for tests and the demo in tools/package.json; a test keeps the two
// in step.
const VerifiedVersion = "2.1.328"

// Invocation is one run of the CLI.
type Invocation struct {
	Binary string
	Args   []string
	Env    []string // the complete environment: nothing is inherited
	Dir    string
	// Stdout receives the raw stream as it arrives (the saved transcript).
	Stdout io.Writer
	// Timeout bounds the whole invocation; 0 means none.
	Timeout time.Duration
	// Grace is how long SIGTERM is given before SIGKILL.
	Grace time.Duration
	// Jail, when set, runs the process in a bubblewrap jail (package jail);
	// nil runs it directly.
	Jail *jail.Spec
}

// Outcome is what the process did, apart from what it printed.
type Outcome struct {
	ExitCode int
	Stderr   string
	TimedOut bool
	Turn     Turn
	// CPU is the CPU time of the process and of the processes it waited
	// for (its tools), in the jail or not, once it has ended: 0 while an
	// interactive session's process lives on, and when a jailed process
	// was killed before it could be measured.
	CPU time.Duration
}

// Run starts the CLI, streams its stdout to inv.Stdout while parsing it, and
// stops it with SIGTERM then SIGKILL when ctx ends or the timeout passes. The
// child runs in its own process group so the signal reaches its helpers too.
// A non-nil error means the process could not be run at all.
func Run(ctx context.Context, inv Invocation) (Outcome, error) {
	var out Outcome
	runCtx := ctx
	var cancel context.CancelFunc = func() {}
	if inv.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, inv.Timeout)
	}
	defer cancel()

	args, prompt := promptOnStdin(inv.Args)
	cmd, jailed, err := inv.command(args)
	if err != nil {
		return out, err
	}
	meter, err := inv.meter(cmd, jailed)
	if err != nil {
		return out, err
	}
	cmd.Stdin = nil // /dev/null: the CLI must never wait for input
	if prompt != "" {
		cmd.Stdin = strings.NewReader(prompt)
	}
	var stderr proc.Stderr
	cmd.Stderr = &stderr
	// A helper that outlives the CLI holding its stderr must not keep Wait
	// (and the run) waiting once the CLI itself has exited.
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		meter.close()
		return out, fmt.Errorf("claude stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		meter.close()
		return out, fmt.Errorf("starting %s: %w", inv.Binary, err)
	}
	meter.started()

	// Stop the group on cancellation: SIGTERM first (the CLI then stops its
	// Bash child), SIGKILL after the grace period.
	watch := proc.WatchContext(runCtx, func(done <-chan struct{}) { proc.StopGroup(cmd.Process.Pid, done, inv.grace()) })

	var src io.Reader = stdout
	if inv.Stdout != nil {
		src = io.TeeReader(stdout, inv.Stdout)
	}
	turn, perr := ParseTurn(src)
	// Drain whatever is left so the child never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, src)
	werr := cmd.Wait()
	stopped := watch.Done()
	out.CPU = meter.used(cmd.ProcessState)

	out.Turn = turn
	out.Stderr = stderr.String()
	out.TimedOut = stopped && ctx.Err() == nil // our timeout, not the caller's cancel
	out.ExitCode = proc.ExitCode(werr)
	if werr != nil && !proc.IsExit(werr) {
		return out, fmt.Errorf("waiting for claude: %w", werr)
	}
	if perr != nil {
		return out, perr
	}
	return out, nil
}

// Version asks the binary for its version ("2.1.328") in the environment
// a run gives the CLI (Env of env).
func Version(ctx context.Context, binary string, env []string) (string, error) {
	return proc.Version(ctx, binary, Env(env, EnvOptions{}))
}

// MinVersion is the oldest CLI with every flag vibe-test passes
// (--json-schema, --strict-mcp-config, --setting-sources, stream-json with
// session resume). Older ones fail in confusing ways mid-run.
const MinVersion = "2.1.0"

// OlderThan compares dotted versions numerically.
func OlderThan(v, than string) bool {
	a, b := strings.Split(v, "."), strings.Split(than, ".")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x, _ = strconv.Atoi(a[i])
		}
		if i < len(b) {
			y, _ = strconv.Atoi(b[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// command is the process of inv: the binary and its arguments (inside the
// jail when there is one, measured: see cpuMeter), its environment and
// folder, in its own session so a stop reaches its helpers too. Call
// started once the process started or failed to (jail.Spec.Cmd).
func (inv Invocation) command(args []string) (cmd *exec.Cmd, started func(), err error) {
	if inv.Jail != nil {
		return inv.Jail.MeasuredCmd(inv.Binary, args, inv.Env, inv.Dir)
	}
	return proc.Command(inv.Binary, args, inv.Env, inv.Dir), func() {}, nil
}

// MaxArgPrompt is the longest prompt passed in argv ("-p", prompt). Linux
// refuses one argument over 128 KiB (MAX_ARG_STRLEN: the exec fails with
// "argument list too long"), and a rubric's or a plan's prompt carries the
// whole SKILL.md, which the CLI loads up to 1 MB: a skill over about 128
// KiB could not be measured. A longer prompt goes on stdin instead, which
// `claude -p` with no prompt reads as the prompt (2.1.328: the model gets
// the same message). The CLI waits 3 s for piped input's first bytes;
// they are in the pipe before it starts. (The gemini CLI waits 500 ms,
// too short on a loaded machine: gemini refuses such a prompt instead.)
const MaxArgPrompt = 64 << 10

// promptOnStdin moves a prompt longer than MaxArgPrompt from args to what
// the process reads on stdin.
func promptOnStdin(args []string) ([]string, string) {
	if len(args) < 2 || args[0] != "-p" || len(args[1]) <= MaxArgPrompt {
		return args, ""
	}
	return append([]string{"-p"}, args[2:]...), args[1]
}

// grace is how long a stopped process gets between SIGTERM and SIGKILL.
func (inv Invocation) grace() time.Duration {
	return proc.Grace(inv.Grace)
}
