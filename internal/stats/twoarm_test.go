package stats

import (
	"math"
	"testing"
)

// Reference values from printed t tables (two decimals or better).
func TestStudentTReferenceValues(t *testing.T) {
	cases := []struct{ q, df, t float64 }{
		{0.95, 1, 6.314}, {0.95, 2, 2.920}, {0.95, 5, 2.015}, {0.95, 10, 1.812},
		{0.975, 30, 2.042}, {0.99, 4, 3.747}, {0.8, 20, 0.860}, {0.95, 2.5, 2.5820},
	}
	for _, c := range cases {
		if c.df == 2.5 {
			continue // no table value; checked by inversion below
		}
		if got := StudentTCDF(c.t, c.df); math.Abs(got-c.q) > 5e-4 {
			t.Errorf("StudentTCDF(%v, %v) = %.5f, want %.3f", c.t, c.df, got, c.q)
		}
		if got := StudentTQuantile(c.q, c.df); math.Abs(got-c.t) > 2e-3 {
			t.Errorf("StudentTQuantile(%v, %v) = %.4f, want %.3f", c.q, c.df, got, c.t)
		}
	}
	for _, df := range []float64{1.3, 2.5, 7.7, 48} {
		for _, q := range []float64{0.6, 0.9, 0.95, 0.999} {
			x := StudentTQuantile(q, df)
			if got := StudentTCDF(x, df); math.Abs(got-q) > 1e-9 {
				t.Errorf("df %v: CDF(Quantile(%v)) = %v", df, q, got)
			}
		}
	}
	if got := StudentTCDF(0, 3); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("CDF(0) = %v", got)
	}
	// Large df approaches the normal: z(0.95) = 1.6449.
	if got := StudentTQuantile(0.95, 1e6); math.Abs(got-1.6449) > 1e-3 {
		t.Errorf("t(0.95, 1e6) = %v", got)
	}
}

// Welch's statistic by hand: diluted shares {0, 1/3, 1/3, 2/3}, fresh
// {1, 2/3, 1, 1}.
func TestCompareArmsByHand(t *testing.T) {
	d := []Unit{{0, 3}, {1, 3}, {1, 3}, {2, 3}}
	f := []Unit{{3, 3}, {2, 3}, {3, 3}, {3, 3}}
	r := CompareArms(d, f)
	if !r.Testable || r.Diluted.Units != 4 || r.Fresh.Units != 4 {
		t.Fatalf("not testable: %+v", r)
	}
	// Means 1/3 and 11/12; pooled 15/24 = 0.625, floor 0.625*0.375/3 =
	// 0.078125. Sample variances: diluted 2/27 = 0.0741 (below the floor,
	// so floored), fresh 1/36 = 0.0278 (floored).
	if math.Abs(r.Drop-(11.0/12-1.0/3)) > 1e-12 {
		t.Errorf("drop %v", r.Drop)
	}
	if !r.Diluted.Floored || !r.Fresh.Floored || math.Abs(r.Diluted.Var-0.078125) > 1e-12 {
		t.Errorf("floors: %+v %+v", r.Diluted, r.Fresh)
	}
	se := math.Sqrt(2 * 0.078125 / 4)
	if math.Abs(r.SE-se) > 1e-12 || math.Abs(r.DF-6) > 1e-9 {
		t.Errorf("se %v df %v, want %v and 6", r.SE, r.DF, se)
	}
	want := 1 - StudentTCDF((11.0/12-1.0/3)/se, 6)
	if math.Abs(r.P-want) > 1e-12 || r.P > 0.05 {
		t.Errorf("p %v, want %v (< 0.05)", r.P, want)
	}
}

func TestCompareArmsEdges(t *testing.T) {
	all := []Unit{{3, 3}, {3, 3}}
	if r := CompareArms(all, all); r.P != 1 || r.Drop != 0 {
		t.Errorf("all pass both arms: %+v", r)
	}
	if r := CompareArms([]Unit{{0, 3}}, all); r.Testable || r.P != 1 {
		t.Errorf("one diluted unit must not be testable: %+v", r)
	}
	// Units with nothing judged are not units.
	if r := CompareArms([]Unit{{0, 0}, {0, 0}, {0, 3}}, all); r.Diluted.Units != 1 || r.Testable {
		t.Errorf("empty units counted: %+v", r)
	}
	// Two diluted units at 2/3 against two fresh at 1: zero sample variance
	// would make any gap infinitely significant; the floor keeps p large.
	if r := CompareArms([]Unit{{2, 3}, {2, 3}}, all); r.P < 0.05 {
		t.Errorf("zero-variance arms called significant: p=%v", r.P)
	}
	// A collapse at n = 4 per arm is significant.
	none := []Unit{{0, 3}, {0, 3}, {0, 3}, {0, 3}}
	four := []Unit{{3, 3}, {3, 3}, {3, 3}, {3, 3}}
	if r := CompareArms(none, four); r.P > 0.01 {
		t.Errorf("collapse not significant: p=%v", r.P)
	}
	// Improvement is never decay.
	if r := CompareArms(four, none); r.P < 0.5 {
		t.Errorf("diluted better than fresh gave p=%v", r.P)
	}
}

func TestMinDetectableDropShrinksWithN(t *testing.T) {
	mk := func(n int) []Unit {
		var u []Unit
		for i := range n {
			u = append(u, Unit{Passed: 2 + i%2, Judged: 3})
		}
		return u
	}
	a := MinDetectableDrop(CompareArms(mk(4), mk(4)), 0.05, 0.8)
	b := MinDetectableDrop(CompareArms(mk(16), mk(16)), 0.05, 0.8)
	if !(b < a) || !(b > 0) {
		t.Errorf("MDD at n=4 %v, n=16 %v: expected it to shrink", a, b)
	}
	if n := UnitsForDrop(CompareArms(mk(4), mk(4)), b, 0.05, 0.8); n < 10 || n > 24 {
		t.Errorf("units for the n=16 MDD from an n=4 run: %d, expected about 16", n)
	}
	if !math.IsInf(MinDetectableDrop(CompareArms(mk(1), mk(4)), 0.05, 0.8), 1) {
		t.Error("an untestable comparison has no detectable drop")
	}
}
