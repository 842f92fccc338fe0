package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// p4Conversations is the size of the saved run `vibe-test report` redraws.
const p4Conversations = 10

type repResult struct {
	one, four *vibeRun
	loop      *loopRun
	// sessions are S's loops: each persona in each session mode.
	sessions []*loopRun
}

type results struct {
	reps      []repResult
	report    []time.Duration // P4: vibe-test report wall times
	reportErr string
	// reportRunSize is the size of the synthesized run.json.
	reportRunSize int64
	parse         []float64 // P4: MB/s per benchmark count
	parseErr      string
	figures       []figure // filled by printReport
}

// measure runs every repetition, then P4. It returns what it measured so
// far together with the first error.
func (b *bench) measure(ctx context.Context) (*results, error) {
	res := &results{}
	o := b.o
	needOne := o.only["P1"] || o.only["P2"] || o.only["P3"] || o.only["S"]
	reps := o.reps
	if !needOne {
		reps = 1 // P4 alone needs one saved run
	}
	for rep := 1; rep <= reps; rep++ {
		var rr repResult
		step := func(what string) func(time.Duration) {
			fmt.Fprintf(os.Stderr, "bench: rep %d/%d: %s ... ", rep, reps, what)
			return func(d time.Duration) { fmt.Fprintf(os.Stderr, "%.1f s\n", d.Seconds()) }
		}
		var err error
		done := step("vibe-test, 1 conversation")
		if rr.one, err = b.runVibeTest(ctx, rep, 1); err != nil {
			fmt.Fprintln(os.Stderr, "failed")
			return res, err
		}
		done(rr.one.wall)
		four := func() error {
			if !o.only["P1"] {
				return nil
			}
			done := step("vibe-test, 4 conversations")
			v, err := b.runVibeTest(ctx, rep, 4)
			if err != nil {
				fmt.Fprintln(os.Stderr, "failed")
				return err
			}
			rr.four = v
			done(v.wall)
			return nil
		}
		loop := func() error {
			if !o.only["P2"] {
				return nil
			}
			prompts, setups, err := loopPrompts(rr.one)
			if err != nil {
				return err
			}
			done := step("plain claude loop (" + o.session + ")")
			l, err := b.runLoop(ctx, rep, prompts, setups, rr.one.run.Plan.Files, o.session, scripted.PersonaSteady)
			if err != nil {
				fmt.Fprintln(os.Stderr, "failed")
				return err
			}
			rr.loop = l
			done(l.wall)
			return nil
		}
		sessions := func() error {
			if !o.only["S"] {
				return nil
			}
			prompts, setups, err := loopPrompts(rr.one)
			if err != nil {
				return err
			}
			modes := []string{claude.SessionInteractive, claude.SessionResume}
			if rep%2 == 0 {
				modes = []string{claude.SessionResume, claude.SessionInteractive}
			}
			for _, persona := range o.personas {
				for _, mode := range modes {
					done := step(fmt.Sprintf("S: plain claude loop, %s, %s persona", mode, persona))
					l, err := b.runLoop(ctx, rep, prompts, setups, rr.one.run.Plan.Files, mode, persona)
					if err != nil {
						fmt.Fprintln(os.Stderr, "failed")
						return err
					}
					rr.sessions = append(rr.sessions, l)
					done(l.wall)
				}
			}
			return nil
		}
		// Alternate the order so neither side always runs on a warmer machine.
		order := []func() error{four, loop, sessions}
		if rep%2 == 0 {
			order = []func() error{sessions, loop, four}
		}
		for _, f := range order {
			if err := f(); err != nil {
				res.reps = append(res.reps, rr)
				return res, err
			}
		}
		res.reps = append(res.reps, rr)
	}
	if !o.only["P4"] {
		return res, nil
	}
	if err := b.measureReport(ctx, res); err != nil {
		res.reportErr = err.Error()
	}
	if err := b.measureParse(ctx, res); err != nil {
		res.parseErr = err.Error()
	}
	if res.reportErr != "" || res.parseErr != "" {
		return res, fmt.Errorf("P4: %s", strings.Trim(res.reportErr+"; "+res.parseErr, "; "))
	}
	return res, nil
}

// measureReport builds the binary and times `vibe-test report` on a
// 10-conversation run synthesized from rep 1's real 1-conversation run.
func (b *bench) measureReport(ctx context.Context, res *results) error {
	fmt.Fprintf(os.Stderr, "bench: P4: go build, synthesize a %d-conversation run, time `vibe-test report` %d times\n", p4Conversations, b.o.reps)
	binDir := filepath.Join(b.work, "bin")
	bin := filepath.Join(binDir, "vibe-test")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir = b.root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v: %s", err, tail(string(out), 10))
	}
	dir, err := synthesize(res.reps[0].one.dir, filepath.Join(b.work, "p4-run"), p4Conversations)
	if err != nil {
		return fmt.Errorf("synthesizing the run: %w", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
		res.reportRunSize = st.Size()
	}
	once := func() (time.Duration, error) {
		cmd := exec.CommandContext(ctx, bin, "report", dir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			return d, fmt.Errorf("vibe-test report: %v: %s", err, tail(stderr.String(), 5))
		}
		if !strings.Contains(stdout.String(), fmt.Sprintf("conversation %d:", p4Conversations)) {
			return d, fmt.Errorf("vibe-test report printed no conversation %d", p4Conversations)
		}
		return d, nil
	}
	if _, err := once(); err != nil { // warm-up: page cache, binary load
		return err
	}
	for i := 0; i < b.o.reps; i++ {
		d, err := once()
		if err != nil {
			return err
		}
		res.report = append(res.report, d)
	}
	return nil
}

// synthesize copies a real 1-conversation run folder and repeats its
// conversation n times (run.json records and conv-N transcripts).
func synthesize(src, dst string, n int) (string, error) {
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return "", err
	}
	_ = os.Remove(filepath.Join(dst, "chart.html"))
	r, err := record.Load(dst)
	if err != nil {
		return "", err
	}
	if len(r.Conversations) != 1 {
		return "", fmt.Errorf("expected a 1-conversation run, got %d", len(r.Conversations))
	}
	base := r.Conversations[0]
	r.Conversations = r.Conversations[:0]
	r.Config.Conversations = n
	if r.Plan != nil && len(r.Plan.Fillers) == 1 {
		ids := r.Plan.Fillers[0]
		r.Plan.Fillers = nil
		for i := 0; i < n; i++ {
			r.Plan.Fillers = append(r.Plan.Fillers, ids)
		}
	}
	for i := 1; i <= n; i++ {
		c := base
		c.Index = i
		if base.SessionID != "" {
			c.SessionID = fmt.Sprintf("%s-%02d", base.SessionID, i)
		}
		c.Turns = append([]record.Turn(nil), base.Turns...)
		prefix := fmt.Sprintf("conv-%d/", i)
		for k := range c.Turns {
			c.Turns[k].Transcript = prefix + strings.TrimPrefix(c.Turns[k].Transcript, "conv-1/")
		}
		if i > 1 {
			if err := os.CopyFS(filepath.Join(dst, fmt.Sprintf("conv-%d", i)), os.DirFS(filepath.Join(src, "conv-1"))); err != nil {
				return "", err
			}
		}
		r.Conversations = append(r.Conversations, c)
	}
	if err := record.Save(dst, r); err != nil {
		return "", err
	}
	return dst, nil
}

var mbRE = regexp.MustCompile(`(?m)^BenchmarkParseTurn\S*\s+\d+\s+\d+(?:\.\d+)? ns/op\s+(\d+(?:\.\d+)?) MB/s`)

// measureParse runs BenchmarkParseTurn -count reps and reads its MB/s.
func (b *bench) measureParse(ctx context.Context, res *results) error {
	fmt.Fprintf(os.Stderr, "bench: P4: go test -run '^$' -bench BenchmarkParseTurn -count %d ./internal/claude/\n", b.o.reps)
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "BenchmarkParseTurn", "-count", strconv.Itoa(b.o.reps), "./internal/claude/")
	cmd.Dir = b.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go test -bench: %v: %s", err, tail(string(out), 10))
	}
	for _, m := range mbRE.FindAllStringSubmatch(string(out), -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err == nil {
			res.parse = append(res.parse, v)
		}
	}
	if len(res.parse) == 0 {
		return fmt.Errorf("no MB/s in the benchmark output: %s", tail(string(out), 10))
	}
	return nil
}
