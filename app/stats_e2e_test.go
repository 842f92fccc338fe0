package app

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/demo"
	"github.com/vibe-test/vibe-test/judge"
	"github.com/vibe-test/vibe-test/result"
	"github.com/vibe-test/vibe-test/scripted"
)

// seedReplay plays the run of seed 002: the baseline runs the census but
// rewrites the ledger instead of appending (fails on precision); turn 6
// answers from memory with zero tool calls; turn 8 runs the census, skips
// the append, and the judge calls that an escape hatch; turn 10 from memory.
func seedReplay(t *testing.T) scripted.Script {
	t.Helper()
	const task = `(?i)in stock|widgets|gaskets|hinges`
	census := scripted.ToolUse{Name: "Bash", Input: map[string]any{"command": "bash .claude/skills/stock-ledger/scripts/census.sh", "description": "census"}}
	rewrite := scripted.ToolUse{Name: "Edit", Input: map[string]any{"file_path": "ledger.log", "old_string": "2026-11-02 | how many hinges | 80 hinges", "new_string": "today | widgets | 42"}}
	answer := func(v any) []scripted.Step {
		return []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: v}}}}
	}
	verdict := func(escape bool) map[string]any {
		var cs []map[string]any
		for _, c := range demo.Rubric()["criteria"].([]map[string]any) {
			cs = append(cs, map[string]any{"id": c["id"], "result": "fail", "evidence": "see trace", "call": 0})
		}
		reason := ""
		if escape {
			reason = "abandoned the procedure"
		}
		return map[string]any{"criteria": cs, "escape_hatch": escape, "escape_reason": reason}
	}
	return scripted.Script{Rules: []scripted.Rule{
		{Kind: scripted.KindAgent, Turns: []int{1}, Pattern: task, Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{{Name: "Skill", Input: map[string]any{"skill": "stock-ledger"}}}},
			{ToolUses: []scripted.ToolUse{census}},
			{ToolUses: []scripted.ToolUse{rewrite}},
			{Text: "42 widgets; I updated the ledger."},
		}},
		{Kind: scripted.KindAgent, Turns: []int{8}, Pattern: task, Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{census}}, {Text: "80 hinges."}}},
		{Kind: scripted.KindAgent, Pattern: task, Steps: []scripted.Step{{Text: "From memory: plenty."}}},
		{Kind: scripted.KindAgent, Steps: []scripted.Step{{Text: "Here is the summary you asked for."}}},
		{Kind: scripted.KindJudge, Contains: `"old_string"`, Steps: answer(verdict(false))},
		{Kind: scripted.KindJudge, Contains: `"command":"bash .claude/skills/stock-ledger/scripts/census.sh"`, Steps: answer(verdict(true))},
		{Kind: scripted.KindJudge, Steps: answer(verdict(false))},
		{Kind: scripted.KindRubric, Steps: answer(demo.Rubric())},
	}}
}

func TestSeedReplayStopsAtGate(t *testing.T) {
	t.Parallel()
	s := runScript(t, seedReplay(t), 2, nil, "--concurrency", "2")
	if s.code != 2 || s.run.Status != result.StatusBaselineFailed {
		t.Fatalf("exit %d status %s, want the gate to stop both conversations (exit 2)", s.code, s.run.Status)
	}
	for _, c := range s.run.Conversations {
		if len(c.Turns) != 1 || c.Shape != result.ShapeBaselineFailed {
			t.Errorf("conversation %d: %d turns, shape %q", c.Index, len(c.Turns), c.Shape)
		}
	}
}

func TestSeedReplayBypassedIsNeverWorked(t *testing.T) {
	t.Parallel()
	s := runScript(t, seedReplay(t), 2, nil, "--concurrency", "2", "--no-baseline-gate")
	if s.code != 2 {
		t.Fatalf("exit %d, want 2", s.code)
	}
	if !strings.HasPrefix(s.stdout, "!! BASELINE GATE BYPASSED") {
		t.Errorf("summary does not lead with the bypass: %q", strings.SplitN(s.stdout, "\n", 2)[0])
	}
	if s.run.Outcome.Shape != result.ShapeNeverWorked {
		t.Errorf("run shape %q, want %q: a flat line at fail is no curve", s.run.Outcome.Shape, result.ShapeNeverWorked)
	}
	for _, c := range s.run.Conversations {
		v := c.TurnAt(8).Verdict
		if v == nil || !v.OverCall || v.EscapeHatch || v.Result != judge.Fail {
			t.Errorf("conversation %d turn 8: %+v (want the escape hatch downgraded, still a fail)", c.Index, v)
		}
	}
	if s.run.Outcome.OverCalls != 2 {
		t.Errorf("over-calls %d, want 2", s.run.Outcome.OverCalls)
	}
	consulted := strings.Join(s.run.Outcome.StoppedConsulting, "\n")
	for _, c := range []int{1, 2} {
		if !strings.Contains(consulted, fmt.Sprintf("conversation %d turn 6: 0 tool calls after 3", c)) {
			t.Errorf("stopped consulting not flagged at turn 6 of conversation %d: %q", c, consulted)
		}
	}
	// Each conversation's context range on its own line.
	ranges := regexp.MustCompile(`(?m)^conversation (\d): .*context [\d,]+ (->|→) [\d,]+ tokens$`).FindAllStringSubmatch(s.stdout, -1)
	if len(ranges) != 2 {
		t.Errorf("want one context range line per conversation, got %d", len(ranges))
	}
}

func TestSignificantDecay(t *testing.T) {
	t.Parallel()
	// Five conversations that all decay: the paired sign test gives
	// 0.5^5 = 0.03125 <= 0.05.
	script, err := demo.Script([]string{"decaying"}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := runScript(t, script, 5, nil, "--concurrency", "5", "--gate", "significant")
	if s.code != 1 {
		t.Fatalf("exit %d, want 1", s.code)
	}
	pooled := s.run.Outcome.Stats.Paired[len(s.run.Outcome.Stats.Paired)-1]
	if pooled.Down != 5 || pooled.P != 0.03125 || !strings.Contains(s.stdout, "p = 0.0312") {
		t.Fatalf("pooled sign test %+v; summary:\n%s", pooled, s.stdout)
	}
}

func TestSteadyTenConversations(t *testing.T) {
	t.Parallel()
	script, err := demo.Script([]string{"steady"}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := runScript(t, script, 10, nil, "--concurrency", "10")
	if s.code != 0 {
		t.Fatalf("exit %d, want 0", s.code)
	}
	st := s.run.Outcome.Stats
	if st.Underpowered || st.PerTurn[3].N != 10 || st.PerTurn[3].Lo < 0.69 {
		t.Fatalf("stats %+v", st)
	}
	if !strings.Contains(s.stdout, "10/10 passed (100%, 72%-100%)") || !strings.Contains(s.stdout, "power") {
		t.Errorf("the summary must give the interval and say what 10 conversations can detect:\n%s", s.stdout)
	}
}

func TestControls(t *testing.T) {
	t.Parallel()
	script, err := demo.Script([]string{"decaying"}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := runScript(t, script, 1, nil, "--control", "no-skill", "--control", "undiluted", "--concurrency", "3")
	if s.code != 1 {
		t.Fatalf("exit %d, want 1: controls never change the verdict", s.code)
	}
	byKey := map[string]result.ControlStat{}
	for _, c := range s.run.Outcome.Controls {
		byKey[fmt.Sprintf("%s %d", c.Control, c.Turn)] = c
	}
	if c := byKey["no-skill 1"]; c.ControlN != 1 || c.ControlPass != 0 || c.Lift != 1 {
		t.Errorf("no-skill at turn 1: %+v (the agent without the skill must fail)", c)
	}
	if c := byKey["undiluted 8"]; c.Decayed != 1 || !strings.Contains(c.Reading, "decay") {
		t.Errorf("undiluted at turn 8: %+v (fails diluted, passes fresh)", c)
	}
	if c := byKey["undiluted 6"]; c.Decayed != 0 || c.Passes != 1 {
		t.Errorf("undiluted at turn 6: %+v", c)
	}
	if !strings.Contains(s.stdout, "undiluted control") || !strings.Contains(s.stdout, "no-skill control") {
		t.Errorf("summary lacks the controls:\n%s", s.stdout)
	}
	for _, c := range s.run.Controls {
		if c.Status != result.StatusCompleted {
			t.Errorf("control %s %d: %s %s", c.Control, c.Index, c.Status, c.Error)
		}
	}
}

func TestUntilDecided(t *testing.T) {
	t.Parallel()
	script, err := demo.Script([]string{"decaying"}, false)
	if err != nil {
		t.Fatal(err)
	}
	// One conversation per batch: after the first decayed one the
	// log-likelihood ratio ln(0.45/0.05) = 2.20 is below the upper bound
	// ln(0.8/0.05) = 2.77, so a second batch runs; after it, 4.39 crosses.
	s := runScript(t, script, 1, nil, "--until-decided", "--max-conversations", "6")
	if s.code != 1 {
		t.Fatalf("exit %d, want 1", s.code)
	}
	sq := s.run.Sequential
	if sq == nil || len(sq.Looks) != 2 || sq.Looks[0].Decision != "continue" || sq.Decision != "decay" || len(s.run.Conversations) != 2 {
		t.Fatalf("sequential record %+v with %d conversations", sq, len(s.run.Conversations))
	}
	if !strings.Contains(s.stdout, "after 1 conversations") || !strings.Contains(s.stdout, "crossed the upper bound") {
		t.Errorf("summary lacks the interim looks:\n%s", s.stdout)
	}
}
