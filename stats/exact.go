package stats

import (
	"fmt"
	"math"
	"math/big"
)

// The tests here are computed in exact integer arithmetic (math/big) and
// rounded once to float64 at the end: counts in vibe-test are small, and an
// exact test whose p-value carries floating error at the 0.05 boundary is
// not exact any more (0.5^5 must compare equal to 0.03125).

// SignTest is the exact one-sided sign test (exact McNemar) on discordant
// pairs: b conversations passed at the baseline and failed at the probe, c
// did the reverse. Under "no decay" each discordant pair goes either way
// with probability 1/2, so the p-value is P(X >= b) for X ~ Binomial(b+c,
// 1/2). Concordant pairs carry no information about the direction and are
// ignored, as McNemar's test does. It returns 1 when b+c == 0 and panics on
// negative counts.
func SignTest(b, c int) float64 {
	if b < 0 || c < 0 {
		panic(fmt.Sprintf("stats.SignTest: negative counts b=%d c=%d", b, c))
	}
	n := b + c
	if n == 0 || b == 0 {
		return 1
	}
	num := new(big.Int)
	coef := big.NewInt(1) // C(n, j), updated in place
	for j := 0; j <= n; j++ {
		if j >= b {
			num.Add(num, coef)
		}
		// C(n, j+1) = C(n, j) * (n-j) / (j+1), exact in integers.
		coef.Mul(coef, big.NewInt(int64(n-j)))
		coef.Quo(coef, big.NewInt(int64(j+1)))
	}
	den := new(big.Int).Lsh(big.NewInt(1), uint(n))
	return ratFloat(num, den)
}

// MinDiscordantForSignificance is the smallest number of discordant pairs,
// all one way, for which SignTest <= alpha: ceil(log2(1/alpha)), so 5 for
// alpha = 0.05. Below it the paired test cannot be significant whatever the
// data, which is why a run with fewer conversations must report
// "underpowered". It returns 0 for alpha >= 1 and -1 for alpha <= 0 (never).
func MinDiscordantForSignificance(alpha float64) int {
	if alpha <= 0 || math.IsNaN(alpha) {
		return -1
	}
	// SignTest(n, 0) = 2^-n; float64 goes down to 2^-1074.
	for n := 0; n <= 1074; n++ {
		if SignTest(n, 0) <= alpha {
			return n
		}
	}
	return -1
}

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
	for x := lo; x <= hi; x++ {
		t := new(big.Int).Binomial(int64(r1), int64(x))
		t.Mul(t, new(big.Int).Binomial(int64(r2), int64(c1-x)))
		nums = append(nums, t)
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

// ratFloat rounds num/den to the nearest float64.
func ratFloat(num, den *big.Int) float64 {
	f, _ := new(big.Rat).SetFrac(num, den).Float64()
	return f
}

// binomUpper is P(X >= k) for X ~ Binomial(n, p), in floating point (used
// by FixedN, where n can be large and p is any real). It sums the pmf away
// from the mean on whichever side k lies, where the terms fall
// monotonically, and stops once they no longer change the sum; the result
// carries a relative error of order 1e-13, far below anything the tests
// resolve.
func binomUpper(n, k int, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	lgn, _ := math.Lgamma(float64(n) + 1)
	pmf := func(j int) float64 {
		a, _ := math.Lgamma(float64(j) + 1)
		b, _ := math.Lgamma(float64(n-j) + 1)
		return math.Exp(lgn - a - b + float64(j)*lp + float64(n-j)*lq)
	}
	if float64(k) > float64(n)*p {
		// Right tail: for j >= k > np the pmf decreases in j.
		sum := 0.0
		for j := k; j <= n; j++ {
			t := pmf(j)
			sum += t
			if t <= sum*1e-17 {
				break
			}
		}
		return sum
	}
	// k <= np: P(X >= k) = 1 - P(X <= k-1); for j <= k-1 < (n+1)p the pmf
	// decreases as j goes down.
	sum := 0.0
	for j := k - 1; j >= 0; j-- {
		t := pmf(j)
		sum += t
		if t <= sum*1e-17 {
			break
		}
	}
	return 1 - sum
}
