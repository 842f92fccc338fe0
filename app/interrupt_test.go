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

	"github.com/vibe-test/vibe-test/demo"
	"github.com/vibe-test/vibe-test/internal/testenv"
	"github.com/vibe-test/vibe-test/result"
	"github.com/vibe-test/vibe-test/scripted"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// vibeTestBinary builds the command once for the tests that signal it.
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

// completedTurn is what must survive an interrupt unchanged.
type completedTurn struct {
	transcript [32]byte
	context    int64
	verdict    string
}

func snapshot(t *testing.T, dir string) map[string]completedTurn {
	t.Helper()
	r, err := result.Load(dir)
	if err != nil {
		t.Fatalf("run folder unreadable after the stop: %v", err)
	}
	out := map[string]completedTurn{}
	for _, c := range r.Conversations {
		for _, tr := range c.Turns {
			if tr.Status != result.TurnOK {
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

// TestInterruptAndResume stops a real run with SIGINT (and once with
// SIGKILL) at random moments; every folder must be readable by report and
// resumable, and resume must lose none of the turns completed before.
func TestInterruptAndResume(t *testing.T) {
	points := 20
	if v := os.Getenv("VIBE_TEST_INTERRUPT_POINTS"); v != "" {
		points, _ = strconv.Atoi(v)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	bin := vibeTestBinary(t)
	claudeBin := testenv.Claude(t)
	for i := 0; i < points; i++ {
		delay := time.Duration(300+rng.IntN(17000)) * time.Millisecond
		sig := syscall.SIGINT
		if i == points-1 {
			sig = syscall.SIGKILL
		}
		t.Run(fmt.Sprintf("%s-after-%s", sig, delay), func(t *testing.T) {
			t.Parallel()
			interruptAndResume(t, bin, claudeBin, sig, delay)
		})
	}
}

func interruptAndResume(t *testing.T, bin, claudeBin string, sig syscall.Signal, delay time.Duration) {
	script, err := demo.Script([]string{"steady"}, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scripted.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	files := t.TempDir()
	paths, err := demo.Materialize(files)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	env := append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+claudeBin, "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"))
	run := func(args ...string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		return cmd, &buf
	}
	cmd, buf := run(paths.Skill, "--config", paths.Config, "--out", out, "--seed", "3", "--conversations", "1", "--max-retries", "1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
		t.Log("the run finished before the signal")
	case <-time.After(delay):
		_ = cmd.Process.Signal(sig)
		werr = <-done
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	switch {
	case sig == syscall.SIGINT && code != 130 && code != 0:
		t.Fatalf("exit %d after SIGINT, want 130\n%s", code, buf)
	case sig == syscall.SIGKILL && code != 137 && code != 0:
		t.Fatalf("exit %d after SIGKILL\n%s", code, buf)
	}
	if _, err := os.Stat(filepath.Join(out, "run.json")); err != nil {
		// Stopped before the run folder's first write: nothing to lose.
		t.Logf("stopped before run.json was written (%v)", err)
		return
	}
	before := snapshot(t, out)
	rep, rbuf := run("report", out)
	if err := rep.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 3 {
			t.Fatalf("report on the stopped folder: %v\n%s", err, rbuf)
		}
	}
	res, rsbuf := run("resume", out, "--retry-backoff", "200ms")
	if err := res.Run(); err != nil {
		t.Fatalf("resume: %v\n%s\nfirst run:\n%s", err, rsbuf, buf)
	}
	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != result.StatusCompleted || r.Outcome.Exit != 0 {
		t.Fatalf("after resume: status %s exit %d\n%s", r.Status, r.Outcome.Exit, rsbuf)
	}
	for _, c := range r.Conversations {
		if len(c.Turns) != 10 {
			t.Errorf("conversation %d has %d turns after resume", c.Index, len(c.Turns))
		}
	}
	after := snapshot(t, out)
	for k, v := range before {
		w, ok := after[k]
		if !ok {
			t.Errorf("%s was completed before the stop and is lost", k)
			continue
		}
		if w.transcript != v.transcript || w.context != v.context || (v.verdict != "" && w.verdict != v.verdict) {
			t.Errorf("%s changed across the resume", k)
		}
	}
	t.Logf("%d turns completed before the stop, all kept", len(before))
}
