package stats

import (
	"math"
	"testing"
)

func scoresOf(units ...Unit) []Scores {
	var out []Scores
	for _, u := range units {
		out = append(out, Scores{u})
	}
	return out
}

// With 3 units a side there are only C(6,3) = 20 relabellings, so the
// permutation p-value is computed exactly: the share of the 20 whose
// statistic is at least the observed one (counted here by hand).
// PermuteLower takes every relabelling when there are no more than the
// permutations asked for, so its p-value is that share exactly (drawn at
// random, a p-value of exactly 1/20 came out above or below 0.05 by the
// draw).
func TestPermutationPValueMatchesEnumeration(t *testing.T) {
	a := []Unit{{4, 4}, {3, 4}, {4, 4}}
	b := []Unit{{2, 4}, {3, 4}, {1, 4}}
	all := append(append([]Unit{}, a...), b...)
	obs := CompareArms(b, a).T
	atLeast, total := 0, 0
	for i := 0; i < 6; i++ {
		for j := i + 1; j < 6; j++ {
			for k := j + 1; k < 6; k++ {
				var ga, gb []Unit
				for x := range 6 {
					if x == i || x == j || x == k {
						gb = append(gb, all[x])
					} else {
						ga = append(ga, all[x])
					}
				}
				total++
				if CompareArms(gb, ga).T >= obs-1e-12 {
					atLeast++
				}
			}
		}
	}
	exact := float64(atLeast) / float64(total)
	if got := PermuteLower(scoresOf(a...), scoresOf(b...), 1, 1999, 7)[0]; got.P != exact || got.Adjusted != exact {
		t.Errorf("permutation p %v (adjusted %v), exact %v (%d of %d relabellings)", got.P, got.Adjusted, exact, atLeast, total)
	}
	// The extreme relabelling of 3 against 3 is rejected at 0.05.
	if got := PermuteLower(scoresOf(a[0], a[0], a[0]), scoresOf(Unit{0, 4}, Unit{0, 4}, Unit{0, 4}), 1, 1999, 7)[0]; got.P != 1.0/20 {
		t.Errorf("the extreme of 20 relabellings: p %v, want 0.05", got.P)
	}
}

// Past the permutations asked for (8 against 8: C(16,8) = 12,870 against
// 9,999), the relabellings are drawn at random: they must agree with the
// exact share within Monte Carlo error, and a test stopped early (Besag
// and Clifford) within the precision its stopping count allows.
func TestRandomRelabellingsMatchTheExactShare(t *testing.T) {
	a := scoresOf(Unit{4, 4}, Unit{3, 4}, Unit{4, 4}, Unit{2, 4}, Unit{4, 4}, Unit{3, 4}, Unit{4, 4}, Unit{3, 4})
	b := scoresOf(Unit{2, 4}, Unit{3, 4}, Unit{1, 4}, Unit{4, 4}, Unit{3, 4}, Unit{2, 4}, Unit{3, 4}, Unit{4, 4})
	exact := PermuteLower(a, b, 1, 12870, 7)[0].P // every relabelling
	const perms = 9999
	if Subsets(16, 8, perms) <= perms {
		t.Fatal("the sizes give no more relabellings than asked: the random path is not taken")
	}
	full := permuteLower(a, b, 1, perms, perms+1, 7)[0]
	if math.Abs(full.P-exact) > 4*math.Sqrt(exact*(1-exact)/perms) || full.Adjusted != full.P {
		t.Errorf("random relabellings: p %v (adjusted %v), exact %v", full.P, full.Adjusted, exact)
	}
	early := PermuteLower(a, b, 1, perms, 7)[0]
	if math.Abs(early.P-exact) > 4*exact/math.Sqrt(enough) {
		t.Errorf("stopped early: p %v, exact %v", early.P, exact)
	}
	if exact <= 0 || exact >= 1 {
		t.Fatalf("exact p %v: the data test nothing", exact)
	}
}

// Adjusting for several measures never lowers a p-value, and a measure
// that is not scored on enough units cannot be rejected.
func TestPermuteLowerAdjusts(t *testing.T) {
	a := []Scores{{{4, 4}, {2, 2}}, {{4, 4}, {2, 2}}, {{3, 4}, {1, 2}}, {{4, 4}, {}}}
	b := []Scores{{{1, 4}, {2, 2}}, {{2, 4}, {1, 2}}, {{0, 4}, {}}, {{1, 4}, {}}}
	res := PermuteLower(a, b, 2, 1999, 3)
	for m, r := range res {
		if r.Adjusted < r.P {
			t.Errorf("measure %d: adjusted %v below unadjusted %v", m, r.Adjusted, r.P)
		}
	}
	if res[0].Adjusted > 0.1 {
		t.Errorf("a clear drop on measure 0: adjusted p %v", res[0].Adjusted)
	}
	res = PermuteLower(a, []Scores{{{1, 4}, {}}, {{0, 4}, {0, 2}}}, 2, 1999, 3)
	if res[1].P != 1 || res[1].Adjusted != 1 {
		t.Errorf("measure 1 has one candidate unit: %+v", res[1])
	}
}
