package summary

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
)

// A share below 1 never prints as 100%, nor one above 0 as 0%: 299 of 300
// with a Wilson interval of 98%-99.9% printed "100% (98%-100%)".
func TestPercentNeverRoundsToTheEnds(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{{1, "100%"}, {0, "0%"}, {299.0 / 300, "99.6%"}, {0.9994, "99.9%"}, {0.99999, "99.9%"}, {0.995, "99.5%"}, {0.994, "99%"}, {0.5, "50%"}, {0.004, "0.4%"}, {0.00001, "0.1%"}, {0.005, "0.5%"}, {0.006, "1%"}} {
		if got := Percent(tc.x); got != tc.want {
			t.Errorf("Percent(%v) = %s, want %s", tc.x, got, tc.want)
		}
	}
}

// A run whose first session never reported the model its CLI chose
// pinned none: the agent line says so, and not also that it was pinned.
func TestAgentLineUnresolvedModel(t *testing.T) {
	r := decayRun()
	r.Config.Model, r.Config.ModelSource, r.Config.Agent = "", "cli-default", ""
	line := agentLine(r)
	if !strings.Contains(line, "not pinned") || strings.Contains(line, "pinned for the run") {
		t.Errorf("agent line: %s", line)
	}
	r.Config.Model = "claude-opus-5-5"
	if line := agentLine(r); !strings.Contains(line, "claude-opus-5-5 (the CLI's default, pinned for the run)") {
		t.Errorf("agent line: %s", line)
	}
}

// A compaction asked for at a context level the sessions never reached is
// said not to have happened, wherever the schedule is described; one that
// happened leaves the description as it is.
func TestScheduleSaysACompactionNeverHappened(t *testing.T) {
	r := decayRun()
	r.Plan = &plan.Plan{Schedule: &plan.Schedule{CompactAt: 120000}}
	var b strings.Builder
	Summary(&b, r, false)
	if want := "it never happened: no conversation's context passed 120k"; !strings.Contains(b.String(), want) || !strings.Contains(ScheduleWords(r), want) {
		t.Errorf("the schedule line does not say the compaction never happened:\n%s", b.String())
	}
	r.Conversations[0].Turns[3].Compactions = []record.Compaction{{}}
	if strings.Contains(ScheduleWords(r), "never") {
		t.Errorf("a run that compacted: %s", ScheduleWords(r))
	}
}

// The cost line says how much is priced from token counts: agent tries,
// judgements, and a judging a resume or an interrupt replaced (its cost
// kept in earlier_judge_usd, and its flag with it).
func TestStoppedSpendCountsEveryEstimatedPart(t *testing.T) {
	usd := func(v float64) string { return fmt.Sprintf("$%.4f", v) }
	r := &record.Run{Conversations: []record.Conversation{{Turns: []record.Turn{
		{CostUSD: 0.01, CostEstimated: true},
		{Verdict: &judge.Verdict{CostUSD: 0.002, CostEstimated: true}},
		{EarlierJudgeUSD: 0.003, EarlierJudgeEstimated: true, Verdict: &judge.Verdict{CostUSD: 0.004}},
	}}}}
	want := "; up to $0.0150 of it estimated from token counts for 1 try and 2 judgements stopped before the CLI said their cost"
	if got := stoppedSpend(r, usd); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	r.Config.CostEstimated = true
	if got := stoppedSpend(r, usd); got != "" {
		t.Errorf("an estimated run: %q, want nothing (the cost word says it)", got)
	}
}
