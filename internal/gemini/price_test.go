package gemini

import (
	"math"
	"testing"
)

func TestCost(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	// 10k prompt tokens of which 4k cached, 1k output, 500 thinking, on
	// gemini-2.5-flash: 6k × 0.30 + 4k × 0.03 + 1.5k × 2.50 per million.
	got := Cost("gemini-2.5-flash", CallTokens{Prompt: 10_000, Cached: 4_000, Output: 1_000, Thoughts: 500})
	if want := (6_000*0.30 + 4_000*0.03 + 1_500*2.50) / 1e6; !near(got, want) {
		t.Errorf("flash cost %v, want %v", got, want)
	}
	// Above 200k prompt tokens every token of the call is charged at the
	// long rates.
	got = Cost("gemini-2.5-pro", CallTokens{Prompt: 300_000, Output: 1_000})
	if want := (300_000*2.50 + 1_000*15.00) / 1e6; !near(got, want) {
		t.Errorf("long pro cost %v, want %v", got, want)
	}
	if Cost("gemini-3.8-flash", CallTokens{Prompt: 1000}) != 0 || Priced("gemini-3.8-flash") {
		t.Error("a model the table lacks got a price")
	}
	if p, ok := PriceOf("gemini-2.5-flash-lite-preview-09"); !ok || p.Input != 0.10 {
		t.Errorf("a suffixed name takes its base model's price: %+v %v", p, ok)
	}
	if !Priced(DefaultModel) {
		t.Error("the default model has no price")
	}
}
