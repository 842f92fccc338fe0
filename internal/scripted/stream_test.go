package scripted

import (
	"encoding/json"
	"testing"
)

// marshalledEvents is the stream as writeSSE built it before sseEvents:
// each event a map marshalled by encoding/json, the reference of the
// bytes sseEvents writes.
func marshalledEvents(t testing.TB, m message) []sseEvent {
	var evs []sseEvent
	send := func(event string, data any) {
		b, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, sseEvent{event, b})
	}
	send("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id":            m.ID,
			"type":          "message",
			"role":          "assistant",
			"model":         m.Model,
			"content":       []any{},
			"stop_reason":   nil,
			"stop_sequence": nil,
			"usage":         m.startUsage(),
		},
	})
	idx := 0
	block := func(start, delta map[string]any) {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": start})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": delta})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	if m.Text != "" {
		block(map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text_delta", "text": m.Text})
	}
	for i, u := range m.Uses {
		block(map[string]any{"type": "tool_use", "id": m.toolID(i), "name": u.Name, "input": map[string]any{}},
			map[string]any{"type": "input_json_delta", "partial_json": string(u.Input)})
	}
	send("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": m.stopReason(), "stop_sequence": nil},
		"usage": map[string]int64{"output_tokens": m.Usage.Output},
	})
	send("message_stop", map[string]any{"type": "message_stop"})
	return evs
}

func sameEvents(t *testing.T, m message) {
	t.Helper()
	got, want := m.sseEvents(), marshalledEvents(t, m)
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].name != want[i].name || string(got[i].data) != string(want[i].data) {
			t.Errorf("event %d:\n %s %s\nwant\n %s %s", i, got[i].name, got[i].data, want[i].name, want[i].data)
		}
	}
}

func TestSSEEventsAsMarshalled(t *testing.T) {
	u := Usage{Input: 12, CacheCreation: 3400, CacheRead: 56000, Output: 78}
	for _, m := range []message{
		{ID: "msg_scripted_000001", Model: "claude-opus-5-5", Text: "Done.", Usage: u, Seq: 1},
		{ID: "msg_scripted_000002", Model: "m", Usage: Usage{}, Seq: 2},
		{ID: "msg_scripted_000003", Model: "claude-<&>\u2028", Text: "a \"quote\", <tag> & \\ \n\t\u2029 é \U0001F600 \x7f \xff bad",
			Uses: []toolUse{{Name: "Bash", Input: json.RawMessage(`{"command":"echo \"<hi>\" && ls"}`)},
				{Name: "Skill", Input: json.RawMessage(`{}`)}}, Usage: u, Seq: 123456},
		{ID: "msg_scripted_1234567", Model: "", Uses: []toolUse{{Name: "StructuredOutput", Input: json.RawMessage(`{"verdict":"pass","n":-1.5e3}`)}}, Usage: Usage{Output: -1}, Seq: 1234567},
	} {
		sameEvents(t, m)
	}
}

func FuzzSSEEvents(f *testing.F) {
	f.Add("msg_scripted_000001", "claude-opus-5-5", "Done.", "Bash", `{"command":"ls"}`, int64(5), 1)
	f.Add("msg_scripted_000002", "<m>", "", "", "", int64(0), 0)
	f.Fuzz(func(t *testing.T, id, model, text, tool, input string, n int64, seq int) {
		m := message{ID: id, Model: model, Text: text, Usage: Usage{Input: n, CacheCreation: n / 3, CacheRead: -n, Output: n * 7}, Seq: seq}
		if tool != "" {
			m.Uses = []toolUse{{Name: tool, Input: json.RawMessage(input)}}
		}
		sameEvents(t, m)
	})
}
