// Command bench measures vibe-test's speed and cost against its targets:
//
//	P1  wall of a 4-conversation run ÷ wall of a 1-conversation run      ≤ 1.25
//	P2  wall of one conversation under vibe-test ÷ a plain `claude -p` loop
//	    over the same 10 prompts (total, and agent-turn time only)      ≤ 1.05
//	P3  judge + rubric tokens ÷ agent tokens                             ≤ 10%
//	P4  `vibe-test report` on a 10-conversation run                      ≤ 200 ms
//	    and stream-json parse throughput (BenchmarkParseTurn)            ≥ 200 MB/s
//
// Every ratio is measured side by side within one repetition, against the
// scripted model with a fixed latency per response and the real claude CLI.
// Run it from the repo: `go run ./bench` (flags in bench/README.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/demo"
)

type options struct {
	reps    int
	latency time.Duration
	claude  string
	keep    bool
	strict  bool
	only    map[string]bool
	// session is the mode of the vibe-test runs and of P2's loop.
	session string
	// personas are S's scripted personas.
	personas []string
	// isolation is the vibe-test runs' --isolation ("": vibe-test's
	// default, the jail where bubblewrap works).
	isolation string
}

func main() {
	os.Exit(run())
}

func run() int {
	var o options
	var only string
	flag.IntVar(&o.reps, "reps", 3, "repetitions of each measurement (median and min–max are reported)")
	flag.DurationVar(&o.latency, "latency", time.Second, "scripted model latency added before every response")
	flag.StringVar(&o.claude, "claude", "", "the claude binary (default: $VIBE_TEST_CLAUDE, tools/node_modules/.bin/claude, then PATH)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work folder (run folders, loop transcripts, the built binary) and print its path")
	flag.BoolVar(&o.strict, "strict", false, "exit 1 when a figure misses its target (default: only when a measurement fails)")
	flag.StringVar(&only, "only", "P1,P2,P3,P4,S", "comma-separated figures to measure")
	flag.StringVar(&o.session, "session", claude.DefaultSessionMode, "session mode of the vibe-test runs and of P2's plain loop: interactive or resume (S measures both)")
	var personas string
	flag.StringVar(&o.isolation, "isolation", "", "--isolation of the vibe-test runs: jail or none (default: vibe-test's, the jail where bubblewrap works)")
	flag.StringVar(&personas, "personas", "steady,decaying", "scripted personas of S (the two session modes side by side)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./bench [flags]\n\nMeasures vibe-test's speed and cost (P1–P4, see bench/README.md).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bench: unexpected arguments %q\n", flag.Args())
		return 2
	}
	if o.reps < 1 {
		fmt.Fprintln(os.Stderr, "bench: -reps must be at least 1")
		return 2
	}
	if o.latency < 0 {
		fmt.Fprintln(os.Stderr, "bench: -latency must not be negative")
		return 2
	}
	o.only = map[string]bool{}
	for _, f := range strings.Split(only, ",") {
		f = strings.ToUpper(strings.TrimSpace(f))
		switch f {
		case "P1", "P2", "P3", "P4", "S":
			o.only[f] = true
		case "":
		default:
			fmt.Fprintf(os.Stderr, "bench: -only: unknown figure %q (expected P1, P2, P3, P4, S)\n", f)
			return 2
		}
	}
	if err := claude.CheckSessionMode(o.session); err != nil {
		fmt.Fprintf(os.Stderr, "bench: -%s\n", strings.TrimPrefix(err.Error(), "--"))
		return 2
	}
	for _, p := range strings.Split(personas, ",") {
		if p = strings.TrimSpace(p); p != "" {
			o.personas = append(o.personas, p)
		}
	}

	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	bin, err := findClaude(o.claude, root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: FAIL: %v\n", err)
		return 1
	}
	version, err := claudeVersion(bin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: FAIL: the claude CLI at %s does not run: %v\n", bin, err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	work, err := os.MkdirTemp("", "vibe-bench-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	if o.keep {
		defer fmt.Fprintf(os.Stderr, "bench: work folder kept: %s\n", work)
	} else {
		defer os.RemoveAll(work)
	}
	paths, err := demo.Materialize(filepath.Join(work, "demo"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}

	b := &bench{o: o, root: root, claude: bin, work: work, paths: paths}
	m := machine{
		NProc: runtime.NumCPU(), CPU: cpuModel(), Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		Claude: version, LoadStart: loadAvg(),
	}
	fmt.Fprintf(os.Stderr, "bench: %d reps, latency %s, claude %s (%s), work folder %s\n", o.reps, o.latency, version, bin, work)
	res, err := b.measure(ctx)
	m.LoadEnd = loadAvg()
	printReport(os.Stdout, o, m, res)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: FAIL: %v\n", err)
		return 1
	}
	if o.strict && res.missed() {
		fmt.Fprintln(os.Stderr, "bench: a figure missed its target (-strict)")
		return 1
	}
	return 0
}

// moduleRoot is the folder of vibe-test's go.mod, found from the working
// directory upwards (`go run ./bench` runs from the repo).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/vibe-test/vibe-test\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run the bench from the vibe-test repo (no go.mod of github.com/vibe-test/vibe-test above the working directory)")
		}
		dir = parent
	}
}

// findClaude: -claude, $VIBE_TEST_CLAUDE, the pinned tools/ install, PATH.
func findClaude(flagValue, root string) (string, error) {
	candidates := []string{flagValue, os.Getenv("VIBE_TEST_CLAUDE"), filepath.Join(root, "tools", "node_modules", ".bin", "claude")}
	for i, c := range candidates {
		if c == "" {
			continue
		}
		if st, err := os.Stat(c); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			abs, _ := filepath.Abs(c)
			return abs, nil
		}
		if i < 2 {
			return "", fmt.Errorf("claude binary %s not found or not executable", c)
		}
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the claude CLI is missing: run `make tools` in %s (installs @anthropic-ai/claude-code@%s into tools/), or pass -claude PATH", root, claude.VerifiedVersion)
}

func claudeVersion(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

type machine struct {
	NProc              int
	CPU, Go, Claude    string
	LoadStart, LoadEnd string
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown (no /proc/cpuinfo)"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// cpuTimes is the CPU time of this process (the in-process vibe-test and
// the scripted server), of its children (every claude process and what they
// ran), and of the whole machine (/proc/stat, all processes), so the report
// can say how much CPU others took during a measurement.
type cpuTimes struct{ self, children, machine time.Duration }

// cpuNow reads the children's CPU from two places: getrusage(RUSAGE_CHILDREN)
// has the processes this one waited for (the plain loop's, `claude
// --version`, bwrap's own), but not a jailed claude, which is reaped inside
// the jail's PID namespace; vibe-test measures those in the jail and sums
// them in claude.JailedCPU.
func cpuNow() cpuTimes {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return cpuTimes{self: tv(self), children: tv(kids) + claude.JailedCPU(), machine: machineBusy()}
}

func (c cpuTimes) sub(d cpuTimes) cpuTimes {
	return cpuTimes{self: c.self - d.self, children: c.children - d.children, machine: c.machine - d.machine}
}

// others is the CPU time the rest of the machine used.
func (c cpuTimes) others() time.Duration {
	return max(0, c.machine-c.self-c.children)
}

// machineBusy is the busy CPU time of all CPUs since boot, from the first
// line of /proc/stat (user nice system idle iowait irq softirq steal, in
// 1/100 s); 0 where there is none.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy) * 10 * time.Millisecond
}

// tail is the last n lines of s, for error messages.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
