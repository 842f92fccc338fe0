package conversation

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/vibe-test/vibe-test/internal/claude"
)

// The pinned CLI's total_cost_usd on a resumed turn is the session's
// running total (captured: resume-turn1..3 of one session). A turn's own
// cost is the step from the turn before; summing the raw totals would
// count turn 1 three times.
func TestTurnCostFromRunningTotal(t *testing.T) {
	var totals []float64
	for _, name := range []string{"resume-turn1.jsonl", "resume-turn2.jsonl", "resume-turn3.jsonl"} {
		f, err := os.Open(filepath.Join("..", "claude", "testdata", "transcripts", name))
		if err != nil {
			t.Fatal(err)
		}
		turn, err := claude.ParseTurn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		totals = append(totals, turn.CostUSD)
	}
	if !(totals[0] < totals[1] && totals[1] < totals[2]) {
		t.Fatalf("the fixture's totals %v do not grow: the CLI no longer reports a running total, so turnCost is wrong", totals)
	}
	var sum, before float64
	for _, total := range totals {
		c := turnCost(total, before)
		if c <= 0 {
			t.Errorf("turn cost %v from total %v after %v: want positive", c, total, before)
		}
		sum += c
		before = total
	}
	if math.Abs(sum-totals[2]) > 1e-12 {
		t.Errorf("the turns' own costs add to %v, want the session's total %v", sum, totals[2])
	}
	// A try with no result reports 0, and a session counted afresh reports
	// less than before: neither is negative.
	if c := turnCost(0, 0.07); c != 0 {
		t.Errorf("no result: %v, want 0", c)
	}
	if c := turnCost(0.01, 0.07); c != 0.01 {
		t.Errorf("a total below the last: %v, want it taken as the turn's own (0.01)", c)
	}
}
