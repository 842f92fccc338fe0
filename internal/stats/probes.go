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

// judged counts the unit's judged probes among those in use.
func (u ProbeUnit) judged(use []bool) (passed, judged int) {
	for k, y := range u {
		if k < len(use) && use[k] && y != Missing {
			judged++
			passed += int(y)
		}
	}
	return passed, judged
}

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
	probes := 0
	for _, u := range append(append([]ProbeUnit{}, diluted...), fresh...) {
		probes = max(probes, len(u))
	}
	use := make([]bool, probes)
	pooledPass, pooledN := make([]float64, probes), make([]float64, probes)
	for k := range probes {
		var dn, fn int
		for _, u := range diluted {
			if k < len(u) && u[k] != Missing {
				dn++
				pooledPass[k] += float64(u[k])
			}
		}
		for _, u := range fresh {
			if k < len(u) && u[k] != Missing {
				fn++
				pooledPass[k] += float64(u[k])
			}
		}
		pooledN[k] = float64(dn + fn)
		use[k] = dn > 0 && fn > 0
	}
	r := TwoArm{P: 1}
	var passed, judged float64
	var used int
	for k := range probes {
		if use[k] {
			used++
			passed += pooledPass[k]
			judged += pooledN[k]
		}
	}
	if judged > 0 {
		r.PooledRate = passed / judged
	}
	pooled := make([]float64, probes)
	for k := range probes {
		if pooledN[k] > 0 {
			pooled[k] = pooledPass[k] / pooledN[k]
		}
	}
	var vD, vF float64
	r.Diluted, vD = summarizeProbes(diluted, use, used, pooled)
	r.Fresh, vF = summarizeProbes(fresh, use, used, pooled)
	if used == 0 || r.Diluted.Units == 0 || r.Fresh.Units == 0 {
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

// summarizeProbes describes one arm over the probes in use and returns the
// variance of its rate. ArmSummary.Var is that variance times the number
// of units, so Var/Units is the squared standard error as for shares.
func summarizeProbes(units []ProbeUnit, use []bool, used int, pooled []float64) (ArmSummary, float64) {
	s := ArmSummary{}
	if used == 0 {
		return s, 0
	}
	w := 1 / float64(used)
	probes := len(use)
	n, pass := make([]float64, probes), make([]float64, probes)
	var shares []float64
	for _, u := range units {
		p, j := u.judged(use)
		if j == 0 {
			continue
		}
		s.Units++
		s.Probes += j
		s.Passed += p
		shares = append(shares, float64(p)/float64(j))
		for k, y := range u {
			if k < probes && use[k] && y != Missing {
				n[k]++
				pass[k] += float64(y)
			}
		}
	}
	if s.Units == 0 {
		return s, 0
	}
	rate := make([]float64, probes)
	var floor float64
	for k := range probes {
		if use[k] && n[k] > 0 {
			rate[k] = pass[k] / n[k]
			s.Mean += w * rate[k]
			floor += w * w * pooled[k] * (1 - pooled[k]) / n[k]
		} else if use[k] {
			// The arm never judged a probe the other arm did: its rate for
			// it is unknown, so the arm's rate leans on the others. This
			// cannot happen when the probe is in use (both arms judged it).
			panic("stats: a probe in use with no judged unit")
		}
	}
	if s.Units > 1 {
		s.SampleSD = SD(shares)
	}
	var ss float64
	for _, u := range units {
		if _, j := u.judged(use); j == 0 {
			continue
		}
		psi := 0.0
		for k, y := range u {
			if k < probes && use[k] && y != Missing {
				psi += w * (float64(y) - rate[k]) / n[k]
			}
		}
		ss += psi * psi
	}
	m := float64(s.Units)
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
