package summary

import (
	"fmt"
	"time"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// Fixed runs for the golden and JSON tests: built field by field, so every
// number is deterministic and nothing needs masking.

var testRubric = &rubric.Rubric{Criteria: []rubric.Criterion{
	{ID: "runs-census", Kind: rubric.Must, Text: "runs scripts/census.sh with Bash before answering",
		Check: &rubric.Check{Tool: "Bash", Pattern: `census\.sh`, Expect: "present"}},
	{ID: "appends-ledger", Kind: rubric.Must, Text: "appends one line to ledger.log with >> in Bash"},
	{ID: "answers-from-census", Kind: rubric.Should, Text: "answers only from the census output"},
}}

func pass() *judge.Verdict {
	return &judge.Verdict{Result: judge.Pass, Attempts: 1, Criteria: []judge.CriterionVerdict{
		{ID: "runs-census", Kind: rubric.Must, Result: judge.Pass, Evidence: "call 2", Call: 2, Source: "check"},
		{ID: "appends-ledger", Kind: rubric.Must, Result: judge.Pass, Evidence: "call 3", Call: 3, Source: "judge"},
		{ID: "answers-from-census", Kind: rubric.Should, Result: judge.Pass, Evidence: "call 2", Call: 2, Source: "judge"},
	}}
}

func fail(ids ...string) *judge.Verdict {
	v := pass()
	v.Result = judge.Fail
	for i := range v.Criteria {
		for _, id := range ids {
			if v.Criteria[i].ID == id {
				v.Criteria[i].Result, v.Criteria[i].Evidence, v.Criteria[i].Call = judge.Fail, "no matching call", 0
			}
		}
	}
	return v
}

// conv builds a conversation that ran turns 1..upTo with the given context
// sizes (one per turn) and verdicts at the judged turns.
func conv(index int, status string, ctx []int64, calls []int, verdicts map[int]*judge.Verdict) record.Conversation {
	c := record.Conversation{Index: index, Status: status, Turns: []record.Turn{}}
	for i, n := range ctx {
		turn := i + 1
		c.Turns = append(c.Turns, record.Turn{
			Turn: turn, Kind: plan.Kind(turn), Status: record.TurnOK,
			Transcript:    fmt.Sprintf("conv-%d/turn-%02d.jsonl", index, turn),
			ToolCallCount: calls[i], ContextTokens: n, DurationMS: 1000, CostUSD: 0.01,
			Verdict: verdicts[turn],
		})
	}
	return c
}

// freshTriple is conversation index's fresh triple: each probe asked as the
// first message of a new session, all passing.
func freshTriple(index int) record.Conversation {
	c := record.Conversation{Index: index, Control: record.ArmFresh, Status: record.StatusCompleted}
	for _, turn := range plan.ProbeTurns {
		c.Turns = append(c.Turns, record.Turn{Turn: turn, Kind: "probe", Status: record.TurnOK,
			Transcript: fmt.Sprintf("fresh-%d/turn-%02d.jsonl", index, turn), ToolCallCount: 3, ContextTokens: 13900,
			DurationMS: 1000, CostUSD: 0.01, Verdict: pass()})
	}
	return c
}

func baseRun(convs ...record.Conversation) *record.Run {
	r := &record.Run{
		SchemaVersion: record.SchemaVersion,
		StartedAt:     time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC),
		Skill:         record.Skill{Name: "stock-ledger", Path: "demo/skill/stock-ledger/SKILL.md", Hash: "sha256:4b0e"},
		Isolation:     "hermetic",
		Rubric:        testRubric,
		Conversations: convs,
		Costs:         record.Costs{Agent: 0.6123, Rubric: 0.0412, Plan: 0.0187, Judge: 0.0265, Total: 0.6987},
	}
	r.Config.Conversations = len(convs)
	for i := range convs {
		r.Fresh = append(r.Fresh, freshTriple(i+1))
	}
	return r
}

// decayRun: conversation 1 passes its baseline, then fails turn 8 and
// escapes at turn 10 (no tool calls: stopped consulting); conversation 2
// holds, with a downgraded escape-hatch flag at turn 6. Their context
// sizes never overlap, so a joined range would show.
func decayRun() *record.Run {
	escape := fail("runs-census", "appends-ledger")
	escape.EscapeHatch, escape.EscapeReason = true, "answered from memory"
	partial := pass()
	partial.Partial, partial.OverCall, partial.EscapeReason = true, true, "skipped re-reading the ledger"
	r := baseRun(
		conv(1, record.StatusCompleted,
			[]int64{14211, 17002, 19833, 22650, 25471, 27198, 30011, 31702, 34560, 36222},
			[]int{3, 0, 0, 0, 0, 3, 0, 0, 0, 0},
			map[int]*judge.Verdict{1: pass(), 6: pass(), 8: fail("runs-census"), 10: escape}),
		conv(2, record.StatusCompleted,
			[]int64{15987, 18730, 21544, 24390, 27129, 28818, 31677, 33390, 36201, 38055},
			[]int{3, 0, 0, 0, 0, 3, 0, 4, 0, 3},
			map[int]*judge.Verdict{1: pass(), 6: partial, 8: pass(), 10: pass()}),
	)
	r.Versions = record.Versions{Claude: "2.1.330", ClaudeVerified: "2.1.328", ClaudeMismatch: true}
	r.Config.Model, r.Config.ModelSource = "claude-opus-5-5", "cli-default"
	r.Config.AllowedTools = []string{"Bash", "Read", "Edit", "Write", "Glob", "Grep", "Skill", "Bash(git diff:*)"}
	r.Config.SessionMode = "interactive"
	r.Skill.Warnings = []string{`SKILL.md:3: frontmatter field "description": 1068 characters (Agent Skills spec: at most 1024); the CLI loads it whole`}
	c := &r.Conversations[0]
	c.ModelChange = "the model changed at turn 8: claude-opus-5-5 answered turn 7, claude-haiku-4-5 turn 8"
	c.Turns[9].SkillDenied = true
	verdict.Decide(r)
	return r
}

// bypassRun: --no-baseline-gate on a skill whose baseline fails.
func bypassRun() *record.Run {
	r := baseRun(conv(1, record.StatusCompleted,
		[]int64{9800, 12001, 14870, 17655, 20410, 22140, 24980, 26701, 29455, 31190},
		[]int{1, 0, 0, 0, 0, 1, 0, 1, 0, 1},
		map[int]*judge.Verdict{1: fail("runs-census"), 6: fail("runs-census"), 8: fail("runs-census"), 10: fail("runs-census", "appends-ledger")}))
	r.Config.NoBaselineGate, r.GateBypassed = true, true
	verdict.Decide(r)
	return r
}

// gateRun: conversation 1 stopped at the gate; conversation 2 hit a judge
// error at turn 6 and then stopped on a timed-out turn 7.
func gateRun() *record.Run {
	setup := fail("runs-census")
	setup.SetupProblem = "set-up problem: runs-census matched call 1 (Bash), which failed: Exit code 127 bash: scripts/census.sh: No such file or directory"
	gate := conv(1, record.StatusBaselineFailed, []int64{10250}, []int{1}, map[int]*judge.Verdict{1: setup})
	gate.Error = "the baseline probe (turn 1, before dilution) already fails"
	je := &judge.Verdict{Result: judge.JudgeError, Error: "judge answer omits criterion \"runs-census\"", Attempts: 2}
	errored := conv(2, record.StatusError,
		[]int64{11020, 13877, 16702, 19560, 22301, 24015},
		[]int{3, 0, 0, 0, 0, 3},
		map[int]*judge.Verdict{1: pass(), 6: je})
	errored.Abandoned = []record.Turn{{Turn: 7, Kind: "filler", Status: record.TurnTimedOut, Error: "timed out after 10m0s"}}
	errored.Error = "turn 7: timed out after 10m0s"
	r := baseRun(gate, errored)
	verdict.Decide(r)
	return r
}
