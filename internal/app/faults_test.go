package app

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// faultScript puts fault rules ahead of the steady persona's.
func faultScript(t *testing.T, faults ...scripted.Rule) scripted.Script {
	t.Helper()
	base, err := demo.Script([]string{"steady"}, false)
	if err != nil {
		t.Fatal(err)
	}
	base.Rules = append(append([]scripted.Rule{}, faults...), base.Rules...)
	return base
}

// withError makes the steady persona's first step answer an HTTP error
// count times first.
func followAfterError(status, count int) []scripted.Step {
	steps := append([]scripted.Step{}, demo.Procedure().Follow...)
	first := steps[0]
	first.Error = &scripted.HTTPError{Status: status, Count: count}
	steps[0] = first
	return steps
}

func TestAPIErrorBurstsRetried(t *testing.T) {
	t.Parallel()
	// 4 × 429 at turn 6, 4 × 500 at turn 8 and 4 × 529 at turn 10, in one
	// run: the CLI (CLAUDE_CODE_MAX_RETRIES=1) gives up each time; vibe-test
	// reruns the turn, which then gets through.
	const burst = 4
	bursts := []struct {
		turn    int
		pattern string
		status  int
	}{{6, "gaskets", 429}, {8, "hinges", 500}, {10, "widgets", 529}}
	var faults []scripted.Rule
	for _, b := range bursts {
		faults = append(faults, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{b.turn}, Pattern: b.pattern, Steps: followAfterError(b.status, burst)})
	}
	s := runScript(t, fastCLI(t), faultScript(t, faults...), 1, nil)
	if s.code != 0 {
		t.Fatalf("exit %d, want 0 after the retries", s.code)
	}
	for _, b := range bursts {
		tr := s.run.Conversations[0].TurnAt(b.turn)
		if tr.Status != record.TurnOK || len(tr.Attempts) == 0 || tr.Result() != judge.Pass {
			t.Errorf("turn %d (%d): status %s, attempts %+v, result %s", b.turn, b.status, tr.Status, tr.Attempts, tr.Result())
			continue
		}
		if _, err := os.Stat(filepath.Join(s.dir, tr.Attempts[0].Transcript)); err != nil {
			t.Errorf("turn %d: the failed attempt's transcript was not kept: %v", b.turn, err)
		}
		for _, a := range tr.Attempts {
			if a.DurationMS <= 0 {
				t.Errorf("turn %d: a try with no duration: %+v (the turn's own is its last try's)", b.turn, a)
			}
		}
		var n int
		for _, r := range s.srv.Requests() {
			if r.Status == b.status {
				n++
			}
		}
		if n != burst {
			t.Errorf("%d requests answered %d, want %d", n, b.status, burst)
		}
	}
}

func TestCredentialsRefusedStopsAtOnce(t *testing.T) {
	t.Parallel()
	for _, status := range []int{401, 403} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			s := runScript(t, fastCLI(t), faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: status, Count: 1000}}}}), 2, nil)
			if s.code != 3 {
				t.Fatalf("exit %d, want 3", s.code)
			}
			if !strings.Contains(s.stderr, "refused the credentials") || !strings.Contains(s.stderr, "ANTHROPIC_API_KEY") {
				t.Errorf("stderr does not say the credentials were refused and how to check them: %q", s.stderr)
			}
			var agentCalls int
			for _, r := range s.srv.Requests() {
				if r.Kind == scripted.KindAgent {
					agentCalls++
				}
			}
			// One turn with the CLI's single retry; the second conversation
			// never starts (concurrency 1) and vibe-test retries nothing.
			if agentCalls > 2 {
				t.Errorf("%d agent requests after a %d, want at most 2", agentCalls, status)
			}
			if s.run.Status != record.StatusError {
				t.Errorf("run status %s", s.run.Status)
			}
		})
	}
}

// A fixture whose contents changed after the run began is refused by
// resume, before any call, as a changed skill is: the conversations left
// were copied the new contents and worked on another project than the
// first ones did.
func TestResumeRefusesAChangedFixture(t *testing.T) {
	t.Parallel()
	s := runScript(t, fastCLI(t), faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 401, Count: 1000}}}}), 1, nil)
	if s.code != 3 || s.run.Plan == nil || s.run.Plan.Fixture == "" || len(s.run.Plan.FixtureHash) != 64 {
		t.Fatalf("exit %d, plan %+v", s.code, s.run.Plan)
	}
	stock := filepath.Join(s.run.Plan.Fixture, "data", "stock.csv")
	b, err := os.ReadFile(stock)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stock, append(b, "washers,5\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := len(s.srv.Requests())
	env := append(DemoEnv(os.Environ(), s.srv.URL()), "VIBE_TEST_CLAUDE="+fastCLI(t))
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "resume", s.dir}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	if code != 3 || !strings.Contains(stderr.String(), s.run.Plan.Fixture+": the fixture changed since the run began") {
		t.Errorf("resume after the fixture changed: exit %d\n%s", code, stderr.String())
	}
	if n := len(s.srv.Requests()); n != calls {
		t.Errorf("%d model calls after the refusal", n-calls)
	}
}

// TestJudgeCredentialsRefusedStopsAtOnce: a judge whose key is refused
// stops the run as an agent's refused key does (faults.md), rather than
// running every other turn and fresh probe, each paid for and none
// judgeable. The turn is a judge error, never a pass or a fail.
func TestJudgeCredentialsRefusedStopsAtOnce(t *testing.T) {
	t.Parallel()
	s := runScript(t, fastCLI(t), faultScript(t, scripted.Rule{Kind: scripted.KindJudge, Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 401, Count: 1000}}}}), 1, nil)
	if s.code != 3 || s.run.Status != record.StatusError || !strings.Contains(s.run.Error, "refused the credentials") {
		t.Fatalf("exit %d, run %s (%q): want 3, an error naming the refused credentials", s.code, s.run.Status, s.run.Error)
	}
	if got := s.run.Conversations[0].TurnAt(1).Result(); got != judge.JudgeError {
		t.Errorf("baseline %s, want a judge error", got)
	}
	// Before the fix the fresh triple ran all three probes after the
	// baseline's judgement was refused (and was judged in vain).
	if n := len(s.run.Fresh[0].Turns); n >= 3 {
		t.Errorf("the fresh triple ran %d probes after the judge's key was refused", n)
	}
}

func TestPromptTooLongRecorded(t *testing.T) {
	t.Parallel()
	s := runScript(t, fastCLI(t), faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{3}, Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 400, Count: 1000}}}}), 1, nil)
	if s.code != 3 {
		t.Fatalf("exit %d, want 3", s.code)
	}
	c := s.run.Conversations[0]
	if len(c.Turns) != 2 || len(c.Abandoned) != 1 || c.Abandoned[0].Status != record.TurnPromptTooLong {
		t.Fatalf("turns %d, abandoned %+v", len(c.Turns), c.Abandoned)
	}
	var n400 int
	for _, r := range s.srv.Requests() {
		if r.Status == 400 {
			n400++
		}
	}
	if n400 != 1 {
		t.Errorf("%d requests got 400: prompt too long must not be retried", n400)
	}
}

func TestTimeoutKillsStraysAndIsNeverAFail(t *testing.T) {
	t.Parallel()
	marker := "stray-" + strings.ReplaceAll(t.Name(), "/", "-")
	hang := []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": "tail -f /dev/null # " + marker, "description": "watch"}}}}}
	// On the stand-in, which runs Bash in a session of its own as the CLI
	// does (a timeout of the real CLI's held Bash calls is
	// TestEveryPromptSentOnce's): 10s is room for its turn 1 on a loaded
	// 2-core machine (it takes a fraction of a second alone); turn 2 and
	// its retry wait it out, idle. (On the real CLI, whose turn 1 needed
	// 30s there, the test idled for a minute.)
	s := runScript(t, fastCLI(t), faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{2, 3, 4}, Steps: hang}), 1, nil, "--turn-timeout", "10s")
	if s.code != 3 {
		t.Fatalf("exit %d, want 3", s.code)
	}
	c := s.run.Conversations[0]
	if len(c.Turns) != 1 || len(c.Abandoned) != 1 {
		t.Fatalf("turns %d abandoned %d", len(c.Turns), len(c.Abandoned))
	}
	a := c.Abandoned[0]
	if a.Status != record.TurnTimedOut || len(a.Attempts) != 1 || a.Verdict != nil {
		t.Fatalf("turn 2: status %s, attempts %d (want a retry), verdict %v (never judged)", a.Status, len(a.Attempts), a.Verdict)
	}
	// Each try made a model call (its Bash call) before it hung, and was
	// billed for it, though the CLI says a cost only in its result line:
	// priced from the stream's usage, marked estimated, counted in the
	// run's agent cost and said in the summary (both were $0).
	if !a.CostEstimated || a.CostUSD <= 0 || !a.Attempts[0].CostEstimated || a.Attempts[0].CostUSD <= 0 {
		t.Errorf("turn 2's tries: $%v (estimated %v), $%v (estimated %v): want each priced from its token counts", a.CostUSD, a.CostEstimated, a.Attempts[0].CostUSD, a.Attempts[0].CostEstimated)
	}
	if s.run.Costs.Agent < a.CostUSD+a.Attempts[0].CostUSD || !strings.Contains(s.stdout, "estimated from token counts for 2 tries stopped before the CLI said their cost") {
		t.Errorf("agent cost $%v; the summary:\n%s", s.run.Costs.Agent, s.stdout)
	}
	// A timeout is transient: the sandbox stays for resume, and says so.
	if st, err := os.Stat(c.Sandbox); err != nil || !st.IsDir() || !strings.Contains(strings.Join(c.Notes, "\n"), "vibe-test resume` continues the session from turn 2") {
		t.Errorf("sandbox %q (%v) not kept for resume; notes %q", c.Sandbox, err, c.Notes)
	} else {
		t.Cleanup(func() { os.RemoveAll(filepath.Dir(c.Sandbox)) })
	}
	// No process of the hung command survives. The sandbox sends SIGKILL
	// without waiting, so a process found here may still be dying: wait for
	// the kernel's exit notice on a pidfd, not for a fixed time.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if !exitsWithin(t, pid, 10*time.Second) {
			t.Errorf("orphaned tool child still running: %s %q", p, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}

// exitsWithin reports whether process pid has exited (or is gone) before
// limit, waiting on a pidfd, which becomes readable when the process exits.
func exitsWithin(t *testing.T, pid int, limit time.Duration) bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(limit)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd %d: %v", pid, err)
		}
		return n > 0
	}
}

func TestJudgeErrorIsNeitherPassNorFail(t *testing.T) {
	t.Parallel()
	bad := map[string]any{"criteria": []map[string]any{{"id": "runs-census", "result": "pass", "evidence": "x", "call": 99}}, "escape_hatch": false, "escape_reason": ""}
	s := runScript(t, fastCLI(t), faultScript(t, scripted.Rule{Kind: scripted.KindJudge, Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: bad}}}}}), 1, nil)
	if s.code != 3 {
		t.Fatalf("exit %d, want 3", s.code)
	}
	v := s.run.Conversations[0].TurnAt(1).Verdict
	if v == nil || v.Result != judge.JudgeError || v.Attempts != 2 {
		t.Fatalf("baseline verdict %+v", v)
	}
	if !strings.Contains(s.stdout, "judge error") {
		t.Error("the summary does not say the judging failed")
	}
}

func TestSecretsNeverSavedNorSeen(t *testing.T) {
	t.Parallel()
	planted := "sk-ant-api03-PLANTEDxxxxxxxxxxxxxxxx"
	leak := []scripted.Step{
		{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": "env; echo " + planted, "description": "look"}}}},
		{Text: "done"},
	}
	s := runScript(t, fastCLI(t), faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{2}, Steps: leak}), 1,
		[]string{"MY_SECRET_TOKEN=hunter2-very-secret-value"})
	// The agent's environment is an allowlist: the planted variable never
	// reaches the tool result the model sees.
	sawEnv := false
	for _, r := range s.srv.Requests() {
		if bytes.Contains(r.Body, []byte("hunter2-very-secret-value")) {
			t.Fatal("the agent could see a variable outside the allowlist")
		}
		if bytes.Contains(r.Body, []byte("ANTHROPIC_BASE_URL")) {
			sawEnv = true
		}
	}
	if !sawEnv {
		t.Fatal("the env listing never reached the model: the test proves nothing")
	}
	// Nothing on disk holds the credential or the key-shaped string.
	_ = filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, secret := range []string{"sk-offline-placeholder", planted} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds a secret (%s)", p, secret)
			}
		}
		return nil
	})
}

func TestBudgetExhausted(t *testing.T) {
	t.Parallel()
	// The scripted CLI prices its calls; a tiny budget stops the run after
	// the first turns, and what was judged is still reported.
	s := runScenario(t, fastCLI(t), []string{"steady"}, false, "--max-budget-usd", "0.15")
	if s.code != 3 {
		t.Fatalf("exit %d, want 3", s.code)
	}
	c := s.run.Conversations[0]
	if s.run.Status != record.StatusBudgetExhausted || c.Status != record.StatusBudgetExhausted || len(c.Turns) == 0 || len(c.Turns) == 10 {
		t.Fatalf("run %s, conversation %s with %d turns", s.run.Status, c.Status, len(c.Turns))
	}
	if c.TurnAt(1).Result() != judge.Pass || s.run.Costs.Total <= 0 {
		t.Errorf("baseline %s, cost %v", c.TurnAt(1).Result(), s.run.Costs.Total)
	}
}

// slowTurn is the steady persona's turn n, which follows the skill with
// its first answer two seconds late: a window in which a test acts while
// the turn runs.
func slowTurn(n int) scripted.Rule {
	steps := append([]scripted.Step{}, demo.Procedure().Follow...)
	steps[0].Delay = 2 * time.Second
	return scripted.Rule{Kind: scripted.KindAgent, Persona: "steady", Turns: []int{n}, Steps: steps}
}

// TestRunStopsWhenItsRecordCannotBeWritten: run.json is what resume,
// report and rejudge read, so a run whose record cannot be written stops
// at once, without spending the turns it could never report. The record
// is made unwritable during turn 1 (a folder where run.json goes: a
// rename over it fails, even for root).
func TestRunStopsWhenItsRecordCannotBeWritten(t *testing.T) {
	t.Parallel()
	// Turn 1 follows the skill, slowly: the baseline passes, and the old
	// code ran all ten turns after the failed write.
	slow := slowTurn(1)
	srv, paths, out, env := demoRun(t, faultScript(t, slow), fastCLI(t))
	record, turn1 := filepath.Join(out, "run.json"), filepath.Join(out, "conv-1", "turn-01.jsonl")
	swapped := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, err := os.Lstat(turn1); err != nil {
				continue // turn 1 has not begun
			}
			// The journal may write a new run.json between the two calls.
			if os.Remove(record) == nil && os.Mkdir(record, 0o755) == nil {
				swapped <- nil
				return
			}
		}
		swapped <- errors.New("turn 1 never began")
	}()
	// In a process of its own with a TMPDIR of the test's: the stopped
	// conversation keeps its sandbox for a resume, which the record that
	// could not be written does not name for the test to remove.
	env = append(env, "TMPDIR="+killedRunTmp(t))
	var stdout, stderr bytes.Buffer
	code := builtMain(t)(context.Background(), []string{"vibe-test", paths.Skill, "--config", paths.Config, "--out", out,
		"--seed", "7", "--conversations", "1", "--max-retries", "1"}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	if err := <-swapped; err != nil {
		t.Fatal(err)
	}
	t.Logf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	if code != 3 || !strings.Contains(stderr.String(), "run.json") {
		t.Errorf("exit %d, stderr %q: want 3 and a line naming run.json", code, stderr.String())
	}
	for _, r := range srv.Requests() {
		if r.Kind == scripted.KindAgent && r.Turn > 2 {
			t.Fatalf("an agent request of turn %d after run.json could not be written during turn 1", r.Turn)
		}
	}
}

// A run stopped because its record could not be written (a full disk)
// keeps its conversations' sandboxes, as an interrupted one does: once the
// record can be written again, resume goes on from the last completed
// turn. They were removed, and resume ran every turn again from turn 1,
// each paid for twice.
func TestResumeAfterTheRecordCouldNotBeWritten(t *testing.T) {
	t.Parallel()
	slow := slowTurn(3)
	_, paths, out, env := demoRun(t, faultScript(t, slow), fastCLI(t))
	runJSON, turn3 := filepath.Join(out, "run.json"), filepath.Join(out, "conv-1", "turn-03.jsonl")
	var saved []byte
	swapped := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, err := os.Lstat(turn3); err != nil {
				continue // turn 3 has not begun
			}
			b, err := os.ReadFile(runJSON)
			if err == nil && os.Remove(runJSON) == nil && os.Mkdir(runJSON, 0o755) == nil {
				saved = b // the last record written, as a full disk leaves it
				swapped <- nil
				return
			}
		}
		swapped <- errors.New("turn 3 never began")
	}()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", paths.Skill, "--config", paths.Config, "--out", out,
		"--seed", "7", "--conversations", "1", "--max-retries", "1"}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	if err := <-swapped; err != nil {
		t.Fatal(err)
	}
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, stderr.String())
	}
	// The space is back.
	if err := os.Remove(runJSON); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(runJSON, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := record.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if c := before.Conversations[0]; c.Sandbox == "" || len(c.Turns) < 2 {
		t.Fatalf("the saved record: sandbox %q, %d turns", c.Sandbox, len(c.Turns))
	}
	stdout.Reset()
	stderr.Reset()
	code = Main(context.Background(), []string{"vibe-test", "resume", out}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	t.Cleanup(func() { removeKeptSandboxesNow(out) })
	after, err := record.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	c := after.Conversations[0]
	if code != 0 || c.Status != record.StatusCompleted || slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, "sandbox was gone") }) {
		t.Errorf("resume: exit %d, conversation %s, notes %q\n%s", code, c.Status, c.Notes, stderr.String())
	}
	// A turn run again gets a transcript of its own (turn-NN.run-K.jsonl).
	for _, turn := range []string{"turn-01", "turn-02"} {
		if again, _ := filepath.Glob(filepath.Join(out, "conv-1", turn+".run-*.jsonl")); len(again) > 0 {
			t.Errorf("resume ran %s again: %v", turn, again)
		}
	}
}

// A resume of a run still going (another terminal, a CI job not yet
// stopped) is refused, before any call: it ran the run's turns again on
// the same sessions, each paid for twice, and cut back the session file
// the live run was writing.
func TestResumeOfALiveRunRefused(t *testing.T) {
	t.Parallel()
	slow := slowTurn(3)
	_, paths, out, env := demoRun(t, faultScript(t, slow), fastCLI(t))
	done := make(chan int, 1)
	var stdout, stderr bytes.Buffer
	go func() {
		done <- Main(context.Background(), []string{"vibe-test", paths.Skill, "--config", paths.Config, "--out", out,
			"--seed", "7", "--conversations", "1", "--max-retries", "1"}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	}()
	turn3 := filepath.Join(out, "conv-1", "turn-03.jsonl")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Lstat(turn3); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("turn 3 never began")
		}
	}
	var rout, rerr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "resume", out}, IO{Env: env, Stdout: &rout, Stderr: &rerr})
	if code != 3 || !strings.Contains(rerr.String(), "another vibe-test process is running or resuming it") {
		t.Errorf("resume beside the live run: exit %d\n%s", code, rerr.String())
	}
	if code := <-done; code != 0 {
		t.Errorf("the live run: exit %d\n%s", code, stderr.String())
	}
	if again, _ := filepath.Glob(filepath.Join(out, "conv-1", "*.run-*.jsonl")); len(again) > 0 {
		t.Errorf("turns run again: %v", again)
	}
}

// A run started with paths relative to its working folder (--config,
// the fixture it names, the config inside that fixture) resumes from
// another working folder: the paths are recorded absolute. Resolved
// there, the config was hashed with the fixture it lies in, and resume
// refused the fixture as changed; the fixture itself was looked for in
// the wrong place.
func TestResumeFromAnotherFolder(t *testing.T) {
	t.Parallel()
	fault := scripted.Rule{Kind: scripted.KindAgent, Turns: []int{3}, Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 401, Count: 2}}}}
	_, paths, out, env := demoRun(t, faultScript(t, fault), fastCLI(t))
	files := filepath.Dir(paths.Config)
	b, err := os.ReadFile(paths.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(files, "fixture", "ci", "vt.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), "fixture: fixture", "fixture: ../../fixture", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// In a process of its own, whose working folder the test chooses.
	bin := vibeTestBinary(t)
	vibeTest := func(dir string, args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		b, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), string(b)
	}
	code, output := vibeTest(files, paths.Skill, "--config", "fixture/ci/vt.yaml", "--out", out, "--seed", "7", "--conversations", "1", "--max-retries", "1")
	t.Cleanup(func() { removeKeptSandboxesNow(out) })
	if code != 3 || !strings.Contains(output, "refused the credentials") {
		t.Fatalf("the run: exit %d, want 3 after the refused key\n%s", code, output)
	}
	if code, output = vibeTest(t.TempDir(), "resume", out); code != 0 {
		t.Errorf("resume from another folder: exit %d\n%s", code, output)
	}
}

// A fresh probe's sandbox that a SIGKILL left is named in run.json, and
// resume removes it: it stayed in the temp folder for good, one a killed
// run, where no record named it.
func TestKilledFreshProbeSandboxRemovedOnResume(t *testing.T) {
	t.Parallel()
	// The first fresh probe (turn 1 of its own session, asking about
	// gaskets) answers 3 seconds late: the run is killed meanwhile.
	steps := append([]scripted.Step{}, demo.Procedure().Follow...)
	steps[0].Delay = 3 * time.Second
	slow := scripted.Rule{Kind: scripted.KindAgent, Persona: "steady", Turns: []int{1}, Contains: "gaskets", Steps: steps}
	_, paths, out, env := demoRun(t, faultScript(t, slow), fastCLI(t))
	env = append(env, "TMPDIR="+killedRunTmp(t))
	cmd := exec.Command(vibeTestBinary(t), paths.Skill, "--config", paths.Config, "--out", out, "--seed", "7", "--conversations", "1", "--max-retries", "1")
	cmd.Env = env
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var sandboxDir string
	for deadline := time.Now().Add(30 * time.Second); sandboxDir == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if r, err := record.Load(out); err == nil && len(r.Fresh) > 0 && r.Fresh[0].Sandbox != "" {
			if _, err := os.Stat(filepath.Join(out, "fresh-1", "turn-06.jsonl")); err == nil {
				sandboxDir = r.Fresh[0].Sandbox
			}
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if sandboxDir == "" {
		t.Fatalf("the first fresh probe's sandbox was never recorded\n%s", buf.String())
	}
	if _, err := os.Stat(sandboxDir); err != nil {
		t.Fatalf("the killed run's fresh sandbox: %v", err)
	}
	code := builtMain(t)(context.Background(), []string{"vibe-test", "resume", out}, IO{Env: env, Stdout: &buf, Stderr: &buf})
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, buf.String())
	}
	if _, err := os.Stat(filepath.Dir(sandboxDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed run's fresh sandbox %s is still there after resume (%v)", sandboxDir, err)
	}
	if r, err := record.Load(out); err != nil || r.Fresh[0].Sandbox != "" {
		t.Errorf("run.json still names a fresh sandbox: %v", err)
	}
}

// TestNoTurnRetryPastTheBudget: a turn that spent the last of the budget
// and then failed on a transient error is not tried again (each new try
// is paid for: the old code tried it --turn-retries times more, past
// --max-budget-usd). The conversation stops as one the budget stopped
// before a turn: exit 3, its sandbox kept for a resume with more.
func TestNoTurnRetryPastTheBudget(t *testing.T) {
	t.Parallel()
	// Turn 2 (a filler) writes at length and runs a command, then meets
	// errors the CLI's own retries give up on; every try of it does the
	// same.
	fault := scripted.Rule{Kind: scripted.KindAgent, Turns: []int{2}, Steps: []scripted.Step{
		{Text: strings.Repeat("Let me look at the notes first. ", 1000), ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]string{"command": "ls"}}}},
		{Error: &scripted.HTTPError{Status: 500, Count: 1000}},
	}}
	// Turn 1, the rubric and turn 1's judgement cost $0.109 on the
	// stand-in, whatever their order; turn 2's first try more than $0.04
	// (its long text).
	s := runScript(t, fastCLI(t), faultScript(t, fault), 1, nil, "--max-budget-usd", "0.15", "--turn-retries", "3", "--retry-backoff", "10ms")
	if s.code != 3 {
		t.Errorf("exit %d, want 3", s.code)
	}
	c := s.run.Conversations[0]
	if c.Status != record.StatusBudgetExhausted || !strings.Contains(c.Error, "before turn 2 could be tried again") {
		t.Errorf("conversation %s (%s), want stopped by the budget before turn 2's new try", c.Status, c.Error)
	}
	if len(c.Abandoned) != 1 || c.Abandoned[0].Turn != 2 || len(c.Abandoned[0].Attempts) != 0 {
		t.Fatalf("abandoned turns %+v, want turn 2 tried once", c.Abandoned)
	}
	tries := 0
	for _, r := range s.srv.Requests() {
		if r.Kind == scripted.KindAgent && r.Turn == 2 && r.Step == 0 && r.Status == 200 {
			tries++ // each try's first request, answered with its command
		}
	}
	if tries != 1 {
		t.Errorf("turn 2 was tried %d times, want once", tries)
	}
	if _, err := os.Stat(c.Sandbox); c.Sandbox == "" || err != nil {
		t.Errorf("sandbox %q not kept (%v): a resume with more budget would start the conversation again", c.Sandbox, err)
	}
	removeKeptSandboxesNow(s.dir)
}

// A config named by a path relative to the working folder is named so in
// the checks' messages: 42443a0 made it absolute before they ran, and
// they said /tmp/.../cfg.yaml for cfg.yaml.
func TestConfigNamedAsGiven(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skill := filepath.Join(dir, "good", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: good\ndescription: d\n---\nRun the script.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "cfg.yaml")
	if err := os.WriteFile(cfg, []byte("base_task: a\nprobes: [{task: b}, {task: c}, {task: d}]\nschedule:\n  compact_before: [2]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", skill, "--config", rel, "--agent", "gemini", "--out", filepath.Join(dir, "run")},
		IO{Env: []string{"PATH=" + t.TempDir()}, Stdout: &stdout, Stderr: &stderr})
	if want := "vibe-test: " + rel + `: field "schedule.compact_before" asks for a compaction`; code != 3 || !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want 3 and a line starting %q", code, stderr.String(), want)
	}
}

// A judge call stopped by the timeout after its first request was billed
// for it, though the claude CLI says a cost only in its result line: the
// judgement's cost is priced from the stream's usage, marked estimated in
// run.json, counted in the run's judge cost and said in the summary
// (it was $0).
func TestStoppedJudgeCallIsPriced(t *testing.T) {
	t.Parallel()
	// The model answers in text: the CLI asks it again for the structured
	// output, and that request never answers.
	// The baseline's judgement alone (its prompt holds the base task):
	// the fresh probes are judged as usual.
	stall := []scripted.Step{{Text: "Let me look at the trace first."}, {Delay: 5 * time.Minute, Text: "late"}}
	rule := scripted.Rule{Kind: scripted.KindJudge, BodyHas: "How many widgets do we have in stock right now?", Steps: stall}
	s := runScript(t, fastCLI(t), faultScript(t, rule), 1, nil, "--turn-timeout", "10s")
	if s.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", s.code, s.stderr)
	}
	v := s.run.Conversations[0].TurnAt(1).Verdict
	if v == nil || v.Result != judge.JudgeError || v.Attempts != 2 {
		t.Fatalf("baseline verdict %+v", v)
	}
	if !v.CostEstimated || v.CostUSD <= 0 {
		t.Errorf("the stopped judgement: $%v (estimated %v), want priced from its token counts", v.CostUSD, v.CostEstimated)
	}
	if s.run.Costs.Judge < v.CostUSD || !strings.Contains(s.stdout, "of it estimated from token counts for 1 judgement stopped before the CLI said their cost") {
		t.Errorf("judge cost $%v; the summary:\n%s", s.run.Costs.Judge, s.stdout)
	}
}
