package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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

// writeSSE streams the message as the Messages API does. It stops at the
// first failed write or when ctx ends, so a killed CLI frees the handler.
func writeSSE(ctx context.Context, w http.ResponseWriter, m message) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Request-Id", "req_scripted_"+m.ID[len("msg_scripted_"):])
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	send := func(event string, data any) bool {
		if ctx.Err() != nil {
			return false
		}
		b, err := json.Marshal(data)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}

	if !send("message_start", map[string]any{
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
	}) {
		return
	}
	idx := 0
	block := func(start, delta map[string]any) bool {
		ok := send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": start}) &&
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": delta}) &&
			send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
		return ok
	}
	if m.Text != "" {
		if !block(map[string]any{"type": "text", "text": ""},
			map[string]any{"type": "text_delta", "text": m.Text}) {
			return
		}
	}
	for i, u := range m.Uses {
		if !block(map[string]any{"type": "tool_use", "id": m.toolID(i), "name": u.Name, "input": map[string]any{}},
			map[string]any{"type": "input_json_delta", "partial_json": string(u.Input)}) {
			return
		}
	}
	if !send("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": m.stopReason(), "stop_sequence": nil},
		"usage": map[string]int64{"output_tokens": m.Usage.Output},
	}) {
		return
	}
	send("message_stop", map[string]any{"type": "message_stop"})
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
