package stats

import (
	"math"
	"testing"
)

func TestWilsonReferenceValues(t *testing.T) {
	// Source: the project's statistics brief, "Per-turn pass rates": "10/10 →
	// [0.72, 1.00]; 9/10 → [0.60, 0.98]; 20/20 → [0.84, 1.00]", given to
	// 2 decimals, so each bound must round to the quoted value.
	cases := []struct {
		k, n   int
		lo, hi float64
	}{
		{10, 10, 0.72, 1.00},
		{9, 10, 0.60, 0.98},
		{20, 20, 0.84, 1.00},
	}
	for _, c := range cases {
		lo, hi := Wilson(c.k, c.n, Z95)
		if math.Abs(lo-c.lo) > 0.005 || math.Abs(hi-c.hi) > 0.005 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.2f, %.2f] to 2 decimals", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestWilsonHandComputed(t *testing.T) {
	// 5/10 by hand from the formula, z = 1.959964, z² = 3.841459:
	//   p = 0.5, z²/n = 0.3841459, denominator 1 + z²/n = 1.3841459
	//   center = (p + z²/2n) / 1.3841459 = (0.5 + 0.1920730) / 1.3841459 = 0.5
	//   p(1-p)/n = 0.025, z²/4n² = 3.841459/400 = 0.0096036
	//   half = z * sqrt(0.025 + 0.0096036) / 1.3841459
	//        = 1.959964 * 0.1860204 / 1.3841459 = 0.3645932 / 1.3841459 = 0.2634039
	//   interval = [0.5 - 0.2634, 0.5 + 0.2634] = [0.2366, 0.7634]
	lo, hi := Wilson(5, 10, Z95)
	if math.Abs(lo-0.2366) > 1e-4 || math.Abs(hi-0.7634) > 1e-4 {
		t.Errorf("Wilson(5, 10) = [%.5f, %.5f], want [0.2366, 0.7634]", lo, hi)
	}
	// k = n by hand: p = 1 makes p(1-p)/n vanish, so half = (z²/2n)/(1+z²/n)
	// and lo = 1/(1+z²/n) = n/(n+z²). For 2/2 (vibe-test's default run):
	// 2 / (2 + 3.841459) = 2 / 5.841459 = 0.342380.
	lo, hi = Wilson(2, 2, Z95)
	if math.Abs(lo-0.342380) > 1e-6 || hi != 1 {
		t.Errorf("Wilson(2, 2) = [%.6f, %.6f], want [0.342380, 1]", lo, hi)
	}
}

func TestWilsonBounds(t *testing.T) {
	if lo, hi := Wilson(0, 0, Z95); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0, 0) = [%v, %v], want [0, 1]", lo, hi)
	}
	for n := 1; n <= 200; n++ {
		for k := 0; k <= n; k++ {
			lo, hi := Wilson(k, n, Z95)
			p := float64(k) / float64(n)
			if !(0 <= lo && lo <= p && p <= hi && hi <= 1) {
				t.Fatalf("Wilson(%d, %d) = [%v, %v]: want 0 <= lo <= %v <= hi <= 1", k, n, lo, hi, p)
			}
		}
		if lo, _ := Wilson(0, n, Z95); lo != 0 {
			t.Errorf("Wilson(0, %d) lo = %v, want exactly 0", n, lo)
		}
		if _, hi := Wilson(n, n, Z95); hi != 1 {
			t.Errorf("Wilson(%d, %d) hi = %v, want exactly 1", n, n, hi)
		}
	}
}

func TestWilsonPanicsOnInvalidCounts(t *testing.T) {
	for _, c := range [][2]int{{-1, 3}, {4, 3}, {0, -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Wilson(%d, %d) did not panic", c[0], c[1])
				}
			}()
			Wilson(c[0], c[1], Z95)
		}()
	}
}
