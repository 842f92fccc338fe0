package codex

import (
	"math"
	"testing"
)

func TestPriceOf(t *testing.T) {
	for model, want := range map[string]float64{"gpt-5.5": 5, "gpt-5.5-2026-04-23": 5, "gpt-5.5-pro": 30, "gpt-5.4-mini": 0.75, "gpt-5.4-mini-2026-03-01": 0.75} {
		p, ok := PriceOf(model)
		if !ok || p.Input != want {
			t.Errorf("%s: %+v %v, want input %v", model, p, ok, want)
		}
	}
	for _, model := range []string{"", "gpt-9", "gpt-5.55", "mock-model"} {
		if _, ok := PriceOf(model); ok {
			t.Errorf("%q has a price", model)
		}
	}
}

func TestCost(t *testing.T) {
	p := Prices["gpt-5.5"]
	// 200K input of which 80K cached, 10K output: 0.12*5 + 0.08*0.5 + 0.01*30.
	if got := p.Cost(CallUsage{Input: 200_000, Cached: 80_000, Output: 10_000}); math.Abs(got-0.94) > 1e-9 {
		t.Errorf("cost %v, want 0.94", got)
	}
	// Above 272K input the whole request costs 2x input, 1.5x output.
	short := p.Cost(CallUsage{Input: 272_000, Output: 1000})
	long := p.Cost(CallUsage{Input: 272_001, Output: 1000})
	if want := (272_001*10.0 + 1000*45.0) / 1e6; math.Abs(long-want) > 1e-9 || long < 1.9*short {
		t.Errorf("long-context cost %v (short %v), want %v", long, short, want)
	}
	// A cached count above the input (a bad record) is capped.
	if got := p.Cost(CallUsage{Input: 100, Cached: 500}); math.Abs(got-100*0.5/1e6) > 1e-15 {
		t.Errorf("cost %v", got)
	}
}

func TestUsageOfSplitsTheCachedPart(t *testing.T) {
	u := usageOf(CallUsage{Input: 1000, Cached: 600, Output: 7})
	if u.Input != 400 || u.CacheRead != 600 || u.Context() != 1000 || u.Output != 7 {
		t.Errorf("%+v", u)
	}
}
