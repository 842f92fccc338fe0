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
	"github.com/vibe-test/vibe-test/claude"
	"github.com/vibe-test/vibe-test/judge"
	"github.com/vibe-test/vibe-test/plan"
	"github.com/vibe-test/vibe-test/result"
	"github.com/vibe-test/vibe-test/rubric"
)

// schemaID is the schema's $id.
const schemaID = "https://github.com/vibe-test/vibe-test/schema/run.schema.json"

const banner = "BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve."

func compile(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(RunSchema))
	if err != nil {
		t.Fatalf("run.schema.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(schemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(schemaID)
	if err != nil {
		t.Fatalf("run.schema.json does not compile: %v", err)
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

// populated is a finished run that sets every field of every type in
// result.Run somewhere (TestPopulatedSetsEveryField checks), so a field the
// schema does not know is caught by additionalProperties.
func populated() *result.Run {
	rb := &rubric.Rubric{Source: "extracted", Model: "sonnet", Criteria: []rubric.Criterion{
		{ID: "runs-census", Kind: rubric.Must, Text: "runs scripts/census.sh with Bash before answering",
			Check: &rubric.Check{Tool: "Bash", Pattern: `census\.sh`, Expect: "present"}},
		{ID: "no-ledger-rewrite", Kind: rubric.Must, Text: "never edits or rewrites ledger.log",
			Check: &rubric.Check{Tool: "Edit|Write", Pattern: `ledger\.log`, Expect: "absent"}},
		{ID: "answers-from-census", Kind: rubric.Should, Text: "answers only from the census output"},
	}}
	criteria := func(census string) []judge.CriterionVerdict {
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
	verdict := func(res string) *judge.Verdict {
		v := &judge.Verdict{Result: res, Attempts: 1, CostUSD: 0.002, Tokens: 3100, Model: "sonnet"}
		if res != judge.JudgeError {
			v.Criteria = criteria(res)
		} else {
			v.Error, v.Attempts = "judge answer omits criterion \"runs-census\"", 2
		}
		return v
	}
	turns := func(conv int, results map[int]*judge.Verdict, calls map[int]int) []result.Turn {
		var out []result.Turn
		for n := 1; n <= plan.Turns; n++ {
			t := result.Turn{
				Turn: n, Kind: plan.Kind(n), Prompt: "How many widgets do we have in stock right now?",
				Transcript: fmt.Sprintf("conv-%d/turn-%02d.jsonl", conv, n),
				Status:     result.TurnOK, DurationMS: 4200, SkillInvoked: true, APICalls: 3,
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
				t.ToolCalls = append(t.ToolCalls, result.Call{Name: "Bash", Input: json.RawMessage(`{"command":"sh scripts/census.sh widgets"}`), Result: "widgets 42"})
			}
			t.ToolCallCount = k
			out = append(out, t)
		}
		return out
	}

	// Conversation 1 decays: turn 8 fails, and at turn 10 the agent stops
	// consulting (no calls) and the judge flags an escape hatch.
	escape := verdict(judge.Fail)
	escape.EscapeHatch, escape.EscapeReason = true, "answered from memory"
	c1 := result.Conversation{
		Index: 1, SessionID: "0d6c2f4e-1b7a-4c59-9f0e-2a3b4c5d6e7f", Status: result.StatusCompleted,
		Fillers: []string{"refrigeration-cycle", "bee-communication", "houseplant-care", "city-water-cycle", "brewing-loose-leaf-tea", "choosing-a-bicycle"},
		Sandbox: "/tmp/repo-1a2b", Home: "/tmp/home-1a2b", ConfigDir: "/tmp/home-1a2b/.claude",
		Turns: turns(1, map[int]*judge.Verdict{1: verdict(judge.Pass), 6: verdict(judge.Pass), 8: verdict(judge.Fail), 10: escape}, map[int]int{10: 0}),
		Notes: []string{"turn 4 was run again after an API overload"},
	}
	c1.Turns[3].Retries = 2
	c1.Turns[3].Attempts = []result.Attempt{{Transcript: "conv-1/turn-04.attempt-1.jsonl", Status: result.TurnError, Error: "API overloaded (529)", ExitCode: 1, CostUSD: 0.01}}
	c1.Turns[0].ToolCalls[0].IsError = true
	// Conversation 2: the baseline failed, the gate was bypassed, the judge
	// over-called an escape hatch at turn 6 and errored at turn 8; turn 9
	// timed out once before it completed.
	partial := verdict(judge.Pass)
	partial.Partial, partial.OverCall, partial.EscapeReason = true, true, "did not re-read the ledger"
	c2 := result.Conversation{
		Index: 2, Status: result.StatusCompleted,
		Fillers: []string{"backyard-composting", "community-garden-plan", "bee-communication", "houseplant-care", "city-water-cycle", "choosing-a-bicycle"},
		Turns:   turns(2, map[int]*judge.Verdict{1: verdict(judge.Fail), 6: partial, 8: verdict(judge.JudgeError), 10: verdict(judge.Fail)}, nil),
		Abandoned: []result.Turn{{
			Turn: 9, Kind: "filler", Prompt: "Plan a two-day trip.", FillerID: "trip-planning", Transcript: "conv-2/turn-09.jsonl",
			Status: result.TurnTimedOut, Error: "timed out after 10m0s", ExitCode: -1, DurationMS: 600000, ToolCalls: []result.Call{},
		}},
	}
	// Conversation 3 stopped on an error in a filler.
	c3 := result.Conversation{
		Index: 3, Status: result.StatusError, Error: "turn 3: claude exited with status 1",
		Fillers: []string{"moving-budget", "photosynthesis", "how-tides-work", "sourdough-starter", "postal-service-history", "how-rainbows-form"},
		Turns:   turns(3, map[int]*judge.Verdict{1: verdict(judge.Pass)}, nil)[:2],
		Abandoned: []result.Turn{{
			Turn: 3, Kind: "filler", Prompt: "Explain photosynthesis.", FillerID: "photosynthesis", Transcript: "conv-3/turn-03.jsonl",
			Status: result.TurnError, Error: "claude exited with status 1", ExitCode: 1, DurationMS: 900,
		}},
	}

	r := &result.Run{
		SchemaVersion: result.SchemaVersion,
		Status:        result.StatusRunning,
		StartedAt:     time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC),
		FinishedAt:    time.Date(2026, 11, 30, 10, 41, 7, 250000000, time.UTC),
		Versions: result.Versions{
			VibeTest: "v0.3.0", Claude: "2.1.330 (Claude Code)", ClaudeVerified: "2.1.328", ClaudeMismatch: true,
			RubricPrompt: rubric.PromptVersion, JudgePrompt: judge.PromptVersion, RunSchema: result.SchemaVersion,
			ClaudeParserMsg: "claude 2.1.330 differs from 2.1.328",
		},
		Skill: result.Skill{Name: "stock-ledger", Path: "/work/skills/stock-ledger/SKILL.md", Hash: "sha256:9f2c4e"},
		Config: result.Config{
			Conversations: 3, Concurrency: 2, Model: "sonnet", JudgeModel: "sonnet", NoBaselineGate: true,
			TurnTimeout: "10m0s", MaxRetries: 2, ConfigFile: "/work/skills/stock-ledger/vibe-test.yaml",
			RubricFile: "/work/skills/stock-ledger/rubric.json", FillersDir: "/work/fillers", KeepSandbox: true,
			MaxBudgetUSD: 5, PassEnv: []string{"HTTP_PROXY"}, Args: []string{"./stock-ledger", "--no-baseline-gate"},
		},
		Isolation:    "hermetic",
		GateBypassed: true,
		Rubric:       rb,
		Plan: &plan.Plan{
			Source: "/work/skills/stock-ledger/vibe-test.yaml", BaseTask: "How many widgets do we have in stock right now?",
			Probes: []plan.Probe{
				{Task: "Quick one, how many gaskets are in stock?"},
				{Task: "We just got a delivery note, see deliveries.txt. How many hinges now?", Setup: map[string]string{"deliveries.txt": "hinges +10\n"}},
				{Task: "Before I close for the day, how many widgets are left?"},
			},
			Fixture: "/work/skills/stock-ledger/fixture", Files: map[string]string{".env": "API_URL=http://localhost:8080\n"},
			Model: "sonnet", JudgeModel: "sonnet", FillerSeed: 7,
			Fillers: [][]string{c1.Fillers, c2.Fillers, c3.Fillers},
		},
		Conversations: []result.Conversation{c1, c2, c3},
		Costs:         result.Costs{Agent: 0.61, Rubric: 0.04, Plan: 0.02, Judge: 0.016, Total: 0.686, JudgeTokens: 24800, RubricTokens: 5200},
		Error:         "chart.html could not be written",
	}
	result.Decide(r)
	return r
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

// The populated run must exercise every field, or a new field could slip
// past the schema unchecked.
func TestPopulatedSetsEveryField(t *testing.T) {
	all, set := map[string]bool{}, map[string]bool{}
	fieldsOf(reflect.TypeOf(result.Run{}), all)
	setFields(reflect.ValueOf(populated()), set)
	var missing []string
	for f := range all {
		if !set[f] {
			missing = append(missing, f)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("populated() leaves these fields zero; set them, and add them to run.schema.json:\n  %s", strings.Join(missing, "\n  "))
	}
}

func TestPopulatedRunValidates(t *testing.T) {
	sch := compile(t)
	r := populated()
	dir := t.TempDir()
	if err := result.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(sch, b); err != nil {
		t.Fatalf("run.json of a populated run does not validate:\n%v", err)
	}
	if r.Outcome.Verdict != "decay" || r.Outcome.Notes[0] != banner {
		t.Fatalf("the populated run is not the decaying, bypassed run it means to be: %+v", r.Outcome)
	}
}

// Records as they sit on disk during a run: run.json is rewritten after
// every step, long before the outcome is decided.
func TestMidRunRecordsValidate(t *testing.T) {
	sch := compile(t)
	start := &result.Run{
		SchemaVersion: result.SchemaVersion, Status: result.StatusRunning, StartedAt: time.Now().UTC(),
		Versions:  result.Versions{VibeTest: "dev", Claude: "2.1.328", ClaudeVerified: "2.1.328", RubricPrompt: rubric.PromptVersion, JudgePrompt: judge.PromptVersion, RunSchema: 1},
		Skill:     result.Skill{Name: "stock-ledger", Path: "SKILL.md", Hash: "sha256:00"},
		Config:    result.Config{Conversations: 2, TurnTimeout: "10m0s", MaxRetries: 2},
		Isolation: "author-config",
	}
	pending := *start
	pending.Conversations = []result.Conversation{{Index: 1, Status: "pending", Fillers: []string{"a"}, Turns: []result.Turn{}}}
	// A turn recorded from a parsed claude.Turn with no calls; a conversation
	// built without turns (its fillers and turns marshal as null).
	running := pending
	running.Conversations = []result.Conversation{
		{Index: 1, Status: result.StatusRunning, Turns: []result.Turn{{Turn: 1, Kind: "base", Status: result.TurnOK, ToolCalls: result.CallsOf(claude.Turn{})}}},
		{Index: 2, Status: "pending"},
	}
	for name, r := range map[string]*result.Run{"at start": start, "pending": &pending, "running": &running} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(sch, b); err != nil {
			t.Errorf("%s: %v\n%s", name, err, b)
		}
	}
}

func TestFixtureValidates(t *testing.T) {
	sch := compile(t)
	b, err := os.ReadFile(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(sch, b); err != nil {
		t.Fatalf("testdata/run-v1.json: %v", err)
	}
	// The fixture is a record vibe-test itself reads, with no key it does
	// not know, and whose outcome Decide agrees with.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r result.Run
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("testdata/run-v1.json is not a result.Run: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := result.Load(dir); err != nil {
		t.Fatal(err)
	}
	saved := r.Outcome
	shapes := []string{}
	for _, c := range r.Conversations {
		shapes = append(shapes, c.Shape)
	}
	result.Decide(&r)
	if !reflect.DeepEqual(saved, r.Outcome) {
		t.Errorf("the fixture's outcome is not what Decide makes of it:\n saved %+v\nDecide %+v", saved, r.Outcome)
	}
	for i, c := range r.Conversations {
		if c.Shape != shapes[i] {
			t.Errorf("conversation %d: fixture shape %q, Decide says %q", c.Index, shapes[i], c.Shape)
		}
	}
}

// Invalid documents are rejected, each for the reason it is invalid.
func TestRejects(t *testing.T) {
	sch := compile(t)
	b, err := os.ReadFile(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	conv0 := func(doc map[string]any) map[string]any { return doc["conversations"].([]any)[0].(map[string]any) }
	turn := func(doc map[string]any, i int) map[string]any { return conv0(doc)["turns"].([]any)[i].(map[string]any) }
	cases := []struct {
		name   string
		mutate func(doc map[string]any)
		want   string // in the error
	}{
		{"wrong run status", func(d map[string]any) { d["status"] = "done" }, "/status"},
		{"missing schema_version", func(d map[string]any) { delete(d, "schema_version") }, "schema_version"},
		{"newer schema_version", func(d map[string]any) { d["schema_version"] = 2 }, "/schema_version"},
		{"wrong conversation status", func(d map[string]any) { conv0(d)["status"] = "finished" }, "/conversations/0/status"},
		{"wrong turn kind", func(d map[string]any) { turn(d, 0)["kind"] = "baseline" }, "/conversations/0/turns/0/kind"},
		{"probe turn labelled filler", func(d map[string]any) { turn(d, 5)["kind"] = "filler" }, "/conversations/0/turns/5"},
		{"wrong turn status", func(d map[string]any) { turn(d, 1)["status"] = "timeout" }, "/conversations/0/turns/1/status"},
		{"wrong verdict result", func(d map[string]any) { turn(d, 0)["verdict"].(map[string]any)["result"] = "PASS" }, "/conversations/0/turns/0/verdict/result"},
		{"unknown key", func(d map[string]any) { d["exit_code"] = 1 }, "exit_code"},
		{"missing turns", func(d map[string]any) { delete(conv0(d), "turns") }, "turns"},
		{"verdict and exit code disagree", func(d map[string]any) { d["outcome"].(map[string]any)["exit_code"] = 0 }, "/outcome/exit_code"},
		{"wrong started_at", func(d map[string]any) { d["started_at"] = "yesterday" }, "/started_at"},
		{"bypassed without the banner", func(d map[string]any) {
			d["gate_bypassed"] = true
			d["config"].(map[string]any)["no_baseline_gate"] = true
		}, "/outcome"},
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
			out = append(out, v.(string))
		}
		sort.Strings(out)
		return out
	}
	runStatuses := []string{result.StatusRunning, result.StatusCompleted, result.StatusBaselineFailed, result.StatusError, result.StatusInterrupted, result.StatusBudgetExhausted}
	var kinds []string
	for n := 1; n <= plan.Turns; n++ {
		if !slices.Contains(kinds, plan.Kind(n)) {
			kinds = append(kinds, plan.Kind(n))
		}
	}
	want := map[string][]string{
		"runStatus":          runStatuses,
		"conversationStatus": append(slices.Clone(runStatuses), "pending"),
		"turnStatus":         {result.TurnOK, result.TurnError, result.TurnTimedOut, result.TurnPromptTooLong},
		"turnKind":           kinds,
		"shape":              {result.ShapeHeld, result.ShapeDecayed, result.ShapeNeverWorked, result.ShapeUnstable, result.ShapeBaselineFailed},
	}
	for def, w := range want {
		sort.Strings(w)
		if got := enum(def); !slices.Equal(got, w) {
			t.Errorf("$defs/%s enum %v, Go writes %v", def, got, w)
		}
	}
}
