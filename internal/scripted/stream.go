package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// message is one scripted answer, ready to be written as SSE or JSON.
type message struct {
	ID    string
	Model string
	Text  string
	Uses  []toolUse
	Usage Usage
	Seq   int
}

func (m message) stopReason() string {
	if len(m.Uses) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// toolID gives each tool_use block an id unique across the server's life: the
// CLI pairs tool results with tool uses by id over the whole history.
func (m message) toolID(i int) string {
	return fmt.Sprintf("toolu_scripted_%06d_%d", m.Seq, i)
}

func (m message) startUsage() map[string]int64 {
	return map[string]int64{
		"input_tokens":                m.Usage.Input,
		"cache_creation_input_tokens": m.Usage.CacheCreation,
		"cache_read_input_tokens":     m.Usage.CacheRead,
		// The real API sends a placeholder here and the final count in
		// message_delta; the CLI copies this value into assistant events.
		"output_tokens": 1,
	}
}

// sseEvent is one event of a Messages API stream.
type sseEvent struct {
	name string
	data []byte
}

// sseEvents are the message's stream as the Messages API sends it:
// message_start, a start, delta and stop per content block (the text, then
// each tool use with its input whole in one input_json_delta),
// message_delta with the stop reason and output tokens, message_stop.
// The data is what json.Marshal writes for the events as maps (keys in
// order, strings escaped as it escapes them; TestSSEEventsAsMarshalled),
// without marshalling maps through reflection at every event.
func (m message) sseEvents() []sseEvent {
	var evs []sseEvent
	add := func(name string, parts ...string) {
		n := 0
		for _, p := range parts {
			n += len(p)
		}
		data := make([]byte, 0, n)
		for _, p := range parts {
			data = append(data, p...)
		}
		evs = append(evs, sseEvent{name, data})
	}
	u := m.startUsage()
	add("message_start", `{"message":{"content":[],"id":`, jsonString(m.ID), `,"model":`, jsonString(m.Model),
		`,"role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"cache_creation_input_tokens":`,
		itoa(u["cache_creation_input_tokens"]), `,"cache_read_input_tokens":`, itoa(u["cache_read_input_tokens"]),
		`,"input_tokens":`, itoa(u["input_tokens"]), `,"output_tokens":`, itoa(u["output_tokens"]), `}},"type":"message_start"}`)
	idx := 0
	block := func(start, delta string) {
		i := itoa(int64(idx))
		add("content_block_start", `{"content_block":`, start, `,"index":`, i, `,"type":"content_block_start"}`)
		add("content_block_delta", `{"delta":`, delta, `,"index":`, i, `,"type":"content_block_delta"}`)
		add("content_block_stop", `{"index":`, i, `,"type":"content_block_stop"}`)
		idx++
	}
	if m.Text != "" {
		block(`{"text":"","type":"text"}`, `{"text":`+jsonString(m.Text)+`,"type":"text_delta"}`)
	}
	for i, u := range m.Uses {
		block(`{"id":`+jsonString(m.toolID(i))+`,"input":{},"name":`+jsonString(u.Name)+`,"type":"tool_use"}`,
			`{"partial_json":`+jsonString(string(u.Input))+`,"type":"input_json_delta"}`)
	}
	add("message_delta", `{"delta":{"stop_reason":`, jsonString(m.stopReason()), `,"stop_sequence":null},"type":"message_delta","usage":{"output_tokens":`,
		itoa(m.Usage.Output), `}}`)
	add("message_stop", `{"type":"message_stop"}`)
	return evs
}

// jsonString is s as json.Marshal writes a string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// writeSSE streams the message as the Messages API does. It stops at the
// first failed write or when ctx ends, so a killed CLI frees the handler.
func writeSSE(ctx context.Context, w http.ResponseWriter, m message) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Request-Id", "req_scripted_"+m.ID[len("msg_scripted_"):])
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for _, ev := range m.sseEvents() {
		if ctx.Err() != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// writeJSON answers a request that asked for "stream": false.
func writeJSON(w http.ResponseWriter, m message) {
	content := []any{}
	if m.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": m.Text})
	}
	for i, u := range m.Uses {
		content = append(content, map[string]any{"type": "tool_use", "id": m.toolID(i), "name": u.Name, "input": u.Input})
	}
	usage := m.startUsage()
	usage["output_tokens"] = m.Usage.Output
	b, _ := json.Marshal(map[string]any{
		"id":            m.ID,
		"type":          "message",
		"role":          "assistant",
		"model":         m.Model,
		"content":       content,
		"stop_reason":   m.stopReason(),
		"stop_sequence": nil,
		"usage":         usage,
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_scripted_"+m.ID[len("msg_scripted_"):])
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
