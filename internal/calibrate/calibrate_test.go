package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// TestMain lets the heap grow before collecting: the simulations make
// millions of short-lived records, and with the default the collector took
// a quarter of their time.
func TestMain(m *testing.M) {
	debug.SetGCPercent(400)
	os.Exit(m.Run())
}

// seed is the simulation seed: VIBE_TEST_SEED replays a failure.
func seed(t *testing.T) uint64 {
	if s := os.Getenv("VIBE_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("VIBE_TEST_SEED=%q: %v", s, err)
		}
		return v
	}
	return 20261201
}

// sims per grid cell; VIBE_TEST_CALIBRATION_RUNS raises it for a finer
// look (the README's table used 20000).
func sims(t *testing.T, def int) int {
	if s := os.Getenv("VIBE_TEST_CALIBRATION_RUNS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 100 {
			t.Fatalf("VIBE_TEST_CALIBRATION_RUNS=%q: expected a number >= 100", s)
		}
		return v
	}
	return def
}

// noDecayScenarios is the grid of "stable skill" worlds of issue 9: per-turn
// pass 0.7 to 0.99, conversations that differ from each other, judge
// noise, baseline failures (with the gate and without), errored and
// uncertain turns, n from 2 to 50.
func noDecayScenarios() []Scenario {
	var out []Scenario
	worlds := []Scenario{
		{Rho: 0},                 // every turn an independent draw
		{Rho: 0.3},               // conversations differ
		{Rho: 0.3, Bypass: true}, // --no-baseline-gate
		{Rho: 0.3, Offsets: [3]float64{0.05, -0.1, 0}, JudgeNoise: 0.05, TurnErrors: 0.02, JudgeErrors: 0.02, Uncertain: 0.03}, // everything at once
	}
	for _, w := range worlds {
		for _, q := range []float64{0.7, 0.8, 0.9, 0.95, 0.99} {
			for _, n := range []int{2, 3, 5, 8, 12, 16, 20, 30, 50} {
				s := w
				s.Q, s.N = q, n
				out = append(out, s)
			}
		}
	}
	return out
}

func describe(s Scenario) string {
	return fmt.Sprintf("q=%.2f n=%d rho=%.1f bypass=%v noise=%.2f errors=%.2f/%.2f uncertain=%.2f offsets=%v max=%d",
		s.Q, s.N, s.Rho, s.Bypass, s.JudgeNoise, s.TurnErrors, s.JudgeErrors, s.Uncertain, s.Offsets, s.Max)
}

// TestFalseAlarmRate is the calibration of the exit code: on runs with no
// dilution effect anywhere on the grid, verdict.Decide exits 1 at most
// alpha of the time, beyond Monte Carlo error.
func TestFalseAlarmRate(t *testing.T) {
	runs := sims(t, 600)
	base := seed(t)
	worst, worstAt := 0.0, ""
	sum, cells := 0.0, 0
	grid := noDecayScenarios()
	results := make([]Result, len(grid))
	Each(len(grid), func(i int) { results[i] = Run(grid[i], runs, base+uint64(i)) })
	for i, s := range grid {
		res := results[i]
		dump(t, describe(s), res)
		fa := res.Rate(exit.Decay)
		sum += fa
		cells++
		if fa > worst {
			worst, worstAt = fa, describe(s)
		}
		// 0.05 plus 3 Monte Carlo standard errors at 0.05.
		if limit := 0.05 + 3*res.MCError(0.05); fa > limit {
			t.Errorf("%s: false-alarm rate %.4f > %.4f over %d runs (replay: VIBE_TEST_SEED=%d)", describe(s), fa, limit, runs, base)
		}
	}
	mean := sum / float64(cells)
	t.Logf("false alarms over %d cells x %d runs: worst %.4f at %s; mean %.4f", cells, runs, worst, worstAt, mean)
	// The mean over the grid has a far smaller Monte Carlo error: hold it to
	// alpha itself.
	if limit := 0.05 + 3*math.Sqrt(0.05*0.95/float64(cells*runs)); mean > limit {
		t.Errorf("mean false-alarm rate over the grid %.4f > %.4f", mean, limit)
	}
	// But the small runs, which can rarely reject anything, pull that mean
	// down (0.011): pooled by conversation count, the cells of one n (20
	// of them, 12,000 runs) face a limit a pooled rate of 0.06 exceeds
	// with 95% chance, where a cell alone flags only some 0.08.
	byN := map[int][]Result{}
	var ns []int
	for i, s := range grid {
		if byN[s.N] == nil {
			ns = append(ns, s.N)
		}
		byN[s.N] = append(byN[s.N], results[i])
	}
	for _, n := range ns {
		p := pool(byN[n])
		limit := 0.05 + 3*p.MCError(0.05)
		if limit+1.645*p.MCError(0.06) > 0.06 {
			t.Fatalf("n=%d: %d runs cannot tell 0.06 from 0.05 (limit %.4f): raise the runs", n, p.Runs, limit)
		}
		t.Logf("n=%d: false-alarm rate %.4f over %d runs", n, p.Rate(exit.Decay), p.Runs)
		if fa := p.Rate(exit.Decay); fa > limit {
			t.Errorf("n=%d: false-alarm rate over the grid's %d runs of that size %.4f > %.4f (replay: VIBE_TEST_SEED=%d)", n, p.Runs, fa, limit, base)
		}
	}
}

// pool is the cells' runs as one cell's: their counts of each exit added.
func pool(cells []Result) Result {
	p := Result{Exits: map[int]int{}}
	for _, c := range cells {
		p.Runs += c.Runs
		for code, n := range c.Exits {
			p.Exits[code] += n
		}
	}
	return p
}

// TestFalseAlarmRateWithErroredTurns: a turn error stops a conversation, so
// its later probes are never asked, and long diluted conversations error
// more often than fresh sessions. With probes of different difficulty
// (0.6, 0.9, 0.99) a comparison of per-unit shares then compares different
// mixes of probes: before the probes were compared one by one it exited 1
// in 0.063 of these runs at n = 20 and 0.094 at n = 50. Each cell has enough
// runs that a cell whose rate is 0.06 fails the check 95 times in 100 (at
// 4000 runs, as before, only 64 in 100: the check could miss it).
func TestFalseAlarmRateWithErroredTurns(t *testing.T) {
	runs := sims(t, 9000)
	base := seed(t) + 9000
	offsets := [3]float64{0.6 - 0.83, 0.9 - 0.83, 0.99 - 0.83}
	var grid []Scenario
	for _, w := range []Scenario{
		{Rho: 0, DilutedProbeErrors: 0.1},
		{Rho: 0, DilutedProbeErrors: 0.25},
		{Rho: 0.3, DilutedProbeErrors: 0.1},
		{Rho: 0, DilutedProbeErrors: 0.1, TurnErrors: 0.03, Bypass: true},
	} {
		for _, n := range []int{20, 50} {
			s := w
			s.Q, s.N, s.Offsets = 0.83, n, offsets
			grid = append(grid, s)
		}
	}
	results := make([]Result, len(grid))
	Each(len(grid), func(i int) { results[i] = Run(grid[i], runs, base+uint64(i)) })
	worst, worstAt := 0.0, ""
	for i, s := range grid {
		dump(t, describeErrors(s), results[i])
		fa := results[i].Rate(exit.Decay)
		if fa > worst {
			worst, worstAt = fa, describeErrors(s)
		}
		limit := 0.05 + 2.5*results[i].MCError(0.05)
		// A cell at 0.06 lands above the limit with 95% chance when the
		// limit sits 1.645 of its standard errors below 0.06.
		if limit+1.645*results[i].MCError(0.06) > 0.06 {
			t.Fatalf("%d runs a cell cannot tell 0.06 from 0.05 (limit %.4f): raise the runs", runs, limit)
		}
		if fa > limit {
			t.Errorf("%s: false-alarm rate %.4f > %.4f over %d runs (replay: VIBE_TEST_SEED=%d)", describeErrors(s), fa, limit, runs, base-9000)
		}
	}
	t.Logf("false alarms with errored diluted probes over %d cells x %d runs: worst %.4f at %s", len(grid), runs, worst, worstAt)
}

func describeErrors(s Scenario) string {
	return fmt.Sprintf("%s diluted-probe-errors=%.2f", describe(s), s.DilutedProbeErrors)
}

// TestSequentialFalseAlarmRate: --until-decided with the default batch (2)
// and cap (20) holds alpha whatever the baselines and errors do.
func TestSequentialFalseAlarmRate(t *testing.T) {
	// Fewer runs than the fixed-size grid: an early "held" look simulates
	// the rule's power, and the guarantee itself is by construction (the
	// looks' levels add up to alpha).
	runs := sims(t, 500)
	base := seed(t)
	var grid []Scenario
	var seeds []uint64
	for i, w := range []Scenario{
		{Rho: 0}, {Rho: 0.3, Bypass: true},
		{Rho: 0.3, JudgeNoise: 0.05, TurnErrors: 0.02, JudgeErrors: 0.02, Uncertain: 0.03},
	} {
		for k, q := range []float64{0.7, 0.9, 0.99} {
			s := w
			s.Q, s.N, s.Max = q, 2, 20
			grid, seeds = append(grid, s), append(seeds, base+uint64(100*i+k))
		}
	}
	results := make([]Result, len(grid))
	Each(len(grid), func(i int) { results[i] = Run(grid[i], runs, seeds[i]) })
	for i, s := range grid {
		dump(t, describe(s), results[i])
		fa := results[i].Rate(exit.Decay)
		if limit := 0.05 + 3*results[i].MCError(0.05); fa > limit {
			t.Errorf("%s: sequential false-alarm rate %.4f > %.4f (replay: VIBE_TEST_SEED=%d)", describe(s), fa, limit, base)
		}
		t.Logf("%s: %.4f", describe(s), fa)
	}
	pooled := pool(results)
	// A cell of 500 runs is flagged above 0.079 (a rate of 0.10 with some
	// 95% chance); the grid's runs together flag a rule that exceeds alpha
	// everywhere by a little: a pooled rate of 0.065 lands above this
	// limit with 95% chance (the cells' rates are 0 to 0.032 here).
	limit := 0.05 + 2.5*pooled.MCError(0.05)
	if limit+1.645*pooled.MCError(0.065) > 0.065 {
		t.Fatalf("%d runs in all cannot tell 0.065 from 0.05 (limit %.4f): raise the runs", pooled.Runs, limit)
	}
	if fa := pooled.Rate(exit.Decay); fa > limit {
		t.Errorf("sequential false-alarm rate over the grid's %d runs %.4f > %.4f (replay: VIBE_TEST_SEED=%d)", pooled.Runs, fa, limit, base)
	}
}

// TestSequentialFalseAlarmRateWithErroredTurns: the worlds of
// TestFalseAlarmRateWithErroredTurns (probes of different difficulty, a
// tenth of the diluted probe turns erroring and stopping their
// conversation) under --until-decided's looks. 4500 runs (a sequential run
// costs its looks' power simulations: 9000 took 11.6 CPU-seconds here): a
// rate of 0.065 fails the check 95 times in 100, as in
// TestSequentialFalseAlarmRate's pooled check.
func TestSequentialFalseAlarmRateWithErroredTurns(t *testing.T) {
	runs := sims(t, 4500)
	base := seed(t) + 19000
	s := Scenario{Q: 0.83, Offsets: [3]float64{0.6 - 0.83, 0.9 - 0.83, 0.99 - 0.83}, DilutedProbeErrors: 0.1, N: 2, Max: 20}
	res := Run(s, runs, base)
	dump(t, describeErrors(s), res)
	fa := res.Rate(exit.Decay)
	limit := 0.05 + 2.5*res.MCError(0.05)
	if limit+1.645*res.MCError(0.065) > 0.065 {
		t.Fatalf("%d runs cannot tell 0.065 from 0.05 (limit %.4f): raise the runs", runs, limit)
	}
	if fa > limit {
		t.Errorf("%s: sequential false-alarm rate %.4f > %.4f over %d runs (replay: VIBE_TEST_SEED=%d)", describeErrors(s), fa, limit, runs, base-19000)
	}
	t.Logf("%s: sequential false-alarm rate %.4f over %d runs", describeErrors(s), fa, runs)
}

// TestSeedRuleFiresAsPrinted: seed 002's rule is not calibrated, but the
// chance the summary prints beside it must be what the rule does. With
// every turn independent at q and the gate on, it fires with probability
// P(some conversation passes its baseline and fails a probe) =
// 1 - (1 - q(1-q^3))^n.
func TestSeedRuleFiresAsPrinted(t *testing.T) {
	runs := sims(t, 2000)
	for i, c := range []struct {
		q float64
		n int
	}{{0.9, 16}, {0.8, 16}, {0.95, 5}} {
		s := Scenario{Q: c.q, N: c.n, Rule: record.RuleAnyProbeFailed}
		res := Run(s, runs, seed(t)+uint64(i))
		dump(t, describe(s), res)
		want := 1 - math.Pow(1-c.q*(1-math.Pow(c.q, 3)), float64(c.n))
		got := res.Rate(exit.Decay)
		if math.Abs(got-want) > 4*res.MCError(want)+0.005 {
			t.Errorf("q=%.2f n=%d: the any-probe-failed rule fired %.3f, expected %.3f", c.q, c.n, got, want)
		}
		if c.n == 16 && got < 0.5 {
			t.Errorf("q=%.2f n=%d: expected seed 002's rule to fire on most stable runs, it fired %.3f", c.q, c.n, got)
		}
	}
}

// TestPower: the same simulator, with a real drop, must find it: a
// collapse (fresh 0.9, diluted 0.3) at n = 10 nearly always, and a 30-point
// drop at n = 30 most of the time. Exact figures are in the README's
// table (go run ./internal/calibrate/table).
func TestPower(t *testing.T) {
	runs := sims(t, 400)
	for i, c := range []struct {
		drop float64
		n    int
		min  float64
	}{{0.6, 10, 0.9}, {0.3, 30, 0.6}} {
		s := Scenario{Q: 0.9, N: c.n, Rho: 0.1, Drop: c.drop}
		res := Run(s, runs, seed(t)+uint64(i))
		dump(t, describe(s), res)
		if p := res.Rate(exit.Decay); p < c.min {
			t.Errorf("drop %.1f at n=%d: power %.3f, expected at least %.2f", c.drop, c.n, p, c.min)
		}
	}
}

// TestCompareAA: two runs of the same skill are accepted by compare at
// least 1 - alpha of the time, at equal and at unequal sizes (issue 9:
// seed 000's rule rejected an unchanged skill about half the time with 4
// criteria; Welch's t with alpha split over the measures then rejected a
// base of 6 conversations against a candidate of 30 up to 0.083 of the
// time at q 0.8, rho 0.3, one criterion, and 0.16 at rho 0.8).
func TestCompareAA(t *testing.T) {
	runs := sims(t, 800)
	base := seed(t)
	var grid []Scenario
	for _, rho := range []float64{0.3, 0.8} {
		for _, crit := range []int{1, 4} {
			for _, q := range []float64{0.7, 0.95} {
				for _, n := range [][2]int{{3, 3}, {16, 16}, {6, 30}, {30, 6}} {
					grid = append(grid, Scenario{Q: q, N: n[0], CandidateN: n[1], Rho: rho, Criteria: crit, JudgeNoise: 0.03})
				}
			}
		}
	}
	results := make([]Result, len(grid))
	Each(len(grid), func(i int) { results[i] = CompareAA(grid[i], runs, base+uint64(1000+i)) })
	worst, worstAt := 0.0, ""
	for i, s := range grid {
		dump(t, fmt.Sprintf("%s criteria=%d candidate n=%d", describe(s), s.Criteria, s.CandidateN), results[i])
		r := results[i].Rate(1)
		if r > worst {
			worst, worstAt = r, fmt.Sprintf("%s criteria=%d candidate n=%d", describe(s), s.Criteria, s.CandidateN)
		}
		if limit := 0.05 + 3*results[i].MCError(0.05); r > limit {
			t.Errorf("%s criteria=%d candidate n=%d: A/A rejected %.4f > %.4f (replay: VIBE_TEST_SEED=%d)", describe(s), s.Criteria, s.CandidateN, r, limit, base)
		}
	}
	t.Logf("A/A over %d cells x %d pairs: worst rejection rate %.4f at %s", len(grid), runs, worst, worstAt)
	// A cell of 800 pairs flags only a rate far above alpha; the cells of
	// unequal sizes (6 against 30, 30 against 6) pooled flag a compare
	// that rejects an unchanged skill in 0.06 of pairs there with 95%
	// chance (it rejected up to 0.089 at 6 against 30 once).
	var unequal []Result
	for i, s := range grid {
		if s.N != s.CandidateN {
			unequal = append(unequal, results[i])
		}
	}
	pooled := pool(unequal)
	limit := 0.05 + 2.5*pooled.MCError(0.05)
	if limit+1.645*pooled.MCError(0.06) > 0.06 {
		t.Fatalf("%d pairs cannot tell 0.06 from 0.05 (limit %.4f): raise the pairs", pooled.Runs, limit)
	}
	if r := pooled.Rate(1); r > limit {
		t.Errorf("A/A at unequal sizes, %d pairs pooled: rejected %.4f > %.4f (replay: VIBE_TEST_SEED=%d)", pooled.Runs, r, limit, base)
	} else {
		t.Logf("A/A at unequal sizes, %d pairs pooled: rejected %.4f (limit %.4f)", pooled.Runs, r, limit)
	}
}

// onSchedule is a diluted-to schedule with a compaction before probe 2, as
// `--dilute-to 20k,50k,90k --compact-before 2` runs it.
func onSchedule() *plan.Schedule {
	return &plan.Schedule{DiluteTo: []int64{20000, 50000, 90000}, CompactBefore: []int{2}}
}

// TestFalseAlarmRateOnSchedules: the exit code keys each probe by its
// number, not its turn, so a schedule that puts the probes at different
// turns in different conversations, with a compaction before one, holds
// alpha just as the seed's does.
func TestFalseAlarmRateOnSchedules(t *testing.T) {
	runs := sims(t, 600)
	base := seed(t)
	var grid []Scenario
	for _, w := range []Scenario{
		{Rho: 0}, {Rho: 0.3},
		{Rho: 0.3, Bypass: true, Offsets: [3]float64{0.05, -0.1, 0}, JudgeNoise: 0.05, TurnErrors: 0.02, JudgeErrors: 0.02, Uncertain: 0.03},
	} {
		for _, q := range []float64{0.7, 0.9, 0.99} {
			for _, n := range []int{3, 8, 20} {
				s := w
				s.Q, s.N, s.Schedule = q, n, onSchedule()
				grid = append(grid, s)
			}
		}
	}
	results := make([]Result, len(grid))
	Each(len(grid), func(i int) { results[i] = Run(grid[i], runs, base+7000+uint64(i)) })
	worst, worstAt, sum := 0.0, "", 0.0
	for i, s := range grid {
		dump(t, describe(s), results[i])
		fa := results[i].Rate(exit.Decay)
		sum += fa
		if fa > worst {
			worst, worstAt = fa, describe(s)
		}
		if limit := 0.05 + 3*results[i].MCError(0.05); fa > limit {
			t.Errorf("%s on %+v: false-alarm rate %.4f > %.4f (replay: VIBE_TEST_SEED=%d)", describe(s), *s.Schedule, fa, limit, base)
		}
	}
	t.Logf("false alarms on the schedule over %d cells x %d runs: worst %.4f at %s; mean %.4f", len(grid), runs, worst, worstAt, sum/float64(len(grid)))

	// The simulation is the schedule it claims: probes at varying turns,
	// each at or above its level, the later two after the compaction.
	r := simulateRun(rand.New(rand.NewPCG(1, 2)), Scenario{Q: 0.99, N: 20, Schedule: onSchedule()})
	turns := map[int]bool{}
	for _, c := range r.Conversations {
		for k := 1; k <= 3; k++ {
			p := c.ProbeAt(k)
			if p == nil {
				t.Fatalf("conversation %d has no probe %d", c.Index, k)
			}
			turns[p.Turn] = true
			if p.AfterCompaction != (k >= 2) {
				t.Errorf("conversation %d probe %d: after compaction %v", c.Index, k, p.AfterCompaction)
			}
		}
	}
	if len(turns) < 6 {
		t.Errorf("the probes fell at only %d distinct turns over 20 conversations: the schedule is not exercised", len(turns))
	}

	// And it still catches a real drop there.
	hit := Run(Scenario{Q: 0.9, N: 12, Rho: 0.3, Drop: 0.5, Schedule: onSchedule()}, runs, base+7999)
	dump(t, "hit", hit)
	if hit.Rate(exit.Decay) < 0.8 {
		t.Errorf("a 50-point drop on the schedule was caught in %.2f of runs, expected at least 0.8", hit.Rate(exit.Decay))
	}
	t.Logf("%d cells x %d runs on %+v; a 50-point drop at n=12 caught in %.2f", len(grid), runs, *onSchedule(), hit.Rate(exit.Decay))
}

// BenchmarkRun is the unit of a fixed-size grid's cost: simulating a run
// of 16 conversations (everything at once: correlation, noise, errors,
// uncertain turns) and deciding it.
func BenchmarkRun(b *testing.B) {
	s := Scenario{Q: 0.9, N: 16, Rho: 0.3, Offsets: [3]float64{0.05, -0.1, 0}, JudgeNoise: 0.05, TurnErrors: 0.02, JudgeErrors: 0.02, Uncertain: 0.03}
	rng := rand.New(rand.NewPCG(1, 2))
	sim := newSimulator(s)
	b.Run("simulate", func(b *testing.B) {
		for b.Loop() {
			sim.run(rng)
		}
	})
	records := make([]*record.Run, 64)
	for i := range records {
		records[i] = simulateRun(rng, s)
	}
	b.Run("decide", func(b *testing.B) {
		i := 0
		for b.Loop() {
			verdict.DecideWith(records[i%len(records)], verdict.Options{ExitOnly: true})
			i++
		}
	})
}
