package result

import (
	"math"
	"testing"

	"github.com/vibe-test/vibe-test/judge"
)

// Reference values computed exactly with Python's fractions module:
// P(Binomial(n, 2/5) >= 5) = sum_{i=5}^{n} C(n,i) (2/5)^i (3/5)^(n-i):
// n=15 → 0.782722294349824, n=16 → 0.83343261564928, n=10 → 0.3668967424.
func TestPowerReferenceValues(t *testing.T) {
	if got := neededForPower(0.4, 0.05, 0.8); got != 16 {
		t.Errorf("neededForPower = %d, want 16 (power 0.7827 at 15, 0.8334 at 16)", got)
	}
	for n, want := range map[int]float64{10: 0.3668967424, 15: 0.782722294349824, 16: 0.83343261564928} {
		if got := binomUpper(n, 5, 0.4); math.Abs(got-want) > 1e-12 {
			t.Errorf("binomUpper(%d, 5, 0.4) = %v, want %v", n, got, want)
		}
	}
}

func TestComputeStats(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	var convs []Conversation
	for i := 0; i < 10; i++ {
		convs = append(convs, conv(i+1, StatusCompleted, P, P, P, P))
	}
	s := ComputeStats(&Run{Conversations: convs}, 0.05)
	// Wilson 95% for 10/10: [0.72, 1.00] (STATISTICS.md).
	if ts := s.PerTurn[0]; ts.N != 10 || math.Round(ts.Lo*100) != 72 || ts.Hi != 1 {
		t.Errorf("turn 1: %+v", ts)
	}
	if s.Underpowered || math.Abs(s.Power40-0.3668967424) > 1e-9 || s.EffectiveTurn != 10 {
		t.Errorf("underpowered %v power %v effective %d", s.Underpowered, s.Power40, s.EffectiveTurn)
	}
	// Two conversations can never be significant: underpowered.
	s = ComputeStats(&Run{Conversations: []Conversation{conv(1, StatusCompleted, P, F, F, F), conv(2, StatusCompleted, P, F, F, F)}}, 0.05)
	pooled := s.Paired[len(s.Paired)-1]
	if !s.Underpowered || pooled.Down != 2 || pooled.P != 0.25 || s.EffectiveTurn != 1 {
		t.Errorf("n=2: %+v, pooled %+v", s, pooled)
	}
}
