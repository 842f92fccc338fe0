package summary

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/record"
)

func jsonOf(t *testing.T, r *record.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestJSONGolden(t *testing.T) {
	for _, g := range goldenRuns {
		t.Run(g.name, func(t *testing.T) {
			golden(t, "summary-"+g.name+".golden.json", jsonOf(t, g.run()))
		})
	}
}

func TestJSONDecay(t *testing.T) {
	r := decayRun()
	b := jsonOf(t, r)
	if !json.Valid(b) || bytes.Count(b, []byte("\n")) < 2 || !bytes.HasSuffix(b, []byte("}\n")) {
		t.Fatalf("not one JSON object:\n%s", b)
	}
	// The keys a consumer reads, and never a null list.
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema_version", "skill", "status", "gate_bypassed", "outcome", "conversations", "costs"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	if _, ok := raw["warning"]; ok {
		t.Error("warning on a run whose gate held")
	}
	if bytes.Contains(b, []byte("null")) {
		t.Errorf("a list is null:\n%s", b)
	}
	outcome := raw["outcome"].(map[string]any)
	for _, k := range []string{"verdict", "exit_code", "sentence", "notes", "stopped_consulting"} {
		if _, ok := outcome[k]; !ok {
			t.Errorf("outcome.%s missing", k)
		}
	}
	costs := raw["costs"].(map[string]any)
	for _, k := range []string{"agent_usd", "rubric_usd", "plan_usd", "judge_usd", "total_usd"} {
		if _, ok := costs[k]; !ok {
			t.Errorf("costs.%s missing", k)
		}
	}

	var s JSONSummary
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.SchemaVersion != JSONSchemaVersion || s.Skill != "stock-ledger" || s.Status != record.StatusCompleted || s.GateBypassed {
		t.Errorf("header: %+v", s)
	}
	if s.Outcome.Verdict != record.VerdictNotEnough || s.Outcome.ExitCode != 0 || s.Outcome.Sentence != r.Outcome.Sentence ||
		s.Outcome.Rule != record.RuleDilutedVsFresh || s.Outcome.DilutedPassed != 4 || s.Outcome.DilutedProbes != 6 || s.Outcome.FreshPassed != 6 || s.Outcome.FreshProbes != 6 {
		t.Errorf("outcome: %+v", s.Outcome)
	}
	if !slices.Equal(s.Outcome.StoppedConsulting, r.Outcome.StoppedConsulting) || !slices.Equal(s.Outcome.Notes, r.Outcome.Notes) {
		t.Errorf("outcome lists: %+v", s.Outcome)
	}
	if s.Costs != r.Costs {
		t.Errorf("costs %+v, want %+v", s.Costs, r.Costs)
	}
	if len(s.Conversations) != 2 {
		t.Fatalf("%d conversations", len(s.Conversations))
	}
	for i, c := range s.Conversations {
		rc := &r.Conversations[i]
		first, last := contextRange(rc)
		if c.Index != rc.Index || c.Status != rc.Status || c.Shape != rc.Shape || c.ContextStart != first || c.ContextEnd != last {
			t.Errorf("conversation %d: %+v", rc.Index, c)
		}
		if len(c.Turns) != 10 {
			t.Fatalf("conversation %d has %d turns, want all 10", rc.Index, len(c.Turns))
		}
		for k, jt := range c.Turns {
			rt := rc.TurnAt(k + 1)
			if jt.Turn != k+1 || jt.Result != Cell(rt) || jt.ToolCalls != rt.ToolCallCount || jt.ContextTokens != rt.ContextTokens || jt.Kind != rt.Kind {
				t.Errorf("conversation %d turn %d: %+v, want the summary's cell %q", rc.Index, k+1, jt, Cell(rt))
			}
		}
	}
	c1 := s.Conversations[0]
	if c1.ContextStart != 14211 || c1.ContextEnd != 36222 || s.Conversations[1].ContextStart != 15987 {
		t.Errorf("context ranges: %d → %d, %d", c1.ContextStart, c1.ContextEnd, s.Conversations[1].ContextStart)
	}
	if got := c1.Turns[7].FailedCriteria; !reflect.DeepEqual(got, []string{"runs-census: runs scripts/census.sh with Bash before answering"}) {
		t.Errorf("turn 8 failed criteria %q", got)
	}
	if c1.Turns[9].Result != "ESCAPE" || c1.Turns[9].EscapeReason != "answered from memory" || len(c1.Turns[9].FailedCriteria) != 2 {
		t.Errorf("turn 10: %+v", c1.Turns[9])
	}
	if c1.Turns[0].Result != "PASS" || len(c1.Turns[0].FailedCriteria) != 0 || c1.Turns[1].Result != "filler" {
		t.Errorf("turns 1-2: %+v", c1.Turns[:2])
	}
	if t6 := s.Conversations[1].Turns[5]; t6.Result != "PASS*" || t6.EscapeReason == "" {
		t.Errorf("conversation 2 turn 6: %+v", t6)
	}
}

func TestJSONBypassAndGate(t *testing.T) {
	b := jsonOf(t, bypassRun())
	if !bytes.HasPrefix(b, []byte("{\n  \"schema_version\": 3,\n  \"warning\": \""+BypassBanner+"\",")) {
		t.Errorf("the banner is not the first thing after the version:\n%s", b)
	}
	var s JSONSummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if !s.GateBypassed || s.Outcome.Notes[0] != BypassBanner || s.Outcome.ExitCode != 2 {
		t.Errorf("%+v", s)
	}

	if err := json.Unmarshal(jsonOf(t, gateRun()), &s); err != nil {
		t.Fatal(err)
	}
	gate, errored := s.Conversations[0], s.Conversations[1]
	if gate.Status != record.StatusBaselineFailed || gate.Error == "" || gate.Turns[0].Result != "FAIL" {
		t.Errorf("gate conversation: %+v", gate)
	}
	for _, jt := range gate.Turns[1:] {
		if jt.Result != "-" || jt.ToolCalls != 0 || jt.ContextTokens != 0 || jt.FailedCriteria == nil {
			t.Errorf("turn %d not run, shows %+v", jt.Turn, jt)
		}
	}
	if gate.Turns[5].Kind != "probe" || gate.Turns[6].Kind != "filler" {
		t.Errorf("kinds of turns not run: %q %q", gate.Turns[5].Kind, gate.Turns[6].Kind)
	}
	if gate.ContextStart != 10250 || gate.ContextEnd != 10250 {
		t.Errorf("gate context %d → %d", gate.ContextStart, gate.ContextEnd)
	}
	if t6 := errored.Turns[5]; t6.Result != "JUDGE-ERROR" || !strings.Contains(t6.JudgeError, "omits criterion") {
		t.Errorf("judge error: %+v", t6)
	}
}

// A run with no rubric (an old or broken record) still summarizes, naming
// failed must criteria by id.
func TestJSONWithoutRubric(t *testing.T) {
	r := decayRun()
	r.Rubric = nil
	var s JSONSummary
	if err := json.Unmarshal(jsonOf(t, r), &s); err != nil {
		t.Fatal(err)
	}
	if got := s.Conversations[0].Turns[9].FailedCriteria; !slices.Equal(got, []string{"runs-census", "appends-ledger"}) {
		t.Errorf("failed criteria without a rubric: %q", got)
	}
	empty := &record.Run{}
	b := jsonOf(t, empty)
	if err := json.Unmarshal(b, &s); err != nil || s.Conversations == nil || s.Outcome.Notes == nil {
		t.Errorf("empty run: %v\n%s", err, b)
	}
}
