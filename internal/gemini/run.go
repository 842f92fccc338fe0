package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/execpath"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/jsonline"
	"github.com/vibe-test/vibe-test/internal/proc"
)

// DefaultTimeout bounds a turn whose spec gives no timeout. The CLI's own
// bounds are far longer: 60 s per attempt for a server that never answers
// (13.7 minutes over ten attempts), 300 s for a stream that stalls, each
// retried (PROTOCOL §5).
const DefaultTimeout = 10 * time.Minute

// Args is the argv of one turn (-p): stream-json out, the model pinned (a
// new routing call before every prompt otherwise), the session resumed
// when resume is set. The prompt is one --prompt=… argument, so a prompt
// that starts with "-" is not read as a flag. The CLI rewrites "@" in
// -p prompts (bob@example.com reaches the model as "bob @example.com",
// @file inlines the file) and runs a prompt starting with "/" as a slash
// command; live sessions (ACP) send the text untouched.
func Args(prompt, resume, model string) []string {
	if model == "" {
		model = DefaultModel
	}
	args := []string{"--prompt=" + prompt, "--model", model, "--output-format", "stream-json"}
	if resume != "" {
		args = append(args, "--resume", resume)
	}
	return args
}

// invocation is one CLI process.
type invocation struct {
	binary  string
	args    []string
	env     []string
	dir     string
	jail    *jail.Spec
	timeout time.Duration
	grace   time.Duration
}

// command is the process of inv, in the jail when there is one. Call
// started once it started or failed to (jail.Process).
func (inv invocation) command() (cmd *exec.Cmd, started func(), err error) {
	return jail.Process(inv.jail, inv.binary, inv.args, inv.env, inv.dir)
}

// MaxPrompt is the longest prompt gemini can be given. Linux refuses one
// exec argument over 128 KiB (MAX_ARG_STRLEN, its NUL included), and
// --prompt= is one; the CLI reads a longer prompt only from stdin, where
// it waits 500 ms for the first bytes and then goes on without them
// (readStdin's pipedInputShouldBeAvailableInMs): on a loaded machine a
// piped prompt was lost (a clean-clone CI run saw "the stream ended
// without a result line"). A longer prompt is refused by name instead.
const MaxPrompt = 128<<10 - 1 - len("--prompt=")

// checkPrompt refuses a --prompt= the exec could not pass.
func checkPrompt(args []string) error {
	const flag = "--prompt="
	if len(args) > 0 && strings.HasPrefix(args[0], flag) && len(args[0])-len(flag) > MaxPrompt {
		return fmt.Errorf("a prompt of %d bytes for gemini, over the %d one argument can hold (the gemini CLI reads a longer one only from stdin, which it gives up on after 500 ms): a SKILL.md this large needs --judge-agent claude or codex, which take it on stdin", len(args[0])-len(flag), MaxPrompt)
	}
	return nil
}

func (inv invocation) graceOr() time.Duration {
	return proc.Grace(inv.grace)
}

func specInvocation(spec agent.TurnSpec, args []string) invocation {
	timeout := spec.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return invocation{binary: spec.Binary, args: args, env: Env(spec), dir: spec.Dir,
		jail: spec.Jail, timeout: timeout, grace: spec.Grace}
}

// checkHome: a turn needs the settings PrepareHome writes; without them
// the CLI would read none and refuse to start (exit 41, no output).
func checkHome(spec agent.TurnSpec) error {
	if spec.Home == "" {
		return errors.New("gemini: the turn has no home folder")
	}
	if _, err := os.Stat(settingsFile(spec.Home)); err != nil {
		return fmt.Errorf("gemini: %s is missing: PrepareHome writes it before the first turn", settingsFile(spec.Home))
	}
	return nil
}

// Run runs one turn as its own process (-p, resuming spec.Resume when
// set), streams its stdout to spec.Stdout, then appends the turn_end line
// (the exit code, the retries, the session records of the turn) and parses
// the whole. The timeout (DefaultTimeout when 0) or ctx ending stops it:
// SIGTERM to its process group, SIGKILL to the shell sessions it started
// (each in its own, which a signal to the group misses), SIGKILL to the
// group after the grace period. In the jail its PID namespace ends with it.
// A non-nil error means the process could not be run at all.
func (a Agent) Run(ctx context.Context, spec agent.TurnSpec) (agent.Outcome, error) {
	if err := checkHome(spec); err != nil {
		return agent.Outcome{}, err
	}
	inv := specInvocation(spec, Args(spec.Prompt, spec.Resume, spec.Model))
	before := takeSnapshot(spec.Home)
	var raw bytes.Buffer
	w := io.Writer(&raw)
	if spec.Stdout != nil {
		w = io.MultiWriter(&raw, spec.Stdout)
	}
	res, err := runProcess(ctx, inv, w)
	out := agent.Outcome{ExitCode: res.exitCode, Stderr: res.stderr, TimedOut: res.timedOut}
	if err != nil {
		return out, err
	}
	id := spec.Resume
	if s := initSessionID(raw.Bytes()); s != "" {
		id = s
	}
	end := turnEnd(spec.Home, id, before)
	code := res.exitCode
	end.ExitCode = &code
	end.Retries = countRetries(res.stderr)
	line := end.line()
	raw.Write(line)
	if spec.Stdout != nil {
		if _, err := spec.Stdout.Write(line); err != nil {
			return out, fmt.Errorf("writing the transcript: %w", err)
		}
	}
	out.Turn, err = ParseTurn(&raw)
	return out, err
}

// turnEnd reads what the turn appended to its session file.
func turnEnd(home, id string, before snapshot) TurnEnd {
	end := TurnEnd{Type: turnEndType, SessionID: id, Records: []json.RawMessage{}}
	if id == "" {
		end.Note = "no session id: the CLI printed no init event"
		return end
	}
	recs, file, err := turnRecords(home, id, before)
	if err != nil {
		end.Note = err.Error()
		return end
	}
	end.Records, end.SessionFile = recs, file
	return end
}

// initSessionID is the session id of the stream's init event.
func initSessionID(stream []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if jsonline.Valid(line) && gjson.GetBytes(line, "type").String() == "init" {
			return gjson.GetBytes(line, "session_id").String()
		}
	}
	return ""
}

var retryRE = regexp.MustCompile(`(?m)^Attempt \d+ failed.*Retrying`)

// countRetries counts the model calls the CLI tried again, by its stderr
// ("Attempt 1 failed with status 429. Retrying with backoff...").
func countRetries(stderr string) int { return len(retryRE.FindAllStringIndex(stderr, -1)) }

// processResult is what a finished process did apart from its stdout.
type processResult struct {
	exitCode int
	stderr   string
	timedOut bool
}

// runProcess runs inv to its end, copying its stdout to w, and stops it
// when ctx ends or its timeout passes (see Run).
func runProcess(ctx context.Context, inv invocation, w io.Writer) (processResult, error) {
	var res processResult
	runCtx, cancel := context.WithTimeout(ctx, inv.timeout)
	defer cancel()
	if err := checkPrompt(inv.args); err != nil {
		return res, err
	}
	cmd, started, err := inv.command()
	if err != nil {
		return res, err
	}
	cmd.Stdin = nil // /dev/null: -p appends stdin to the prompt
	var stderr proc.Stderr
	cmd.Stderr = &stderr
	// A shell child that outlives the CLI holding its pipes must not keep
	// Wait (and the turn) waiting once the CLI itself has exited.
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		started()
		return res, fmt.Errorf("gemini stdout: %w", err)
	}
	err = cmd.Start()
	started()
	if err != nil {
		return res, fmt.Errorf("starting %s: %w", inv.binary, err)
	}
	watch := proc.WatchContext(runCtx, func(done <-chan struct{}) { stop(cmd.Process.Pid, done, inv.graceOr()) })
	_, cerr := io.Copy(w, stdout)
	werr := cmd.Wait()
	stopped := watch.Done()
	res.stderr = stderr.String()
	res.exitCode = proc.ExitCode(werr)
	res.timedOut = stopped && ctx.Err() == nil // our timeout, not the caller's cancel
	if werr != nil && !proc.IsExit(werr) && !errors.Is(werr, exec.ErrWaitDelay) {
		return res, fmt.Errorf("waiting for gemini: %w", werr)
	}
	if cerr != nil {
		return res, fmt.Errorf("writing the transcript: %w", cerr)
	}
	return res, nil
}

// stop ends a process started by command(): the shell sessions below it
// are killed at once (the CLI does not stop them on SIGTERM, PROTOCOL §6),
// the group gets SIGTERM (the CLI exits 0 at once, without a result), and
// SIGKILL after grace unless done closed first.
func stop(pid int, done <-chan struct{}, grace time.Duration) {
	for _, p := range descendants(pid) {
		if pgid, err := syscall.Getpgid(p); err == nil && pgid != pid {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
	proc.StopGroup(pid, done, grace)
}

// Version is the CLI's version ("0.61.0"). When binary is the npm
// package's own script (bundle/gemini.js, or a link to it such as
// node_modules/.bin/gemini) and env's PATH has the node that runs it, it
// is the version in the package's package.json: the CLI prints a constant
// its build took from there, and asking it takes a node process of 1 to 3
// CPU-seconds. Otherwise it asks the binary (AskVersion).
func Version(ctx context.Context, binary string, env []string) (string, error) {
	if v := packageVersion(binary, env); v != "" {
		return v, nil
	}
	return AskVersion(ctx, binary, env)
}

// packageName is the npm package the CLI is installed from.
const packageName = "@google/gemini-cli"

// packageVersion is the version in the package.json of the npm install
// binary is the script of, or "" when binary is not (a wrapper, another
// build), the file says another package or no version, or env's PATH has
// no node to run the script with.
func packageVersion(binary string, env []string) string {
	script, err := filepath.EvalSymlinks(binary)
	if err != nil || filepath.Base(script) != "gemini.js" || filepath.Base(filepath.Dir(script)) != "bundle" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(script)), "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct{ Name, Version string }
	if json.Unmarshal(b, &pkg) != nil || pkg.Name != packageName || proc.FindVersion(pkg.Version) != pkg.Version {
		return ""
	}
	path, ok := os.Getenv("PATH"), env == nil
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "PATH="); found {
			path, ok = v, true
		}
	}
	if !ok {
		return ""
	}
	if execpath.Find("node", path) == "" {
		return ""
	}
	return pkg.Version
}

// AskVersion runs `binary --version`; it takes the CLI 1 to 3
// CPU-seconds. It runs outside any jail, so with the allowlisted
// environment (no credentials: it calls no API) and a home of its own,
// removed after: the CLI writes into ~/.gemini as it starts.
func AskVersion(ctx context.Context, binary string, env []string) (string, error) {
	home, err := os.MkdirTemp("", "home-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	if err := os.Mkdir(filepath.Join(home, "tmp"), 0o700); err != nil {
		return "", err
	}
	var vars []string
	for _, kv := range Env(agent.TurnSpec{BaseEnv: env, Home: home}) {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(CredentialVars, k) && k != "GOOGLE_GEMINI_BASE_URL" {
			vars = append(vars, kv)
		}
	}
	return proc.Version(ctx, binary, vars)
}
