package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/stats"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// schemaID is the schema's $id.
const schemaID = "https://github.com/vibe-test/vibe-test/schema/run.schema.json"

const banner = "BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve."

func compile(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return compileSchema(t, "run.schema.json", schemaID, RunSchema)
}

// compileSchema compiles one of the package's schemas (draft 2020-12,
// formats asserted), named for the failure message.
func compileSchema(t *testing.T, name, id string, text []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("%s is not JSON: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatalf("%s does not compile: %v", name, err)
	}
	return sch
}

func validate(sch *jsonschema.Schema, b []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// testRubric is the rubric of the populated runs.
func testRubric() *rubric.Rubric {
	return &rubric.Rubric{Source: "extracted", Model: "sonnet", Criteria: []rubric.Criterion{
		{ID: "runs-census", Kind: rubric.Must, Text: "runs scripts/census.sh with Bash before answering",
			Check: &rubric.Check{Tool: "Bash", Pattern: `census\.sh`, Expect: "present"}},
		{ID: "no-ledger-rewrite", Kind: rubric.Must, Text: "never edits or rewrites ledger.log",
			Check: &rubric.Check{Tool: "Edit|Write", Pattern: `ledger\.log`, Expect: "absent"}},
		{ID: "answers-from-census", Kind: rubric.Should, Text: "answers only from the census output"},
	}}
}

// criteria are the criterion verdicts of a judged turn whose census
// criterion has the result given.
func criteria(census string) []judge.CriterionVerdict {
	out := []judge.CriterionVerdict{
		{ID: "runs-census", Kind: rubric.Must, Result: census, Evidence: "[1] Bash scripts/census.sh", Call: 1, Source: "check"},
		{ID: "no-ledger-rewrite", Kind: rubric.Must, Result: judge.Pass, Evidence: "no Edit or Write of ledger.log", Source: "check"},
		{ID: "answers-from-census", Kind: rubric.Should, Result: "n/a", Evidence: "no answer given", Source: "judge"},
	}
	if census == judge.Fail {
		out[0].Call, out[0].Evidence, out[0].JudgeResult = 0, "no Bash call matched census\\.sh", judge.Pass
	}
	return out
}

// verdictOf is a judged turn's verdict with the result given.
func verdictOf(res string) *judge.Verdict {
	v := &judge.Verdict{Result: res, Attempts: 1, CostUSD: 0.002, Tokens: 3100, Model: "sonnet"}
	if res != judge.JudgeError {
		v.Criteria = criteria(res)
	} else {
		v.Error, v.Attempts = "judge answer omits criterion \"runs-census\"", 2
	}
	return v
}

// turns are the ten completed turns of a conversation whose transcripts
// are in dir, with the verdicts given and 3 tool calls a turn unless calls
// says otherwise.
func turns(dir string, results map[int]*judge.Verdict, calls map[int]int) []record.Turn {
	var out []record.Turn
	for n := 1; n <= plan.Turns; n++ {
		t := record.Turn{
			Turn: n, Kind: plan.Kind(n), Prompt: "How many widgets do we have in stock right now?",
			Transcript: fmt.Sprintf("%s/turn-%02d.jsonl", dir, n),
			Status:     record.TurnOK, DurationMS: 4200, SkillInvoked: true, APICalls: 3,
			ContextTokens: int64(18000 + 2500*n), CostUSD: 0.03, Verdict: results[n],
		}
		if t.Kind == "filler" {
			t.Prompt, t.FillerID, t.SkillInvoked = "Explain how a refrigerator moves heat.", "refrigeration-cycle", false
		}
		k := 3
		if c, ok := calls[n]; ok {
			k = c
		}
		for i := 0; i < k; i++ {
			t.ToolCalls = append(t.ToolCalls, record.Call{Name: "Bash", Input: json.RawMessage(`{"command":"sh scripts/census.sh widgets"}`), Result: "widgets 42"})
		}
		t.ToolCallCount = k
		if n == 1 && t.Kind != "filler" {
			// A context: fork skill's step, run by its sub-agent.
			t.ToolCalls = append(t.ToolCalls, record.Call{Name: "Read", Input: json.RawMessage(`{"file_path":"notes.txt"}`), Result: "notes", SubagentOf: 1, Agent: "general-purpose"})
			t.SubagentCallCount, t.SubagentAPICalls, t.SubagentModels = 1, 2, []string{"claude-opus-5-5"}
			t.OutsideSkillGrant = []int{1}
			t.Hooks = []record.Hook{{Name: "PreToolUse:Bash", Outcome: "blocking", ExitCode: 2}}
		}
		out = append(out, t)
	}
	return out
}

// populated is a finished run that sets every field of every type in
// record.Run somewhere, save those of controls, judge repeats,
// --until-decided and diluted-to schedules, which controlled(),
// sequential() and diluted() set (TestPopulatedSetsEveryField checks), so a
// field the schema does not know is caught by additionalProperties.
func populated() *record.Run {
	rb := testRubric()
	conv := func(n int) string { return fmt.Sprintf("conv-%d", n) }

	// Conversation 1 decays: turn 8 fails, and at turn 10 the agent stops
	// consulting (no calls) and the judge flags an escape hatch.
	escape := verdictOf(judge.Fail)
	escape.EscapeHatch, escape.EscapeReason = true, "answered from memory"
	c1 := record.Conversation{
		Index: 1, SessionID: "0d6c2f4e-1b7a-4c59-9f0e-2a3b4c5d6e7f", Status: record.StatusCompleted,
		Fillers: []string{"refrigeration-cycle", "bee-communication", "houseplant-care", "city-water-cycle", "brewing-loose-leaf-tea", "choosing-a-bicycle"},
		Sandbox: "/tmp/repo-1a2b", Home: "/tmp/home-1a2b", ConfigDir: "/tmp/home-1a2b/.claude", Tmp: "/tmp/tmp-1a2b",
		Turns: turns(conv(1), map[int]*judge.Verdict{1: verdictOf(judge.Pass), 6: verdictOf(judge.Pass), 8: verdictOf(judge.Fail), 10: escape}, map[int]int{10: 0}),
		Notes: []string{"turn 4 was run again after an API overload"},
	}
	c1.Turns[3].Retries = 2
	c1.Turns[5].EarlierJudgeUSD, c1.Turns[5].EarlierJudgeTokens = 0.002, 3100 // a judge error judged again on resume
	c1.Turns[5].EarlierJudgeEstimated = true                                  // its call stopped before the CLI said its cost
	for i := range c1.Turns {
		c1.Turns[i].SessionBytes = int64(9000 * (i + 1))
		c1.Turns[i].SessionCostUSD = 0.07 + 0.01*float64(i)
	}
	c1.Rewinds = []record.Rewind{{Turn: 4, RemovedBytes: 2113, RemovedLines: 3, Reason: record.TurnError}}
	c1.Turns[3].Attempts = []record.Attempt{{Transcript: "conv-1/turn-04.attempt-1.jsonl", Status: record.TurnError, Error: "API overloaded (529)", ExitCode: 1, CostUSD: 0.01, DurationMS: 2400}}
	c1.Turns[0].ToolCalls[0].IsError = true
	c1.Turns[0].AnsweredBy = []string{"claude-sonnet-5-5"}
	c1.Turns[7].AnsweredBy = []string{"claude-haiku-4-5"}
	c1.Turns[7].SkillDenied = true
	c1.ModelChange = "the model changed at turn 8: claude-sonnet-5-5 answered turn 7, claude-haiku-4-5 turn 8"
	c1.Turns[7].Verdict.SetupProblem = "set-up problem: runs-census matched call 1 (Bash), which failed: Exit code 127"
	// Conversation 2: the baseline failed, the gate was bypassed, the judge
	// over-called an escape hatch at turn 6 and errored at turn 8; turn 9
	// timed out once before it completed.
	// A judge call stopped before the CLI said its cost: priced from usage.
	stoppedJudge := verdictOf(judge.JudgeError)
	stoppedJudge.CostEstimated = true
	partial := verdictOf(judge.Pass)
	partial.Partial, partial.OverCall, partial.EscapeReason = true, true, "did not re-read the ledger"
	c2 := record.Conversation{
		Index: 2, Status: record.StatusCompleted,
		Fillers: []string{"backyard-composting", "community-garden-plan", "bee-communication", "houseplant-care", "city-water-cycle", "choosing-a-bicycle"},
		Turns:   turns(conv(2), map[int]*judge.Verdict{1: verdictOf(judge.Fail), 6: partial, 8: stoppedJudge, 10: verdictOf(judge.Fail)}, nil),
		Abandoned: []record.Turn{{
			Turn: 9, Kind: "filler", Prompt: "Plan a two-day trip.", FillerID: "trip-planning", Transcript: "conv-2/turn-09.jsonl",
			Status: record.TurnTimedOut, Error: "timed out after 10m0s", ExitCode: -1, DurationMS: 600000, ToolCalls: []record.Call{},
			CostUSD: 0.0412, CostEstimated: true,
			Attempts: []record.Attempt{{Transcript: "conv-2/turn-09.attempt-1.jsonl", Status: record.TurnTimedOut, Error: "timed out after 10m0s", ExitCode: -1, CostUSD: 0.0397, CostEstimated: true, DurationMS: 600000}},
		}},
	}
	// Conversation 3 stopped on an error in a filler.
	c3 := record.Conversation{
		Index: 3, Status: record.StatusError, Error: "turn 3: claude exited with status 1",
		Fillers: []string{"moving-budget", "photosynthesis", "how-tides-work", "sourdough-starter", "postal-service-history", "how-rainbows-form"},
		Turns:   turns(conv(3), map[int]*judge.Verdict{1: verdictOf(judge.Pass)}, nil)[:2],
		Abandoned: []record.Turn{{
			Turn: 3, Kind: "filler", Prompt: "Explain photosynthesis.", FillerID: "photosynthesis", Transcript: "conv-3/turn-03.jsonl",
			Status: record.TurnError, Error: "claude exited with status 1", ExitCode: 1, DurationMS: 900,
		}},
	}

	r := &record.Run{
		SchemaVersion: record.SchemaVersion,
		Status:        record.StatusRunning,
		StartedAt:     time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC),
		FinishedAt:    time.Date(2026, 11, 30, 10, 41, 7, 250000000, time.UTC),
		Versions: record.Versions{
			VibeTest: "v0.3.0", Claude: "2.1.330 (Claude Code)", ClaudeVerified: "2.1.328", ClaudeMismatch: true,
			RubricPrompt: rubric.PromptVersion, JudgePrompt: judge.PromptVersion, RunSchema: record.SchemaVersion,
			ClaudeParserMsg: "claude 2.1.330 differs from 2.1.328",
			Agent:           "0.171.0", AgentVerified: "0.171.0", JudgeAgent: "0.61.0", JudgeAgentVerified: "0.61.0",
		},
		Skill: record.Skill{Name: "stock-ledger", DeclaredName: "Stock Ledger", Path: "/home/dev/skills/stock-ledger/SKILL.md", Hash: "sha256:9f2c4e",
			Warnings:        []string{`SKILL.md:2: frontmatter field "name": "Stock Ledger" breaks the Agent Skills spec`},
			ToolsNotGranted: []string{"TodoWrite (claude 2.1.328 has no tool of that name)"}},
		Config: record.Config{
			Conversations: 3, Concurrency: 2, Model: "claude-sonnet-5-5", ModelSource: "flag", ModelAsked: "sonnet", JudgeModel: "sonnet", NoBaselineGate: true,
			AllowedTools: []string{"Bash", "Read", "Edit", "Write", "Glob", "Grep", "Skill", "Bash(git diff:*)", "WebFetch"}, SessionWideTools: []string{"WebFetch"},
			SessionMode: "interactive", Agent: "codex", JudgeAgent: "claude", CostEstimated: true,
			TurnTimeout: "10m0s", MaxRetries: 2, ConfigFile: "/home/dev/skills/stock-ledger/vibe-test.yaml",
			RubricFile: "/home/dev/skills/stock-ledger/rubric.json", FillersDir: "/home/dev/fillers", KeepSandbox: true,
			MaxBudgetUSD: 5, PassEnv: []string{"HTTP_PROXY"}, Alpha: 0.1,
			Args: []string{"./stock-ledger", "--no-baseline-gate"},
		},
		Isolation:    "hermetic",
		Jail:         jail.None,
		JailNote:     "--isolation none: the agent ran with your user's view of this machine",
		GateBypassed: true,
		Rubric:       rb,
		Plan: &plan.Plan{
			Source: "/home/dev/skills/stock-ledger/vibe-test.yaml", BaseTask: "How many widgets do we have in stock right now?",
			Probes: []plan.Probe{
				{Task: "Quick one, how many gaskets are in stock?"},
				{Task: "We just got a delivery note, see deliveries.txt. How many hinges now?", Setup: map[string]string{"deliveries.txt": "hinges +10\n"}},
				{Task: "Before I close for the day, how many widgets are left?"},
			},
			Fixture: "/home/dev/skills/stock-ledger/fixture", FixtureHash: "3c1f0a9e5b7d2c4e6f8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e", Files: map[string]string{".env": "API_URL=http://localhost:8080\n"},
			Model: "sonnet", JudgeModel: "sonnet", FillerSeed: 7,
			Fillers: [][]string{c1.Fillers, c2.Fillers, c3.Fillers},
		},
		Conversations: []record.Conversation{c1, c2, c3},
		Costs:         record.Costs{Agent: 0.61, Rubric: 0.04, Plan: 0.02, Judge: 0.016, Total: 0.686, JudgeTokens: 24800, RubricTokens: 5200},
		Error:         "chart.html could not be written",
	}
	r.Config.Rule, r.Config.Effect = record.RuleDilutedVsFresh, 0.25
	for n := 1; n <= 3; n++ {
		r.Fresh = append(r.Fresh, freshTriple(n, map[int]*judge.Verdict{6: verdictOf(judge.Pass), 8: verdictOf(judge.Pass), 10: verdictOf(judge.Pass)}))
	}
	verdict.Decide(r)
	return r
}

// freshTriple is fresh triple n with verdicts at the probe turns.
func freshTriple(n int, v map[int]*judge.Verdict) record.Conversation {
	c := record.Conversation{Index: n, Control: record.ArmFresh, Status: record.StatusCompleted}
	for _, t := range turns(c.DirName(), v, nil) {
		if t.Kind == "probe" {
			t.SessionID = fmt.Sprintf("9a8b7c6d-0000-4000-8000-0000000%d%04d", n, t.Turn)
			c.Turns = append(c.Turns, t)
		}
	}
	return c
}

// fieldsOf lists every field of t and the types it reaches, as Type.Field.
func fieldsOf(t reflect.Type, out map[string]bool) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		if t == reflect.TypeOf(json.RawMessage{}) {
			return
		}
		fieldsOf(t.Elem(), out)
		return
	case reflect.Struct:
	default:
		return
	}
	if t == reflect.TypeOf(time.Time{}) {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("json") == "-" {
			continue
		}
		key := t.String() + "." + f.Name
		if out[key] {
			continue
		}
		out[key] = true
		fieldsOf(f.Type, out)
	}
}

// setFields lists the Type.Field that hold a non-zero value somewhere in v.
func setFields(v reflect.Value, out map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			setFields(v.Elem(), out)
		}
	case reflect.Slice, reflect.Array:
		if v.Type() == reflect.TypeOf(json.RawMessage{}) {
			return
		}
		for i := 0; i < v.Len(); i++ {
			setFields(v.Index(i), out)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			setFields(it.Value(), out)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if !v.Field(i).IsZero() && (v.Field(i).Kind() != reflect.Slice || v.Field(i).Len() > 0) {
				out[v.Type().String()+"."+f.Name] = true
			}
			setFields(v.Field(i), out)
		}
	}
}

// anyRule is populated() decided by seed 002's rule, which also prints the
// chance it fires on a stable skill.
func anyRule() *record.Run {
	r := populated()
	r.Config.Rule = record.RuleAnyProbeFailed
	r.Fresh[0].Turns[1].Verdict = verdictOf(judge.Fail)   // fresh reliability below 100%
	r.Conversations[0].Turns[7].Verdict.SetupProblem = "" // so the rule, not the set-up, decides
	verdict.Decide(r)
	return r
}

// repeated is a verdict of --judge-repeats 3 whose judgements all agree.
func repeated(res string) *judge.Verdict {
	v := verdictOf(res)
	v.Attempts, v.CostUSD, v.Tokens = 3, 0.006, 9300
	for i := 0; i < 3; i++ {
		v.Repeats = append(v.Repeats, judge.RepeatVerdict{Result: res})
	}
	v.Agreement = map[string]float64{"runs-census": 1, "no-ledger-rewrite": 1, "answers-from-census": 1}
	return v
}

// controlled is a run under --judge-repeats 3 --control no-skill: both
// conversations fail probes, one judged turn is uncertain (its judgements
// disagree) and a control turn is a judge error (one judgement errored).
// The fresh arm tells decay (conversation 1 at turn 8, conversation 2 at
// turn 10) from a probe the skill never handles (conversation 1 at turn 10).
func controlled() *record.Run {
	r := populated()
	r.GateBypassed, r.Error = false, ""
	r.Config.Conversations, r.Config.NoBaselineGate, r.Config.JudgeRepeats = 2, false, 3
	r.Config.Controls = []string{record.ControlNoSkill}
	r.Config.Args = []string{"./stock-ledger", "--judge-repeats", "3", "--control", "no-skill"}

	unsure := repeated(judge.Pass)
	unsure.Result, unsure.Error = judge.Uncertain, "the judge's repeated verdicts disagree"
	unsure.Repeats[1] = judge.RepeatVerdict{Result: judge.Fail, EscapeHatch: true}
	unsure.Agreement["runs-census"] = 2.0 / 3
	broken := repeated(judge.Pass)
	broken.Result, broken.Error, broken.Agreement = judge.JudgeError, "judge answer does not parse: unexpected EOF", nil
	broken.Repeats[2] = judge.RepeatVerdict{Result: judge.JudgeError, Error: broken.Error}

	fillers := r.Plan.Fillers[:2]
	r.Plan.Fillers = fillers
	measured := func(n int, v map[int]*judge.Verdict) record.Conversation {
		return record.Conversation{Index: n, SessionID: fmt.Sprintf("5e0c1d2a-0000-4000-8000-00000000000%d", n), Status: record.StatusCompleted,
			Fillers: fillers[n-1], Turns: turns(fmt.Sprintf("conv-%d", n), v, nil)}
	}
	noSkill := func(n int, v map[int]*judge.Verdict) record.Conversation {
		c := record.Conversation{Index: n, Control: record.ControlNoSkill, Status: record.StatusCompleted, Fillers: fillers[n-1]}
		c.Turns = turns(c.DirName(), v, nil)
		for i := range c.Turns {
			c.Turns[i].SkillInvoked = false
		}
		return c
	}
	r.Conversations = []record.Conversation{
		measured(1, map[int]*judge.Verdict{1: repeated(judge.Pass), 6: repeated(judge.Pass), 8: repeated(judge.Fail), 10: repeated(judge.Fail)}),
		measured(2, map[int]*judge.Verdict{1: repeated(judge.Pass), 6: repeated(judge.Pass), 8: unsure, 10: repeated(judge.Fail)}),
	}
	r.Controls = []record.Conversation{
		noSkill(1, map[int]*judge.Verdict{1: repeated(judge.Fail), 6: repeated(judge.Fail), 8: broken, 10: repeated(judge.Fail)}),
		noSkill(2, map[int]*judge.Verdict{1: repeated(judge.Pass), 6: repeated(judge.Fail), 8: repeated(judge.Fail), 10: repeated(judge.Pass)}),
	}
	r.Fresh = []record.Conversation{
		freshTriple(1, map[int]*judge.Verdict{6: repeated(judge.Pass), 8: repeated(judge.Pass), 10: repeated(judge.Fail)}),
		freshTriple(2, map[int]*judge.Verdict{6: repeated(judge.Pass), 8: repeated(judge.Pass), 10: repeated(judge.Pass)}),
	}
	verdict.Decide(r)
	return r
}

// uncertain is controlled() with no probe failed: what keeps it from no
// decay is the uncertain turn.
func uncertain() *record.Run {
	r := controlled()
	r.Conversations[0].TurnAt(8).Verdict = repeated(judge.Pass)
	r.Conversations[0].TurnAt(10).Verdict = repeated(judge.Pass)
	r.Conversations[1].TurnAt(10).Verdict = repeated(judge.Pass)
	verdict.Decide(r)
	return r
}

// sequential is a run under --until-decided in batches of one, capped at
// four conversations, each failing one probe (the first at turn 8, the
// others at turn 6): the looks continue, and the cap is reached with
// neither decay nor held shown.
func sequential() *record.Run {
	r := uncertain()
	r.Controls, r.Config.Controls = nil, nil
	r.Config.Conversations = 1
	r.Config.Args = []string{"./stock-ledger", "--judge-repeats", "3", "--until-decided", "--conversations", "1", "--max-conversations", "2"}
	r.Conversations[0].TurnAt(8).Verdict = repeated(judge.Fail)
	r.Conversations[1].TurnAt(6).Verdict = repeated(judge.Fail)
	// Two more conversations like the second, so the last look can say
	// what drop the run could catch.
	for n := 3; n <= 4; n++ {
		c, f := r.Conversations[1], r.Fresh[1]
		c.Index, f.Index = n, n
		c.Turns = slices.Clone(c.Turns)
		t := *c.TurnAt(6)
		t.Verdict = repeated(judge.Pass)
		c.Turns[slices.IndexFunc(c.Turns, func(x record.Turn) bool { return x.Turn == 6 })] = t
		r.Conversations, r.Fresh = append(r.Conversations, c), append(r.Fresh, f)
	}
	r.Sequential = &record.Sequential{Alpha: 0.05, Max: 4, Batch: 1, Effect: 0.3, Decision: record.SeqContinue}
	all := r.Conversations
	for n := 1; n <= 4; n++ {
		part := *r
		part.Conversations = all[:n]
		verdict.Observe(r.Sequential, &part)
	}
	verdict.Decide(r)
	// From four conversations the power figures (the baseline rate drawn
	// from its posterior's lower quarter) claim nothing; the schema covers
	// the figures a larger run has.
	last := &r.Sequential.Looks[len(r.Sequential.Looks)-1]
	if last.MinDetectableDrop == 0 {
		last.MinDetectableDrop, last.Power = 0.62, 0.81
	}
	if r.Outcome.Stats.MinDetectableDrop == 0 {
		r.Outcome.Stats.MinDetectableDrop, r.Outcome.Stats.UnitsForEffect = 0.62, 14
	}
	return r
}

// diluted is a run with a diluted-to schedule of work fillers and a
// compaction before probe 2: its probes sit at turns the seed's schedule
// never has (4, 9 and 13), each numbered, one asked short of its level,
// the CLI compacted on its own once, and turn 12 ran again after a
// timeout, past the seed's ten turns.
func diluted() *record.Run {
	r := populated()
	r.Plan.Schedule = &plan.Schedule{DiluteTo: []int64{30000, 60000, 90000}, CompactBefore: []int{2}, CompactAt: 200000, Fillers: plan.FillersWork, MaxFillers: 8}
	r.Conversations = r.Conversations[:1]
	c := &r.Conversations[0]
	c.Abandoned, c.ModelChange = nil, ""
	c.Rewinds = []record.Rewind{{Turn: 12, RemovedBytes: 4096, RemovedLines: 5, Reason: record.TurnTimedOut}}
	var ts []record.Turn
	probe := map[int]int{4: 1, 9: 2, 13: 3}
	for n := 1; n <= 13; n++ {
		t := record.Turn{Turn: n, Kind: plan.KindFiller, Prompt: "Run `tail -n 200 ops/logs/api.log` and sum up the errors; change nothing.",
			FillerID: "work-api-log", Transcript: fmt.Sprintf("conv-1/turn-%02d.jsonl", n), Status: record.TurnOK, DurationMS: 3100,
			ToolCalls: []record.Call{}, APICalls: 2, ContextTokens: int64(9000 * n), CostUSD: 0.02}
		switch {
		case n == 1:
			t.Kind, t.FillerID, t.Verdict = plan.KindBase, "", verdictOf(judge.Pass)
		case probe[n] > 0:
			t.Kind, t.FillerID, t.Probe, t.ContextBefore = plan.KindProbe, "", probe[n], int64(9000*(n-1))
			t.Level = r.Plan.Schedule.DiluteTo[probe[n]-1]
			t.Verdict = verdictOf(judge.Pass)
		}
		if n >= 9 {
			t.AfterCompaction = true
		}
		ts = append(ts, t)
	}
	ts[8].Compactions = []record.Compaction{{Trigger: "manual", PreTokens: 72000, PostTokens: 6100, Transcript: "conv-1/turn-09.compact.jsonl", CostUSD: 0.04, DurationMS: 5200}}
	ts[8].Verdict = verdictOf(judge.Fail)
	ts[12].LevelNotReached = true
	ts[11].Compactions = []record.Compaction{{Trigger: "auto", PreTokens: 88000, PostTokens: 7000}}
	c.Turns = ts
	c.Fillers = []string{"work-api-log"}
	r.Plan.Fillers = [][]string{c.Fillers}
	r.Fresh = r.Fresh[:1]
	verdict.Decide(r)
	return r
}

// The populated runs must exercise every field, or a new field could slip
// past the schema unchecked.
func TestPopulatedSetsEveryField(t *testing.T) {
	all, set := map[string]bool{}, map[string]bool{}
	fieldsOf(reflect.TypeOf(record.Run{}), all)
	for _, r := range []*record.Run{populated(), anyRule(), controlled(), uncertain(), sequential(), diluted()} {
		setFields(reflect.ValueOf(r), set)
	}
	var missing []string
	for f := range all {
		if !set[f] {
			missing = append(missing, f)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("populated(), anyRule(), controlled(), uncertain(), sequential() and diluted() leave these fields zero; set them, and add them to run.schema.json:\n  %s", strings.Join(missing, "\n  "))
	}
}

func TestPopulatedRunValidates(t *testing.T) {
	sch := compile(t)
	r := populated()
	dir := t.TempDir()
	if err := record.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(sch, b); err != nil {
		t.Fatalf("run.json of a populated run does not validate:\n%v", err)
	}
	if r.Outcome.Verdict != record.VerdictSetup || r.Outcome.Exit != 3 || r.Outcome.Notes[0] != banner {
		t.Fatalf("the populated run is not the bypassed run with a set-up problem it means to be: %+v", r.Outcome)
	}

	// Seed 002's rule on the same run fires, and says how often it would on
	// a stable skill.
	r = anyRule()
	if r.Outcome.Verdict != record.VerdictDecay || r.Outcome.Exit != 1 || r.Outcome.AnyFailureChance == 0 {
		t.Fatalf("anyRule() is not the seed-rule decay it means to be: %+v", r.Outcome)
	}
	b, err = json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(sch, b); err != nil {
		t.Fatalf("run.json of an any-probe-failed run does not validate:\n%v", err)
	}

	// Controls, judge repeats and --until-decided.
	for _, c := range []struct {
		name    string
		run     *record.Run
		verdict string
		exit    int
	}{
		{"controlled", controlled(), record.VerdictDecay, 1},
		{"uncertain", uncertain(), record.VerdictNotEnough, 0},
		{"sequential", sequential(), record.VerdictNotEnough, 0},
		{"diluted", diluted(), record.VerdictNotEnough, 0},
	} {
		o := c.run.Outcome
		if o.Verdict != c.verdict || o.Exit != c.exit || (o.Uncertain < 1 && c.name != "diluted") {
			t.Fatalf("%s is not the %s run it means to be: %+v", c.name, c.verdict, o)
		}
		b, err := json.Marshal(c.run)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(sch, b); err != nil {
			t.Fatalf("run.json of the %s run does not validate:\n%v", c.name, err)
		}
	}
	o := controlled().Outcome
	kinds := map[string]int{}
	for _, s := range o.Controls {
		kinds[s.Control]++
	}
	if kinds[record.ControlNoSkill] != 4 || len(o.Stats.Probes) != 3 || o.Stats.Probes[0].FreshN != 2 {
		t.Fatalf("controlled() compares with its controls and fresh arm other than it means to: %+v %+v", o.Controls, o.Stats.Probes)
	}
	if s := sequential().Sequential; len(s.Looks) != 4 || s.Looks[0].Decision != record.SeqContinue || s.Decision != record.SeqNotEnuf || s.Looks[3].MinDetectableDrop == 0 {
		t.Fatalf("sequential() does not continue, then reach the cap: %+v", s)
	}
}

// Records as they sit on disk during a run: run.json is rewritten after
// every step, long before the outcome is decided.
func TestMidRunRecordsValidate(t *testing.T) {
	sch := compile(t)
	start := &record.Run{
		SchemaVersion: record.SchemaVersion, Status: record.StatusRunning, StartedAt: time.Now().UTC(),
		Versions:  record.Versions{VibeTest: "dev", Claude: "2.1.328", ClaudeVerified: "2.1.328", RubricPrompt: rubric.PromptVersion, JudgePrompt: judge.PromptVersion, RunSchema: record.SchemaVersion},
		Skill:     record.Skill{Name: "stock-ledger", Path: "SKILL.md", Hash: "sha256:00"},
		Config:    record.Config{Conversations: 2, TurnTimeout: "10m0s", MaxRetries: 2},
		Isolation: "author-config",
	}
	pending := *start
	pending.Conversations = []record.Conversation{{Index: 1, Status: "pending", Fillers: []string{"a"}, Turns: []record.Turn{}}}
	// A turn recorded from a parsed claude.Turn with no calls; a conversation
	// built without turns (its fillers and turns marshal as null).
	running := pending
	running.Conversations = []record.Conversation{
		{Index: 1, Status: record.StatusRunning, Turns: []record.Turn{{Turn: 1, Kind: "base", Status: record.TurnOK, ToolCalls: record.CallsOf(claude.Turn{}, nil)}}},
		{Index: 2, Status: "pending"},
	}
	// --until-decided before its first look; controls not started.
	seq := pending
	seq.Sequential = &record.Sequential{Alpha: 0.05, Effect: 0.3, Max: 20, Batch: 2, Decision: record.SeqContinue}
	controls := pending
	controls.Controls = []record.Conversation{{Index: 1, Control: record.ControlNoSkill, Status: "pending", Turns: []record.Turn{}}}
	controls.Fresh = []record.Conversation{record.FreshTriple(1)}
	for name, r := range map[string]*record.Run{"at start": start, "pending": &pending, "running": &running, "sequential": &seq, "controls": &controls} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(sch, b); err != nil {
			t.Errorf("%s: %v\n%s", name, err, b)
		}
	}
}

// clone is a deep copy of a decoded JSON object.
func clone(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// Invalid documents are rejected, each for the reason it is invalid: each
// case breaks one thing in populated()'s run.json, which validates as is.
// The schema-1 cases are records of the pre-release design, which
// record.Load refuses too.
func TestRejects(t *testing.T) {
	sch := compile(t)
	b, err := json.Marshal(populated())
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(sch, b); err != nil {
		t.Fatalf("populated() does not validate before any change:\n%v", err)
	}
	conv0 := func(doc map[string]any) map[string]any { return doc["conversations"].([]any)[0].(map[string]any) }
	turn := func(doc map[string]any, i int) map[string]any { return conv0(doc)["turns"].([]any)[i].(map[string]any) }
	outcome := func(doc map[string]any) map[string]any { return doc["outcome"].(map[string]any) }
	stats := func(doc map[string]any) map[string]any { return outcome(doc)["stats"].(map[string]any) }
	config := func(doc map[string]any) map[string]any { return doc["config"].(map[string]any) }
	// seq is an --until-decided record before its first look.
	seq := func() map[string]any {
		return map[string]any{"alpha": 0.05, "max_conversations": 20, "batch": 2, "effect": 0.3, "looks": nil, "decision": "continue"}
	}
	cases := []struct {
		name   string
		mutate func(doc map[string]any)
		want   string // in the error
	}{
		{"wrong run status", func(d map[string]any) { d["status"] = "done" }, "/status"},
		{"missing schema_version", func(d map[string]any) { delete(d, "schema_version") }, "schema_version"},
		{"newer schema_version", func(d map[string]any) { d["schema_version"] = 4 }, "/schema_version"},
		{"schema_version 1", func(d map[string]any) { d["schema_version"] = 1 }, "/schema_version"},
		{"wrong conversation status", func(d map[string]any) { conv0(d)["status"] = "finished" }, "/conversations/0/status"},
		{"wrong turn kind", func(d map[string]any) { turn(d, 0)["kind"] = "baseline" }, "/conversations/0/turns/0/kind"},
		{"probe turn labelled filler", func(d map[string]any) { turn(d, 5)["kind"] = "filler" }, "/conversations/0/turns/5"},
		{"wrong turn status", func(d map[string]any) { turn(d, 1)["status"] = "timeout" }, "/conversations/0/turns/1/status"},
		{"wrong verdict result", func(d map[string]any) { turn(d, 0)["verdict"].(map[string]any)["result"] = "PASS" }, "/conversations/0/turns/0/verdict/result"},
		{"unknown key", func(d map[string]any) { d["exit_code"] = 1 }, "exit_code"},
		{"missing turns", func(d map[string]any) { delete(conv0(d), "turns") }, "turns"},
		{"missing fresh", func(d map[string]any) { delete(d, "fresh") }, "fresh"},
		{"verdict and exit code disagree", func(d map[string]any) { outcome(d)["exit_code"] = 0 }, "/outcome/exit_code"},
		{"decay exits 0", func(d map[string]any) { outcome(d)["verdict"], outcome(d)["exit_code"] = "decay", 0 }, "/outcome/exit_code"},
		{"wrong started_at", func(d map[string]any) { d["started_at"] = "yesterday" }, "/started_at"},
		{"alpha out of range", func(d map[string]any) { config(d)["alpha"] = 0.5 }, "/config/alpha"},
		{"wrong rule", func(d map[string]any) { config(d)["rule"] = "any" }, "/config/rule"},
		{"wrong probe number", func(d map[string]any) { stats(d)["probes"].([]any)[0].(map[string]any)["probe"] = 4 }, "/outcome/stats/probes/0/probe"},
		{"turn 0 in per_turn", func(d map[string]any) { stats(d)["per_turn"].([]any)[1].(map[string]any)["turn"] = 0 }, "/outcome/stats/per_turn/1/turn"},
		{"rate above 1", func(d map[string]any) { stats(d)["per_turn"].([]any)[0].(map[string]any)["rate"] = 1.5 }, "/outcome/stats/per_turn/0/rate"},
		{"wrong arm", func(d map[string]any) { stats(d)["per_turn"].([]any)[0].(map[string]any)["arm"] = "measured" }, "/outcome/stats/per_turn/0/arm"},
		{"stats missing a key", func(d map[string]any) { delete(stats(d), "min_detectable_drop") }, "min_detectable_drop"},
		{"unknown stats key", func(d map[string]any) { stats(d)["power"] = 0.5 }, "power"},
		{"outcome missing its rule", func(d map[string]any) { delete(outcome(d), "rule") }, "rule"},
		{"wrong attempt status", func(d map[string]any) {
			turn(d, 3)["attempts"].([]any)[0].(map[string]any)["status"] = "overloaded"
		}, "/conversations/0/turns/3/attempts/0/status"},
		{"wrong sequential decision", func(d map[string]any) {
			s := seq()
			s["decision"] = "stop"
			d["sequential"] = s
		}, "/sequential/decision"},
		{"sequential alpha of 0.5", func(d map[string]any) {
			s := seq()
			s["alpha"] = 0.5
			d["sequential"] = s
		}, "/sequential/alpha"},
		{"uncertain turn without repeats", func(d map[string]any) {
			v := turn(d, 0)["verdict"].(map[string]any)
			v["result"], v["error"] = "uncertain", "the judge's repeated verdicts disagree"
		}, "/conversations/0/turns/0/verdict"},
		{"single escape hatch not failed", func(d map[string]any) {
			v := turn(d, 9)["verdict"].(map[string]any)
			v["escape_hatch"], v["result"], v["escape_reason"] = true, "uncertain", "answered from memory"
			v["error"] = "the judge's repeated verdicts disagree"
		}, "/conversations/0/turns/9/verdict/result"},
		{"wrong repeat result", func(d map[string]any) {
			v := turn(d, 0)["verdict"].(map[string]any)
			v["repeats"] = []any{map[string]any{"result": "pass", "escape_hatch": false}, map[string]any{"result": "uncertain", "escape_hatch": false}}
		}, "/conversations/0/turns/0/verdict/repeats/1/result"},
		{"agreement above 1", func(d map[string]any) {
			turn(d, 0)["verdict"].(map[string]any)["agreement"] = map[string]any{"runs-census": 1.5}
		}, "/conversations/0/turns/0/verdict/agreement/runs-census"},
		{"measured conversation marked control", func(d map[string]any) { conv0(d)["control"] = "no-skill" }, "/conversations/0"},
		{"control without its kind", func(d map[string]any) { d["controls"] = []any{clone(conv0(d))} }, "/controls/0"},
		{"wrong control kind", func(d map[string]any) {
			c := clone(conv0(d))
			c["control"] = "diluted"
			d["controls"] = []any{c}
		}, "/controls/0/control"},
		{"wrong config control", func(d map[string]any) { config(d)["controls"] = []any{"baseline"} }, "/config/controls/0"},
		{"judge_repeats 0", func(d map[string]any) { config(d)["judge_repeats"] = 0 }, "/config/judge_repeats"},
		{"no-skill control stat counts decay", func(d map[string]any) {
			outcome(d)["controls"] = []any{map[string]any{
				"control": "no-skill", "turn": 1, "passes": 2, "n": 2, "control_passes": 0, "control_n": 2,
				"lift": 1, "p": 0.17, "reading": "the skill lifts the pass rate by 100 points", "decayed": 1,
			}}
		}, "/outcome/controls/0"},
		{"bypassed without the banner", func(d map[string]any) { outcome(d)["notes"] = []any{"turn 1 failed"} }, "/outcome"},
		{"bypassed without --no-baseline-gate", func(d map[string]any) { config(d)["no_baseline_gate"] = false }, "/config/no_baseline_gate"},
		{"schema-1 gate", func(d map[string]any) { config(d)["gate"] = "any" }, "'gate'"},
		{"schema-1 verdict", func(d map[string]any) { outcome(d)["verdict"], outcome(d)["exit_code"] = "not-comparable", 2 }, "/outcome/verdict"},
		{"schema-1 undiluted control", func(d map[string]any) {
			c := clone(conv0(d))
			c["control"] = "undiluted"
			d["controls"] = []any{c}
		}, "/controls/0/control"},
		{"schema-1 paired statistics", func(d map[string]any) { stats(d)["paired"] = []any{} }, "'paired'"},
		{"schema-1 SPRT settings", func(d map[string]any) {
			s := seq()
			s["p0"], s["p1"], s["beta"] = 0.05, 0.45, 0.2
			d["sequential"] = s
		}, "'p0'"},
		{"schema-1 SPRT look", func(d map[string]any) {
			s := seq()
			s["looks"] = []any{map[string]any{"conversations": 2, "observations": 2, "decayed": 1, "llr": 1.6, "decision": "continue"}}
			d["sequential"] = s
		}, "'llr'"},
		{"schema-1 SPRT decision", func(d map[string]any) {
			s := seq()
			s["decision"] = "cap"
			d["sequential"] = s
		}, "/sequential/decision"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			c.mutate(doc)
			mb, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			err = validate(sch, mb)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("rejected, but the error does not point at %q:\n%v", c.want, err)
			}
		})
	}
}

// The schema's enums list exactly the values the Go code writes.
func TestEnumsMatchGo(t *testing.T) {
	var s struct {
		Defs map[string]struct {
			Enum []any `json:"enum"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(RunSchema, &s); err != nil {
		t.Fatal(err)
	}
	enum := func(def string) []string {
		var out []string
		for _, v := range s.Defs[def].Enum {
			out = append(out, fmt.Sprint(v))
		}
		sort.Strings(out)
		return out
	}
	runStatuses := []string{record.StatusRunning, record.StatusCompleted, record.StatusBaselineFailed, record.StatusError, record.StatusInterrupted, record.StatusBudgetExhausted}
	var kinds, judged, probes []string
	for n := 1; n <= plan.Turns; n++ {
		if !slices.Contains(kinds, plan.Kind(n)) {
			kinds = append(kinds, plan.Kind(n))
		}
		if plan.Kind(n) != "filler" {
			judged = append(judged, fmt.Sprint(n))
		}
		if plan.Kind(n) == "probe" {
			probes = append(probes, fmt.Sprint(n))
		}
	}
	want := map[string][]string{
		"agentName":          agents.Names,
		"runStatus":          runStatuses,
		"conversationStatus": append(slices.Clone(runStatuses), "pending"),
		"turnStatus":         {record.TurnOK, record.TurnError, record.TurnTimedOut, record.TurnPromptTooLong},
		"turnKind":           kinds,
		"shape":              {record.ShapeHeld, record.ShapeDecayed, record.ShapeNeverWorked, record.ShapeUnstable, record.ShapeBaselineFailed},
		"control":            {record.ControlNoSkill, record.ArmFresh},
		"rule":               {record.RuleDilutedVsFresh, record.RuleAnyProbeFailed},
		"seqDecision":        {record.SeqContinue, record.SeqDecay, record.SeqHeld, record.SeqNotEnuf},
		"judgeResult":        {judge.Pass, judge.Fail, judge.JudgeError, judge.Uncertain},
		"repeatResult":       {judge.Pass, judge.Fail, judge.JudgeError},
	}
	for def, w := range want {
		sort.Strings(w)
		if got := enum(def); !slices.Equal(got, w) {
			t.Errorf("$defs/%s enum %v, Go writes %v", def, got, w)
		}
	}
	// The outcome's verdicts are the Verdict constants, and "" while
	// undecided.
	var o struct {
		Defs struct {
			Outcome struct {
				Properties struct {
					Verdict struct {
						Enum []string `json:"enum"`
					} `json:"verdict"`
				} `json:"properties"`
			} `json:"outcome"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(RunSchema, &o); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(o.Defs.Outcome.Properties.Verdict.Enum))
	w := []string{record.VerdictDecay, record.VerdictHeld, record.VerdictNotEnough, record.VerdictNoProbeFailed, record.VerdictBaselineFailed,
		record.VerdictError, record.VerdictSetup, record.VerdictBudget, record.VerdictInterrupted, ""}
	sort.Strings(w)
	if !slices.Equal(got, w) {
		t.Errorf("$defs/outcome verdict enum %q, Go writes %q", got, w)
	}
	// The statistics cover exactly the judged turns, and the probes fresh.
	st := populated().Outcome.Stats
	var perTurn, fresh []string
	for _, ts := range st.PerTurn {
		if ts.Arm == "fresh" {
			fresh = append(fresh, fmt.Sprint(ts.Turn))
		} else {
			perTurn = append(perTurn, fmt.Sprint(ts.Turn))
		}
	}
	sort.Strings(perTurn)
	sort.Strings(fresh)
	sort.Strings(probes)
	sort.Strings(judged)
	if !slices.Equal(perTurn, judged) || !slices.Equal(fresh, probes) {
		t.Errorf("stats cover turns %v and fresh probes %v; the seed's schedule judges turns %v", perTurn, fresh, judged)
	}
}

// jsonKeys lists the keys a struct marshals, with whether each is always
// written (no omitempty or omitzero).
func jsonKeys(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		always := true
		for _, o := range strings.Split(opts, ",") {
			if o == "omitempty" || o == "omitzero" {
				always = false
			}
		}
		out[name] = always
	}
	return out
}

// Every object in the schema has exactly the keys its Go type marshals, and
// requires exactly the ones always written. Schema 3 added no key that is
// always written (turn.probe, plan.schedule, compactions and the rest are
// omitempty), so schema-2 records need no exemption.
func TestKeysMatchGo(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(RunSchema, &doc); err != nil {
		t.Fatal(err)
	}
	at := func(ptr string) map[string]any {
		v := any(doc)
		for _, p := range strings.Split(ptr, "/") {
			if p != "" {
				v = v.(map[string]any)[p]
			}
		}
		return v.(map[string]any)
	}
	objects := map[string]reflect.Type{
		"":                                   reflect.TypeOf(record.Run{}),
		"$defs/versions":                     reflect.TypeOf(record.Versions{}),
		"$defs/skill":                        reflect.TypeOf(record.Skill{}),
		"$defs/config":                       reflect.TypeOf(record.Config{}),
		"$defs/costs":                        reflect.TypeOf(record.Costs{}),
		"$defs/rubric":                       reflect.TypeOf(rubric.Rubric{}),
		"$defs/criterion":                    reflect.TypeOf(rubric.Criterion{}),
		"$defs/criterion/properties/check":   reflect.TypeOf(rubric.Check{}),
		"$defs/plan":                         reflect.TypeOf(plan.Plan{}),
		"$defs/plan/properties/probes/items": reflect.TypeOf(plan.Probe{}),
		"$defs/schedule":                     reflect.TypeOf(plan.Schedule{}),
		"$defs/compaction":                   reflect.TypeOf(record.Compaction{}),
		"$defs/conversation":                 reflect.TypeOf(record.Conversation{}),
		"$defs/turn":                         reflect.TypeOf(record.Turn{}),
		"$defs/call":                         reflect.TypeOf(record.Call{}),
		"$defs/hook":                         reflect.TypeOf(record.Hook{}),
		"$defs/attempt":                      reflect.TypeOf(record.Attempt{}),
		"$defs/rewind":                       reflect.TypeOf(record.Rewind{}),
		"$defs/verdict":                      reflect.TypeOf(judge.Verdict{}),
		"$defs/repeatVerdict":                reflect.TypeOf(judge.RepeatVerdict{}),
		"$defs/criterionVerdict":             reflect.TypeOf(judge.CriterionVerdict{}),
		"$defs/outcome":                      reflect.TypeOf(record.Outcome{}),
		"$defs/stats":                        reflect.TypeOf(record.Stats{}),
		"$defs/turnStat":                     reflect.TypeOf(record.TurnStat{}),
		"$defs/probeComparison":              reflect.TypeOf(record.ProbeComparison{}),
		"$defs/dropped":                      reflect.TypeOf(record.Dropped{}),
		"$defs/twoArm":                       reflect.TypeOf(stats.TwoArm{}),
		"$defs/armSummary":                   reflect.TypeOf(stats.ArmSummary{}),
		"$defs/controlStat":                  reflect.TypeOf(record.ControlStat{}),
		"$defs/sequential":                   reflect.TypeOf(record.Sequential{}),
		"$defs/look":                         reflect.TypeOf(record.Look{}),
	}
	// Every struct record.Run reaches is listed.
	all := map[string]bool{}
	fieldsOf(reflect.TypeOf(record.Run{}), all)
	listed := map[string]bool{}
	for _, typ := range objects {
		listed[typ.String()] = true
	}
	for f := range all {
		if typ := f[:strings.LastIndex(f, ".")]; !listed[typ] {
			t.Errorf("%s: its type has no entry in TestKeysMatchGo's objects", f)
		}
	}
	for ptr, typ := range objects {
		obj := at(ptr)
		if obj["additionalProperties"] != false {
			t.Errorf("#/%s (%s) is not closed", ptr, typ)
		}
		props := map[string]bool{}
		for k := range obj["properties"].(map[string]any) {
			props[k] = true
		}
		required := map[string]bool{}
		for _, k := range obj["required"].([]any) {
			required[k.(string)] = true
		}
		keys := jsonKeys(typ)
		for k, always := range keys {
			switch {
			case !props[k]:
				t.Errorf("#/%s lacks %s.%s (%q)", ptr, typ, k, k)
			case always && !required[k]:
				t.Errorf("#/%s does not require %q, which %s always writes", ptr, k, typ)
			case required[k] && !always:
				t.Errorf("#/%s requires %q, which %s omits when empty", ptr, k, typ)
			}
		}
		for k := range props {
			if _, ok := keys[k]; !ok {
				t.Errorf("#/%s has %q, which %s does not marshal", ptr, k, typ)
			}
		}
	}
}

// run.json's "jail" takes exactly the values package jail writes.
func TestJailEnumMatchesGo(t *testing.T) {
	var s struct {
		Properties map[string]struct {
			Enum []any `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(RunSchema, &s); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range s.Properties["jail"].Enum {
		got = append(got, fmt.Sprint(v))
	}
	slices.Sort(got)
	if want := []string{jail.Bubblewrap, jail.None}; !slices.Equal(got, want) {
		t.Errorf("the schema's jail enum is %v, Go writes %v", got, want)
	}
}
