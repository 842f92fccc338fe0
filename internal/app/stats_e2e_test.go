package app

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/verdict"
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

// contextRangeLine is a conversation's line of the summary, which ends in
// its context range.
var contextRangeLine = regexp.MustCompile(`(?m)^conversation (\d): .*context [\d,]+ (->|→) [\d,]+ tokens$`)

// The stable but noisy agent of issue 9: it follows the skill 4 times in
// 5 at every task turn, fresh or diluted (the scripted server counts which
// session slips, so the counts are the same in every run: baselines 16/20,
// probes 39/48 diluted against 48/60 fresh). No dilution effect: the run
// must not exit 1, at 20 conversations nor at its first 10 (the same
// record, decided over conversations and fresh triples 1 to 10). (Issue
// 9's run had 30; the calibration's false-alarm grid holds such a skill,
// pass rate 0.8, at 30 conversations and more, over thousands of runs.)
func TestStableButNoisyIsNotDecay(t *testing.T) {
	t.Parallel()
	script, err := demo.Script([]string{scripted.PersonaNoisy}, false)
	if err != nil {
		t.Fatal(err)
	}
	// No jail: its subject is the statistics of many conversations, and a
	// bubblewrap start for each of some 350 claude processes is a third of
	// its time (the jail has its own tests). The built binary, without the
	// race detector, runs them in an eighth of the CPU (vibeTestBinary).
	s := runScriptBuilt(t, fastCLI(t), script, 20, nil, "--concurrency", "8", "--isolation", "none")
	if s.code == 1 || s.run.Outcome.Verdict == record.VerdictDecay {
		t.Fatalf("a stable skill was called decayed: exit %d, %s", s.code, s.run.Outcome.Sentence)
	}
	if s.code != 0 {
		t.Fatalf("exit %d, want 0 (held or not enough evidence): %s", s.code, s.run.Outcome.Sentence)
	}
	cmp := s.run.Outcome.Stats.Comparison
	base := s.run.Outcome.Stats.PerTurn[0]
	if base.Passes != 16 || base.N != 20 || cmp.Diluted.Probes != 48 || cmp.Diluted.Passed != 39 || cmp.Fresh.Probes != 60 || cmp.Fresh.Passed != 48 {
		t.Errorf("counts: baseline %d/%d, diluted %d/%d, fresh %d/%d; want 16/20, 39/48, 48/60", base.Passes, base.N, cmp.Diluted.Passed, cmp.Diluted.Probes, cmp.Fresh.Passed, cmp.Fresh.Probes)
	}
	if !strings.Contains(s.stdout, "The baseline failed in 4 of 20 conversations; the gate stopped them") {
		t.Errorf("the summary must say the gate stopped 4 and what population the diluted arm is:\n%s", s.stdout)
	}

	first := *s.run
	first.Conversations, first.Fresh, first.Sequential = s.run.Conversations[:10], s.run.Fresh[:10], nil
	verdict.Decide(&first)
	if first.Outcome.Exit != 0 {
		t.Fatalf("the first 10 conversations: exit %d, want 0: %s", first.Outcome.Exit, first.Outcome.Sentence)
	}
	t.Logf("n=20: %s\nn=10: %s", s.run.Outcome.Sentence, first.Outcome.Sentence)
}

func TestControls(t *testing.T) {
	t.Parallel()
	script, err := demo.Script([]string{"decaying"}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := runScript(t, fastCLI(t), script, 1, nil, "--control", "no-skill", "--concurrency", "3")
	if s.code != 0 {
		t.Fatalf("exit %d, want 0: one conversation cannot show decay, and controls never change the verdict", s.code)
	}
	byKey := map[string]record.ControlStat{}
	for _, c := range s.run.Outcome.Controls {
		byKey[fmt.Sprintf("%s %d", c.Control, c.Turn)] = c
	}
	if c := byKey["no-skill 1"]; c.ControlN != 1 || c.ControlPass != 0 || c.Lift != 1 {
		t.Errorf("no-skill at turn 1: %+v (the agent without the skill must fail)", c)
	}
	probes := map[int]record.ProbeComparison{}
	for _, p := range s.run.Outcome.Stats.Probes {
		probes[p.Turn] = p
	}
	if p := probes[8]; p.Decayed != 1 || p.FreshPass != 1 || p.DilutedPass != 0 {
		t.Errorf("probe 8: %+v (fails diluted, passes fresh)", p)
	}
	if p := probes[6]; p.Decayed != 0 || p.DilutedPass != 1 {
		t.Errorf("probe 6: %+v", p)
	}
	if !strings.Contains(s.stdout, "each probe diluted vs fresh") || !strings.Contains(s.stdout, "no-skill control") {
		t.Errorf("summary lacks the fresh comparison or the control:\n%s", s.stdout)
	}
	for _, c := range append(s.run.Controls, s.run.Fresh...) {
		if c.Status != record.StatusCompleted {
			t.Errorf("%s %d: %s %s", c.Control, c.Index, c.Status, c.Error)
		}
	}
}

func TestUntilDecided(t *testing.T) {
	t.Parallel()
	script, err := demo.Script([]string{"decaying"}, false)
	if err != nil {
		t.Fatal(err)
	}
	// Batches of two, capped at four: the look at two tests at the interim
	// level 0.001 (p is about 0.07 there: continue), the look at four at
	// what is left of alpha, 0.049 (p about 0.007: decay).
	s := runScript(t, fastCLI(t), script, 2, nil, "--until-decided", "--max-conversations", "4", "--concurrency", "4")
	if s.code != 1 {
		t.Fatalf("exit %d, want 1: %s", s.code, s.run.Outcome.Sentence)
	}
	sq := s.run.Sequential
	if sq == nil || len(sq.Looks) != 2 || sq.Looks[0].Decision != record.SeqContinue || sq.Decision != record.SeqDecay || len(s.run.Conversations) != 4 || len(s.run.Fresh) != 4 {
		t.Fatalf("sequential record %+v with %d conversations and %d fresh triples", sq, len(s.run.Conversations), len(s.run.Fresh))
	}
	if sq.Looks[0].Level != 0.001 || sq.Looks[1].Level != 0.049 {
		t.Errorf("levels %v and %v, want 0.001 then 0.049", sq.Looks[0].Level, sq.Looks[1].Level)
	}
	if !strings.Contains(s.stdout, "after 2 conversations") || !strings.Contains(s.stdout, "decided sequentially") {
		t.Errorf("summary lacks the interim looks:\n%s", s.stdout)
	}
}
