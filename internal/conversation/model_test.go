package conversation

import (
	"strings"
	"sync"
	"testing"
)

// The first session's report pins the run's model; later sessions pass the
// pinned name, and one that reports another model is an error.
func TestModelPin(t *testing.T) {
	var pinned []string
	p := NewModelPin("sonnet", "", func(m string) { pinned = append(pinned, m) })
	if p.Arg() != "sonnet" {
		t.Fatalf("before the pin: --model %q, want the model as asked", p.Arg())
	}
	if err := p.Check(""); err != nil || p.Arg() != "sonnet" {
		t.Fatalf("a turn that reports no model: %v, --model %q", err, p.Arg())
	}
	if err := p.Check("claude-sonnet-5-5"); err != nil {
		t.Fatal(err)
	}
	if p.Arg() != "claude-sonnet-5-5" || len(pinned) != 1 || pinned[0] != "claude-sonnet-5-5" {
		t.Fatalf("after the first report: --model %q, heard %q", p.Arg(), pinned)
	}
	if err := p.Check("claude-sonnet-5-5"); err != nil || len(pinned) != 1 {
		t.Fatalf("the same model again: %v, heard %q", err, pinned)
	}
	err := p.Check("claude-opus-5-5")
	if err == nil || !strings.Contains(err.Error(), "claude-opus-5-5") || !strings.Contains(err.Error(), "run's model is claude-sonnet-5-5") {
		t.Fatalf("another model: %v, want an error naming both", err)
	}
	if p.Arg() != "claude-sonnet-5-5" {
		t.Errorf("the pin moved to %q", p.Arg())
	}

	// A resumed run's pin is set from its record; sessions racing to pin
	// agree on one model, heard once.
	if q := NewModelPin("", "claude-opus-5-5", nil); q.Arg() != "claude-opus-5-5" {
		t.Errorf("resumed: --model %q", q.Arg())
	}
	var mu sync.Mutex
	heard := 0
	r := NewModelPin("", "", func(string) { mu.Lock(); heard++; mu.Unlock() })
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.Check("claude-opus-5-5") }()
	}
	wg.Wait()
	if heard != 1 || r.Arg() != "claude-opus-5-5" {
		t.Errorf("racing sessions: heard %d times, --model %q", heard, r.Arg())
	}
	var nilPin *ModelPin
	if err := nilPin.check("anything"); err != nil {
		t.Errorf("no pin: %v", err)
	}
}
