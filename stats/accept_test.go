package stats

import (
	"math"
	"testing"
)

func TestAcceptMargin(t *testing.T) {
	// Brief: seed 000's SD 0.052 with n = 5/5: 2 * 0.052 * sqrt(0.4) =
	// 0.104 * 0.6324555 = 0.0657754.
	if got := AcceptMargin(0.052, 5, 5); math.Abs(got-0.0657754) > 1e-6 {
		t.Errorf("AcceptMargin(0.052, 5, 5) = %v, want 0.0658", got)
	}
	// The project's design notes on the rule: "2 × 0.052 ×
	// √(1/3 + 1/6), a margin of 0.074".
	if got := AcceptMargin(0.052, 3, 6); math.Abs(got-0.074) > 0.0005 {
		t.Errorf("AcceptMargin(0.052, 3, 6) = %v, want 0.074", got)
	}
	if got := AcceptMargin(0.052, 0, 5); !math.IsNaN(got) {
		t.Errorf("AcceptMargin with nCand = 0 = %v, want NaN", got)
	}
}

func TestBinomialSE(t *testing.T) {
	// sqrt(0.5 * 0.5 / 25) = 0.5 / 5 = 0.1, so two SEs = 0.20, the top of
	// seed 000's "a margin of 0.14 to 0.20".
	if got := BinomialSE(0.5, 25); math.Abs(got-0.1) > 1e-15 {
		t.Errorf("BinomialSE(0.5, 25) = %v, want 0.1", got)
	}
	// sqrt(0.9 * 0.1 / 100) = sqrt(0.0009) = 0.03.
	if got := BinomialSE(0.9, 100); math.Abs(got-0.03) > 1e-15 {
		t.Errorf("BinomialSE(0.9, 100) = %v, want 0.03", got)
	}
	if got := BinomialSE(1, 10); got != 0 {
		t.Errorf("BinomialSE(1, 10) = %v, want 0", got)
	}
	if got := BinomialSE(0.5, 0); !math.IsNaN(got) {
		t.Errorf("BinomialSE(0.5, 0) = %v, want NaN", got)
	}
}

func TestSD(t *testing.T) {
	// The classic textbook set 2,4,4,4,5,5,7,9: mean 5, squared deviations
	// sum to 32, population SD 2, sample SD sqrt(32/7) = 2.13809.
	if got := SD([]float64{2, 4, 4, 4, 5, 5, 7, 9}); math.Abs(got-math.Sqrt(32.0/7)) > 1e-12 {
		t.Errorf("SD = %v, want sqrt(32/7)", got)
	}
	// Seed 000's two baseline totals, 0.737 and 0.695, "differed by
	// 0.042": the SD of two values is |difference| / sqrt 2 = 0.029698.
	if got := SD([]float64{0.737, 0.695}); math.Abs(got-0.042/math.Sqrt2) > 1e-12 {
		t.Errorf("SD of seed 000's two runs = %v, want 0.042/sqrt(2)", got)
	}
	if SD(nil) != 0 || SD([]float64{0.7}) != 0 {
		t.Error("SD of fewer than 2 values is not 0")
	}
}

// outcomes returns n outcomes of which pass are true.
func outcomes(pass, n int) []bool {
	o := make([]bool, n)
	for i := range pass {
		o[i] = true
	}
	return o
}

func TestAcceptBothWays(t *testing.T) {
	// Seed 000 checked its rule both ways: a second baseline run passes
	// against the first, the empty-skill control fails. Totals and M5
	// rates from its noise table (run 1 0.737 / 0.67, run 2 0.695 / 0.69,
	// control 0.438 / 0.21); rates over 48 outcomes, totals as 3
	// conversations at the run's mean.
	base := Sample{
		Totals: []float64{0.737, 0.737, 0.737},
		Rates:  map[string][]bool{"M5": outcomes(32, 48)}, // 0.667
	}
	second := Sample{
		Totals: []float64{0.695, 0.695, 0.695},
		Rates:  map[string][]bool{"M5": outcomes(33, 48)}, // 0.688
	}
	control := Sample{
		Totals: []float64{0.438, 0.438, 0.438},
		Rates:  map[string][]bool{"M5": outcomes(10, 48)}, // 0.208
	}
	const sd = 0.052
	if acc := Accept(base, second, sd); !acc.Pass || !acc.TotalPass {
		t.Errorf("second baseline rejected: %+v", acc)
	}
	acc := Accept(base, control, sd)
	if acc.Pass || acc.TotalPass || acc.Criteria[0].Pass {
		t.Errorf("control accepted: %+v", acc)
	}
	// Margin for 3 vs 3 at sd 0.052: 2 * 0.052 * sqrt(2/3) = 0.0849.
	if math.Abs(acc.Margin-0.104*math.Sqrt(2.0/3)) > 1e-12 {
		t.Errorf("margin = %v, want 0.0849", acc.Margin)
	}
	// A criterion the candidate lacks fails.
	missing := Sample{Totals: second.Totals}
	if acc := Accept(base, missing, sd); acc.Pass {
		t.Errorf("candidate without M5 accepted: %+v", acc)
	}
}
