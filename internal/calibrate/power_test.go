package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// truePower is the share of runs of a world, with the given drop and
// size, that the rule decides as decay: the power a printed figure claims
// to describe, measured through verdict.Decide.
type truePower struct {
	world Scenario
	runs  int
	seed  uint64
	memo  map[string]float64
}

func (tp *truePower) at(drop float64, n int) float64 {
	key := fmt.Sprint(drop, n)
	if p, ok := tp.memo[key]; ok {
		return p
	}
	s := tp.world
	s.Drop, s.N = drop, n
	p := Run(s, tp.runs, tp.seed+uint64(n)*1000+uint64(math.Round(drop*100))).Rate(exit.Decay)
	tp.memo[key] = p
	return p
}

// atDrop interpolates the true power at size n between drops on a 0.05
// grid (power grows with the drop).
func (tp *truePower) atDrop(d float64, n int) float64 {
	lo := math.Floor(d/0.05) * 0.05
	hi := lo + 0.05
	pl, ph := tp.at(math.Round(lo*100)/100, n), tp.at(math.Round(hi*100)/100, n)
	return pl + (ph-pl)*(d-lo)/0.05
}

// TestPowerFiguresAreReal: every power figure a run prints is the
// simulated power of the rule, and it must be what the rule really does.
// For stable skills (no drop) at 4 to 16 conversations, runs are decided
// with their power figures; then, in the world they came from, the rule's
// true power is measured at the drop each run says it catches in 80% of
// runs, at the effect for every run that says held, and at the number of
// conversations each run says would catch the effect. (The closed-form
// figures printed before claimed 80% where the truth was 0.20 to 0.67, and
// 0.39 to 0.46 when 40% of baselines failed.)
func TestPowerFiguresAreReal(t *testing.T) {
	runs := sims(t, 30)
	var grid []Scenario
	for _, w := range []Scenario{
		{Q: 0.9, Rho: 0.1, N: 4}, {Q: 0.9, Rho: 0.1, N: 16},
		{Q: 0.8, Rho: 0.3, N: 8}, {Q: 0.8, Rho: 0.3, N: 16},
		{Q: 0.9, Rho: 0.1, BaseOffset: -0.3, N: 8}, {Q: 0.9, Rho: 0.1, BaseOffset: -0.3, N: 16},
		// The gate bypassed, half the baselines failing: every conversation
		// is in the diluted arm, and the baseline rule (exit 2 when fewer
		// than half pass) still takes runs from exit 1.
		{Q: 0.9, Rho: 0.1, BaseOffset: -0.4, N: 12, Bypass: true}, {Q: 0.9, Rho: 0.1, BaseOffset: -0.4, N: 16, Bypass: true},
	} {
		grid = append(grid, w)
	}
	type claims struct {
		mdd, held, need []float64 // true power at each claim
		said            int       // runs with a figure
		heldRuns        int
	}
	out := make([]claims, len(grid))
	Each(len(grid), func(i int) {
		s := grid[i]
		tp := &truePower{world: s, runs: 300, seed: seed(t) + 50000 + uint64(i)*100000, memo: map[string]float64{}}
		rng := rand.New(rand.NewPCG(seed(t)+uint64(i), 77))
		c := claims{}
		for range runs {
			r := simulateRun(rng, s)
			verdict.Decide(r)
			st := r.Outcome.Stats
			if st.MinDetectableDrop > 0 {
				c.said++
				c.mdd = append(c.mdd, tp.atDrop(st.MinDetectableDrop, s.N))
			}
			if r.Outcome.Verdict == "held" {
				c.heldRuns++
				c.held = append(c.held, tp.at(st.Effect, s.N))
			}
			if st.UnitsForEffect > 0 {
				c.need = append(c.need, tp.at(st.Effect, st.UnitsForEffect))
			}
		}
		out[i] = c
	})
	mean := func(xs []float64) float64 {
		if len(xs) == 0 {
			return math.NaN()
		}
		var sum float64
		for _, x := range xs {
			sum += x
		}
		return sum / float64(len(xs))
	}
	var all []float64
	for i, s := range grid {
		c := out[i]
		dump(t, fmt.Sprintf("%s base offset %.1f", describe(s), s.BaseOffset), c)
		t.Logf("%s base offset %.1f: %d runs; true power at the drop claimed for 80%%: %.2f (%d runs); held %d, true power at the effect %.2f; at the conversations claimed: %.2f (%d runs)",
			describe(s), s.BaseOffset, runs, mean(c.mdd), len(c.mdd), c.heldRuns, mean(c.held), mean(c.need), len(c.need))
		all = append(all, c.mdd...)
		all = append(all, c.need...)
		// A figure is an estimate from one run, so it misses both ways;
		// what it may not do is overclaim as the closed form did (0.20 to
		// 0.67 where it said 0.8), nor in more than a tenth of the runs:
		// drawn from the baseline's whole posterior, 23% of the runs with
		// half the baselines failing (the gate bypassed) printed figures
		// the rule reached in 0.57 of runs (the mean alone was checked,
		// and only over 10 figures).
		for what, xs := range map[string][]float64{"the drop claimed": c.mdd, "the conversations claimed": c.need} {
			if len(xs) >= 10 && mean(xs) < 0.65 {
				t.Errorf("%s base offset %.1f: true power at %s for 80%% is %.2f on average", describe(s), s.BaseOffset, what, mean(xs))
			}
			over := 0
			for _, x := range xs {
				if x < 0.7 {
					over++
				}
			}
			if float64(over) > 0.1*float64(runs) {
				t.Errorf("%s base offset %.1f: %d of %d runs printed %s for 80%% power where the rule's is below 0.7", describe(s), s.BaseOffset, over, runs, what)
			}
		}
		// Held says the effect would have been caught with 80% power:
		// where the truth is far below, few runs may say it.
		truth := tpAtEffect(grid[i], t)
		dump(t, fmt.Sprintf("%s base offset %.1f truth", describe(s), s.BaseOffset), truth)
		if truth < 0.7 && float64(c.heldRuns) > 0.05*float64(runs) {
			t.Errorf("%s base offset %.1f: %d of %d runs said held, but the rule catches the effect in %.2f of runs", describe(s), s.BaseOffset, c.heldRuns, runs, truth)
		}
	}
	if m := mean(all); m < 0.8 {
		t.Errorf("over the grid, the true power at the figures claimed for 80%% averages %.2f", m)
	}
	t.Logf("over the grid, the true power at the figures claimed for 80%%: %.2f (%d figures)", mean(all), len(all))
}

// tpAtEffect is the rule's true power at the default effect at the
// world's own size.
func tpAtEffect(s Scenario, t *testing.T) float64 {
	tp := &truePower{world: s, runs: 300, seed: seed(t) + 90000, memo: map[string]float64{}}
	return tp.at(0.3, s.N)
}

// With the gate on and conversations that differ (correlation 0.3), the
// figures overclaimed: at 40 conversations the drop claimed for 80% was
// caught in 0.72 of runs, and at 16 conversations of rate 0.8, where the
// rule catches the effect in 0.67 of runs, 18% of runs said held. Beta
// draws of each conversation's rate, a finer grid for the correlation's
// likelihood and the upper half of its posterior (verdict/power.go) brought
// them to 0.80 and 8%.
func TestPowerFiguresWhereConversationsDiffer(t *testing.T) {
	worlds := []Scenario{{Q: 0.9, Rho: 0.3, N: 40}, {Q: 0.8, Rho: 0.3, N: 16}}
	runs := []int{100, 120}
	type claims struct {
		mdd         float64 // mean true power at the drop claimed
		figures     int
		held        int
		truthEffect float64 // the rule's true power at the effect
	}
	out := make([]claims, len(worlds))
	Each(len(worlds), func(i int) {
		s := worlds[i]
		tp := &truePower{world: s, runs: 1500, seed: seed(t) + 70000 + uint64(i)*100000, memo: map[string]float64{}}
		rng := rand.New(rand.NewPCG(seed(t)+uint64(i), 91))
		var c claims
		var sum float64
		for range runs[i] {
			r := simulateRun(rng, s)
			verdict.Decide(r)
			st := r.Outcome.Stats
			if st.MinDetectableDrop > 0 && st.MinDetectableDrop < 1 {
				c.figures++
				sum += tp.atDrop(st.MinDetectableDrop, s.N)
			}
			if r.Outcome.Verdict == record.VerdictHeld {
				c.held++
			}
		}
		c.mdd = sum / float64(max(c.figures, 1))
		c.truthEffect = tp.at(0.3, s.N)
		out[i] = c
	})
	for i, s := range worlds {
		c := out[i]
		t.Logf("%s: true power at the drop claimed for 80%%: %.3f (%d figures); held in %d of %d runs, the rule's true power at the effect %.3f",
			describe(s), c.mdd, c.figures, c.held, runs[i], c.truthEffect)
		if c.figures >= runs[i]/2 && c.mdd < 0.74 {
			t.Errorf("%s: the drop claimed for 80%% is caught in %.3f of runs on average", describe(s), c.mdd)
		}
		if c.truthEffect < 0.7 && float64(c.held) > 0.125*float64(runs[i]) {
			t.Errorf("%s: %d of %d runs said held, but the rule catches the effect in %.3f of runs", describe(s), c.held, runs[i], c.truthEffect)
		}
	}
}
