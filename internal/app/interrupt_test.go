package app

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// TestMain removes the binary vibeTestBinary built (some 20 MB): left in
// the temp folder, every run of the package had added one.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// vibeTestBinary builds the command once for the tests that signal it or
// run many conversations in a process of their own, without the race
// detector, which watches the same code in the in-process tests: built
// with -race, the binary of TestStableButNoisyIsNotDecay used 17.5
// CPU-seconds against 2.0 plain, and every run of the built binary in the
// package 42.6 CPU-seconds, while the plain build costs 22.8 CPU-seconds
// once from an empty Go cache (beyond the plain builds of the calibration
// and the claude stand-in) and nothing from a warm one.
func vibeTestBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "vibe-test")
		cmd := exec.Command("go", "build", "-o", builtBin, ".")
		cmd.Dir = testenv.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// killedRunTmp is a TMPDIR for a vibe-test process a test kills: its
// judge processes' folders, which a SIGKILL leaves, go with the test. Not
// t.TempDir, whose name (the test's) the agent would see in its sandbox's
// path.
func killedRunTmp(t *testing.T) string {
	t.Helper()
	return testenv.TempDir(t)
}

// completedTurn is what must survive an interrupt unchanged.
type completedTurn struct {
	transcript [32]byte
	context    int64
	verdict    string
}

func snapshot(t *testing.T, dir string) map[string]completedTurn {
	t.Helper()
	r, err := record.Load(dir)
	if err != nil {
		t.Fatalf("run folder unreadable after the stop: %v", err)
	}
	out := map[string]completedTurn{}
	for _, c := range r.Conversations {
		for _, tr := range c.Turns {
			if tr.Status != record.TurnOK {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, tr.Transcript))
			if err != nil {
				t.Fatalf("transcript of a completed turn: %v", err)
			}
			v := ""
			if tr.Verdict != nil {
				v = tr.Verdict.Result
			}
			out[fmt.Sprintf("conv %d turn %d", c.Index, tr.Turn)] = completedTurn{sha256.Sum256(b), tr.ContextTokens, v}
		}
	}
	return out
}

// TestInterruptAndResume stops runs with SIGINT (and once with SIGKILL) at
// 20 random moments (VIBE_TEST_INTERRUPT_POINTS for more), resuming after
// each stop, so each stop lands somewhere else in the run: a turn, a judge
// call, the rubric, the start. After every stop the folder must be readable
// by report and resumable, and no turn completed before the stop may be
// lost or changed. Its subject is vibe-test's own bookkeeping, so it runs
// on the stand-in (fast tier), which takes signals as the CLI does;
// TestEveryPromptSentOnce stops the real CLI at chosen turns.
func TestInterruptAndResume(t *testing.T) {
	// In parallel with the rest: most of its time is spent waiting for the
	// stop moments.
	t.Parallel()
	points := 20
	if v := os.Getenv("VIBE_TEST_INTERRUPT_POINTS"); v != "" {
		points, _ = strconv.Atoi(v)
	}
	// The stop moments come from the seed; VIBE_TEST_SEED replays a run's
	// moments (the timing of the machine still varies around them).
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("VIBE_TEST_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("VIBE_TEST_SEED=%q: expected an unsigned integer", v)
		}
	}
	t.Logf("seed %d", seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay these stop moments: VIBE_TEST_SEED=%d VIBE_TEST_INTERRUPT_POINTS=%d go test ./app -run '^TestInterruptAndResume$' -v", seed, points)
		}
	})
	rng := rand.New(rand.NewPCG(seed, 1))
	bin := vibeTestBinary(t)
	claudeBin := fastCLI(t)

	script, err := demo.Script([]string{"steady"}, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, files, paths := startDemo(t, script)
	env := append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+claudeBin, "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"),
		"TMPDIR="+killedRunTmp(t)) // one stop is a SIGKILL
	command := func(args ...string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		return cmd, &buf
	}
	runs, out, started, landed := 0, "", false, 0
	var before map[string]completedTurn
	for stop := 0; stop < points; stop++ {
		if !started {
			runs++
			out = filepath.Join(t.TempDir(), fmt.Sprintf("run-%d", runs))
			before = map[string]completedTurn{}
		}
		var cmd *exec.Cmd
		var buf *bytes.Buffer
		if started {
			cmd, buf = command("resume", out, "--retry-backoff", "200ms")
		} else {
			args := []string{paths.Skill, "--config", paths.Config, "--out", out, "--seed", "3", "--conversations", "2", "--max-retries", "1"}
			if runs%2 == 0 {
				// Every other run is on a schedule beyond ten turns:
				// resume must carry on where the levels, the fillers
				// and a compaction (cut back and run again when a stop
				// caught it) left off.
				args = append(args, beyondTen...)
			}
			cmd, buf = command(args...)
		}
		sig := syscall.SIGINT
		if stop == points/2 {
			sig = syscall.SIGKILL
		}
		// A two-conversation run on the stand-in takes about a second
		// alone, a few under load; a stop after it ended starts a new run.
		delay := time.Duration(50+rng.IntN(1200)) * time.Millisecond
		code := runAndStop(t, cmd, sig, delay)
		switch {
		case code == 0:
			t.Logf("stop %d: run %d finished before the signal (%s)", stop, runs, delay)
			started = false
			continue
		case sig == syscall.SIGINT && code != 130, sig == syscall.SIGKILL && code != 137:
			t.Fatalf("stop %d: exit %d after %s\n%s", stop, code, sig, buf)
		}
		if _, err := os.Stat(filepath.Join(out, "run.json")); err != nil {
			t.Logf("stop %d: %s after %s, before run.json was written", stop, sig, delay)
			continue // nothing to lose yet; the next start makes the folder anew
		}
		started = true
		now := snapshot(t, out)
		for k, v := range before {
			if w, ok := now[k]; !ok || !sameTurn(v, w) {
				t.Fatalf("stop %d: %s was completed before and is lost or changed (found %v; before: context %d, verdict %q; now: context %d, verdict %q, same transcript %v)\n%s",
					stop, k, ok, v.context, v.verdict, w.context, w.verdict, v.transcript == w.transcript, buf)
			}
		}
		before = now
		rep, rbuf := command("report", out)
		if err := rep.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 3 {
				t.Fatalf("stop %d: report on the stopped folder: %v\n%s", stop, err, rbuf)
			}
		}
		t.Logf("stop %d: %s after %s, %d turns completed so far, all kept", stop, sig, delay, len(now))
		landed++
	}
	// A stop proves something only when it lands in a run with a record:
	// on a machine where every run ended before its signal, the test
	// would pass having stopped nothing (15 and 16 of 20 landed here).
	if landed < points/4 {
		t.Errorf("only %d of %d stops landed in a run with a record, want %d or more: the stop moments miss the runs (replay: VIBE_TEST_SEED=%d)", landed, points, points/4, seed)
	}
	if !started {
		return
	}
	res, rsbuf := command("resume", out, "--retry-backoff", "200ms")
	if err := res.Run(); err != nil {
		t.Fatalf("final resume: %v\n%s", err, rsbuf)
	}
	r, err := record.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != record.StatusCompleted || r.Outcome.Exit != 0 {
		t.Fatalf("after the last resume: status %s exit %d\n%s", r.Status, r.Outcome.Exit, rsbuf)
	}
	for i, c := range r.Conversations {
		if !r.Plan.Schedule.Fixed() {
			for k := 1; k <= 3; k++ {
				p := c.ProbeAt(k)
				if p == nil || p.ContextBefore < p.Level || (k == 2) != (len(p.Compactions) == 1) || p.AfterCompaction != (k >= 2) {
					t.Errorf("conversation %d probe %d after resumes: %+v", c.Index, k, p)
				}
			}
			continue
		}
		if len(c.Turns) != 10 {
			t.Errorf("conversation %d has %d turns", c.Index, len(c.Turns))
		}
		if c.Control == "" {
			promptsOnce(t, srv, &r.Conversations[i]) // however often its turns were stopped
		}
	}
	final := snapshot(t, out)
	for k, v := range before {
		if w, ok := final[k]; !ok || !sameTurn(v, w) {
			t.Errorf("%s was completed before the last stop and is lost or changed", k)
		}
	}
}

// beyondTen is a schedule beyond the seed's ten turns: three context
// levels reached with work chores, and /compact before probe 2.
var beyondTen = []string{"--dilute-to", "20k,26k,32k", "--fillers", "work", "--compact-before", "2"}

// runAndStop starts cmd, signals it after delay unless it ended first, and
// returns its exit code (128+signal when killed).
func runAndStop(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, delay time.Duration) int {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(delay):
		_ = cmd.Process.Signal(sig)
		// A stopped vibe-test must end: one that hangs is a failure of the
		// run, said at once rather than at the package's timeout.
		select {
		case werr = <-done:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("vibe-test did not end within 2 minutes of %v", sig)
		}
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 0
}

// sameTurn: the transcript and context are unchanged, and a verdict given
// before is kept (a turn stopped before its judging ended gets one later).
func sameTurn(before, after completedTurn) bool {
	return before.transcript == after.transcript && before.context == after.context &&
		(before.verdict == "" || before.verdict == after.verdict)
}
