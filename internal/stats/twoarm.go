package stats

import (
	"fmt"
	"math"
)

// Unit is one independent unit of the two-arm design: a diluted
// conversation (its probes share one context) or a fresh triple (each probe
// asked as the first message of its own new session). Passed and Judged
// count its probes that were judged pass/fail; probes with no verdict
// (errors, uncertain verdicts, turns never run) are simply not counted.
type Unit struct {
	Passed, Judged int
}

// Share is the unit's pass share, Passed/Judged.
func (u Unit) Share() float64 { return float64(u.Passed) / float64(u.Judged) }

// MinUnitsPerArm is the fewest units with a judged probe an arm needs
// before the two-arm test can say anything: with one unit an arm has no
// variance of its own.
const MinUnitsPerArm = 2

// TwoArm is the result of comparing the diluted arm with the fresh arm.
type TwoArm struct {
	Diluted ArmSummary `json:"diluted"`
	Fresh   ArmSummary `json:"fresh"`
	// Drop is the fresh mean share minus the diluted one: positive when the
	// probes pass less often diluted than fresh.
	Drop float64 `json:"drop"`
	// SE is the standard error of Drop, DF Welch–Satterthwaite's degrees of
	// freedom, T = Drop/SE, and P the one-sided p-value of "diluted is not
	// worse than fresh". P is 1 when either arm has fewer than
	// MinUnitsPerArm units (Testable false).
	SE       float64 `json:"se"`
	DF       float64 `json:"df"`
	T        float64 `json:"t"`
	P        float64 `json:"p"`
	Testable bool    `json:"testable"`
	// PooledRate is the share of all judged probes (both arms) that passed,
	// the common pass rate under "no decay"; it sets the variance floor.
	PooledRate float64 `json:"pooled_rate"`
}

// ArmSummary describes one arm's units.
type ArmSummary struct {
	Units  int     `json:"units"`  // units with at least one judged probe
	Probes int     `json:"probes"` // judged probes over those units
	Passed int     `json:"passed"`
	Mean   float64 `json:"mean_share"` // mean of the units' shares
	// Var is the variance used for the mean: the sample variance of the
	// shares, or the binomial floor when that is larger.
	Var      float64 `json:"variance"`
	Floored  bool    `json:"variance_floored,omitempty"`
	SampleSD float64 `json:"sample_sd"`
}

func summarize(units []Unit, pooled float64) ArmSummary {
	s := ArmSummary{}
	var sum, sumInvJ float64
	var shares []float64
	for _, u := range units {
		if u.Judged <= 0 {
			continue
		}
		s.Units++
		s.Probes += u.Judged
		s.Passed += u.Passed
		shares = append(shares, u.Share())
		sum += u.Share()
		sumInvJ += 1 / float64(u.Judged)
	}
	if s.Units == 0 {
		return s
	}
	n := float64(s.Units)
	s.Mean = sum / n
	if s.Units > 1 {
		s.SampleSD = SD(shares)
	}
	s.Var = s.SampleSD * s.SampleSD
	// The floor: under "no decay" with probes of a unit no more alike than
	// independent draws, a unit's share varies at least as much as a
	// binomial share at the common pass rate. A sample variance below that
	// is luck of a small sample (two units that both scored 2/3 have
	// variance 0), and dividing by it would call any gap significant.
	if floor := pooled * (1 - pooled) * sumInvJ / n; floor > s.Var {
		s.Var, s.Floored = floor, true
	}
	return s
}

// CompareArms tests whether the diluted arm passes less often than the
// fresh arm: Welch's one-sided t-test on the units' pass shares, with each
// arm's variance floored at the binomial variance of the pooled pass rate.
//
// Why this shape: conversations and fresh triples are the units, so no
// test treats probes of one conversation as independent; the two arms may
// differ in spread (probes of one conversation share context, fresh
// sessions do not) and in size (the baseline gate stops conversations
// whose turn 1 failed), which is what Welch's unequal-variance form is
// for. The floor keeps a small arm whose shares happen to agree from
// claiming an infinitely precise mean. Whether all this holds its
// false-alarm rate is not argued here but measured: the calibrate package
// pushes simulated runs with no dilution effect through the function that
// sets the exit code.
func CompareArms(diluted, fresh []Unit) TwoArm {
	var passed, judged int
	for _, u := range append(append([]Unit{}, diluted...), fresh...) {
		if u.Judged > 0 {
			passed += u.Passed
			judged += u.Judged
		}
	}
	r := TwoArm{P: 1}
	if judged > 0 {
		r.PooledRate = float64(passed) / float64(judged)
	}
	r.Diluted = summarize(diluted, r.PooledRate)
	r.Fresh = summarize(fresh, r.PooledRate)
	if r.Diluted.Units == 0 || r.Fresh.Units == 0 {
		return r
	}
	r.Drop = r.Fresh.Mean - r.Diluted.Mean
	if r.Diluted.Units < MinUnitsPerArm || r.Fresh.Units < MinUnitsPerArm {
		return r
	}
	r.Testable = true
	a := r.Diluted.Var / float64(r.Diluted.Units)
	b := r.Fresh.Var / float64(r.Fresh.Units)
	r.SE = math.Sqrt(a + b)
	if r.SE == 0 {
		// Both arms passed (or failed) every probe: no difference to test.
		return r
	}
	r.DF = (a + b) * (a + b) / (a*a/float64(r.Diluted.Units-1) + b*b/float64(r.Fresh.Units-1))
	r.T = r.Drop / r.SE
	r.P = 1 - StudentTCDF(r.T, r.DF)
	return r
}

// MinDetectableDrop is a closed-form guess at the smallest drop (in share
// points, 0..1) that the test, with this run's arm sizes and spreads,
// detects with the given power at level alpha. It takes the spread seen
// as the truth, so it overstates power, badly at small sizes (a claimed
// 80% was 0.2 to 0.67 at 4 to 16 conversations): it is never printed, only
// used to skip simulating (package verdict) where even it says a drop is
// out of reach. It is the smallest d with
//
//	d >= t_{1-alpha} * SE0 + z_{power} * SE1(d)
//
// where SE0 is the standard error with no drop and SE1(d) the one with the
// diluted arm's pass rate d lower (a binomial share at the lower rate, or
// the observed spread when that is larger). The fresh rate is estimated
// with half a pass and half a fail added, so an arm that passed everything
// is not taken to have no spread at all. It describes the run; it is not a
// test. It returns +Inf when the comparison was not testable or no drop
// up to the whole fresh rate is detectable.
func MinDetectableDrop(r TwoArm, alpha, power float64) float64 {
	if !r.Testable {
		return math.Inf(1)
	}
	return detectable(r, r.Diluted.Units, r.Fresh.Units, alpha, power)
}

// UnitsForDrop estimates how many units per arm (conversations, each with
// its fresh triple) would detect a drop of d with the given power, with
// this run's spreads (a guide for "how many more conversations would
// likely decide"). It returns 0 when the run has no arm to scale from or
// even 1000 units would not do.
func UnitsForDrop(r TwoArm, d, alpha, power float64) int {
	if r.Diluted.Units == 0 || r.Fresh.Units == 0 || d <= 0 {
		return 0
	}
	for k := MinUnitsPerArm; k <= 1000; k++ {
		if detectable(r, k, k, alpha, power) <= d {
			return k
		}
	}
	return 0
}

// detectable is MinDetectableDrop's search with m diluted and n fresh
// units.
func detectable(r TwoArm, m, n int, alpha, power float64) float64 {
	pF := (float64(r.Fresh.Passed) + 0.5) / (float64(r.Fresh.Probes) + 1)
	perUnit := func(a ArmSummary) float64 { // probes per unit
		if a.Units == 0 {
			return 3
		}
		return float64(a.Probes) / float64(a.Units)
	}
	jD, jF := perUnit(r.Diluted), perUnit(r.Fresh)
	vF := math.Max(r.Fresh.SampleSD*r.Fresh.SampleSD, pF*(1-pF)/jF)
	vD := func(drop float64) float64 {
		p := pF - drop
		return math.Max(r.Diluted.SampleSD*r.Diluted.SampleSD, p*(1-p)/jD)
	}
	se := func(drop float64) float64 { return math.Sqrt(vD(drop)/float64(m) + vF/float64(n)) }
	df := float64(m + n - 2)
	if m == r.Diluted.Units && n == r.Fresh.Units && r.DF > 0 {
		df = r.DF
	}
	tq, zq := StudentTQuantile(1-alpha, df), NormalQuantile(power)
	short := func(d float64) bool { return d < tq*se(0)+zq*se(d) }
	if short(pF) {
		return math.Inf(1)
	}
	lo, hi := 0.0, pF
	for range 40 {
		mid := (lo + hi) / 2
		if short(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// StudentTCDF is P(T <= t) for Student's t with df > 0 degrees of freedom
// (df need not be an integer: Welch's are not).
func StudentTCDF(t, df float64) float64 {
	if df <= 0 || math.IsNaN(t) || math.IsNaN(df) {
		panic(fmt.Sprintf("stats.StudentTCDF: t=%v df=%v", t, df))
	}
	if math.IsInf(t, 1) {
		return 1
	}
	if math.IsInf(t, -1) {
		return 0
	}
	x := df / (df + t*t)
	tail := 0.5 * RegIncBeta(df/2, 0.5, x) // P(T > |t|)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// StudentTQuantile inverts StudentTCDF (p in (0, 1)): Newton's method from
// the normal quantile, which converges in a few steps for the degrees of
// freedom vibe-test sees, with bisection as the fallback.
func StudentTQuantile(p, df float64) float64 {
	x := NormalQuantile(p)
	lg1, _ := math.Lgamma((df + 1) / 2)
	lg2, _ := math.Lgamma(df / 2)
	logC := lg1 - lg2 - 0.5*math.Log(df*math.Pi)
	for range 50 {
		pdf := math.Exp(logC - (df+1)/2*math.Log1p(x*x/df))
		step := (StudentTCDF(x, df) - p) / pdf
		if math.IsNaN(step) || math.IsInf(step, 0) || math.Abs(step) > 50 {
			break
		}
		x -= step
		if math.Abs(step) < 1e-10 {
			return x
		}
	}
	lo, hi := -1e4, 1e4
	for range 200 {
		mid := (lo + hi) / 2
		if StudentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// NormalQuantile is the standard normal quantile (p in (0, 1)).
func NormalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// RegIncBeta is the regularized incomplete beta function I_x(a, b), by
// the continued fraction of Numerical Recipes §6.4 (modified Lentz),
// using the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) where that converges
// faster.
func RegIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 500; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-14 {
			break
		}
	}
	return h
}
