package stats

import (
	"math"
	"testing"
)

// units makes ProbeUnits from strings of P, F and - (missing).
func units(specs ...string) []ProbeUnit {
	var out []ProbeUnit
	for _, s := range specs {
		u := make(ProbeUnit, len(s))
		for k, c := range s {
			switch c {
			case 'P':
				u[k] = Pass
			case 'F':
				u[k] = Fail
			default:
				u[k] = Missing
			}
		}
		out = append(out, u)
	}
	return out
}

// With every probe of every unit judged, the per-probe rate is the mean
// unit share and the test is exactly Welch's on the shares (by hand:
// diluted shares {0, 1/3, 1/3, 2/3}, fresh {1, 2/3, 1, 1}).
func TestCompareProbesCompleteIsWelchOnShares(t *testing.T) {
	d := units("FFF", "PFF", "FPF", "PPF")
	f := units("PPP", "PFP", "PPP", "PPP")
	r := CompareProbes(d, f)
	if !r.Testable || r.Diluted.Units != 4 || r.Fresh.Units != 4 {
		t.Fatalf("not testable: %+v", r)
	}
	if math.Abs(r.Drop-(11.0/12-1.0/3)) > 1e-12 || math.Abs(r.Diluted.Mean-1.0/3) > 1e-12 {
		t.Errorf("drop %v, diluted rate %v", r.Drop, r.Diluted.Mean)
	}
	// Per probe pooled rates 6/8, 5/8 and 4/8: the floor of an arm's rate
	// is (1/3)^2 * sum p(1-p)/4, or per unit (Var) 4 times that, 0.0747;
	// the sample variances (2/27 and 1/36) are below it: both floored.
	floor := (0.75*0.25 + 0.625*0.375 + 0.5*0.5) / 9
	if !r.Diluted.Floored || !r.Fresh.Floored || math.Abs(r.Diluted.Var-floor) > 1e-12 {
		t.Errorf("floors: %+v %+v, want %v", r.Diluted, r.Fresh, floor)
	}
	se := math.Sqrt(2 * floor / 4)
	if math.Abs(r.SE-se) > 1e-12 || math.Abs(r.DF-6) > 1e-9 {
		t.Errorf("se %v df %v, want %v and 6", r.SE, r.DF, se)
	}
	if want := 1 - StudentTCDF((11.0/12-1.0/3)/se, 6); math.Abs(r.P-want) > 1e-12 {
		t.Errorf("p %v, want %v", r.P, want)
	}
	// Unfloored, the cluster variance is the sample variance of the shares.
	d2 := units("FFF", "PPP", "PFF", "PPF", "FFP", "PPP")
	f2 := units("FFF", "PPP", "PFF", "PPF", "FFP", "PPP")
	r2 := CompareProbes(d2, f2)
	shares := []float64{0, 1, 1.0 / 3, 2.0 / 3, 1.0 / 3, 1}
	if sd := SD(shares); r2.Diluted.Floored || math.Abs(r2.Diluted.Var-sd*sd) > 1e-12 {
		t.Errorf("unfloored variance %v, want %v (floored %v)", r2.Diluted.Var, sd*sd, r2.Diluted.Floored)
	}
}

// A conversation cut short keeps only its early probes. Scored by its
// share, a hard first probe would pull the diluted arm down; per probe,
// each probe is compared with itself.
func TestCompareProbesMissingLaterProbes(t *testing.T) {
	// Probe 1 is hard (half pass), probes 2 and 3 always pass, the same in
	// both arms; half the diluted conversations lost probes 2 and 3.
	d := units("PPP", "FPP", "P--", "F--", "PPP", "FPP", "P--", "F--")
	f := units("PPP", "FPP", "PPP", "FPP", "PPP", "FPP", "PPP", "FPP")
	r := CompareProbes(d, f)
	if math.Abs(r.Drop) > 1e-12 || r.P < 0.5 {
		t.Errorf("the same rates per probe gave drop %v p %v", r.Drop, r.P)
	}
	// Per-unit shares would have said otherwise: diluted mean share 2/3,
	// fresh 5/6.
	var sum float64
	for _, u := range d {
		p, j := 0, 0
		for _, y := range u {
			if y != Missing {
				j++
				p += int(y)
			}
		}
		sum += float64(p) / float64(j)
	}
	if mean := sum / 8; math.Abs(mean-2.0/3) > 1e-12 {
		t.Errorf("check of the shares' mean: %v", mean)
	}
	// A probe no diluted unit reached is left out of both arms.
	d3 := units("PP-", "FP-", "PP-")
	f3 := units("PPF", "PPF", "FPF")
	r3 := CompareProbes(d3, f3)
	if math.Abs(r3.Fresh.Mean-(2.0/3+1)/2) > 1e-12 || r3.Fresh.Probes != 6 {
		t.Errorf("probe 3 should be left out: fresh %+v", r3.Fresh)
	}
}

func TestCompareProbesEdges(t *testing.T) {
	all := units("PPP", "PPP")
	if r := CompareProbes(all, all); r.P != 1 || r.Drop != 0 || !r.Testable {
		t.Errorf("all pass both arms: %+v", r)
	}
	if r := CompareProbes(units("FFF"), all); r.Testable || r.P != 1 {
		t.Errorf("one diluted unit must not be testable: %+v", r)
	}
	if r := CompareProbes(units("---", "---", "FFF"), all); r.Diluted.Units != 1 || r.Testable {
		t.Errorf("empty units counted: %+v", r)
	}
	if r := CompareProbes(units("PPF", "PPF"), all); r.P < 0.05 {
		t.Errorf("zero-variance arms called significant: p=%v", r.P)
	}
	none, four := units("FFF", "FFF", "FFF", "FFF"), units("PPP", "PPP", "PPP", "PPP")
	if r := CompareProbes(none, four); r.P > 0.01 {
		t.Errorf("collapse not significant: p=%v", r.P)
	}
	if r := CompareProbes(four, none); r.P < 0.5 {
		t.Errorf("diluted better than fresh gave p=%v", r.P)
	}
}
