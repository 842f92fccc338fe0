package stats

import "testing"

func TestEffectiveTurn(t *testing.T) {
	turns := []int{1, 6, 8, 10}
	cases := []struct {
		name  string
		rates []float64
		want  int
	}{
		{"all held", []float64{1, 1, 1, 1}, 10},
		{"first probe falls below", []float64{1, 0.5, 1, 1}, 1},
		{"falls at turn 8", []float64{1, 0.9, 0.5, 0.5}, 6},
		{"recovery after a drop does not extend it", []float64{1, 0.9, 0.5, 1}, 6},
		{"baseline never worked", []float64{0, 0, 0, 0}, 0},
		// 0.85 * 0.8 = 0.68 exactly in arithmetic, not in float64: kept.
		{"exactly 85% is still effective", []float64{0.8, 0.68, 0.68, 0.6}, 8},
		{"just below 85%", []float64{1, 0.849, 1, 1}, 1},
		{"a probe above the baseline", []float64{0.5, 1, 0.5, 0.42}, 8},
	}
	for _, c := range cases {
		if got := EffectiveTurn(turns, c.rates); got != c.want {
			t.Errorf("%s: EffectiveTurn(%v) = %d, want %d", c.name, c.rates, got, c.want)
		}
	}
	if got := EffectiveTurn(nil, nil); got != 0 {
		t.Errorf("EffectiveTurn(nil, nil) = %d, want 0", got)
	}
	if got := EffectiveTurn([]int{1}, []float64{1}); got != 1 {
		t.Errorf("EffectiveTurn(baseline only) = %d, want 1", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("EffectiveTurn with mismatched lengths did not panic")
		}
	}()
	EffectiveTurn([]int{1, 6}, []float64{1})
}
