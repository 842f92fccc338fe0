package stats

import (
	"math"
	"math/big"
	"testing"
)

func TestSignTestReferenceValues(t *testing.T) {
	cases := []struct {
		b, c int
		want float64
		src  string
	}{
		// STATISTICS.md: "at least 5 discordant pairs, all one way, to reach
		// p ≤ 0.05 (0.5^5 = 0.031)".
		{5, 0, 0.03125, "0.5^5"},
		// P(X >= 2), X ~ Bin(2, 1/2): only HH, 1/4.
		{2, 0, 0.25, "0.5^2"},
		// P(X >= 4), X ~ Bin(5, 1/2) = (C(5,4) + C(5,5)) / 32 = 6/32.
		{4, 1, 0.1875, "6/32"},
		// 4 all one way is not enough: 0.5^4.
		{4, 0, 0.0625, "0.5^4"},
		// No discordant pairs, or none against the probe: no evidence.
		{0, 0, 1, "defined as 1"},
		{0, 3, 1, "P(X >= 0) = 1"},
	}
	for _, c := range cases {
		// Exact comparison: the test is computed in integers and rounded
		// once, and these values are dyadic.
		if got := SignTest(c.b, c.c); got != c.want {
			t.Errorf("SignTest(%d, %d) = %v, want %v (%s)", c.b, c.c, got, c.want, c.src)
		}
	}
}

func TestSignTestComplement(t *testing.T) {
	// P(X >= b) + P(X <= b-1) = 1, and P(X <= b-1) = P(n-X >= c+1) with n-X
	// also Bin(n, 1/2): SignTest(b, c) + SignTest(c+1, b-1) = 1.
	for n := 1; n <= 60; n++ {
		for b := 1; b <= n; b++ {
			c := n - b
			if s := SignTest(b, c) + SignTest(c+1, b-1); math.Abs(s-1) > 1e-15 {
				t.Fatalf("SignTest(%d,%d)+SignTest(%d,%d) = %v, want 1", b, c, c+1, b-1, s)
			}
		}
	}
}

func TestMinDiscordantForSignificance(t *testing.T) {
	cases := []struct {
		alpha float64
		want  int
	}{
		{0.05, 5},    // STATISTICS.md: "needs at least 5 discordant pairs"
		{0.03125, 5}, // 0.5^5 exactly: the bound is inclusive
		{0.01, 7},    // 0.5^6 = 0.0156 > 0.01 >= 0.5^7 = 0.0078
		{0.5, 1},
		{1, 0},
		{0, -1},
	}
	for _, c := range cases {
		if got := MinDiscordantForSignificance(c.alpha); got != c.want {
			t.Errorf("MinDiscordantForSignificance(%v) = %d, want %d", c.alpha, got, c.want)
		}
	}
}

func TestFisherReferenceValues(t *testing.T) {
	cases := []struct {
		name       string
		got, want  float64
		tol        float64
		derivation string
	}{
		// STATISTICS.md: "0/4 vs 4/4 gives two-sided p = 0.029". Margins
		// 4,4 | 4,4: C(8,4) = 70 tables weighted; the two extremes each
		// have weight 1 and are the only ones as unlikely: 2/70 = 0.02857.
		{"0/4 vs 4/4 two-sided", FisherTwoSided(0, 4, 4, 0), 2.0 / 70, 1e-15, "2/70"},
		// STATISTICS.md: "0/3 vs 3/3 gives 0.10": C(6,3) = 20, two
		// extremes: 2/20.
		{"0/3 vs 3/3 two-sided", FisherTwoSided(0, 3, 3, 0), 0.1, 1e-15, "2/20"},
		// One-sided: only the observed extreme, 1/20.
		{"0/3 vs 3/3 less", FisherLess(0, 3, 3, 0), 0.05, 1e-15, "1/20"},
		{"3/3 vs 0/3 greater", FisherGreater(3, 0, 0, 3), 0.05, 1e-15, "1/20"},
		// R documentation, ?fisher.test, the "Tea Tasting" example,
		// matrix(c(3, 1, 1, 3), 2) with alternative = "greater": p-value =
		// 0.2429 (= (16 + 1)/70); two-sided 0.4857 (= 34/70).
		{"tea tasting greater", FisherGreater(3, 1, 1, 3), 0.2429, 5e-5, "R ?fisher.test"},
		{"tea tasting two-sided", FisherTwoSided(3, 1, 1, 3), 0.4857, 5e-5, "R fisher.test"},
		{"tea tasting greater exact", FisherGreater(3, 1, 1, 3), 17.0 / 70, 1e-15, "17/70"},
	}
	for _, c := range cases {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s = %v, want %v (%s)", c.name, c.got, c.want, c.derivation)
		}
	}
}

func TestFisherTwoPerArmNeverBelowOneThird(t *testing.T) {
	// STATISTICS.md: "nothing with n = 2 per arm can go below 0.33".
	// Enumerate every table with 2 per arm.
	lowest := 1.0
	for a := 0; a <= 2; a++ {
		for c := 0; c <= 2; c++ {
			p := FisherTwoSided(a, 2-a, c, 2-c)
			lowest = min(lowest, p)
			if one := FisherLess(a, 2-a, c, 2-c); one < 1.0/6-1e-9 {
				t.Errorf("FisherLess(%d/2 vs %d/2) = %v, below 1/6", a, c, one)
			}
		}
	}
	if lowest < 1.0/3-1e-9 {
		t.Errorf("min two-sided p with 2 per arm = %v, want >= 1/3", lowest)
	}
	// The minimum is reached by 0/2 vs 2/2: 2/C(4,2) = 2/6.
	if math.Abs(lowest-1.0/3) > 1e-15 {
		t.Errorf("min two-sided p with 2 per arm = %v, want exactly 1/3", lowest)
	}
}

func TestFisherTailsConsistent(t *testing.T) {
	// Less + Greater counts the observed table twice: Less + Greater =
	// 1 + P(observed); and the two-sided p is at least the smaller tail
	// and at most 1.
	for a := 0; a <= 6; a++ {
		for b := 0; b <= 6; b++ {
			for c := 0; c <= 6; c++ {
				for d := 0; d <= 6; d++ {
					l, g, two := FisherLess(a, b, c, d), FisherGreater(a, b, c, d), FisherTwoSided(a, b, c, d)
					pObs := hyperPMF(a, b, c, d)
					if math.Abs(l+g-1-pObs) > 1e-12 {
						t.Fatalf("[[%d %d] [%d %d]]: less %v + greater %v != 1 + %v", a, b, c, d, l, g, pObs)
					}
					if two < min(l, g)-1e-12 || two > 1+1e-12 {
						t.Fatalf("[[%d %d] [%d %d]]: two-sided %v outside [min tail %v, 1]", a, b, c, d, two, min(l, g))
					}
				}
			}
		}
	}
}

// hyperPMF is the probability of the observed table, computed with
// big.Rat independently of the package's code path.
func hyperPMF(a, b, c, d int) float64 {
	num := new(big.Int).Binomial(int64(a+b), int64(a))
	num.Mul(num, new(big.Int).Binomial(int64(c+d), int64(c)))
	den := new(big.Int).Binomial(int64(a+b+c+d), int64(a+c))
	f, _ := new(big.Rat).SetFrac(num, den).Float64()
	return f
}

func TestBinomUpperMatchesExact(t *testing.T) {
	// The floating tail used by FixedN against exact rational arithmetic.
	for _, p := range []string{"1/20", "1/2", "3/20", "9/10"} {
		pr, _ := new(big.Rat).SetString(p)
		pf, _ := pr.Float64()
		for n := 1; n <= 60; n++ {
			for k := 0; k <= n+1; k++ {
				want, _ := exactUpper(n, k, pr).Float64()
				got := binomUpper(n, k, pf)
				if math.Abs(got-want) > 1e-12*max(want, 1e-300) && math.Abs(got-want) > 1e-15 {
					t.Fatalf("binomUpper(%d, %d, %s) = %v, exact %v", n, k, p, got, want)
				}
			}
		}
	}
}

// exactUpper is P(X >= k) for X ~ Binomial(n, p) in exact arithmetic:
// with p = a/b, P(X >= k) = sum_{j>=k} C(n,j) a^j (b-a)^(n-j) / b^n, all in
// integers.
func exactUpper(n, k int, p *big.Rat) *big.Rat {
	a, b := p.Num(), p.Denom()
	q := new(big.Int).Sub(b, a)
	num := new(big.Int)
	for j := max(k, 0); j <= n; j++ {
		t := new(big.Int).Binomial(int64(n), int64(j))
		t.Mul(t, new(big.Int).Exp(a, big.NewInt(int64(j)), nil))
		t.Mul(t, new(big.Int).Exp(q, big.NewInt(int64(n-j)), nil))
		num.Add(num, t)
	}
	return new(big.Rat).SetFrac(num, new(big.Int).Exp(b, big.NewInt(int64(n)), nil))
}

func TestPanicsOnNegativeCounts(t *testing.T) {
	for name, f := range map[string]func(){
		"SignTest":       func() { SignTest(-1, 2) },
		"FisherLess":     func() { FisherLess(1, -1, 1, 1) },
		"FisherGreater":  func() { FisherGreater(1, 1, -1, 1) },
		"FisherTwoSided": func() { FisherTwoSided(1, 1, 1, -1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic on a negative count", name)
				}
			}()
			f()
		}()
	}
}
