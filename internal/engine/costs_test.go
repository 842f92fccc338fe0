package engine

import (
	"math"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
)

// Judging paid for is counted once, wherever its turn ended up: a
// verdict replaced on resume (EarlierJudgeUSD), and the verdict of a
// completed turn set aside when its sandbox was gone (abandoned: its
// agent cost was counted, its judging not).
func TestTallyCostsCountsEveryJudging(t *testing.T) {
	r := &record.Run{Conversations: []record.Conversation{{
		Turns:     []record.Turn{{CostUSD: 0.5, EarlierJudgeUSD: 0.02, EarlierJudgeTokens: 200, Verdict: &judge.Verdict{CostUSD: 0.03, Tokens: 300}}},
		Abandoned: []record.Turn{{CostUSD: 0.4, Verdict: &judge.Verdict{CostUSD: 0.01, Tokens: 100}}},
	}}}
	TallyCosts(r)
	if c := r.Costs; math.Abs(c.Agent-0.9) > 1e-9 || math.Abs(c.Judge-0.06) > 1e-9 || c.JudgeTokens != 600 || math.Abs(c.Total-0.96) > 1e-9 {
		t.Errorf("costs %+v, want agent 0.9, judge 0.06 (600 tokens), total 0.96", c)
	}
}
