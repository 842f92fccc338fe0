package stats

import (
	"fmt"
	"math/big"
)

// The tests here are computed in exact integer arithmetic (math/big) and
// rounded once to float64 at the end: counts in vibe-test are small, and an
// exact test whose p-value carries floating error at the 0.05 boundary is
// not exact any more.

// fisherTable returns, for the 2x2 table [[a, b], [c, d]] with its margins
// fixed, the smallest feasible value of the top-left cell, the numerators
// C(a+b, x) * C(c+d, a+c-x) of the hypergeometric probabilities for every
// feasible x in order, and their common denominator C(n, a+c).
func fisherTable(name string, a, b, c, d int) (lo int, nums []*big.Int, den *big.Int) {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		panic(fmt.Sprintf("stats.%s: negative cell in [[%d %d] [%d %d]]", name, a, b, c, d))
	}
	r1, r2, c1 := a+b, c+d, a+c
	n := r1 + r2
	lo = max(0, c1-r2)
	hi := min(r1, c1)
	// One binomial product at lo, then each next numerator from the last:
	// t(x+1) = t(x) * (r1-x)(c1-x) / ((x+1)(r2-c1+x+1)), a division that is
	// always exact because t(x+1) is an integer. Small-integer steps instead
	// of two big binomials per x: the eval's grade-error check calls this
	// for every measure of every simulated decision.
	t := new(big.Int).Binomial(int64(r1), int64(lo))
	t.Mul(t, new(big.Int).Binomial(int64(r2), int64(c1-lo)))
	nums = make([]*big.Int, 0, hi-lo+1)
	nums = append(nums, t)
	up, down := new(big.Int), new(big.Int)
	for x := lo; x < hi; x++ {
		up.SetInt64(int64(r1-x) * int64(c1-x))
		down.SetInt64(int64(x+1) * int64(r2-c1+x+1))
		next := new(big.Int).Mul(nums[len(nums)-1], up)
		nums = append(nums, next.Quo(next, down))
	}
	return lo, nums, new(big.Int).Binomial(int64(n), int64(c1))
}

// FisherLess is the one-sided Fisher exact p-value that group 1 (row [a,
// b], a successes) has a lower success rate than group 2 (row [c, d]):
// P(X <= a) for the top-left cell X under fixed margins (hypergeometric).
// Use it for "the diluted probe passes less often than the fresh one".
func FisherLess(a, b, c, d int) float64 {
	lo, nums, den := fisherTable("FisherLess", a, b, c, d)
	sum := new(big.Int)
	for i := 0; i <= a-lo; i++ {
		sum.Add(sum, nums[i])
	}
	return ratFloat(sum, den)
}

// FisherGreater is the one-sided Fisher exact p-value that group 1 has a
// higher success rate than group 2: P(X >= a), the right tail.
func FisherGreater(a, b, c, d int) float64 {
	lo, nums, den := fisherTable("FisherGreater", a, b, c, d)
	sum := new(big.Int)
	for i := a - lo; i < len(nums); i++ {
		sum.Add(sum, nums[i])
	}
	return ratFloat(sum, den)
}

// FisherTwoSided is the two-sided Fisher exact p-value as R's fisher.test
// and scipy.stats.fisher_exact define it: the total probability of the
// tables (same margins) no more likely than the observed one, where "no
// more likely" allows a relative tolerance of 1e-7 so that ties are kept.
// Here the probabilities share a denominator and the comparison is made on
// exact integers: num * 10^7 <= obs * (10^7 + 1).
func FisherTwoSided(a, b, c, d int) float64 {
	lo, nums, den := fisherTable("FisherTwoSided", a, b, c, d)
	scale := big.NewInt(10_000_000)
	limit := new(big.Int).Mul(nums[a-lo], big.NewInt(10_000_001))
	sum := new(big.Int)
	t := new(big.Int)
	for _, num := range nums {
		if t.Mul(num, scale).Cmp(limit) <= 0 {
			sum.Add(sum, num)
		}
	}
	return ratFloat(sum, den)
}

// ratFloat rounds num/den to the nearest float64. The integers convert to
// big.Float exactly (a zero precision takes their bit length) and Quo
// rounds the exact quotient once to 53 bits, as big.Rat would, without
// reducing the fraction by its greatest common divisor first (the costly
// step here). Below the normal range Float64 would round a second time, so
// such a quotient goes through big.Rat.
func ratFloat(num, den *big.Int) float64 {
	f, _ := new(big.Float).SetPrec(53).Quo(new(big.Float).SetInt(num), new(big.Float).SetInt(den)).Float64()
	if f != 0 && f >= 0x1p-1022 {
		return f
	}
	f, _ = new(big.Rat).SetFrac(num, den).Float64()
	return f
}
