package estimate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/claude"
)

// SpentCost prices an invocation's calls as the pinned CLI does: on every
// recorded transcript that ends with a result line holding its own cost,
// within 5% of the CLI's total_cost_usd (the streamed usage's output
// tokens can fall short of the final count: 0.03% to 2.8% under on
// these 17). A
// resumed invocation's result holds the session's running total, above
// its own calls'. A CLI killed mid-tool says no cost at all; its call was
// billed all the same, and SpentCost prices it.
func TestSpentCostAgreesWithTheCLI(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "claude", "testdata", "transcripts", "*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no recorded transcripts: %v", err)
	}
	compared, killed := 0, 0
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		turn, err := claude.ParseTurn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		est, ok := SpentCost(turn.Spent)
		switch {
		case strings.HasPrefix(name, "killed-midtool"):
			killed++
			if turn.HasResult || turn.CostUSD != 0 || !ok || est <= 0 {
				t.Errorf("%s: the CLI said $%v; priced $%v (%v)", name, turn.CostUSD, est, ok)
			}
		case !turn.HasResult || turn.CostUSD == 0 || !ok:
		case strings.HasPrefix(name, "resume-turn") && name != "resume-turn1.jsonl":
			if est >= turn.CostUSD {
				t.Errorf("%s: priced $%v, the session's running total $%v", name, est, turn.CostUSD)
			}
		default:
			compared++
			if math.Abs(est-turn.CostUSD) > 0.05*turn.CostUSD {
				t.Errorf("%s: priced $%.6f, the CLI said $%.6f", name, est, turn.CostUSD)
			}
		}
	}
	if compared < 10 || killed != 2 {
		t.Errorf("%d transcripts compared, %d killed ones: the recorded set changed", compared, killed)
	}
	if _, ok := SpentCost([]claude.CallSpend{{Model: "claude-unknown-9"}}); ok {
		t.Error("an unknown model was priced")
	}
}
