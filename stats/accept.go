package stats

import (
	"math"
	"slices"
)

// Sample is one run's results for the acceptance rule: the total score of
// each conversation (in [0, 1]) and, per criterion, one outcome per judged
// turn.
type Sample struct {
	Totals []float64
	Rates  map[string][]bool
}

// SD is the sample standard deviation (divisor n-1, the unbiased variance),
// 0 for fewer than 2 values. Seed 000 measured noise this way over repeat
// runs of the same baseline.
func SD(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	// Two passes (mean, then squared deviations): accurate for values that
	// are close together, which repeat scores are.
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// AcceptMargin is seed 000's bar for the total score: the candidate may
// fall at most 2 * sd * sqrt(1/nCand + 1/nBase) below the baseline, i.e.
// about two standard errors of a difference of two means when each score
// has noise sd. A bar narrower than the noise fails good candidates. It
// returns NaN when either count is not positive (no bar can be set; any
// comparison against NaN is false, so nothing is accepted by accident).
func AcceptMargin(sd float64, nCand, nBase int) float64 {
	if nCand <= 0 || nBase <= 0 {
		return math.NaN()
	}
	return 2 * sd * math.Sqrt(1/float64(nCand)+1/float64(nBase))
}

// BinomialSE is the standard error of a pass rate p observed over n
// outcomes, sqrt(p(1-p)/n). Seed 000 lets each per-criterion rate drop at
// most two of these. It is 0 at p = 0 or 1 (then any drop fails the rule),
// and NaN when n is not positive.
func BinomialSE(p float64, n int) float64 {
	if n <= 0 {
		return math.NaN()
	}
	return math.Sqrt(p * (1 - p) / float64(n))
}

// CriterionCheck is the per-criterion part of an Acceptance.
type CriterionCheck struct {
	Name               string
	BaseRate, CandRate float64
	// Margin is 2 * BinomialSE(BaseRate, baseline outcomes).
	Margin float64
	Pass   bool
}

// Acceptance is the verdict of seed 000's rule.
type Acceptance struct {
	Pass                       bool
	BaseMean, CandMean, Margin float64 // the total-score rule
	TotalPass                  bool
	Criteria                   []CriterionCheck // sorted by name
}

// Accept applies seed 000's noise-based acceptance rule: the candidate's
// mean total must stay at or above the baseline's minus AcceptMargin(sd,
// len(cand.Totals), len(base.Totals)), and each baseline criterion's rate
// must stay at or above the baseline rate minus two binomial standard
// errors of the baseline rate. sd is the measured noise (SD of repeat
// totals of the baseline, ideally from two baseline runs); it is a
// parameter because it comes from repeat runs, not from the one sample
// compared. A criterion missing from the candidate fails; criteria only in
// the candidate are not checked. Seed 000 checked the rule both ways (a
// second baseline passes, an empty-skill control fails); callers should do
// the same before trusting it.
func Accept(base, cand Sample, sd float64) Acceptance {
	var acc Acceptance
	acc.BaseMean, acc.CandMean = mean(base.Totals), mean(cand.Totals)
	acc.Margin = AcceptMargin(sd, len(cand.Totals), len(base.Totals))
	acc.TotalPass = acc.CandMean >= acc.BaseMean-acc.Margin-tieSlack
	acc.Pass = acc.TotalPass
	names := make([]string, 0, len(base.Rates))
	for name := range base.Rates {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		b := base.Rates[name]
		c, ok := cand.Rates[name]
		ch := CriterionCheck{Name: name, BaseRate: passRate(b), CandRate: passRate(c)}
		ch.Margin = 2 * BinomialSE(ch.BaseRate, len(b))
		ch.Pass = ok && len(c) > 0 && ch.CandRate >= ch.BaseRate-ch.Margin-tieSlack
		acc.Pass = acc.Pass && ch.Pass
		acc.Criteria = append(acc.Criteria, ch)
	}
	return acc
}

// tieSlack keeps a candidate exactly on the bar (in exact arithmetic) from
// failing by a rounding error.
const tieSlack = 1e-12

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func passRate(outcomes []bool) float64 {
	if len(outcomes) == 0 {
		return math.NaN()
	}
	k := 0
	for _, o := range outcomes {
		if o {
			k++
		}
	}
	return float64(k) / float64(len(outcomes))
}
