package stats

import (
	"math"
	"math/rand/v2"
)

// Scores is one unit's results on several measures, in a fixed order:
// for each measure the judged turns it passed of those judged (Judged 0:
// the unit was not scored on that measure).
type Scores []Unit

// Permuted is one measure's result of PermuteLower.
type Permuted struct {
	// Test is Welch's comparison of the two groups' shares on the measure
	// (CompareArms: group B as its Diluted side, group A as its Fresh
	// side), for the table; its P is the t distribution's, not used.
	Test TwoArm
	// P is the permutation p-value of this measure alone; Adjusted the
	// p-value adjusted for testing every measure (single-step maxT).
	P, Adjusted float64
}

// PermuteLower asks whether group b (a candidate) scores lower than group
// a (a base) on any of the measures, by a permutation test of the units'
// group labels. Under "the two groups are the same" the units are
// exchangeable, so the test holds its level exactly, whatever the sizes of
// the groups, the spread of the units or the number of measures: each
// permutation relabels whole units, keeping the dependence between one
// unit's measures, and a measure's adjusted p-value counts the
// permutations whose largest statistic over all measures reaches its own
// (Westfall and Young's single-step maxT), which controls the chance of
// rejecting any measure of an unchanged skill at alpha.
//
// The statistic of a measure is Welch's t of the groups' mean shares with
// each variance floored at the binomial variance of the pooled rate
// (CompareArms'); a measure either group scored on fewer than
// MinUnitsPerArm units cannot be tested and never counts. Where there are
// at most perms relabellings, each is taken once and the p-values are
// exact; else perms permutations are drawn from a generator seeded with
// seed, so the same data give the same p-values.
func PermuteLower(a, b []Scores, measures, perms int, seed uint64) []Permuted {
	return permuteLower(a, b, measures, perms, enough, seed)
}

// permuteLower is PermuteLower stopping after stopAt permutations reach
// the largest observed statistic.
func permuteLower(a, b []Scores, measures, perms, stopAt int, seed uint64) []Permuted {
	all := append(append([]Scores{}, a...), b...)
	out := make([]Permuted, measures)
	cols := make([]column, measures)
	for m := range measures {
		var ua, ub []Unit
		for _, s := range a {
			if m < len(s) && s[m].Judged > 0 {
				ua = append(ua, s[m])
			}
		}
		for _, s := range b {
			if m < len(s) && s[m].Judged > 0 {
				ub = append(ub, s[m])
			}
		}
		out[m].Test = CompareArms(ub, ua)
		cols[m] = newColumn(all, m)
	}
	// The observed statistics: group b is units len(a)..end. A
	// permutation draws the smaller group at random (its complement is the
	// other), so its cost is the smaller group's size times the measures.
	small, smallIsB := len(b), true
	if len(a) < len(b) {
		small, smallIsB = len(a), false
	}
	inSmall := make([]bool, len(all))
	for i := range all {
		inSmall[i] = (i >= len(a)) == smallIsB
	}
	obs := make([]float64, measures)
	for m := range measures {
		obs[m] = cols[m].statistic(inSmall, smallIsB)
	}
	// hardest is the largest observed statistic: the last to be reached by
	// the permutations' largest statistics.
	hardest := math.Inf(-1)
	for _, o := range obs {
		hardest = math.Max(hardest, o)
	}
	exceed, exceedMax := make([]int, measures), make([]int, measures)
	stat := make([]float64, measures)
	// count adds one relabelling (the smaller group's members) to the
	// counts, and says whether its largest statistic reached the hardest.
	count := func(members []int) bool {
		top := math.Inf(-1)
		for m := range measures {
			stat[m] = cols[m].subsetStatistic(members, smallIsB)
			top = math.Max(top, stat[m])
		}
		for m := range measures {
			if math.IsInf(obs[m], -1) {
				continue
			}
			if stat[m] >= obs[m]-1e-12 {
				exceed[m]++
			}
			if top >= obs[m]-1e-12 {
				exceedMax[m]++
			}
		}
		return top >= hardest-1e-12
	}
	// Few enough relabellings to take every one (C(6,3) = 20): the
	// p-values are then exact, the share of all relabellings at or above
	// the observed one (itself among them). Drawn at random, a p-value of
	// exactly 1/20 came out above or below 0.05 by the draw.
	if ways := Subsets(len(all), small, perms); ways <= perms && !math.IsInf(hardest, -1) {
		eachSubset(len(all), small, func(members []int) { count(members) })
		for m := range measures {
			out[m].P, out[m].Adjusted = 1, 1
			if !math.IsInf(obs[m], -1) {
				out[m].P = float64(exceed[m]) / float64(ways)
				out[m].Adjusted = float64(exceedMax[m]) / float64(ways)
			}
		}
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x5bd1e995))
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	drawn, hardestReached := 0, 0
	for drawn < perms && !math.IsInf(hardest, -1) {
		drawn++
		// A uniformly random smaller group: the first places of a partial
		// Fisher–Yates shuffle.
		for i := 0; i < small; i++ {
			j := i + rng.IntN(len(all)-i)
			idx[i], idx[j] = idx[j], idx[i]
		}
		if count(idx[:small]) {
			hardestReached++
		}
		// Besag and Clifford's sequential p-value: once every measure's
		// adjusted count has reached enough, more permutations only refine
		// p-values that are far from any level; stopping there is still a
		// valid test (p = count / permutations drawn).
		if hardestReached >= stopAt {
			break
		}
	}
	for m := range measures {
		if math.IsInf(obs[m], -1) {
			out[m].P, out[m].Adjusted = 1, 1
			continue
		}
		if drawn < perms {
			out[m].P = math.Min(1, float64(exceed[m])/float64(drawn))
			out[m].Adjusted = math.Min(1, float64(exceedMax[m])/float64(drawn))
			continue
		}
		out[m].P = float64(1+exceed[m]) / float64(1+drawn)
		out[m].Adjusted = float64(1+exceedMax[m]) / float64(1+drawn)
	}
	return out
}

// Subsets is C(n, k), counted up to the first value above limit: the
// number of ways to relabel k units of n, as far as deciding whether it
// exceeds limit needs.
func Subsets(n, k, limit int) int {
	ways := 1
	for i := 1; i <= k; i++ {
		ways = ways * (n - k + i) / i // exact: a product of i consecutive integers over i!
		if ways > limit {
			return ways
		}
	}
	return ways
}

// eachSubset calls f with every k-subset of 0..n-1, in lexicographic
// order; f must not keep the slice.
func eachSubset(n, k int, f func(members []int)) {
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	for {
		f(idx)
		i := k - 1
		for i >= 0 && idx[i] == n-k+i {
			i--
		}
		if i < 0 {
			return
		}
		idx[i]++
		for j := i + 1; j < k; j++ {
			idx[j] = idx[j-1] + 1
		}
	}
}

// enough is Besag and Clifford's h: the count of permutations at or above
// the observed statistic after which drawing more cannot bring a p-value
// below h/perms (for 1999 permutations, 0.01). A p-value that stops early
// is h divided by the permutations drawn: valid, but only as precise as h
// allows (about a fifth), which matters only far above any level.
const enough = 20

// column is one measure's per-unit figures, kept so that a permutation's
// statistic is a few sums.
type column struct {
	scored []bool
	share  []float64
	invJ   []float64
	pooled float64
	// The sums over every unit, from which a group's complement follows.
	n, s, s2, inv float64
}

func newColumn(all []Scores, m int) column {
	c := column{scored: make([]bool, len(all)), share: make([]float64, len(all)), invJ: make([]float64, len(all))}
	var passed, judged int
	for i, s := range all {
		if m < len(s) && s[m].Judged > 0 {
			c.scored[i] = true
			c.share[i] = s[m].Share()
			c.invJ[i] = 1 / float64(s[m].Judged)
			passed += s[m].Passed
			judged += s[m].Judged
		}
	}
	if judged > 0 {
		c.pooled = float64(passed) / float64(judged)
	}
	for i, ok := range c.scored {
		if ok {
			c.n++
			c.s += c.share[i]
			c.s2 += c.share[i] * c.share[i]
			c.inv += c.invJ[i]
		}
	}
	return c
}

// statistic is Welch's t of group a's mean share minus group b's, where
// inSmall marks the smaller group and smallIsB says which group that is.
func (c column) statistic(inSmall []bool, smallIsB bool) float64 {
	var members []int
	for i, in := range inSmall {
		if in {
			members = append(members, i)
		}
	}
	return c.subsetStatistic(members, smallIsB)
}

// subsetStatistic is statistic with the smaller group given by its
// members, the other group being every other unit: Welch's t with
// CompareArms' floored variances; -Inf when either group has fewer than
// MinUnitsPerArm scored units.
func (c column) subsetStatistic(members []int, smallIsB bool) float64 {
	var n, s, s2, inv [2]float64
	small := 0
	if smallIsB {
		small = 1
	}
	for _, i := range members {
		if !c.scored[i] {
			continue
		}
		n[small]++
		s[small] += c.share[i]
		s2[small] += c.share[i] * c.share[i]
		inv[small] += c.invJ[i]
	}
	other := 1 - small
	n[other], s[other], s2[other], inv[other] = c.n-n[small], c.s-s[small], c.s2-s2[small], c.inv-inv[small]
	if n[0] < MinUnitsPerArm || n[1] < MinUnitsPerArm {
		return math.Inf(-1)
	}
	var mean, se2 [2]float64
	for g := range 2 {
		mean[g] = s[g] / n[g]
		v := math.Max(0, (s2[g]-n[g]*mean[g]*mean[g])/(n[g]-1))
		if floor := c.pooled * (1 - c.pooled) * inv[g] / n[g]; floor > v {
			v = floor
		}
		se2[g] = v / n[g]
	}
	se := math.Sqrt(se2[0] + se2[1])
	if se == 0 {
		return 0
	}
	return (mean[0] - mean[1]) / se
}
