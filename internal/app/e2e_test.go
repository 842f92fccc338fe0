package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// scenario is one run of vibe-test against the scripted model.
type scenario struct {
	code           int
	stdout, stderr string
	dir            string
	run            *record.Run
	srv            *scripted.Server
}

// runScenario runs the bundled skill with the given personas (one
// conversation each, in order) and extra flags.
func runScenario(t *testing.T, cli string, personas []string, overCall bool, flags ...string) scenario {
	t.Helper()
	script, err := demo.Script(personas, overCall)
	if err != nil {
		t.Fatal(err)
	}
	return runScript(t, cli, script, len(personas), nil, flags...)
}

// runScript runs the bundled skill against any script on the CLI bin
// (realCLI or fastCLI), with extra environment variables and flags.
func runScript(t *testing.T, bin string, script scripted.Script, conversations int, extraEnv []string, flags ...string) scenario {
	t.Helper()
	return runScriptWith(t, Main, bin, script, conversations, extraEnv, flags...)
}

// runScriptBuilt is runScript on the built vibe-test binary, in a process
// of its own: for a test whose subject is what many conversations add up
// to. The race detector, which makes the in-process engine several times
// slower, watches the same code in every other run of the fast tier.
func runScriptBuilt(t *testing.T, bin string, script scripted.Script, conversations int, extraEnv []string, flags ...string) scenario {
	t.Helper()
	return runScriptWith(t, builtMain(t), bin, script, conversations, extraEnv, flags...)
}

// builtMain is Main run as the built vibe-test binary in a process of its
// own (args[0] is the program's name, as Main's). A binary that cannot be
// run fails the test and gives -1; it may be called from any goroutine.
func builtMain(t *testing.T) func(context.Context, []string, IO) int {
	built := vibeTestBinary(t)
	return func(ctx context.Context, args []string, stdio IO) int {
		cmd := exec.CommandContext(ctx, built, args[1:]...)
		cmd.Env, cmd.Stdout, cmd.Stderr = stdio.Env, stdio.Stdout, stdio.Stderr
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			return ee.ExitCode()
		}
		t.Errorf("running %s: %v", built, err)
		return -1
	}
}

func runScriptWith(t *testing.T, main func(context.Context, []string, IO) int, bin string, script scripted.Script, conversations int, extraEnv []string, flags ...string) scenario {
	t.Helper()
	srv, paths, out, env := demoRun(t, script, bin)
	env = append(env, extraEnv...)
	args := []string{"vibe-test", paths.Skill, "--config", paths.Config, "--out", out, "--seed", "7",
		"--conversations", itoa(conversations), "--concurrency", "1", "--max-retries", "1", "--retry-backoff", "200ms"}
	args = append(args, flags...)
	var stdout, stderr bytes.Buffer
	code := main(context.Background(), args, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	s := scenario{code: code, stdout: stdout.String(), stderr: stderr.String(), dir: out, srv: srv}
	if r, err := record.Load(out); err == nil {
		s.run = r
	} else {
		t.Fatalf("run.json unreadable: %v\nstdout:\n%s\nstderr:\n%s", err, s.stdout, s.stderr)
	}
	t.Logf("exit %d\n%s\n%s", code, s.stdout, s.stderr)
	return s
}

// startDemo starts the scripted model on script (stopped when the test
// ends) and writes the bundled demo skill, its config and fixture into a
// new folder, files.
func startDemo(t *testing.T, script scripted.Script) (srv *scripted.Server, files string, paths demo.Paths) {
	t.Helper()
	srv, err := scripted.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	files = t.TempDir()
	if paths, err = demo.Materialize(files); err != nil {
		t.Fatal(err)
	}
	return srv, files, paths
}

func itoa(n int) string { return strconv.Itoa(n) }

func turnsOf(s scenario, conv int) []record.Turn { return s.run.Conversations[conv].Turns }

// The context figure of each turn equals the input picture of the last API
// call the scripted model answered in that turn.
func assertContextIsLastCall(t *testing.T, s scenario) {
	t.Helper()
	conv := s.run.Conversations[0]
	var agent []scripted.Request
	for _, r := range s.srv.Requests() {
		if r.Kind == scripted.KindAgent && r.SessionID == conv.SessionID && r.Status == 200 {
			agent = append(agent, r)
		}
	}
	for _, tr := range conv.Turns {
		var last *scripted.Request
		for i := range agent {
			if agent[i].Turn == tr.Turn {
				last = &agent[i]
			}
		}
		if last == nil {
			t.Errorf("turn %d: no request recorded", tr.Turn)
			continue
		}
		if tr.ContextTokens != last.Usage.Context() {
			t.Errorf("turn %d: context %d, want the last call's %d", tr.Turn, tr.ContextTokens, last.Usage.Context())
		}
	}
}

// TestCompactionResumeMode: --compact-before 2 in resume mode, where the
// CLI's /compact is a process of its own: the record holds the compaction
// before probe 2 (turn 8), and the forgetting agent fails after it. (The
// verdict and reports of such a run are TestRecordedDecay's, on a recorded
// folder; the interactive mode's compaction runs on the real CLI in
// TestCompactionOnTheRealCLI.)
func TestCompactionResumeMode(t *testing.T) {
	t.Parallel()
	r := runScenario(t, fastCLI(t), []string{"forgetting"}, false, "--compact-before", "2", "--session", "resume")
	assertCompactedBefore(t, r, &r.run.Conversations[0], 2)
	if got := r.run.Conversations[0].ProbeAt(2).Result(); got != judge.Fail {
		t.Errorf("resume mode: probe 2 %s, want fail after the compaction", got)
	}
}

func TestNeverStopsAtGate(t *testing.T) {
	t.Parallel()
	s := runScenario(t, fastCLI(t), []string{"never"}, false)
	if s.code != 2 {
		t.Fatalf("exit %d, want 2", s.code)
	}
	c := s.run.Conversations[0]
	// The fillers after the baseline run while the baseline is judged (one
	// at least, as the judge answers); no probe once the gate has ruled.
	if len(c.Turns) < 2 || c.Status != record.StatusBaselineFailed || s.run.Status != record.StatusBaselineFailed {
		t.Fatalf("turns %d, status %s/%s", len(c.Turns), c.Status, s.run.Status)
	}
	for _, tr := range c.Turns[1:] {
		if tr.Kind != plan.KindFiller {
			t.Errorf("turn %d (%s) asked after a failed baseline", tr.Turn, tr.Kind)
		}
	}
	if !slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, "ran while the baseline was judged") }) {
		t.Errorf("notes %q: the filler that overlapped the gate is not explained", c.Notes)
	}
	for _, r := range s.srv.Requests() {
		if r.Kind == scripted.KindAgent && r.Turn > len(c.Turns) {
			t.Errorf("an agent request of turn %d after the gate stopped the conversation at turn %d", r.Turn, len(c.Turns))
		}
	}
	if !strings.Contains(c.Error, "decay curve from it is meaningless") || s.run.GateBypassed {
		t.Errorf("gate message %q, bypassed %v", c.Error, s.run.GateBypassed)
	}
}

// A second run on an unchanged skill reads the rubric from the cache and
// makes no rubric call.
func TestRubricCachedOnSecondRun(t *testing.T) {
	t.Parallel()
	cache := []string{"VIBE_TEST_CACHE_DIR=" + t.TempDir()}
	count := func(s scenario) (n int) {
		for _, r := range s.srv.Requests() {
			if r.Kind == scripted.KindRubric {
				n++
			}
		}
		return n
	}
	script, err := demo.Script([]string{"never"}, false) // stops at the gate: cheap
	if err != nil {
		t.Fatal(err)
	}
	first := runScript(t, fastCLI(t), script, 1, cache)
	second := runScript(t, fastCLI(t), script, 1, cache)
	if count(first) != 1 || count(second) != 0 {
		t.Fatalf("rubric calls: first run %d, second run %d; want 1 then 0", count(first), count(second))
	}
	if second.run.Rubric == nil || second.run.Rubric.Source != "cache" {
		t.Errorf("second run's rubric source: %+v", second.run.Rubric)
	}
	// No judge model is named, so the CLI's default judges; one that
	// answers with another model (ANTHROPIC_MODEL, which the CLI is
	// passed) extracts its own rubric, and each record names the model
	// that wrote its rubric. A third run reused the first one's.
	third := runScript(t, fastCLI(t), script, 1, append(cache, "ANTHROPIC_MODEL=claude-haiku-4-5"))
	if count(third) != 1 || third.run.Rubric == nil || third.run.Rubric.Model != "claude-haiku-4-5" {
		t.Errorf("another default model: %d rubric calls, rubric %+v; want 1, written by claude-haiku-4-5", count(third), third.run.Rubric)
	}
	if m := first.run.Rubric.Model; m == "" || m == "claude-haiku-4-5" || second.run.Rubric.Model != m {
		t.Errorf("rubric models: first run %q, second (cached) %q; want the default that wrote it, twice", m, second.run.Rubric.Model)
	}
}

// `vibe-test demo` runs as designed with no credentials, in both session
// modes: one decaying and one steady conversation, exit 0, and it names the
// exit code a real run would give (the resume mode, to keep the test short,
// with the decaying conversation alone). The transcripts show the mode: a
// second invocation of the skill is "already loaded" in a live session,
// and re-injects the skill in a resumed process.
// (Each mode is a top-level test: a parallel test's subtests queue behind
// every other parallel test of the package, so the real-CLI run started
// last and set the package's end.)
func TestDemoCommand(t *testing.T) {
	t.Parallel()
	// On the real CLI: the "already loaded" answer is the pinned binary's
	// behaviour, not the stand-in's. Its fresh sessions, one-shot, prove
	// nothing more there (TestDiluteToOnTheRealCLI runs those on it).
	demoInMode(t, claude.SessionInteractive, realConversationCLI(t))
}

// TestDemoCommandResume: on the stand-in, the demo's own work in resume
// mode. The pinned binary's re-injection of the skill in a resumed process
// is checked by TestEveryPromptSentOnceResume, on the real CLI.
func TestDemoCommandResume(t *testing.T) {
	t.Parallel()
	demoInMode(t, claude.SessionResume, fastCLI(t))
}

func demoInMode(t *testing.T, mode, bin string) {
	out := filepath.Join(t.TempDir(), "demo")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "CLAUDE_CODE_OAUTH") {
			env = append(env, kv)
		}
	}
	env = append(env, "VIBE_TEST_CLAUDE="+bin)
	var stdout, stderr bytes.Buffer
	args := []string{"vibe-test", "demo", "--out", out, "--session", mode}
	full := mode == claude.DefaultSessionMode
	if !full {
		args = append(args, "--personas", "decaying")
	}
	code := Main(context.Background(), args, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	if code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "; session "+mode+" (") {
		t.Errorf("the summary does not name the session mode %s:\n%s", mode, stdout.String())
	}
	if !strings.Contains(stdout.String(), "The demo ran as designed") {
		t.Errorf("the demo did not say it ran as designed:\n%s", stdout.String())
	}
	if r, err := record.Load(out); err == nil && r.Config.SessionMode != mode {
		t.Errorf("run.json: session mode %q, want %q", r.Config.SessionMode, mode)
	}
	// Turn 6 invokes the skill a second time (both personas follow it).
	if r, err := record.Load(out); err == nil {
		second, err := os.ReadFile(filepath.Join(out, r.Conversations[0].TurnAt(6).Transcript))
		if err != nil {
			t.Fatal(err)
		}
		loaded, reinjected := bytes.Contains(second, []byte("already loaded above")), bytes.Contains(second, []byte("Base directory for this skill"))
		if mode == claude.SessionInteractive && (!loaded || reinjected) {
			t.Errorf("%s: turn 6's second Skill call: \"already loaded\" %v, skill re-injected %v", mode, loaded, reinjected)
		}
	}
	if !full {
		return
	}
	if !strings.Contains(stdout.String(), "A real run with these results would exit 0: Not enough evidence") {
		t.Errorf("the demo must say which exit code a real run would give:\n%s", stdout.String())
	}
	r, err := record.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Conversations[0].Shape != record.ShapeDecayed || r.Conversations[1].Shape != record.ShapeHeld {
		t.Errorf("conversation 1 should decay and 2 hold (personas in order): %q, %q", r.Conversations[0].Shape, r.Conversations[1].Shape)
	}
	// Both arms are on the chart: the diluted and the fresh pass rates.
	page, err := os.ReadFile(filepath.Join(out, "chart.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name": "diluted pass rate"`, `"name": "fresh pass rate (same probe, new session)"`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("chart.html lacks the series %s", want)
		}
	}
	if !strings.Contains(stdout.String(), "vibe-test ./path/to/your-skill") || !strings.Contains(stdout.String(), "claude: "+bin) {
		t.Errorf("the demo must end with the next step and the claude it uses:\n%s", stdout.String())
	}
	// A finished run has nothing to resume (exit 0); a demo run cannot be
	// judged again, and says so instead of asking for credentials.
	stdout.Reset()
	stderr.Reset()
	if code := Main(context.Background(), []string{"vibe-test", "resume", out}, IO{Env: env, Stdout: &stdout, Stderr: &stderr}); code != 0 || !strings.Contains(stdout.String(), "nothing to resume") {
		t.Errorf("resume of a finished run: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	stderr.Reset()
	if code := Main(context.Background(), []string{"vibe-test", "rejudge", out}, IO{Env: env, Stdout: &stdout, Stderr: &stderr}); code != 3 || !strings.Contains(stderr.String(), "demo run") || strings.Contains(stderr.String(), "credentials") {
		t.Errorf("rejudge of a demo run: exit %d\n%s", code, stderr.String())
	}
}

// cancelOn cancels a context when a line containing its text is written.
type cancelOn struct {
	text   string
	cancel context.CancelFunc
	mu     sync.Mutex
	buf    bytes.Buffer
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.text) {
		w.cancel()
	}
	return len(p), nil
}

// An interrupted demo says it cannot be resumed (its skill is gone with
// it) and leaves no sandbox behind.
func TestDemoInterrupted(t *testing.T) {
	t.Parallel()
	bin := fastCLI(t)
	out := filepath.Join(t.TempDir(), "demo")
	env := append(os.Environ(), "VIBE_TEST_CLAUDE="+bin)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupted once the first agent turn runs, in its sandbox.
	stderr := &cancelOn{text: "agent running", cancel: cancel}
	var stdout bytes.Buffer
	code := Main(ctx, []string{"vibe-test", "demo", "--out", out, "--personas", "steady"}, IO{Env: env, Stdout: &stdout, Stderr: stderr})
	msg := stderr.buf.String()
	if code != 130 || !strings.Contains(msg, "a demo run cannot be resumed") || !strings.Contains(msg, "vibe-test demo` again") {
		t.Fatalf("exit %d\n%s", code, msg)
	}
	r, err := record.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh} {
		for _, c := range arm {
			if c.Sandbox == "" {
				continue
			}
			if _, err := os.Stat(c.Sandbox); err == nil {
				t.Errorf("conversation %d: sandbox %s left behind", c.Index, c.Sandbox)
			}
		}
	}
}

// demoRun readies a run of the bundled skill against script on the CLI
// bin: the scripted server, the skill's paths, a run folder whose kept
// sandboxes go with the test, and the run's environment.
func demoRun(t *testing.T, script scripted.Script, bin string) (srv *scripted.Server, paths demo.Paths, out string, env []string) {
	t.Helper()
	srv, files, paths := startDemo(t, script)
	out = filepath.Join(t.TempDir(), "run")
	removeKeptSandboxes(t, out)
	env = append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+bin, "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"))
	return srv, paths, out, env
}

// removeKeptSandboxes removes, once the test ends, the sandboxes the run
// folder out still names: a conversation stopped by an interrupt, a
// transient error, the budget or a failed baseline judgement keeps its
// sandbox for resume, in the machine's temp folder (not the test's,
// whose name the agent would read), where every test run left it.
func removeKeptSandboxes(t *testing.T, out string) {
	t.Cleanup(func() { removeKeptSandboxesNow(out) })
}

// removeKeptSandboxesNow is removeKeptSandboxes' work, done at once.
func removeKeptSandboxesNow(out string) {
	r, err := record.Load(out)
	if err != nil {
		return
	}
	for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh, r.Controls} {
		for _, c := range arm {
			if c.Sandbox == "" {
				continue
			}
			// The sandbox is repo-* in its own ws-* root.
			if root := filepath.Dir(c.Sandbox); strings.HasPrefix(filepath.Base(root), "ws-") {
				os.RemoveAll(root)
			}
		}
	}
}
