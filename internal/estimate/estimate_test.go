package estimate

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/fillers"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/skill"
)

func input(n int) Input {
	sk := &skill.Skill{Name: "s", Description: "does a thing", Body: strings.Repeat("b", 4000), Raw: strings.Repeat("r", 4100)}
	cfg := &plan.Config{BaseTask: "base", Probes: []plan.Probe{{Task: "p1"}, {Task: "p2"}, {Task: "p3"}}}
	picks := make([]fillers.Passage, 6)
	for i := range picks {
		picks[i] = fillers.Passage{Text: strings.Repeat("f", 8000)}
	}
	return Input{Skill: sk, Config: cfg, Fillers: [][]fillers.Passage{picks}, Conversations: n,
		SessionMode: "interactive", Model: "claude-sonnet-5-5", JudgeModel: "claude-haiku-4-5", JudgeRepeats: 1}
}

func line(t *testing.T, e *Estimate, prefix string) Line {
	t.Helper()
	for _, l := range e.Lines {
		if strings.HasPrefix(l.What, prefix) {
			return l
		}
	}
	t.Fatalf("no line %q in %+v", prefix, e.Lines)
	return Line{}
}

// The calls are the schedule's: ten turns per conversation, three fresh
// sessions per conversation, a judge call per judged turn and repeat, a
// rubric call unless one is given, a plan call without a config.
func TestCalls(t *testing.T) {
	in := input(3)
	e := Make(in)
	if l := line(t, e, "agent turns"); l.Calls != 30 || l.Processes != 3 {
		t.Errorf("agent: %d calls in %d processes, want 30 in 3 (interactive)", l.Calls, l.Processes)
	}
	if l := line(t, e, "fresh"); l.Calls != 9 || l.Processes != 9 {
		t.Errorf("fresh: %d calls, %d processes, want 9 and 9", l.Calls, l.Processes)
	}
	if l := line(t, e, "judge"); l.Calls != 3*4+3*3 || l.Processes != 6 {
		t.Errorf("judge: %d calls in %d processes, want 21 in 6 (a pool: one for each conversation and fresh triple)", l.Calls, l.Processes)
	}
	if l := line(t, Make(input(16)), "judge"); l.Processes != l.Calls {
		t.Errorf("judge, 16 conversations: %d processes for %d calls, want one a call (past the pool's ready processes)", l.Processes, l.Calls)
	}
	if l := line(t, e, "rubric"); l.Calls != 1 {
		t.Errorf("rubric: %d calls", l.Calls)
	}
	for _, l := range e.Lines {
		if strings.HasPrefix(l.What, "plan") {
			t.Error("a plan call with a config")
		}
	}

	in.SessionMode, in.JudgeRepeats, in.NoSkillControl, in.Config = "resume", 3, true, nil
	in.Rubric = &rubric.Rubric{Criteria: []rubric.Criterion{{ID: "a", Kind: rubric.Must, Text: "runs a"}}}
	e = Make(in)
	if l := line(t, e, "agent turns"); l.Processes != 30 {
		t.Errorf("resume: %d processes, want one per turn", l.Processes)
	}
	if l := line(t, e, "no-skill"); l.Calls != 30 {
		t.Errorf("control: %d calls", l.Calls)
	}
	if l := line(t, e, "judge"); l.Calls != (3*4+3*3+3*4)*3 {
		t.Errorf("judge with 3 repeats and the control: %d calls, want 99", l.Calls)
	}
	if l := line(t, e, "plan"); l.Calls != 1 {
		t.Errorf("no config: %d plan calls", l.Calls)
	}
	for _, l := range e.Lines {
		if strings.HasPrefix(l.What, "rubric") {
			t.Error("a rubric call with a reviewed rubric")
		}
	}
}

// Costs follow the sizes: more conversations, a longer skill re-sent in
// resume mode, and a pricier model all cost more; an unknown model gets no
// price at all, said so.
func TestCosts(t *testing.T) {
	base := Make(input(2))
	if !base.AllPriced || base.Total <= 0 {
		t.Fatalf("priced %v, total %v", base.AllPriced, base.Total)
	}
	if more := Make(input(4)); more.Total <= 1.9*base.Total-line(t, base, "rubric").Cost*2 {
		t.Errorf("4 conversations $%.4f, 2 $%.4f", more.Total, base.Total)
	}
	in := input(2)
	in.SessionMode = "resume"
	if r := Make(in); line(t, r, "agent").Cost <= line(t, base, "agent").Cost {
		t.Error("resume mode re-sends the skill at each probe but costs no more")
	}
	in = input(2)
	in.Model = "claude-opus-4-1"
	if o := Make(in); line(t, o, "agent").Cost <= 5*line(t, base, "agent").Cost {
		t.Error("opus 4.1 ($15/$75) is not far dearer than sonnet 5.5 ($2/$10)")
	}
	in.Model = "opus"
	u := Make(in)
	if u.AllPriced || line(t, u, "agent").Priced || len(u.Unpriced) != 1 || u.Unpriced[0] != "opus" {
		t.Errorf("an unknown model was priced: %+v", u)
	}
	var b bytes.Buffer
	u.Write(&b, func(s string) string { return s })
	if !strings.Contains(b.String(), "no estimate for opus, which the price table does not know") {
		t.Errorf("the unknown model is not said plainly:\n%s", b.String())
	}
}

// One conversation's agent cost, worked by hand for a tiny case: the
// session's requests at the cache's prices.
func TestSessionArithmetic(t *testing.T) {
	s := &session{}
	s.request(1000, 100) // writes 1000
	s.request(200, 50)   // reads 1100, writes 200
	want := Tokens{CacheWrite: 1200, CacheRead: 1100, Output: 150}
	if s.t != want || s.ctx != 1350 || s.requests != 2 {
		t.Errorf("tokens %+v, context %v, requests %d", s.t, s.ctx, s.requests)
	}
	p, _, _ := PriceOf("claude-sonnet-5-5")
	if got, want := p.cost(s.t), (1200*2.5+1100*0.1+150*10)/1e6; math.Abs(got-want) > 1e-12 {
		t.Errorf("cost %v, want %v", got, want)
	}
}

func TestPriceOf(t *testing.T) {
	for model, id := range map[string]string{"sonnet": "claude-sonnet-5-5", "claude-haiku-4-5-20251001": "claude-haiku-4-5", "claude-opus-5-5": "claude-opus-5-5"} {
		if _, got, ok := PriceOf(model); !ok || got != id {
			t.Errorf("%s: %s %v, want %s", model, got, ok, id)
		}
	}
	for _, model := range []string{"", "opus", "gpt-5", "claude-opus-9"} {
		if _, _, ok := PriceOf(model); ok {
			t.Errorf("%q has a price", model)
		}
	}
}

// The CLI's own share of a request, measured on the requests the pinned
// CLI recorded: remeasured here so a new recording cannot leave the
// constants behind.
func TestOverheadMatchesRecordedRequests(t *testing.T) {
	for _, c := range []struct {
		file, prompt string
		want         int
	}{
		{"skill-listing-first-request.json", "@@iso@@ hello", AgentOverheadChars},
		{"json-schema-enforce-request.json", "", ColdOverheadChars},
	} {
		raw, err := os.ReadFile(filepath.Join("..", "scripted", "testdata", "requests", c.file))
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Body struct {
				System   json.RawMessage `json:"system"`
				Tools    json.RawMessage `json:"tools"`
				Messages json.RawMessage `json:"messages"`
			} `json:"body"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Fatal(err)
		}
		got := systemChars(t, req.Body.System) + len(compact(t, req.Body.Tools))
		if c.prompt != "" {
			// The agent's first request: everything but the prompt.
			got += len(compact(t, req.Body.Messages)) - len(c.prompt)
		}
		if math.Abs(float64(got-c.want)) > 0.02*float64(c.want) {
			t.Errorf("%s: the CLI adds %d characters; the estimate assumes %d", c.file, got, c.want)
		}
	}
}

func systemChars(t *testing.T, raw json.RawMessage) int {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return len(s)
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range blocks {
		n += len(b.Text)
	}
	return n
}

func compact(t *testing.T, raw json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// What the forecast shows a schedule cannot do is warned about before any
// call: a /compact at a level the sessions never reach (the run's summary
// named it and nothing said it never fired), and a probe whose level is
// below the context the turns before it leave (asked with no filler: no
// more diluted than they make it).
func TestScheduleForecastWarnings(t *testing.T) {
	warned := func(in Input, frag string) bool {
		for _, w := range Make(in).Warnings {
			if strings.Contains(w, frag) {
				return true
			}
		}
		return false
	}
	in := input(1)
	in.Schedule = &plan.Schedule{CompactAt: 500_000}
	if !warned(in, "none would compact") {
		t.Errorf("no warning for a /compact at 500k on ten turns: %q", Make(in).Warnings)
	}
	in.Schedule = &plan.Schedule{CompactAt: 5_000}
	if warned(in, "none would compact") {
		t.Error("a warning for a /compact the sessions reach")
	}
	in.Schedule = &plan.Schedule{DiluteTo: []int64{1_000, 60_000, 90_000}}
	if !warned(in, "probe 1's level, 1k tokens") || warned(in, "probe 2's") {
		t.Errorf("warnings %q: want probe 1's alone", Make(in).Warnings)
	}
}
