package stats

import (
	"math"
	"math/big"
	"testing"
)

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

func TestPanicsOnNegativeCounts(t *testing.T) {
	for name, f := range map[string]func(){
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

// BenchmarkFisherGreater times the one-sided test at the sizes the eval's
// grade-error check meets: a few errors among hundreds of grades a side.
func BenchmarkFisherGreater(b *testing.B) {
	for b.Loop() {
		FisherGreater(9, 351, 4, 716)
	}
}

// TestFisherTableNumeratorsAreTheBinomialProducts holds the recurrence
// fisherTable steps by against the definition, C(a+b, x) * C(c+d, a+c-x),
// on every table with cells up to 9 and a few large ones, and ratFloat's
// rounding against big.Rat's, to the bit.
func TestFisherTableNumeratorsAreTheBinomialProducts(t *testing.T) {
	check := func(a, b, c, d int) {
		lo, nums, den := fisherTable("test", a, b, c, d)
		r1, r2, c1 := a+b, c+d, a+c
		for i, got := range nums {
			x := lo + i
			want := new(big.Int).Binomial(int64(r1), int64(x))
			want.Mul(want, new(big.Int).Binomial(int64(r2), int64(c1-x)))
			if got.Cmp(want) != 0 {
				t.Fatalf("[[%d %d] [%d %d]] x=%d: numerator %v, want %v", a, b, c, d, x, got, want)
			}
			f := ratFloat(got, den)
			if r, _ := new(big.Rat).SetFrac(got, den).Float64(); f != r {
				t.Fatalf("[[%d %d] [%d %d]] x=%d: ratFloat %v, big.Rat %v", a, b, c, d, x, f, r)
			}
		}
		if len(nums) != min(r1, c1)-lo+1 {
			t.Fatalf("[[%d %d] [%d %d]]: %d numerators from x=%d, want up to %d", a, b, c, d, len(nums), lo, min(r1, c1))
		}
	}
	for a := 0; a <= 9; a++ {
		for b := 0; b <= 9; b++ {
			for c := 0; c <= 9; c++ {
				for d := 0; d <= 9; d++ {
					check(a, b, c, d)
				}
			}
		}
	}
	check(9, 351, 4, 716)
	check(300, 700, 650, 350)
	check(600, 400, 100, 900)
}
