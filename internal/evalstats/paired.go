package evalstats

import (
	"math"

	"github.com/vibe-test/vibe-test/internal/stats"
)

// pairedStat is one score's paired comparison of the candidate with the
// base: cases are the units, each case's drop the base's mean score on it
// (every base run's repeats pooled) minus the candidate's.
type pairedStat struct {
	n int     // cases graded on both sides
	d float64 // D, the mean drop
	// perCase is the sample variance of the cases' drops, or the variance
	// their cells' noise gives them when that is larger: V_e = perCase/n.
	perCase float64
	// noiseDF is perCase's degrees of freedom when the cells' noise set
	// it (0: the drops' sample variance did, with n-1).
	noiseDF int
	// upperCase and upperDF are perCase and noiseDF for the upper bound:
	// floored by the grades' binomial noise as well.
	upperCase float64
	upperDF   int
	ve        float64
	va        float64 // the drift's part of Var(D): sigma_a^2 (1 + 1/k)
	sigmaA    float64 // the run-to-run drift counted (at least DriftFloor)
	k         int     // base runs
	driftDF   int     // the drift estimate's degrees of freedom (0: the floor)
	df, se    float64
	p         float64 // one-sided p of "no worse"
	upper     float64 // one-sided (1 - alpha) upper bound of the drop
}

// repeatNoise is the variance a case's drop has from its cells' noise: the
// cells' spread about their own side's mean (base and candidate pooled,
// each about its own mean, so a real drop does not count as noise), over
// each side's count; and its degrees of freedom.
func repeatNoise(b, cc acc) (float64, int) {
	df := b.m + cc.m - 2
	if df < 1 {
		return 0, 0
	}
	within := max(0, b.q-b.s*b.s/float64(b.m)) + max(0, cc.q-cc.s*cc.s/float64(cc.m))
	return within / float64(df) * (1/float64(b.m) + 1/float64(cc.m)), df
}

// smoothedRate is runs' pooled pass rate on score j with z²/2 passes and
// z²/2 fails added (Agresti and Coull's centre, z the one-sided 1 - alpha
// quantile): never 0 or 1, so a side that passed or failed every grade
// still has the binomial noise its number of grades leaves.
func smoothedRate(l *scored, runs []scoredRun, j int, alpha float64) float64 {
	z := stats.NormalQuantile(1 - alpha)
	passed, graded := 0.0, 0
	for r := range runs {
		passed += runs[r].counts[j].s
		graded += runs[r].counts[j].m
	}
	return (passed + z*z/2) / (float64(graded) + z*z)
}

// gradesOf is how many grades case c's score j rests on, over runs: its
// measure's graded grades, or for the total every measure's.
func gradesOf(l *scored, runs []scoredRun, c, j int) int {
	if j != l.total() {
		return sideCase(runs, c, j).m
	}
	g := 0
	for k := range l.total() {
		g += sideCase(runs, c, k).m
	}
	return g
}

// minRejectCases is the fewest cases graded on both sides on which the
// paired rule may find a score worse (package calibrate holds it from 3).
const minRejectCases = 3

// DriftFloor is the smallest run-to-run drift the paired rule counts,
// whatever the base runs show: the standard deviation of a run's shift of
// every pass rate (3 points). Two base runs show the drift once (one
// degree of freedom), and an estimate that came out small by chance would
// let a run that drifted pass for a regression; with one base run there
// is no estimate at all. Package calibrate measures the rule with drift
// from none to 5 points.
const DriftFloor = 0.03

// paired compares the base runs with the candidate on score j (a measure,
// or the total). shared is a drift variance the score must count at least
// (the total's, for a measure: a run's shift moves every measure). Without
// bound it leaves upper 0.
func paired(l *scored, base, cand []scoredRun, j int, alpha, shared float64, bound bool) pairedStat {
	ps := pairedStat{k: len(base), p: 1}
	n := 0
	sum, sumsq, noise, noiseDF := 0.0, 0.0, 0.0, 0
	pb, pc := smoothedRate(l, base, j, alpha), smoothedRate(l, cand, j, alpha)
	binomial := 0.0
	for c := range l.cases {
		b, cc := sideCase(base, c, j), sideCase(cand, c, j)
		if b.m == 0 || cc.m == 0 {
			continue
		}
		d := b.mean() - cc.mean()
		n++
		sum += d
		sumsq += d * d
		v, df := repeatNoise(b, cc)
		noise += v
		noiseDF += df
		binomial += pb*(1-pb)/float64(gradesOf(l, base, c, j)) + pc*(1-pc)/float64(gradesOf(l, cand, c, j))
	}
	ps.n = n
	if n < 2 {
		ps.d = sum
		return ps
	}
	nf := float64(n)
	ps.d = sum / nf
	// The cases' drops are counted as varying at least as much as their
	// cells' own noise makes them: drops are few values on a lattice
	// (thirds, sixths), so a few cases often drop by exactly as much, and
	// their sample variance of 0 read as no noise at all rejected an
	// unchanged skill in 0.10 to 0.13 of runs with 2 cases and 0.065 with
	// 3 (alpha 0.05).
	ps.perCase = max(0, (sumsq-sum*sum/nf)/(nf-1))
	if floor := noise / nf; floor > ps.perCase {
		// Estimated from every cell, not from n drops.
		ps.perCase, ps.noiseDF = floor, noiseDF
	}
	// The upper bound, which accepts, counts them as varying no less than
	// their grades' binomial noise at each side's pass rate pulled
	// towards one half either: at the ceiling every drop is 0 and the
	// cells show no noise, and a candidate that passes 90% of its grades
	// passes all 18 of six cases' three measures in 15% of runs. Without
	// this floor such runs were accepted as "dropped less than the margin
	// of 0.1" in 0.15 of runs at six cases and one repeat, 0.51 at two
	// (package calibrate's ceiling worlds). The test that rejects keeps
	// the spread the cases and cells show: it holds its level without the
	// floor, which would cost it a third of its power on small sets.
	ps.upperCase, ps.upperDF = ps.perCase, ps.noiseDF
	if floor := binomial / nf; floor > ps.upperCase {
		// With the cells' degrees of freedom where they have some (their
		// grades estimate the same noise), else the cases'.
		ps.upperCase, ps.upperDF = floor, noiseDF
	}
	ps.ve = ps.perCase / nf
	// The drift: the floor, unless the base runs show more (their own
	// estimate on this score, or the total's).
	v, driftDF := DriftFloor*DriftFloor, 0
	if ps.k >= 2 {
		if est := max(driftVar(l, base, j), shared); est > v {
			v, driftDF = est, ps.k-1
		}
	}
	ps.sigmaA = math.Sqrt(v)
	ps.va = v * (1 + 1/float64(ps.k))
	ps.driftDF = driftDF
	ps.df = welch(ps.ve, ps.caseDF(n), ps.va, driftDF)
	ps.se = math.Sqrt(ps.ve + ps.va)
	switch {
	case n < minRejectCases:
		// Two drops show no spread of their own: with one repeat a side,
		// the cells' noise cannot show it either, and two cases rejected
		// an unchanged skill in up to 0.077 of runs. They can accept.
		ps.p = 1
	case ps.se == 0 && ps.d <= 0:
		ps.p = 1
	case ps.se == 0:
		ps.p = 0
	default:
		ps.p = 1 - tCDF(ps.d/ps.se, ps.df)
	}
	if bound {
		// A score lies in [0, 1], so no drop exceeds 1: a bound past it
		// (a measure that went from all to none, plus the noise) says
		// nothing more and would print an impossible drop.
		ve := ps.upperCase / nf
		df := welch(ve, upperCaseDF(ps.upperDF, n, n), ps.va, driftDF)
		ps.upper = min(1, ps.d+studentQuantile(1-alpha, df)*math.Sqrt(ve+ps.va))
	}
	return ps
}

// studentQuantile is Student's t quantile: from 8 degrees of freedom on,
// tQuantile's expansion polished by Newton steps on the exact CDF (within
// 1e-8 of stats.StudentTQuantile, at a fraction of its cost: a
// calibration grid asks for a million of them); below 8,
// stats.StudentTQuantile itself.
func studentQuantile(p, df float64) float64 {
	if df > maxDF {
		return stats.NormalQuantile(p)
	}
	if df < 8 {
		return stats.StudentTQuantile(p, df)
	}
	x := tQuantile(p, df)
	lg1, _ := math.Lgamma((df + 1) / 2)
	lg2, _ := math.Lgamma(df / 2)
	logC := lg1 - lg2 - 0.5*math.Log(df*math.Pi)
	for range 3 {
		pdf := math.Exp(logC - (df+1)/2*math.Log1p(x*x/df))
		step := (stats.StudentTCDF(x, df) - p) / pdf
		x -= step
		if math.Abs(step) < 1e-10*math.Abs(x) {
			break
		}
	}
	return x
}

// welch is the Welch–Satterthwaite degrees of freedom of a sum of two
// variance estimates with df1 and df2 degrees of freedom (df2 0: v2 is
// known, it adds no sampling error).
func welch(v1 float64, df1 int, v2 float64, df2 int) float64 {
	switch {
	case v2 <= 0:
		return float64(df1)
	case v1 <= 0 && df2 < 1:
		return math.Inf(1) // both parts known
	case v1 <= 0:
		return float64(df2)
	case df2 < 1:
		return float64(df1) * (v1 + v2) * (v1 + v2) / (v1 * v1)
	}
	return (v1 + v2) * (v1 + v2) / (v1*v1/float64(df1) + v2*v2/float64(df2))
}

// driftVar estimates the variance of a run's effect on score j from the
// base runs: a two-way layout of run × case over the cases every base run
// graded, where the runs' mean square (n·spread of the run means) holds
// n·sigma_a^2 plus the within-run noise, which the interaction mean square
// estimates on its own. Their difference over n, clamped at 0. With two
// runs this is (δ² − s²(run1_c − run2_c)/n)/2, δ the runs' mean difference.
func driftVar(l *scored, runs []scoredRun, j int) float64 {
	k := len(runs)
	// n rows of k, then the k run means and n case means: one array kept
	// by l for every score's call.
	if need := len(l.cases)*(k+1) + k; cap(l.buf) < need {
		l.buf = make([]float64, need)
	}
	ys := l.buf[: 0 : len(l.cases)*k]
	for c := range l.cases {
		ok := true
		for r := range runs { // by index: a scoredRun is too large to copy
			ok = ok && runs[r].cells[c][j].m > 0
		}
		if ok {
			for r := range runs {
				ys = append(ys, runs[r].cells[c][j].mean())
			}
		}
	}
	n := len(ys) / max(k, 1)
	if n < 2 || k < 2 {
		return 0
	}
	runMean := l.buf[len(l.cases)*k : len(l.cases)*k+k]
	caseMean := l.buf[len(l.cases)*k+k : len(l.cases)*k+k+n]
	clear(runMean)
	clear(caseMean)
	grand := 0.0
	for c := range n {
		for r := range k {
			y := ys[c*k+r]
			runMean[r] += y / float64(n)
			caseMean[c] += y / float64(k)
			grand += y / float64(n*k)
		}
	}
	msRun := 0.0
	for _, m := range runMean {
		msRun += (m - grand) * (m - grand)
	}
	msRun *= float64(n) / float64(k-1)
	msInt := 0.0
	for c := range n {
		for r := range k {
			e := ys[c*k+r] - runMean[r] - caseMean[c] + grand
			msInt += e * e
		}
	}
	msInt /= float64((k - 1) * (n - 1))
	return math.Max(0, (msRun-msInt)/float64(n))
}

// caseDF is the degrees of freedom of the per-case variance with n cases.
func (ps pairedStat) caseDF(n int) int { return upperCaseDF(ps.noiseDF, n, ps.n) }

// upperCaseDF is the degrees of freedom of a per-case variance whose
// cells' noise had noiseDF of them over observed cases (0: the cases' own
// spread, n-1), with n cases.
func upperCaseDF(noiseDF, n, observed int) int {
	if noiseDF == 0 {
		return n - 1
	}
	return noiseDF * n / observed
}

// upperAt is the upper bound the same spread would give with n cases
// (with tQuantile's close approximation: Need is "about").
func (ps pairedStat) upperAt(n int, alpha float64) float64 {
	ve := ps.upperCase / float64(n)
	df := welch(ve, upperCaseDF(ps.upperDF, n, ps.n), ps.va, ps.driftDF)
	return ps.d + tQuantile(1-alpha, df)*math.Sqrt(ve+ps.va)
}

// rejectsAt says whether the same drop and spread with n cases would be
// significant at level.
func (ps pairedStat) rejectsAt(n int, level float64) bool {
	ve := ps.perCase / float64(n)
	df := welch(ve, ps.caseDF(n), ps.va, ps.driftDF)
	se := math.Sqrt(ve + ps.va)
	return n >= minRejectCases && se > 0 && ps.d/se >= tQuantile(1-level, df)
}

// maxDF is where Student's t is the normal: the drift floor is a known
// variance, and when the cases' drops do not vary at all (V_e = 0) the
// degrees of freedom are infinite.
const maxDF = 1e7

// tCDF is stats.StudentTCDF, the normal's beyond maxDF.
func tCDF(t, df float64) float64 {
	if df > maxDF {
		return 0.5 * math.Erfc(-t/math.Sqrt2)
	}
	return stats.StudentTCDF(t, df)
}

// tQuantile is Student's t quantile by its Cornish–Fisher expansion in
// 1/df (Abramowitz and Stegun 26.7.5): within 1% of the exact value from
// 5 degrees of freedom on (p up to 0.995), 4% at 3; the exact one below
// 3. Need, which is "about", and studentQuantile's start use it.
func tQuantile(p, df float64) float64 {
	if df > maxDF {
		return stats.NormalQuantile(p)
	}
	if df < 3 {
		return stats.StudentTQuantile(p, df)
	}
	z := stats.NormalQuantile(p)
	z2 := z * z
	g1 := (z2 + 1) * z / 4
	g2 := ((5*z2+16)*z2 + 3) * z / 96
	g3 := (((3*z2+19)*z2+17)*z2 - 15) * z / 384
	return z + g1/df + g2/(df*df) + g3/(df*df*df)
}

// maxNeed is the most cases Need searches: beyond it, "more cases" is not
// advice anyone can follow.
const maxNeed = 10000

// need is about how many cases would decide at the same spread and
// repeats: when the drop is below the margin, the fewest that bring the
// upper bound below it; when it is not, the fewest that make the drop
// significant at level (the first step of Holm's ladder). 0 when no
// number of cases up to maxNeed would (the drift counted alone keeps the
// bound up).
func (ps pairedStat) need(margin, alpha, level float64) int {
	ok := func(n int) bool { return ps.upperAt(n, alpha) < margin }
	gap := (margin - ps.d) / stats.NormalQuantile(1-alpha)
	if ps.d >= margin {
		ok = func(n int) bool { return ps.rejectsAt(n, level) }
		gap = ps.d / stats.NormalQuantile(1-level)
	}
	if !ok(maxNeed) {
		return 0
	}
	// With the normal quantile for t's, n = perCase/(gap² − va) would do:
	// a lower bound, since t's quantile is larger. Search up from it.
	lo := ps.n
	if gap*gap > ps.va {
		lo = min(max(lo, int(ps.perCase/(gap*gap-ps.va))-1), maxNeed-1)
	}
	if ok(lo) {
		lo = ps.n
	}
	hi := min(maxNeed, 2*lo+16)
	for !ok(hi) {
		lo, hi = hi, min(maxNeed, 2*hi)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// holm adjusts one-sided p-values for testing them all at once (Holm
// 1979): sorted ascending, the i-th (from 0) is multiplied by h - i, and
// each adjusted value is at least the one before it. It holds the chance
// of any false reject at alpha whatever the dependence between the
// measures. Negative entries are measures not tested: left out, adjusted
// to 1.
func holm(p []float64) []float64 {
	idx := make([]int, 0, len(p))
	for i, x := range p {
		if x >= 0 {
			idx = append(idx, i)
		}
	}
	// Insertion sort: a handful of measures, and stable for ties.
	for a := 1; a < len(idx); a++ {
		for b := a; b > 0 && p[idx[b]] < p[idx[b-1]]; b-- {
			idx[b], idx[b-1] = idx[b-1], idx[b]
		}
	}
	out := make([]float64, len(p))
	for i := range out {
		out[i] = 1
	}
	h := len(idx)
	run := 0.0
	for i, j := range idx {
		run = math.Max(run, math.Min(1, float64(h-i)*p[j]))
		out[j] = run
	}
	return out
}

// driftEstimate is the drift variance the base runs showed, 0 when the
// floor was counted instead.
func (ps pairedStat) driftEstimate() float64 {
	if ps.driftDF == 0 {
		return 0
	}
	return ps.sigmaA * ps.sigmaA
}
