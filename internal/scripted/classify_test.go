package scripted

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Classification of request bodies the real CLI sent (recorded in
// testdata/requests by `make fixtures`).
func TestClassifyCaptured(t *testing.T) {
	cases := []struct {
		file       string
		kind       CallKind
		turn, step int
		prompt     string // exact newest prompt, or "" to use contains
		contains   string
	}{
		// First request: <system-reminder> blocks precede the prompt in the
		// same user message; a role:"system" message follows it.
		{file: "skill-listing-first-request.json", kind: KindAgent, turn: 1, step: 0, prompt: "@@iso@@ hello"},
		{file: "append-system-prompt-file-request.json", kind: KindAgent, turn: 1, step: 0, prompt: "@@iso@@ hello"},
		// After a Skill call: the tool_result message also carries the skill
		// body as text, which must not count as a new prompt.
		{file: "skill-invoked-followup-request.json", kind: KindAgent, turn: 1, step: 1, prompt: "@@skill@@ please check the stock"},
		// /skill prompt: the last text block is the expanded body, which ends
		// with the user's arguments.
		{file: "slash-skill-prompt-request.json", kind: KindAgent, turn: 1, step: 0, contains: "ARGUMENTS: @@iso@@ go"},
		// --json-schema without a title: cold; the enforcement message is not
		// a prompt, so this is step 1 of turn 1.
		{file: "json-schema-enforce-request.json", kind: KindCold, turn: 1, step: 1, prompt: "@@cold@@ judge"},
		// /compact after a turn that used a tool: the summary instructions
		// ride with the last tool result, and still make a new prompt.
		{file: "compact-summary-request.json", kind: KindAgent, turn: 2, step: 0, contains: SummaryRequest},
		// The next turn: the continuation message is prompt 1, then the
		// kept answer, then the new prompt (after the /compact caveats).
		{file: "compact-continued-request.json", kind: KindAgent, turn: 2, step: 0, prompt: "@@compact@@ and now?"},
		// A context: fork skill's sub-agent: its one prompt is the skill's
		// body, in the parent's session.
		{file: "fork-skill-subagent-request.json", kind: KindAgent, turn: 1, step: 0, contains: "# Ledger audit"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			c, err := classify(capturedBody(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if c.Kind != tc.kind || c.Turn != tc.turn || c.Step != tc.step {
				t.Errorf("kind/turn/step = %s/%d/%d, want %s/%d/%d", c.Kind, c.Turn, c.Step, tc.kind, tc.turn, tc.step)
			}
			if tc.prompt != "" && c.Prompt != tc.prompt {
				t.Errorf("prompt = %q, want %q", c.Prompt, tc.prompt)
			}
			if tc.contains != "" && !strings.Contains(c.Prompt, tc.contains) {
				t.Errorf("prompt = %q, want it to contain %q", c.Prompt, tc.contains)
			}
			if !c.Stream {
				t.Error("the CLI always streams")
			}
			if want := strings.HasPrefix(tc.file, "fork-skill-subagent"); c.Subagent != want {
				t.Errorf("subagent = %v, want %v", c.Subagent, want)
			}
			if c.Model != "claude-opus-5-5" {
				t.Errorf("model = %q", c.Model)
			}
		})
	}
}

// The captured judge-like request, with its schema retitled, routes by title.
func TestClassifyCapturedSchemaTitle(t *testing.T) {
	body := capturedBody(t, "json-schema-enforce-request.json")
	for title, want := range map[string]CallKind{
		"verdict": KindJudge, "rubric": KindRubric, "plan": KindPlan, "reading": KindReader, "grades": KindGrader, "other": KindCold,
	} {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		for _, tool := range m["tools"].([]any) {
			tool := tool.(map[string]any)
			if tool["name"] == "StructuredOutput" {
				tool["input_schema"].(map[string]any)["title"] = title
			}
		}
		b, _ := json.Marshal(m)
		c, err := classify(b)
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind != want {
			t.Errorf("title %q: kind %s, want %s", title, c.Kind, want)
		}
	}
}

// Synthetic request bodies for routing tests.

type testMsg struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

func userMsg(texts ...string) testMsg {
	var blocks []map[string]any
	for _, t := range texts {
		blocks = append(blocks, map[string]any{"type": "text", "text": t})
	}
	return testMsg{Role: "user", Content: blocks}
}

func assistantMsg(text string) testMsg {
	return testMsg{Role: "assistant", Content: []map[string]any{{"type": "text", "text": text}}}
}

func toolResultMsg(id, content string) testMsg {
	return testMsg{Role: "user", Content: []map[string]any{{"type": "tool_result", "tool_use_id": id, "content": content}}}
}

var agentTools = []map[string]any{
	{"name": "Bash", "input_schema": map[string]any{"type": "object"}},
	{"name": "Read", "input_schema": map[string]any{"type": "object"}},
	{"name": "DeferredToolPlaceholder", "input_schema": map[string]any{"type": "object"}},
}

func structuredTools(title string) []map[string]any {
	schema := map[string]any{"type": "object", "properties": map[string]any{"verdict": map[string]any{"type": "string"}}}
	if title != "" {
		schema["title"] = title
	}
	return []map[string]any{
		{"name": "DeferredToolPlaceholder", "input_schema": map[string]any{"type": "object"}},
		{"name": "StructuredOutput", "input_schema": schema},
	}
}

func reqBody(t *testing.T, tools []map[string]any, msgs ...testMsg) []byte {
	t.Helper()
	m := map[string]any{"model": "claude-test-model", "stream": true, "max_tokens": 128000, "messages": msgs}
	if tools != nil {
		m["tools"] = tools
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestClassifySynthetic(t *testing.T) {
	sys := testMsg{Role: "system", Content: "# Environment"}
	cases := []struct {
		name       string
		body       []byte
		kind       CallKind
		turn, step int
		prompt     string
	}{
		{"no tools is cold", reqBody(t, nil, userMsg("hi")), KindCold, 1, 0, "hi"},
		{"only the placeholder is cold", reqBody(t, agentTools[2:], userMsg("hi")), KindCold, 1, 0, "hi"},
		{"agent", reqBody(t, agentTools, userMsg("<system-reminder>x</system-reminder>", "do it"), sys), KindAgent, 1, 0, "do it"},
		{"judge", reqBody(t, structuredTools("verdict"), userMsg("judge")), KindJudge, 1, 0, "judge"},
		{"rubric", reqBody(t, structuredTools("rubric"), userMsg("r")), KindRubric, 1, 0, "r"},
		{"plan", reqBody(t, structuredTools("plan"), userMsg("p")), KindPlan, 1, 0, "p"},
		{"untitled schema", reqBody(t, structuredTools(""), userMsg("c")), KindCold, 1, 0, "c"},
		{"string content", reqBody(t, agentTools, testMsg{Role: "user", Content: "plain string"}), KindAgent, 1, 0, "plain string"},
		{"tool loop", reqBody(t, agentTools,
			userMsg("first"), sys, assistantMsg("a"), toolResultMsg("t1", "r"), assistantMsg("b"), toolResultMsg("t2", "r")),
			KindAgent, 1, 2, "first"},
		{"resumed second turn", reqBody(t, agentTools,
			userMsg("<system-reminder>x</system-reminder>", "first"), sys, assistantMsg("a"), toolResultMsg("t1", "r"),
			assistantMsg("done"), userMsg("second")),
			KindAgent, 2, 0, "second"},
		{"(no content) is not a prompt", reqBody(t, agentTools,
			userMsg("first"), assistantMsg("a"), userMsg("(no content)")),
			KindAgent, 1, 1, "first"},
		{"enforcement is not a prompt", reqBody(t, structuredTools("verdict"),
			userMsg("judge this"), assistantMsg("{}"),
			userMsg("[structured-output-enforce] You MUST call the StructuredOutput tool to complete this request. Call this tool now.")),
			KindJudge, 1, 1, "judge this"},
		{"trailing reminder is skipped", reqBody(t, agentTools, userMsg("the task", "<system-reminder>later</system-reminder>")),
			KindAgent, 1, 0, "the task"},
		{"no prompt at all", reqBody(t, agentTools, assistantMsg("x")), KindAgent, 0, 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := classify(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if c.Kind != tc.kind || c.Turn != tc.turn || c.Step != tc.step || c.Prompt != tc.prompt {
				t.Errorf("got %s/%d/%d/%q, want %s/%d/%d/%q", c.Kind, c.Turn, c.Step, c.Prompt, tc.kind, tc.turn, tc.step, tc.prompt)
			}
		})
	}
}

func TestClassifyStreamFlag(t *testing.T) {
	for body, want := range map[string]bool{
		`{"model":"m","messages":[]}`:                true,
		`{"model":"m","messages":[],"stream":true}`:  true,
		`{"model":"m","messages":[],"stream":false}`: false,
	} {
		c, err := classify([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if c.Stream != want {
			t.Errorf("%s: stream %v", body, c.Stream)
		}
	}
	if _, err := classify([]byte(`{"messages": 3}`)); err == nil {
		t.Error("bad messages must be an error")
	}
	if _, err := classify([]byte(`not json`)); err == nil {
		t.Error("bad JSON must be an error")
	}
}

// The recorded requests carry what routing relies on: the skills listing
// line that Rule.BodyLacks looks for (the demo's no-skill control), and the
// appended system prompt file.
func TestCapturedBodiesCarryTheListing(t *testing.T) {
	listing := []byte("\\n- stock-ledger: Counts the warehouse stock")
	for _, name := range []string{"skill-listing-first-request.json", "skill-invoked-followup-request.json"} {
		if !bytes.Contains(capturedBody(t, name), listing) {
			t.Errorf("%s: no skills listing line for stock-ledger", name)
		}
	}
	if b := capturedBody(t, "append-system-prompt-file-request.json"); !bytes.Contains(b, []byte("Always answer briefly.")) {
		t.Error("the --append-system-prompt-file text is not in the request")
	}
	if b := capturedBody(t, "json-schema-enforce-request.json"); bytes.Contains(b, listing) {
		t.Error("a cold structured call must not see the skill")
	}
}
