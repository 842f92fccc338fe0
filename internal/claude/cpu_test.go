package claude

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// spinEnv makes the test binary a stand-in CLI that first spins until it
// has used the CPU time it names, then answers every stdin line with a
// successful result line and exits at EOF.
const spinEnv = "CLAUDE_TEST_SPIN"

func TestMain(m *testing.M) {
	if d := os.Getenv(spinEnv); d != "" {
		os.Exit(spin(d))
	}
	os.Exit(m.Run())
}

func spin(d string) int {
	want, err := time.ParseDuration(d)
	if err != nil {
		return 2
	}
	for x := 0; ; x++ {
		if x%1_000_000 == 0 {
			var ru syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= want {
				break
			}
		}
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Println(`{"type":"result","subtype":"success","is_error":false,"session_id":"s1","result":"ok"}`)
	}
	return 0
}

// spinner is an Invocation of the stand-in that spins for spent, in the
// jail when jailed (the test binary's folder bound so it can run there).
func spinner(t *testing.T, spent time.Duration, jailed bool) Invocation {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	inv := Invocation{Binary: exe, Env: []string{"PATH=/usr/bin:/bin", spinEnv + "=" + spent.String()}, Dir: t.TempDir(), Timeout: time.Minute}
	if jailed {
		b := jail.Find(os.Getenv("PATH"))
		if err := jail.Probe(t.Context(), b); err != nil {
			testenv.Missing(t, err.Error())
		}
		inv.Jail = &jail.Spec{Bwrap: b, Writable: []string{filepath.Dir(exe), inv.Dir}, Dir: inv.Dir}
	}
	return inv
}

// TestRunMeasuresCPU: a one-shot process's CPU is in its Outcome, in the
// jail (where no wait status of vibe-test's carries it) and out of it;
// JailedCPU counts the jailed one only.
func TestRunMeasuresCPU(t *testing.T) {
	const spent = 200 * time.Millisecond
	// `times` in the jail counts clock ticks (1/100 s), rounded down.
	const tick = 20 * time.Millisecond
	for _, jailed := range []bool{false, true} {
		before := JailedCPU()
		out, err := Run(t.Context(), spinner(t, spent, jailed))
		if err != nil || out.ExitCode != 0 {
			t.Fatalf("jailed %v: %v, exit %d: %s", jailed, err, out.ExitCode, out.Stderr)
		}
		if out.CPU < spent-tick {
			t.Errorf("jailed %v: Outcome.CPU %v, but the process spun until it had used %v", jailed, out.CPU, spent)
		}
		got := JailedCPU() - before
		if jailed && got != out.CPU {
			t.Errorf("JailedCPU grew by %v, want the jailed process's %v", got, out.CPU)
		}
		if !jailed && got != 0 {
			t.Errorf("JailedCPU grew by %v for an unjailed process (RUSAGE_CHILDREN has it)", got)
		}
	}
}

// TestSessionMeasuresCPU: an interactive session's CPU is known once the
// process has ended, not per turn.
func TestSessionMeasuresCPU(t *testing.T) {
	const spent = 200 * time.Millisecond
	s, err := StartSession(spinner(t, spent, true))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Send(t.Context(), "hello", nil, time.Minute)
	if err != nil || !out.Turn.HasResult {
		t.Fatalf("turn: %v, result %v: %s", err, out.Turn.HasResult, s.Stderr())
	}
	if out.CPU != 0 || s.CPU() != 0 {
		t.Errorf("CPU %v / %v while the process lives on, want 0 (unknown until it ends)", out.CPU, s.CPU())
	}
	s.Close()
	if s.CPU() < spent-20*time.Millisecond {
		t.Errorf("Session.CPU %v after Close, but the process spun until it had used %v", s.CPU(), spent)
	}
}
