package stats

import "math"

// A probe's result in a unit: judged pass, judged fail, or not judged
// (never asked, an errored turn, a judge error, an uncertain verdict).
const (
	Missing int8 = -1
	Fail    int8 = 0
	Pass    int8 = 1
)

// ProbeUnit is one independent unit of the two-arm design with the result
// of each of its probes, in probe order: a diluted conversation (its
// probes share one context) or a fresh triple (each probe asked as the
// first message of its own new session).
type ProbeUnit []int8

// CompareProbes tests whether the diluted arm passes its probes less
// often than the fresh arm, probe by probe: like is compared with like.
//
// Each arm's rate is the mean over the probes of that probe's pass rate in
// the arm (every probe weighs the same), counted over the units that have
// the probe judged; Drop is the fresh rate minus the diluted one. Why per
// probe: the probes differ in difficulty, and a unit that lost some of its
// probes (an error stops a conversation, so later probes are never asked)
// would otherwise be scored on a different mix of probes than a unit that
// kept them. Diluted conversations are cut short more often than fresh
// triples, so a per-unit share would compare mixes, not dilution. When
// every unit has every probe, the rate is the mean unit share and the test
// is Welch's t-test on the shares, as before.
//
// The variance of an arm's rate treats the unit as the cluster (its probes
// are not independent): the sum of squared unit contributions
// psi_i = sum_k w_k (y_ik - p_k) / n_k, scaled by m/(m-1) as a sample
// variance is, and floored at the binomial variance of each probe at its
// pooled (both arms) rate, so that a small arm whose units happen to agree
// cannot claim an infinitely precise rate. The one-sided p-value is
// Student's t with Welch–Satterthwaite degrees of freedom. A probe is used
// when both arms judged it at least once; an arm needs MinUnitsPerArm
// units with a judged probe in use. Whether this holds its false-alarm
// rate is measured, not argued: package calibrate pushes simulated runs
// through the function that sets the exit code.
func CompareProbes(diluted, fresh []ProbeUnit) TwoArm {
	// Fixed-size arrays keep a comparison free of allocations: the power
	// simulation makes hundreds of thousands of them.
	probes := 0
	for _, u := range diluted {
		probes = max(probes, len(u))
	}
	for _, u := range fresh {
		probes = max(probes, len(u))
	}
	if probes > MaxProbes {
		panic("stats: more probes than CompareProbes keeps room for")
	}
	var use [MaxProbes]bool
	var pooledPass, pooledN [MaxProbes]float64
	var dn, fn, passes [MaxProbes]int
	// The loops over units are written without branches on the results
	// (which are as good as random), and count in integers: a sum of ones
	// and zeros is the same whole number in floating point.
	valid := true
	for _, u := range diluted {
		for k, y := range u {
			valid = valid && y >= Missing && y <= Pass
			dn[k] += judgedCount(y)
			passes[k] += int(max(y, 0))
		}
	}
	for _, u := range fresh {
		for k, y := range u {
			valid = valid && y >= Missing && y <= Pass
			fn[k] += judgedCount(y)
			passes[k] += int(max(y, 0))
		}
	}
	if !valid {
		panic("stats: a probe result other than Missing, Fail or Pass")
	}
	r := TwoArm{P: 1}
	var passed, judged float64
	var used int
	var pooled [MaxProbes]float64
	for k := range probes {
		pooledPass[k] = float64(passes[k])
		pooledN[k] = float64(dn[k] + fn[k])
		use[k] = dn[k] > 0 && fn[k] > 0
		if pooledN[k] > 0 {
			pooled[k] = pooledPass[k] / pooledN[k]
		}
		if use[k] {
			used++
			passed += pooledPass[k]
			judged += pooledN[k]
		}
	}
	if judged > 0 {
		r.PooledRate = passed / judged
	}
	if used == 0 {
		// Nothing to compare (an arm judged no probe): each arm is still
		// described over the probes it judged.
		var ownD, ownF [MaxProbes]bool
		var nD, nF int
		for k := range probes {
			ownD[k], ownF[k] = dn[k] > 0, fn[k] > 0
			nD, nF = nD+boolInt(ownD[k]), nF+boolInt(ownF[k])
		}
		r.Diluted, _ = summarizeProbes(diluted, &ownD, probes, nD, &pooled)
		r.Fresh, _ = summarizeProbes(fresh, &ownF, probes, nF, &pooled)
		return r
	}
	var vD, vF float64
	r.Diluted, vD = summarizeProbes(diluted, &use, probes, used, &pooled)
	r.Fresh, vF = summarizeProbes(fresh, &use, probes, used, &pooled)
	if r.Diluted.Units == 0 || r.Fresh.Units == 0 {
		return r
	}
	r.Drop = r.Fresh.Mean - r.Diluted.Mean
	if r.Diluted.Units < MinUnitsPerArm || r.Fresh.Units < MinUnitsPerArm {
		return r
	}
	r.Testable = true
	r.SE = math.Sqrt(vD + vF)
	if r.SE == 0 {
		// Both arms passed (or failed) every probe: no difference to test.
		return r
	}
	r.DF = (vD + vF) * (vD + vF) / (vD*vD/float64(r.Diluted.Units-1) + vF*vF/float64(r.Fresh.Units-1))
	r.T = r.Drop / r.SE
	r.P = 1 - StudentTCDF(r.T, r.DF)
	return r
}

// MaxProbes is the most probes a unit may have.
const MaxProbes = 8

// summarizeProbes describes one arm over the probes in use and returns the
// variance of its rate. ArmSummary.Var is that variance times the number
// of units, so Var/Units is the squared standard error as for shares.
func summarizeProbes(units []ProbeUnit, use *[MaxProbes]bool, probes, used int, pooled *[MaxProbes]float64) (ArmSummary, float64) {
	s := ArmSummary{}
	if used == 0 {
		return s, 0
	}
	w := 1 / float64(used)
	// Per probe, judged results and passes (counted in integers: the same
	// whole numbers as sums of ones in floating point).
	var n, pass [MaxProbes]int
	var shareSum, shareSq float64
	// in[k] is 1 for a probe in use, else 0: a result counts when both it
	// and judgedCount are 1 (CompareProbes checked the results).
	var in [MaxProbes]int
	for k := range probes {
		if use[k] {
			in[k] = 1
		}
	}
	for _, u := range units {
		p, j := 0, 0
		for k, y := range u {
			c := in[k] * judgedCount(y)
			j += c
			p += c * int(y)
			n[k] += c
			pass[k] += c * int(y)
		}
		if j == 0 {
			continue
		}
		s.Units++
		s.Probes += j
		s.Passed += p
		share := float64(p) / float64(j)
		shareSum += share
		shareSq += share * share
	}
	if s.Units == 0 {
		return s, 0
	}
	var rate [MaxProbes]float64
	var floor float64
	for k := range probes {
		if use[k] && n[k] > 0 {
			rate[k] = float64(pass[k]) / float64(n[k])
			s.Mean += w * rate[k]
			floor += w * w * pooled[k] * (1 - pooled[k]) / float64(n[k])
		}
	}
	m := float64(s.Units)
	if s.Units > 1 {
		mean := shareSum / m
		s.SampleSD = math.Sqrt(math.Max(0, (shareSq-m*mean*mean)/(m-1)))
	}
	// A unit's psi adds, per probe in use it has judged, the term of its
	// result, term[k][y+1] (0 for a probe not in use or not judged): the
	// same numbers, computed once. A unit with none adds psi = 0 to ss.
	var term [MaxProbes][3]float64
	for k := range probes {
		if use[k] && n[k] > 0 {
			term[k][Fail+1] = w * (float64(Fail) - rate[k]) / float64(n[k])
			term[k][Pass+1] = w * (float64(Pass) - rate[k]) / float64(n[k])
		}
	}
	var ss float64
	for _, u := range units {
		psi := 0.0
		for k, y := range u {
			psi += term[k][y+1]
		}
		ss += psi * psi
	}
	v := 0.0
	if s.Units > 1 {
		v = ss * m / (m - 1)
	}
	if floor > v {
		v, s.Floored = floor, true
	}
	s.Var = v * m
	return s, v
}

// judgedCount is 1 for a judged result (Fail or Pass), 0 for Missing.
func judgedCount(y int8) int {
	return int(y-Missing+1) >> 1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
