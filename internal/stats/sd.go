package stats

import "math"

// SD is the sample standard deviation (divisor n-1, the unbiased variance),
// 0 for fewer than 2 values. The two-arm test uses it for
// each arm's spread of unit shares.
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
