package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/simrand"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// Power is what the summary may say about what a run could have caught.
// Every figure is simulated: runs like this one (its fresh pass rate per
// probe, how often its baselines passed the gate, how much its
// conversations differ, how often a probe went unjudged) are generated
// with a known drop and pushed through the rule's own comparison
// (stats.CompareProbes at alpha, after the baseline rule), and the share
// that says decay is the power. The world is not taken as measured: each
// simulated run first draws its pass rates from what the run allows
// (Jeffreys' Beta for each rate, a posterior over the correlation of a
// conversation's probes), so a small run, which pins little down, is
// credited with the power of the worlds it cannot rule out, not the best
// of them; the correlation is drawn from the upper half of its posterior
// (upperHalf). The calibrate package checks that the figures are real.
const (
	// PowerTarget is the power "would have caught" and "would detect" mean.
	PowerTarget = 0.8
	// powerRuns is how many runs a figure simulates: the figure's Monte
	// Carlo error is about 0.02 at 0.8.
	powerRuns = 400
	// maxConversations bounds the search for how many would do.
	maxConversations = 200
)

// powerSeed fixes the simulated runs, so a record always gets the same
// figures.
const powerSeed = 20261202

// rhoGrid is the correlations of a conversation's probes the posterior is
// kept on (0: its probes are independent draws; 0.8: they nearly always
// agree).
var rhoGrid = []float64{0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}

// world is what a run (or its first n conversations) tells of the agent.
type world struct {
	// Fresh passes and fails per probe.
	freshPass, freshFail []float64
	// Baselines passed and failed; gate is false when it was bypassed.
	basePass, baseFail float64
	gate               bool
	// baseCap is the baseline rate the simulated runs draw below: its
	// posterior's baseCapQuantile.
	baseCap float64
	// The chance a probe went unjudged, per arm and probe.
	missDiluted, missFresh []float64
	// rhoWeight is the posterior weight of each rhoGrid value.
	rhoWeight []float64
	alpha     float64
	// seqBatch, when > 0, makes the number of conversations searched for
	// (conversationsFor) a --until-decided cap with batches of seqBatch:
	// each size is tested at the level its final look would have
	// (FinalLevel), a lower bound of what that plan catches.
	seqBatch int
}

// levelAt is the level the rule tests n conversations at: alpha, or under
// seqBatch the final look's of a plan capped at n.
func (w world) levelAt(n int) float64 {
	if w.seqBatch <= 0 {
		return w.alpha
	}
	return FinalLevel(&record.Sequential{Alpha: w.alpha, Max: n, Batch: w.seqBatch})
}

// The baseline and the probes are tasks of one conversation, so its own
// rate moves both: a conversation whose baseline passed tends to pass its
// probes more often than a fresh session does. The gate keeps only those,
// so the diluted arm is selected and the fresh arm is not. The simulated
// runs keep that: a conversation passes its baseline with its own rate
// moved by the baseline's offset from the probes' mean (drawn from the
// baseline's and the probes' rates), and the correlation is estimated from
// every conversation, gate-stopped or not, with that selection in the
// likelihood.

// worldOf reads the world from the first upTo conversations and fresh
// triples of a run (0: all).
func worldOf(r *record.Run, ix *runIndex, upTo int, alpha float64) world {
	w := world{freshPass: make([]float64, probeCount), freshFail: make([]float64, probeCount),
		missDiluted: make([]float64, probeCount), missFresh: make([]float64, probeCount),
		gate: !r.Config.NoBaselineGate, alpha: alpha}
	d, f, _ := arms(r, ix, upTo)
	var dilutedAsked, freshAsked float64
	convs := make([]convResults, 0, len(r.Conversations))
	room := make([]int8, len(r.Conversations)*probeCount)
	for i := range r.Conversations {
		c := &r.Conversations[i]
		if upTo > 0 && c.Index > upTo {
			continue
		}
		j := &ix.convs[i]
		cr := convResults{base: stats.Missing, probes: stats.ProbeUnit(room[:probeCount:probeCount])}
		room = room[probeCount:]
		if pass, ok := j.result(0); ok {
			cr.base = stats.Fail
			if pass {
				w.basePass++
				cr.base = stats.Pass
			} else {
				w.baseFail++
			}
		}
		inArm := j.inArm(!w.gate)
		for k := 1; k <= probeCount; k++ {
			cr.probes[k-1] = stats.Missing
			if pass, ok := j.result(k); ok && inArm {
				cr.probes[k-1] = stats.Fail
				if pass {
					cr.probes[k-1] = stats.Pass
				}
			}
		}
		convs = append(convs, cr)
		if inArm {
			dilutedAsked++
		}
	}
	for i := range r.Fresh {
		if upTo == 0 || r.Fresh[i].Index <= upTo {
			freshAsked++
		}
	}
	dJudged, fJudged := make([]float64, probeCount), make([]float64, probeCount)
	for _, u := range d {
		for k, y := range u {
			if y != stats.Missing {
				dJudged[k]++
			}
		}
	}
	for _, u := range f {
		for k, y := range u {
			switch y {
			case stats.Pass:
				w.freshPass[k]++
				fJudged[k]++
			case stats.Fail:
				w.freshFail[k]++
				fJudged[k]++
			}
		}
	}
	for k := range probeCount {
		if dilutedAsked > 0 {
			w.missDiluted[k] = 1 - dJudged[k]/dilutedAsked
		}
		if freshAsked > 0 {
			w.missFresh[k] = 1 - fJudged[k]/freshAsked
		}
	}
	w.rhoWeight = upperHalf(w.rhoPosterior(convs))
	w.baseCap = betaQuantile(baseCapQuantile, w.basePass+0.5, w.baseFail+0.5)
	return w
}

// baseCapQuantile: the baseline rate is drawn from the lower quarter of
// its posterior, as the correlation from the upper half (upperHalf):
// fewer passing baselines mean more runs the baseline rule takes from
// exit 1, and so less power. Drawn from the whole posterior, a run whose
// baselines passed more often than their rate by chance printed a figure
// the rule did not reach: with half the baselines failing and the gate
// bypassed, 23% of runs claimed 80% where the rule reaches 0.57
// (TestPowerFiguresAreReal, 150 runs a world); the lower half left 5 to
// 7%, the lower quarter 3 to 5%, and a stable skill at 16 conversations
// still says held in half its runs (87 and 75 of 150, from 100).
const baseCapQuantile = 0.25

// betaQuantile is the p-quantile of Beta(a, b), by bisection.
func betaQuantile(p, a, b float64) float64 {
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		if stats.RegIncBeta(a, b, mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// upperHalf keeps the correlations at and above the posterior's median,
// reweighed: a larger correlation means fewer independent conversations
// and less power, so a figure is the power of the worlds the run cannot
// rule out on the pessimistic side. Drawn from the whole posterior, one
// run's estimate of the correlation, low by chance, made "held" (the
// effect caught in 80% of runs) come out in 18% of runs at 16
// conversations, rate 0.8, correlation 0.3, where the rule catches the
// effect in 0.67 (8% now).
func upperHalf(weights []float64) []float64 {
	out := make([]float64, len(weights))
	var below, kept float64
	for g, wt := range weights {
		if below+wt > 0.5 || g == len(weights)-1 {
			out[g] = wt
			kept += wt
		}
		below += wt
	}
	for g := range out {
		out[g] /= kept
	}
	return out
}

// convResults is one conversation's baseline and probe results.
type convResults struct {
	base   int8
	probes stats.ProbeUnit
}

// patterns is how many different results a conversation can have: missing,
// fail or pass at its baseline and at each probe.
const patterns = 81 // 3^(1+probeCount)

// pattern numbers the conversation's results, 0 to patterns-1.
func (c convResults) pattern() int {
	code := int(c.base + 1)
	for _, y := range c.probes {
		code = 3*code + int(y+1)
	}
	return code
}

// rates are the world's point estimates: each probe's fresh rate, their
// mean, and the baseline's offset from that mean.
func (w world) rates() (fresh []float64, mean, baseOffset float64) {
	fresh = make([]float64, probeCount)
	for k := range probeCount {
		fresh[k] = (w.freshPass[k] + 0.5) / (w.freshPass[k] + w.freshFail[k] + 1)
		mean += fresh[k] / float64(probeCount)
	}
	return fresh, mean, (w.basePass+0.5)/(w.basePass+w.baseFail+1) - mean
}

// rhoPosterior weighs each rhoGrid correlation by how likely it makes the
// conversations' results, from a flat prior: each conversation's own rate
// is a Beta about the probes' mean, integrated over a grid; its baseline
// passes at that rate plus the baseline's offset, its probes at that rate
// plus each probe's offset. With few conversations every value keeps
// weight.
func (w world) rhoPosterior(convs []convResults) []float64 {
	fresh, mean, baseOffset := w.rates()
	weights := make([]float64, len(rhoGrid))
	logs := make([]float64, len(rhoGrid))
	top := math.Inf(-1)
	// A conversation's likelihood depends only on its results, of which
	// there are few patterns: each is computed once per correlation and
	// added for every conversation that has it, in the same order.
	codes := make([]int, len(convs))
	for i, c := range convs {
		codes[i] = c.pattern()
	}
	var known [patterns]bool
	var logLik [patterns]float64
	var us, ws [gridPoints]float64
	// The chance of each result at each point of the grid, by result
	// (Fail, Pass): the baseline's, and each probe's.
	var baseAt [gridPoints][2]float64
	var probeAt [probeCount][gridPoints][2]float64
	for g, rho := range rhoGrid {
		points := ownGrid(mean, rho, &us, &ws)
		for j, u := range us[:points] {
			for y := stats.Fail; y <= stats.Pass; y++ {
				baseAt[j][y] = bernoulli(y, u+baseOffset)
				for k := range probeCount {
					probeAt[k][j][y] = bernoulli(y, u+fresh[k]-mean)
				}
			}
		}
		known = [patterns]bool{}
		for i, c := range convs {
			code := codes[i]
			if !known[code] {
				var lik float64
				for j := range points {
					l := ws[j]
					if c.base != stats.Missing {
						l *= baseAt[j][c.base]
					}
					for k, y := range c.probes {
						if y != stats.Missing {
							l *= probeAt[k][j][y]
						}
					}
					lik += l
				}
				known[code], logLik[code] = true, math.Log(math.Max(lik, 1e-300))
			}
			logs[g] += logLik[code]
		}
		top = math.Max(top, logs[g])
	}
	var sum float64
	for g := range rhoGrid {
		weights[g] = math.Exp(logs[g] - top)
		sum += weights[g]
	}
	for g := range weights {
		weights[g] /= sum
	}
	return weights
}

// bernoulli is the chance of result y at pass rate p (clamped to [0.001,
// 0.999], so no result is impossible).
func bernoulli(y int8, p float64) float64 {
	p = min(0.999, max(0.001, p)) // as math.Min and math.Max, inline
	if y == stats.Pass {
		return p
	}
	return 1 - p
}

// ownGrid is a conversation's own rate on a grid of gridPoints points with the
// weights of a Beta with this mean and intra-class correlation (all the
// weight on the mean at rho 0): it fills the first points entries of us
// and ws and returns points.
func ownGrid(mean, rho float64, us, ws *[gridPoints]float64) (points int) {
	if rho <= 0 {
		us[0], ws[0] = mean, 1
		return 1
	}
	a, b := mean*(1-rho)/rho, (1-mean)*(1-rho)/rho
	var sum float64
	for j := range gridPoints {
		us[j] = gridU[j]
		ws[j] = math.Exp((a-1)*gridLogU[j] + (b-1)*gridLog1mU[j])
		sum += ws[j]
	}
	for j := range ws {
		ws[j] /= sum
	}
	return gridPoints
}

// gridPoints is how many points ownGrid weighs: 16 could not hold a Beta
// piled up near 1 (a 0.9 rate at correlation 0.3 is Beta(2.1, 0.23)), and
// the correlations it weighed were too small.
const gridPoints = 64

// gridU are ownGrid's points, with their logarithms and those of their
// complements (the same for every world).
var gridU, gridLogU, gridLog1mU = func() (u, logU, log1mU [gridPoints]float64) {
	for j := range gridPoints {
		// Equal steps of the Beta's CDF would be exact; equal steps of the
		// rate with the density at their middle are close enough to weigh
		// correlations, and need no inverse.
		u[j] = (float64(j) + 0.5) / gridPoints
		logU[j], log1mU[j] = math.Log(u[j]), math.Log(1-u[j])
	}
	return u, logU, log1mU
}()

// simulated is one simulated run's draws, fixed so that the same run can
// be decided at any drop (larger drops turn more of the same diluted
// passes into fails) and any size up to its own. Per conversation i and
// probe k, index i*probeCount+k.
type simulated struct {
	fresh []float64 // each probe's fresh rate, drawn
	// Per conversation: whether its baseline passed, whether its probes
	// are in the diluted arm (they are when it passed, or when the gate
	// was bypassed) and its own rate's offset from the mean; per probe its
	// uniform and whether it went unjudged.
	basePass, inArm []bool
	own             []float64
	dU              []float64
	dMiss           []bool
	// Per fresh triple and probe: its result and whether it went unjudged.
	fPass, fMiss []bool
	// units, dBuf and fBuf are room for the units a decision builds.
	units      []int8
	dBuf, fBuf []stats.ProbeUnit
}

// simulatedRuns makes room for count simulated runs of n conversations,
// in one array per field (a power figure draws hundreds of runs).
func simulatedRuns(count, n int) []simulated {
	out := make([]simulated, count)
	m := n * probeCount
	fresh := make([]float64, count*probeCount)
	convFlags := make([]bool, 2*count*n)
	own := make([]float64, count*n)
	dU := make([]float64, count*m)
	flags := make([]bool, 3*count*m)
	units := make([]int8, 2*count*m)
	bufs := make([]stats.ProbeUnit, 2*count*n)
	for i := range out {
		out[i] = simulated{fresh: fresh[i*probeCount : (i+1)*probeCount : (i+1)*probeCount],
			basePass: convFlags[2*i*n : (2*i+1)*n : (2*i+1)*n], inArm: convFlags[(2*i+1)*n : 2*(i+1)*n : 2*(i+1)*n],
			own: own[i*n : (i+1)*n : (i+1)*n],
			dU:  dU[i*m : (i+1)*m : (i+1)*m], dMiss: flags[3*i*m : (3*i+1)*m : (3*i+1)*m],
			fPass: flags[(3*i+1)*m : (3*i+2)*m : (3*i+2)*m], fMiss: flags[(3*i+2)*m : (3*i+3)*m : (3*i+3)*m],
			units: units[2*i*m : 2*(i+1)*m : 2*(i+1)*m],
			dBuf:  bufs[2*i*n : 2*i*n : (2*i+1)*n], fBuf: bufs[(2*i+1)*n : (2*i+1)*n : 2*(i+1)*n]}
	}
	return out
}

// draw makes a simulated run of n conversations and fresh triples in s,
// whose room (simulatedRuns) it overwrites whole.
func (w world) draw(src simrand.Source, n int, s *simulated) {
	rng := src.Rand
	var mean float64
	for k := range probeCount {
		s.fresh[k] = simrand.Beta(rng, w.freshPass[k]+0.5, w.freshFail[k]+0.5)
		mean += s.fresh[k] / float64(probeCount)
	}
	base := simrand.Beta(rng, w.basePass+0.5, w.baseFail+0.5)
	for base > w.baseCap {
		base = simrand.Beta(rng, w.basePass+0.5, w.baseFail+0.5)
	}
	baseOffset := base - mean
	rho := rhoGrid[pick(rng, w.rhoWeight)]
	for i := range n {
		// A conversation's own pass rate about the mean with intra-class
		// correlation rho, from the Beta the correlation's likelihood
		// assumes (rhoPosterior). A two-point draw of the same variance (an
		// extreme with chance rho, else the mean) cost a fifth of it, but
		// with the gate on it credited more power than the rule has: the
		// conversations the gate keeps are not those of a Beta, and at rho
		// 0.3 the drop claimed for 80% was caught in 0.72 of runs at 40
		// conversations.
		own := simrand.AboutMean(rng, mean, rho)
		// Drawn with the gate bypassed too: the baseline rule (exit 2
		// when fewer than half passed) applies either way.
		s.basePass[i] = simrand.Unit(src.PCG.Uint64()) < own+baseOffset
		s.inArm[i] = s.basePass[i] || !w.gate
		s.own[i] = own - mean
		for k := range probeCount {
			j := i*probeCount + k
			s.dU[j] = simrand.Unit(src.PCG.Uint64())
			s.dMiss[j] = simrand.Unit(src.PCG.Uint64()) < w.missDiluted[k]
			s.fPass[j] = simrand.Unit(src.PCG.Uint64()) < s.fresh[k]
			s.fMiss[j] = simrand.Unit(src.PCG.Uint64()) < w.missFresh[k]
		}
	}
}

// decays says whether the rule says decay on the first n conversations of
// a simulated run whose diluted probes lose drop from their rate: the
// baseline rule first (a skill whose baselines mostly fail exits 2), then
// the comparison at alpha.
func (s *simulated) decays(n int, drop, alpha float64) bool {
	d, f := s.dBuf[:0], s.fBuf[:0]
	room := s.units
	next := func() stats.ProbeUnit {
		u := stats.ProbeUnit(room[:probeCount:probeCount])
		room = room[probeCount:]
		return u
	}
	passed := 0
	for i := range n {
		if s.basePass[i] {
			passed++
		}
		if !s.inArm[i] {
			continue
		}
		u := next()
		for k := range probeCount {
			// Without branches: the draws are random, and a mispredicted
			// branch per probe was a third of the time here.
			j := i*probeCount + k
			y := stats.Fail
			if s.dU[j] < s.fresh[k]+s.own[i]-drop {
				y = stats.Pass
			}
			if s.dMiss[j] {
				y = stats.Missing
			}
			u[k] = y
		}
		d = append(d, u)
	}
	if float64(passed) < BaselineWorksShare*float64(n) {
		return false
	}
	for i := range n {
		u := next()
		for k := range probeCount {
			j := i*probeCount + k
			y := stats.Fail
			if s.fPass[j] {
				y = stats.Pass
			}
			if s.fMiss[j] {
				y = stats.Missing
			}
			u[k] = y
		}
		f = append(f, u)
	}
	c := stats.CompareProbes(d, f)
	return c.Testable && c.P <= alpha
}

// criticalDrop is the smallest drop at which the rule says decay on the
// first n conversations of a simulated run (+Inf when no drop does),
// found by bisection: a larger drop only turns diluted passes into fails.
func (s *simulated) criticalDrop(n int, alpha float64) float64 {
	if !s.decays(n, 1, alpha) {
		return math.Inf(1)
	}
	lo, hi := 0.0, 1.0
	if s.decays(n, 0, alpha) {
		return 0
	}
	for range 9 {
		mid := (lo + hi) / 2
		if s.decays(n, mid, alpha) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// runs draws the simulated runs of a world at size n.
func (w world) runs(n int) []simulated {
	src := simrand.New(powerSeed, uint64(n))
	out := simulatedRuns(powerRuns, n)
	for i := range out {
		w.draw(src, n, &out[i])
	}
	return out
}

// minDetectableDrop is the smallest drop the rule catches in PowerTarget
// of the simulated runs of n conversations like this one, rounded up to a
// whole point; +Inf when even a collapse is not caught that often. Every
// output prints it in whole points, and "held" compares it with the
// effect: rounded to the nearest, a drop of 30.5 points failed "held" at
// 30 and was printed as 30.
func (w world) minDetectableDrop(n int) float64 {
	return pointsUp(remember(fmt.Sprint("minDetectableDrop", w, n), func() float64 { return w.simulatedMinDrop(n) }))
}

// pointsUp rounds a share up to whole points (hundredths). The bisection
// behind it steps in 1/512, so a share a hair above a whole point (from
// the multiplication) is that point.
func pointsUp(x float64) float64 {
	return math.Ceil(100*x-1e-9) / 100
}

func (w world) simulatedMinDrop(n int) float64 {
	sims := w.runs(n)
	crit := make([]float64, len(sims))
	for i := range sims {
		crit[i] = sims[i].criticalDrop(n, w.alpha)
	}
	slices.Sort(crit)
	return crit[int(math.Ceil(PowerTarget*float64(len(crit))))-1]
}

// powerAt is the share of simulated runs of n conversations whose rule
// says decay at the given drop.
func (w world) powerAt(n int, drop float64) float64 {
	return w.share(w.runs(n), n, drop)
}

// share is the share of the simulated runs whose rule says decay at the
// given drop on their first n conversations.
func (w world) share(sims []simulated, n int, drop float64) float64 {
	hits, level := 0, w.levelAt(n)
	for i := range sims {
		if sims[i].decays(n, drop, level) {
			hits++
		}
	}
	return float64(hits) / float64(len(sims))
}

// conversationsFor is the fewest conversations (each with its fresh
// triple, the gate stopping some) with which the rule catches drop in
// PowerTarget of simulated runs; 0 when even maxConversations would not.
// Power grows with the number of conversations: the search doubles from
// the given size, then bisects on the first conversations of the runs it
// drew at the upper end.
func (w world) conversationsFor(drop float64, from int) int {
	return int(remember(fmt.Sprint("conversationsFor", w, drop, from), func() float64 { return float64(w.searchConversations(drop, from)) }))
}

func (w world) searchConversations(drop float64, from int) int {
	lo := max(from, stats.MinUnitsPerArm)
	if w.powerAt(lo, drop) >= PowerTarget {
		return lo
	}
	hi := lo
	var sims []simulated
	for {
		if hi == maxConversations {
			return 0
		}
		lo, hi = hi, min(2*hi, maxConversations)
		sims = w.runs(hi)
		if w.share(sims, hi, drop) >= PowerTarget {
			break
		}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if w.share(sims, mid, drop) >= PowerTarget {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// reachesPower says whether the rule catches drop in PowerTarget of
// simulated runs of n conversations, with the power found (in a run
// where it is far from the target, from fewer simulated runs: they are
// drawn a batch at a time and the count stops once it is more than three
// standard errors from the target, so a look far from deciding costs a
// quarter of one near it). It is remembered: replaying a sequential run's
// looks asks again what recording them asked, and the world is the key,
// so a changed record (a rejudged turn) is simulated afresh.
func (w world) reachesPower(n int, drop float64) (bool, float64) {
	p := remember(fmt.Sprint(w, n, drop), func() float64 { return w.sequentialPower(n, drop) })
	return p >= PowerTarget, p
}

// sequentialPower is powerAt drawn in growing batches (50, then doubling
// up to powerRuns), stopping early once the share so far is more than
// three standard errors from PowerTarget: a look far from deciding costs
// an eighth of one near it.
func (w world) sequentialPower(n int, drop float64) float64 {
	src := simrand.New(powerSeed, uint64(n))
	// One run's room, drawn over for each run: it is decided at once.
	s := &simulatedRuns(1, n)[0]
	hits, drawn := 0, 0
	for next := powerRuns / 8; ; next = min(2*drawn, powerRuns) {
		for drawn < next {
			w.draw(src, n, s)
			if s.decays(n, drop, w.alpha) {
				hits++
			}
			drawn++
		}
		p := float64(hits) / float64(drawn)
		if se := math.Sqrt(PowerTarget * (1 - PowerTarget) / float64(drawn)); drawn >= powerRuns || math.Abs(p-PowerTarget) > 3*se {
			return p
		}
	}
}

// remember returns the figure of key, simulating it (figure) once: every
// figure is a function of the world and its arguments, the simulation
// being seeded, and a run is decided again and again (for its summary,
// its chart page and report, a suite's merge, each look it replays).
func remember(key string, figure func() float64) float64 {
	memo.Lock()
	p, ok := memo.m[key]
	memo.Unlock()
	if !ok {
		p = figure()
		memo.Lock()
		if len(memo.m) >= memoSize {
			clear(memo.m) // a bound, not a policy: the next look fills it again
		}
		memo.m[key] = p
		memo.Unlock()
	}
	return p
}

// memo holds the figures remember simulated (reachesPower's, keyed by
// world, n and drop; the others by their name first).
var memo = struct {
	sync.Mutex
	m map[string]float64
}{m: map[string]float64{}}

const memoSize = 1 << 14

// pick draws an index with the given weights (they sum to 1).
func pick(rng *rand.Rand, weights []float64) int {
	u := rng.Float64()
	for i, w := range weights {
		if u < w {
			return i
		}
		u -= w
	}
	return len(weights) - 1
}
