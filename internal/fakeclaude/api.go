package fakeclaude

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// block is one content block of a message, as the Messages API and the
// session file carry it.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   any             `json:"content,omitempty"`
	IsError   *bool           `json:"is_error,omitempty"`
}

// message is one entry of the conversation history.
type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
	// Assistant messages only: what the API said about the call.
	ID    string `json:"id,omitempty"`
	Model string `json:"model,omitempty"`
	Usage *usage `json:"usage,omitempty"`
}

type usage struct {
	Input         int64 `json:"input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	Output        int64 `json:"output_tokens"`
}

// Context is the input picture of the call: all input tokens, cached or not.
func (u usage) Context() int64 { return u.Input + u.CacheCreation + u.CacheRead }

func (u *usage) add(v usage) {
	u.Input += v.Input
	u.CacheCreation += v.CacheCreation
	u.CacheRead += v.CacheRead
	u.Output += v.Output
}

// cost prices usage at the list prices the pinned CLI applied to
// claude-opus-5-5 in the recorded transcripts ($ per million tokens:
// input 4, cache write 5, cache read 0.2, output 20; total_cost_usd of
// claude/testdata/transcripts/skill-invoked.jsonl to the cent's
// millionth).
func (u usage) cost() float64 {
	return (float64(u.Input)*4 + float64(u.CacheCreation)*5 + float64(u.CacheRead)*0.2 + float64(u.Output)*20) / 1e6
}

// apiError is an HTTP error the API answered, or a connection failure
// (Status 0).
type apiError struct {
	Status  int
	Type    string
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// retryable: what the CLI retries (seen on 2.1.328: 429, 5xx, 529 and even
// 401; a 400 such as prompt-too-long is answered at once).
func (e *apiError) retryable() bool {
	switch {
	case e.Status == 0, e.Status == 401, e.Status == 403, e.Status == 408, e.Status == 409, e.Status == 429, e.Status >= 500:
		return true
	}
	return false
}

// errorName is the api_retry event's "error" word for a status.
func errorName(status int) string {
	switch {
	case status == 429:
		return "rate_limit"
	case status == 401, status == 403:
		return "authentication_failed"
	case status == 529:
		return "overloaded"
	case status >= 500:
		return "server_error"
	case status == 0:
		return "connection_error"
	}
	return "invalid_request"
}

type client struct {
	base    string
	key     string // x-api-key
	bearer  string // Authorization: Bearer
	session string
	http    *http.Client
}

// call posts one request and reads the streamed answer.
func (c *client) call(ctx context.Context, body []byte) (message, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.base, "/")+"/v1/messages?beta=true", bytes.NewReader(body))
	if err != nil {
		return message{}, "", &apiError{Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("User-Agent", "claude-cli/"+Version+" (external, sdk-cli)")
	req.Header.Set("X-Claude-Code-Session-Id", c.session)
	req.Header.Set("x-app", "cli")
	if c.key != "" {
		req.Header.Set("x-api-key", c.key)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return message{}, "", &apiError{Message: "Connection error."}
	}
	defer resp.Body.Close()
	reqID := resp.Header.Get("Request-Id")
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var e struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		return message{}, reqID, &apiError{Status: resp.StatusCode, Type: e.Error.Type, Message: e.Error.Message}
	}
	m, err := readSSE(resp.Body)
	if err != nil {
		return m, reqID, &apiError{Message: "Connection error."}
	}
	return m, reqID, nil
}

// readSSE assembles a streamed message from its events.
func readSSE(r io.Reader) (message, error) {
	m := message{Role: "assistant"}
	var partial []strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	done := false
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message struct {
				ID    string `json:"id"`
				Model string `json:"model"`
				Usage usage  `json:"usage"`
			} `json:"message"`
			ContentBlock block `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage *struct {
				Output int64 `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return m, err
		}
		switch ev.Type {
		case "message_start":
			m.ID, m.Model = ev.Message.ID, ev.Message.Model
			u := ev.Message.Usage
			m.Usage = &u
		case "content_block_start":
			for len(m.Content) <= ev.Index {
				m.Content = append(m.Content, block{})
				partial = append(partial, strings.Builder{})
			}
			b := ev.ContentBlock
			b.Input = nil
			m.Content[ev.Index] = b
		case "content_block_delta":
			if ev.Index >= len(m.Content) {
				return m, fmt.Errorf("delta for block %d before its start", ev.Index)
			}
			switch ev.Delta.Type {
			case "text_delta":
				m.Content[ev.Index].Text += ev.Delta.Text
			case "input_json_delta":
				partial[ev.Index].WriteString(ev.Delta.PartialJSON)
			}
		case "message_delta":
			if ev.Usage != nil && m.Usage != nil {
				m.Usage.Output = ev.Usage.Output
			}
		case "message_stop":
			done = true
		}
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if !done {
		return m, io.ErrUnexpectedEOF
	}
	for i := range m.Content {
		if m.Content[i].Type == "tool_use" {
			in := partial[i].String()
			if in == "" {
				in = "{}"
			}
			m.Content[i].Input = json.RawMessage(restringify([]byte(in)))
		}
	}
	if m.Usage == nil {
		m.Usage = &usage{}
	}
	return m, nil
}

// callWithRetries retries as the CLI does, CLAUDE_CODE_MAX_RETRIES times,
// announcing each retry with an api_retry event.
func (f *fake) callWithRetries(ctx context.Context, body []byte) (message, string, error) {
	delay := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		m, reqID, err := f.api.call(ctx, body)
		if err == nil || ctx.Err() != nil {
			return m, reqID, err
		}
		ae := err.(*apiError)
		if !ae.retryable() || attempt > f.maxRetries {
			return m, reqID, err
		}
		f.emit(map[string]any{"type": "system", "subtype": "api_retry", "attempt": attempt, "max_retries": f.maxRetries,
			"retry_delay_ms": delay.Milliseconds(), "error_status": nullIfZero(ae.Status), "error": errorName(ae.Status),
			"session_id": f.sessionID, "uuid": newUUID()})
		select {
		case <-ctx.Done():
			return m, reqID, err
		case <-time.After(delay):
		}
		delay *= 2
	}
}

func nullIfZero(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// syntheticText is what the CLI shows for an API error it gave up on.
func syntheticText(e *apiError, base string) string {
	host := base
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		host = u.Host
	}
	switch {
	case e.Status == 0:
		return "API Error: Connection error."
	case e.Status == 401 || e.Status == 403:
		return "Invalid API key · Fix external API key"
	case e.Status == 429:
		return "API Error: Request rejected (429) · " + e.Message
	case e.Status == 400 && strings.Contains(strings.ToLower(e.Message), "prompt is too long"):
		return "Prompt is too long"
	case e.Status >= 500:
		return fmt.Sprintf("API Error: %d %s. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (%s).", e.Status, e.Message, host)
	}
	return fmt.Sprintf("API Error: %d %s", e.Status, e.Message)
}

// restringify rewrites a JSON text as JavaScript's JSON.stringify of its
// JSON.parse would: keys in their order, no insignificant space, and no
// \u003c-style escapes for <, > and & (which Go's encoder writes and the
// CLI's tool inputs never show).
func restringify(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	// needComma[i]: the container at depth i has had an element; inObject
	// tells keys (followed by ':') from values.
	type frame struct {
		object, first, key bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return raw
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			out.WriteByte(byte(d))
			stack = stack[:len(stack)-1]
			continue
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			switch {
			case top.object && top.key:
				if !top.first {
					out.WriteByte(',')
				}
				top.first = false
			case top.object:
				out.WriteByte(':')
			default:
				if !top.first {
					out.WriteByte(',')
				}
				top.first = false
			}
			if top.object {
				top.key = !top.key
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			out.WriteByte(byte(v))
			stack = append(stack, frame{object: v == '{', first: true, key: true})
		case string:
			b, _ := marshal(v)
			out.Write(b)
		case json.Number:
			out.WriteString(v.String())
		case bool:
			out.WriteString(strconv.FormatBool(v))
		case nil:
			out.WriteString("null")
		}
	}
	return out.Bytes()
}
