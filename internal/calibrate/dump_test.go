package calibrate

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// The calibration's figures are its proof, so a change that only makes
// the simulations cheaper must leave every one of them as it was, to the
// last bit. With VIBE_TEST_CALIBRATION_DUMP=file each test appends what it
// measured (every cell's exit counts, not just the lines it logs) to file,
// and TestDumpOutcomes adds the whole outcome of full verdict.Decide (every
// sentence, note and simulated power figure) on simulated runs: run the
// package before and after a change and compare the two files.
//
//	VIBE_TEST_CALIBRATION_DUMP=/tmp/before go test -count=1 ./internal/calibrate/
//	(change)
//	VIBE_TEST_CALIBRATION_DUMP=/tmp/after go test -count=1 ./internal/calibrate/
//	sort /tmp/before | sha256sum; sort /tmp/after | sha256sum

var dumpMu sync.Mutex

// dump appends one line, "test what: value", to the dump file, if any.
// Tests run one at a time, but their cells on every core: the lines of a
// test are in its own order, and a sort makes two dumps comparable.
func dump(t *testing.T, what string, v any) {
	path := os.Getenv("VIBE_TEST_CALIBRATION_DUMP")
	if path == "" {
		return
	}
	dumpMu.Lock()
	defer dumpMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s %s: %+v\n", t.Name(), what, v); err != nil {
		t.Fatal(err)
	}
}

// TestDumpOutcomes decides a few simulated runs of every world the grids
// use with full verdict.Decide, the path `vibe-test` itself takes, and
// decides the same records as Run does (Options.ExitOnly): it fails if an
// exit code differs, since the grids count what vibe-test would exit with.
// (The verdict word may differ: without the simulated power, a run that is
// held says not enough evidence, exit 0 both.) With
// VIBE_TEST_CALIBRATION_DUMP it also dumps a hash of each whole record:
// outcome, sentences, notes, power figures, shapes, looks.
func TestDumpOutcomes(t *testing.T) {
	var grid []Scenario
	grid = append(grid, noDecayScenarios()...)
	for _, w := range []Scenario{
		{Rho: 0}, {Rho: 0.3, Bypass: true},
		{Rho: 0.3, JudgeNoise: 0.05, TurnErrors: 0.02, JudgeErrors: 0.02, Uncertain: 0.03},
	} {
		for _, q := range []float64{0.7, 0.9, 0.99} {
			for _, drop := range []float64{0, 0.3} {
				s := w
				s.Q, s.N, s.Max, s.Drop = q, 2, 20, drop
				grid = append(grid, s)
			}
		}
	}
	for _, q := range []float64{0.7, 0.9} {
		grid = append(grid,
			Scenario{Q: q, N: 8, Rho: 0.3, Schedule: onSchedule(), JudgeNoise: 0.05, TurnErrors: 0.02, Uncertain: 0.03},
			Scenario{Q: q, N: 20, Offsets: [3]float64{-0.23, 0.07, 0.16}, DilutedProbeErrors: 0.1},
			Scenario{Q: q, N: 16, Rule: record.RuleAnyProbeFailed},
			Scenario{Q: q, N: 10, Rho: 0.1, Drop: 0.3},
			Scenario{Q: q, N: 8, Rho: 0.1, BaseOffset: -0.3},
			Scenario{Q: q, N: 6, Rho: 0.3, Criteria: 4, JudgeNoise: 0.03})
	}
	const runs = 3
	sums := make([]string, len(grid))
	differ := make([]string, len(grid))
	Each(len(grid), func(i int) {
		rng, same := rand.New(rand.NewPCG(uint64(i), 99)), rand.New(rand.NewPCG(uint64(i), 99))
		h := sha256.New()
		for range runs {
			r, fast := simulateRun(rng, grid[i]), simulateRun(same, grid[i])
			verdict.Decide(r)
			verdict.DecideWith(fast, verdict.Options{ExitOnly: true})
			if r.Outcome.Exit != fast.Outcome.Exit && differ[i] == "" {
				differ[i] = fmt.Sprintf("%s: exit %d (%s), %d (%s) with ExitOnly", describeErrors(grid[i]), r.Outcome.Exit, r.Outcome.Verdict, fast.Outcome.Exit, fast.Outcome.Verdict)
			}
			b, err := json.Marshal(r)
			if err != nil {
				panic(err)
			}
			h.Write(b)
			fmt.Fprintf(h, "\n%d %s\n", r.Outcome.Exit, r.Outcome.Verdict)
		}
		sums[i] = fmt.Sprintf("%x", h.Sum(nil))
	})
	for i, s := range grid {
		if differ[i] != "" {
			t.Error(differ[i])
		}
		dump(t, fmt.Sprintf("%s schedule=%v rule=%q criteria=%d base=%.1f drop=%.2f",
			describeErrors(s), s.Schedule != nil, s.Rule, s.Criteria, s.BaseOffset, s.Drop), sums[i])
	}
}
