package scripted

import (
	"encoding/json"
	"strings"
	"testing"
)

// A generator request plays the persona whose marker its body holds, the
// control when it holds none; reader and grader calls are answered by the
// phrase of the message they were given.
func TestEvalRules(t *testing.T) {
	rules, err := EvalRules(Generation{
		Markers: map[string]string{PersonaBaseline: "MARK-BASE", PersonaBroken: "MARK-BROKEN"},
		Cases: []GenerationCase{{Prompt: "reorder widgets", Searches: []string{"widgets"},
			Answers: map[string]string{PersonaBaseline: "REORDER widgets.", PersonaBroken: "HOLD widgets.", PersonaControl: "Maybe."}}},
	}, []Reading{{Contains: "REORDER widgets.", Notes: map[string]any{"decision": "order"}}},
		[]Grading{{Contains: "HOLD widgets.", Grades: map[string]any{"grades": []any{}}}})
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	route := func(kind CallKind, prompt, body string, step int) string {
		c := classified{Kind: kind, Turn: 1, Step: step, Prompt: prompt, Body: []byte(body)}
		for _, r := range compiled {
			if r.matches(c, "") {
				st := r.Steps[min(step, len(r.Steps)-1)]
				if len(st.ToolUses) > 0 {
					return st.ToolUses[0].Name
				}
				return st.Text
			}
		}
		return "(none)"
	}
	for _, c := range []struct {
		kind         CallKind
		prompt, body string
		step         int
		want         string
	}{
		{KindAgent, "Should we reorder widgets?", `{"system":"... MARK-BASE ..."}`, 0, "Grep"},
		{KindAgent, "Should we reorder widgets?", `{"system":"... MARK-BASE ..."}`, 1, "REORDER widgets."},
		{KindAgent, "Should we reorder widgets?", `{"system":"... MARK-BROKEN ..."}`, 1, "HOLD widgets."},
		{KindAgent, "Should we reorder widgets?", `{"system":""}`, 1, "Maybe."},
		{KindReader, "THE REPLY: REORDER widgets.", "", 0, "StructuredOutput"},
		{KindReader, "THE REPLY: Maybe.", "", 0, "(none)"},
		{KindGrader, "THE REPLY: HOLD widgets.", "", 0, "StructuredOutput"},
	} {
		if got := route(c.kind, c.prompt, c.body, c.step); got != c.want {
			t.Errorf("%s %q %s step %d: %q, want %q", c.kind, c.prompt, c.body, c.step, got, c.want)
		}
	}
	for _, bad := range []Generation{
		{Markers: map[string]string{PersonaBaseline: ""}},
		{Markers: map[string]string{PersonaControl: "x"}},
		{Cases: []GenerationCase{{Prompt: "p", Answers: map[string]string{PersonaBaseline: "a"}}}},
	} {
		if _, err := EvalRules(bad, nil, nil); err == nil || !strings.HasPrefix(err.Error(), "scripted:") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// The eval's reader and grader are routed by their schema's title on the
// Responses and Gemini APIs as on the Messages API, so codex and gemini
// can play them.
func TestEvalRolesOnOtherAPIs(t *testing.T) {
	for title, want := range map[string]CallKind{"reading": KindReader, "grades": KindGrader, "other": KindCold} {
		body, _ := json.Marshal(map[string]any{"model": "m", "input": []any{map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": "read this"}}}},
			"text": map[string]any{"format": map[string]any{"type": "json_schema", "schema": map[string]any{"title": title}}}})
		c, _, err := classifyResponses(body)
		if err != nil || c.Kind != want {
			t.Errorf("Responses, title %q: kind %q (%v), want %q", title, c.Kind, err, want)
		}
		if k, _ := schemaKind(json.RawMessage(`{"title":"` + title + `"}`)); k != want {
			t.Errorf("Gemini, title %q: kind %q, want %q", title, k, want)
		}
	}
}
