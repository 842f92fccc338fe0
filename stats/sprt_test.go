package stats

import (
	"math"
	"math/big"
	"testing"
)

// collapse is the configuration the brief asks to simulate: a noise floor
// of 5%, a collapse to 50% decayed conversations, alpha 0.05, beta 0.2,
// at most 60 conversations.
var collapse = SPRT{P0: 0.05, P1: 0.5, Alpha: 0.05, Beta: 0.2, Max: 60}

func TestSPRTValidate(t *testing.T) {
	if err := collapse.Validate(); err != nil {
		t.Fatalf("valid SPRT rejected: %v", err)
	}
	bad := []SPRT{
		{P0: 0, P1: 0.5, Alpha: 0.05, Beta: 0.2, Max: 10},
		{P0: 0.5, P1: 0.5, Alpha: 0.05, Beta: 0.2, Max: 10},
		{P0: 0.05, P1: 1, Alpha: 0.05, Beta: 0.2, Max: 10},
		{P0: 0.05, P1: 0.5, Alpha: 0, Beta: 0.2, Max: 10},
		{P0: 0.05, P1: 0.5, Alpha: 0.5, Beta: 0.2, Max: 10},
		{P0: 0.05, P1: 0.5, Alpha: 0.05, Beta: 0, Max: 10},
		{P0: 0.05, P1: 0.5, Alpha: 0.05, Beta: 0.6, Max: 10},
		{P0: 0.05, P1: 0.5, Alpha: 0.05, Beta: 0.2, Max: 0},
		{P0: math.NaN(), P1: 0.5, Alpha: 0.05, Beta: 0.2, Max: 10},
	}
	for _, s := range bad {
		if s.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", s)
		}
	}
}

func TestSPRTBoundsAndSteps(t *testing.T) {
	// Wald's bounds: A = ln((1-0.2)/0.05) = ln 16, B = ln(0.2/0.95).
	upper, lower := collapse.Bounds()
	if math.Abs(upper-math.Log(16)) > 1e-12 || math.Abs(lower-math.Log(0.2/0.95)) > 1e-12 {
		t.Fatalf("Bounds = (%v, %v), want (ln 16, ln(0.2/0.95))", upper, lower)
	}
	// Each decayed conversation adds ln(0.5/0.05) = ln 10 = 2.303, each held
	// one ln(0.5/0.95) = -0.642. Two decayed: 4.605 >= ln 16 = 2.773.
	st := collapse.Update(SPRTState{}, true)
	if st.Decision != DecisionContinue || st.N != 1 || st.Decayed != 1 || math.Abs(st.LLR-math.Log(10)) > 1e-12 {
		t.Fatalf("after one decayed: %+v", st)
	}
	st = collapse.Update(st, true)
	if st.Decision != DecisionDecay || st.N != 2 {
		t.Fatalf("after two decayed: %+v, want decay at N=2", st)
	}
	// A decided state ignores further observations.
	if again := collapse.Update(st, false); again != st {
		t.Errorf("Update after a decision changed the state: %+v -> %+v", st, again)
	}
	// Three held: 3 * -0.642 = -1.926 <= ln(0.2/0.95) = -1.558; two are
	// not enough (-1.284).
	st = SPRTState{}
	for i := range 3 {
		st = collapse.Update(st, false)
		want := DecisionContinue
		if i == 2 {
			want = DecisionNoDecay
		}
		if st.Decision != want {
			t.Fatalf("after %d held: %+v, want %s", i+1, st, want)
		}
	}
	// One decayed and one held stays between the bounds (2.303 - 0.642 =
	// 1.661); with Max 2 that is a cap.
	capped := collapse
	capped.Max = 2
	st = capped.Update(capped.Update(SPRTState{}, true), false)
	if st.Decision != DecisionCap {
		t.Errorf("Max reached between the bounds: %+v, want cap", st)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		baseline         bool
		probes           []bool
		decayed, counted bool
	}{
		{true, []bool{true, true, true}, false, true},
		{true, []bool{true, false, true}, true, true},
		{false, []bool{true, true, true}, false, false},
		{true, nil, false, false},
	}
	for _, c := range cases {
		d, ok := Classify(c.baseline, c.probes)
		if d != c.decayed || ok != c.counted {
			t.Errorf("Classify(%v, %v) = (%v, %v), want (%v, %v)", c.baseline, c.probes, d, ok, c.decayed, c.counted)
		}
	}
}

func TestSPRTSimulation(t *testing.T) {
	const runs = 20000
	n, k := FixedN(collapse.P0, collapse.P1, collapse.Alpha, collapse.Beta)
	meanN0, decay0, cap0 := Simulate(collapse, collapse.P0, runs, 1)
	meanN1, decay1, cap1 := Simulate(collapse, collapse.P1, runs, 2)
	falseAlarm := decay0 // decided "decay" when nothing decayed
	miss := 1 - decay1   // did not decide "decay" under a collapse (caps count as misses)
	t.Logf("SPRT p0=%.2f p1=%.2f alpha=%.2f beta=%.2f cap=%d, %d runs each:", collapse.P0, collapse.P1, collapse.Alpha, collapse.Beta, collapse.Max, runs)
	t.Logf("  under H0: mean N = %.3f, false-alarm rate = %.4f, cap rate = %.4f", meanN0, falseAlarm, cap0)
	t.Logf("  under H1: mean N = %.3f, miss rate = %.4f, cap rate = %.4f", meanN1, miss, cap1)
	t.Logf("  fixed-n exact binomial test for the same errors: n = %d (reject when decayed >= %d)", n, k)
	if falseAlarm > collapse.Alpha+0.02 {
		t.Errorf("false-alarm rate %.4f > alpha + 0.02 = %.2f", falseAlarm, collapse.Alpha+0.02)
	}
	if miss > collapse.Beta+0.03 {
		t.Errorf("miss rate %.4f > beta + 0.03 = %.2f", miss, collapse.Beta+0.03)
	}
	if meanN0 >= float64(n) || meanN1 >= float64(n) {
		t.Errorf("mean N (H0 %.3f, H1 %.3f) not below fixed n = %d", meanN0, meanN1, n)
	}
	// Deterministic for a seed.
	if m, d, c := Simulate(collapse, collapse.P0, runs, 1); m != meanN0 || d != decay0 || c != cap0 {
		t.Errorf("Simulate not deterministic for a fixed seed")
	}
}

func TestFixedNCollapse(t *testing.T) {
	n, k := FixedN(0.05, 0.5, 0.05, 0.2)
	if n != 5 || k != 2 {
		t.Fatalf("FixedN(0.05, 0.5, 0.05, 0.2) = (%d, %d), want (5, 2)", n, k)
	}
	// Verified with exact binomial tails (rationals, not the package's
	// floating code), p0 = 1/20, p1 = 1/2:
	//   size:  P(X >= 2 | n=5, 1/20) = 1 - (19/20)^5 - 5(1/20)(19/20)^4
	//                                = 1 - 0.77378 - 0.20363 = 0.02259 <= 0.05
	//   k is the smallest such count: P(X >= 1 | n=5, 1/20) = 1 - (19/20)^5 = 0.226 > 0.05
	//   power: P(X >= 2 | n=5, 1/2) = 1 - 1/32 - 5/32 = 26/32 = 0.8125 >= 0.8
	//   n = 4 falls short: k = 2 (P(X >= 2 | 4, 1/20) = 0.0140, P(X >= 1) = 0.185),
	//   power P(X >= 2 | 4, 1/2) = 11/16 = 0.6875 < 0.8.
	p0, p1 := big.NewRat(1, 20), big.NewRat(1, 2)
	alpha, power := big.NewRat(1, 20), big.NewRat(4, 5)
	if exactUpper(5, 2, p0).Cmp(alpha) > 0 || exactUpper(5, 1, p0).Cmp(alpha) <= 0 {
		t.Errorf("k = 2 is not the exact critical count at n = 5")
	}
	if got := exactUpper(5, 2, p1); got.Cmp(big.NewRat(26, 32)) != 0 || got.Cmp(power) < 0 {
		t.Errorf("exact power at n = 5 is %s, want 26/32", got.FloatString(5))
	}
	if exactUpper(4, 2, p1).Cmp(power) >= 0 {
		t.Errorf("n = 4 reaches the power, so 5 is not the smallest")
	}
}

func TestFixedNMatchesExactSearch(t *testing.T) {
	// Brute force in exact rationals over a few configurations.
	cases := []struct{ p0, p1, alpha, beta string }{
		{"1/20", "1/2", "1/20", "1/5"},
		{"1/20", "3/10", "1/20", "1/5"},
		{"1/20", "1/4", "1/10", "1/10"},
		{"1/10", "2/5", "1/20", "1/5"},
	}
	for _, c := range cases {
		r := func(s string) *big.Rat { x, _ := new(big.Rat).SetString(s); return x }
		f := func(s string) float64 { x, _ := r(s).Float64(); return x }
		wantN, wantK := 0, 0
		power := new(big.Rat).Sub(big.NewRat(1, 1), r(c.beta))
	search:
		for n := 1; n <= 200; n++ {
			for k := 0; k <= n; k++ {
				if exactUpper(n, k, r(c.p0)).Cmp(r(c.alpha)) <= 0 {
					if exactUpper(n, k, r(c.p1)).Cmp(power) >= 0 {
						wantN, wantK = n, k
						break search
					}
					break // smallest k of size alpha has the most power
				}
			}
		}
		n, k := FixedN(f(c.p0), f(c.p1), f(c.alpha), f(c.beta))
		if n != wantN || k != wantK {
			t.Errorf("FixedN(%s, %s, %s, %s) = (%d, %d), exact search gives (%d, %d)", c.p0, c.p1, c.alpha, c.beta, n, k, wantN, wantK)
		}
	}
	if n, k := FixedN(0.5, 0.05, 0.05, 0.2); n != 0 || k != 0 {
		t.Errorf("FixedN with p1 < p0 = (%d, %d), want (0, 0)", n, k)
	}
}
