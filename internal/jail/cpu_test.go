package jail

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// spinEnv makes the test binary a busy command: it spins until it has used
// the CPU time it names, then exits 7 if fds 3 and 4 hold no pipe (the
// command must see neither the jail's options nor the report pipe) and 8
// if not.
const spinEnv = "JAIL_TEST_SPIN"

func TestMain(m *testing.M) {
	if d := os.Getenv(spinEnv); d != "" {
		os.Exit(spin(d))
	}
	os.Exit(m.Run())
}

// spin burns CPU until the process has used d (user + system), so a test
// knows a lower bound of what a measurement must find whatever the load.
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
	// The Go runtime may have taken fd 3 or 4 for itself (an epoll fd):
	// only a pipe there is the jail's.
	for _, fd := range []string{"3", "4"} {
		if l, err := os.Readlink("/proc/self/fd/" + fd); err == nil && strings.HasPrefix(l, "pipe:") {
			return 8
		}
	}
	return 7
}

func TestParseCPU(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     time.Duration
	}{
		{"dash", "0m0.010000s 0m0.000000s\n0m1.230000s 0m0.450000s\n", 1680 * time.Millisecond},
		{"bash", "0m0.002s 0m0.000s\n1m2.500s 0m0.250s\n", 62750 * time.Millisecond},
		{"busybox", "0m 0.00s 0m 0.00s\n0m 3.10s 0m 0.20s\n", 3300 * time.Millisecond},
	} {
		got, err := ParseCPU([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("%s: ParseCPU = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0m0.01s 0m0.00s\n", "0m0.01s 0m0.00s\n0m1.00s\n", "a\nb\n"} {
		if got, err := ParseCPU([]byte(bad)); err == nil {
			t.Errorf("ParseCPU(%q) = %v, want an error", bad, got)
		}
	}
}

// TestMeasuredReportsCPU: a jailed command's CPU reaches the caller on fd
// CPUFD, its exit status is its own, and it sees neither that pipe nor the
// jail's options'.
func TestMeasuredReportsCPU(t *testing.T) {
	b := bwrap(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const spent = 200 * time.Millisecond
	s := Spec{Bwrap: b, Writable: []string{filepath.Dir(exe)}}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd, started, err := s.MeasuredCmd(exe, nil, []string{"PATH=/usr/bin:/bin", spinEnv + "=" + spent.String()}, "")
	if err != nil {
		t.Fatal(err)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	err = cmd.Start()
	started()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Errorf("exit code %d (%v), want 7: the command's own, with fds 3 and 4 closed (8: it saw a pipe of the jail's)", code, err)
	}
	report, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := ParseCPU(report)
	if err != nil {
		t.Fatal(err)
	}
	// `times` counts in clock ticks (1/100 s), rounded down, user and
	// system apart.
	if cpu < spent-20*time.Millisecond {
		t.Errorf("reported %v of CPU, but the command spun until it had used %v", cpu, spent)
	}
}
