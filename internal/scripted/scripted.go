// Package scripted is a scripted Anthropic Messages API server that plays the
// model for the real Claude Code CLI in tests, benchmarks and `vibe-test demo`.
//
// The CLI is pointed at it through ANTHROPIC_BASE_URL, so every part of
// vibe-test that drives `claude -p` runs against the real binary without
// credentials or network. The server answers POST /v1/messages as the CLI
// expects (SSE streaming, as the Messages API does) according to a
// Script: rules matched on the kind of call (agent turn, rubric, judge, plan,
// cold), the persona of the session, the prompt turn and the newest prompt
// text, each answering with a sequence of steps across the agentic loop (text,
// tool_use blocks, HTTP errors, delays). A tool input is fixed, or filled
// from the prompt (ToolUse.FromPrompt: a work filler's quoted command).
// Usage figures grow with the
// conversation, including cache reads, so context-size code sees realistic,
// distinct numbers per call. Every request is recorded for assertions.
//
// Routing is stateless with respect to the conversation: turn and step are
// derived from the messages the CLI resends on every call, so it survives
// --resume and retries. Only persona assignment, error counts and the
// previous usage total are kept per session.
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// CallKind says what kind of model call a request is, judged from its tools.
type CallKind string

// The kinds of call the CLI makes for vibe-test.
const (
	KindAgent  CallKind = "agent"  // an ordinary agent turn (tools present, no StructuredOutput tool)
	KindRubric CallKind = "rubric" // StructuredOutput tool whose input_schema has "title": "rubric"
	KindJudge  CallKind = "judge"  // StructuredOutput tool whose input_schema has "title": "verdict"
	KindPlan   CallKind = "plan"   // StructuredOutput tool whose input_schema has "title": "plan"
	KindReader CallKind = "reader" // StructuredOutput tool whose input_schema has "title": "reading" (vibe-test eval)
	KindGrader CallKind = "grader" // StructuredOutput tool whose input_schema has "title": "grades" (vibe-test eval)
	KindCold   CallKind = "cold"   // no tools at all, or StructuredOutput with another/no title
)

// ToolUse is one tool_use block of a scripted answer.
type ToolUse struct {
	Name  string
	Input any // marshalled to JSON as the tool_use input; nil means {}
	// FromPrompt makes the string values of Input templates filled from
	// the newest prompt: $1, ${name} and the like stand for the rule's
	// Pattern's submatches (regexp.Expand), e.g. Pattern "`([^`]+)`" and
	// Input {"command": "$1"} runs the command the prompt quotes. Only
	// the template is expanded, so a "$" in the prompt's text stays as it
	// is. The rule must have a Pattern.
	FromPrompt bool
}

// HTTPError makes a step fail with an HTTP error Count times (per session,
// turn, step and rule, so the CLI's retries see the same count) before the
// step is answered normally. Empty Type and Message take Anthropic-like
// defaults for the status.
type HTTPError struct {
	Status  int
	Count   int
	Type    string
	Message string
}

// Step is one response of the agentic loop.
type Step struct {
	Text     string        // a text block (first, when combined with ToolUses)
	ToolUses []ToolUse     // tool_use blocks; stop_reason "tool_use" when non-empty, else "end_turn"
	Error    *HTTPError    // answer this error first, see HTTPError
	Delay    time.Duration // wait before answering (cut short when the client goes away)
	// Model answers as this model instead of the one requested (which the
	// server echoes otherwise, as the real API does): a fallback or a
	// changed default in the middle of a conversation.
	Model string
}

// Rule routes requests to steps. Zero-valued fields match anything.
type Rule struct {
	Kind     CallKind // "" matches any kind
	Persona  string   // "" matches any; agent calls only have a persona
	Turns    []int    // 1-based prompt-turn numbers; nil = any
	Contains string   // substring that must occur in the newest prompt text ("" = any)
	// Pattern is a regular expression that must match the newest prompt text
	// ("" = any). It exists because PersonaRules tells skill tasks from filler
	// prompts by a regexp, which a substring cannot express.
	Pattern string
	// BodyLacks: the rule applies only when the raw request lacks this
	// substring, e.g. a skill's line in the skills listing: a model that was
	// never shown the skill cannot follow it (the no-skill control).
	BodyLacks string
	// BodyHas: the rule applies only when the raw request contains this
	// substring (BodyLacks' counterpart), e.g. the continuation message the
	// CLI starts a compacted session with, which rides in the history and
	// never in the newest prompt.
	BodyHas string
	// EveryNth > 1 makes the rule apply to one session in EveryNth: the
	// k-th session (counted from 0, in order of first arrival) to send this
	// prompt at this prompt turn matches when k % EveryNth == EveryNth-1.
	// It plays an agent that slips now and then, with counts that do not
	// depend on which conversation happened to arrive first.
	EveryNth int
	// Steps[i] answers the i-th request after the prompt (i = assistant messages
	// after the newest prompt message); past the end: "Done." with end_turn.
	Steps []Step
}

// Script is what the server plays.
type Script struct {
	Personas []string // agent sessions get personas round-robin in order of first appearance; empty = persona ""
	// PersonaPattern, when set, limits the round-robin to sessions whose
	// first prompt matches it (a conversation's base task); other sessions
	// (fresh sessions, which start with a probe) get OthersPersona, so they
	// never take a conversation's persona out of turn.
	PersonaPattern string
	OthersPersona  string
	Rules          []Rule        // first matching rule wins
	Latency        time.Duration // added before every response (for benchmarks)
}

// Usage is the token usage a response reported.
type Usage struct {
	Input, CacheCreation, CacheRead, Output int64
}

// Context is the size of the input picture of the call: all input tokens,
// cached or not.
func (u Usage) Context() int64 { return u.Input + u.CacheCreation + u.CacheRead }

// Request is one recorded request.
type Request struct {
	Seq       int      // 1-based arrival order
	Kind      CallKind // "" when the request was not a parseable /v1/messages call
	SessionID string   // from X-Claude-Code-Session-Id
	Persona   string
	Turn      int             // number of prompt messages in messages[]
	Step      int             // assistant messages after the newest prompt message
	Prompt    string          // newest prompt text (the last text block of the newest prompt message)
	Subagent  bool            // sent for a sub-agent (a context: fork skill), in its parent's session
	Status    int             // HTTP status answered; 0 if the client went away before an answer
	Usage     Usage           // input figures sent in message_start, Output as sent in message_delta; zero for errors
	Body      json.RawMessage // the raw request body
	Header    http.Header     // x-api-key / authorization values replaced by "[redacted]"
}

// Server is a running scripted API. Create it with Start.
type Server struct {
	rules   []compiledRule
	script  Script
	ln      net.Listener
	srv     *http.Server
	cancel  context.CancelFunc // cancels every request context, so Close cuts delays short
	served  chan struct{}      // closed when Serve returns
	handler sync.WaitGroup
	// inflight counts running handlers; tests use it to see that a handler
	// returned because its client went away, not because of Close.
	inflight  atomic.Int64
	closeOnce sync.Once
	closeErr  error

	mu          sync.Mutex
	closed      bool
	requests    []Request
	personas    map[string]string // session id -> persona
	nextPersona int
	personaRe   *regexp.Regexp
	// arrivals counts the sessions that sent a prompt at a prompt turn;
	// ordinal remembers each session's place in that count.
	arrivals  map[string]int
	ordinal   map[string]int
	lastTotal map[string]int64 // session id -> total of the previous answered call
	errCounts map[errKey]int
}

type compiledRule struct {
	Rule
	re *regexp.Regexp
	// matched remembers re's answer per prompt: the same prompt comes back
	// at every step of its turn and in every session that sends it, and a
	// case-insensitive alternation over a long prompt is not cheap. Guarded
	// by the server's mu (route).
	matched map[string]bool
	inputs  [][]json.RawMessage // per step, per tool use: the marshalled input
}

type errKey struct {
	session    string
	turn, step int
	rule       int
}

// maxBody bounds a request body; the CLI resends the whole history, which
// stays far below this in any test.
const maxBody = 64 << 20

// Start validates the script, listens on 127.0.0.1 (never on other
// interfaces: the server has no authentication) and serves in a goroutine.
func Start(s Script) (*Server, error) {
	rules, err := compile(s.Rules)
	if err != nil {
		return nil, err
	}
	var personaRe *regexp.Regexp
	if s.PersonaPattern != "" {
		if personaRe, err = regexp.Compile(s.PersonaPattern); err != nil {
			return nil, fmt.Errorf("scripted: PersonaPattern: %w", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("scripted: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &Server{
		rules:     rules,
		script:    s,
		ln:        ln,
		cancel:    cancel,
		served:    make(chan struct{}),
		personas:  map[string]string{},
		personaRe: personaRe,
		arrivals:  map[string]int{},
		ordinal:   map[string]int{},
		lastTotal: map[string]int64{},
		errCounts: map[errKey]int{},
	}
	srv.srv = &http.Server{
		Handler:           http.HandlerFunc(srv.serveHTTP),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 30 * time.Second,
	}
	go func() {
		defer close(srv.served)
		_ = srv.srv.Serve(ln) // returns ErrServerClosed after Close
	}()
	return srv, nil
}

func compile(rules []Rule) ([]compiledRule, error) {
	out := make([]compiledRule, len(rules))
	for i, r := range rules {
		c := compiledRule{Rule: r}
		if r.Pattern != "" {
			re, err := regexp.Compile(r.Pattern)
			if err != nil {
				return nil, fmt.Errorf("scripted: rule %d: pattern: %w", i, err)
			}
			c.re = re
			c.matched = map[string]bool{}
		}
		// Marshal inputs up front so a bad input is a Start error, not a
		// broken stream in the middle of a test.
		c.inputs = make([][]json.RawMessage, len(r.Steps))
		for j, st := range r.Steps {
			if st.Error != nil && (st.Error.Status < 400 || st.Error.Status > 599) {
				return nil, fmt.Errorf("scripted: rule %d step %d: error status %d is not 4xx/5xx", i, j, st.Error.Status)
			}
			for k, tu := range st.ToolUses {
				if tu.Name == "" {
					return nil, fmt.Errorf("scripted: rule %d step %d tool use %d: empty name", i, j, k)
				}
				if tu.FromPrompt && c.re == nil {
					return nil, fmt.Errorf("scripted: rule %d step %d tool use %d (%s): FromPrompt needs the rule's Pattern", i, j, k, tu.Name)
				}
				in, err := marshalInput(tu.Input)
				if err != nil {
					return nil, fmt.Errorf("scripted: rule %d step %d tool use %d (%s): %w", i, j, k, tu.Name, err)
				}
				c.inputs[j] = append(c.inputs[j], in)
			}
		}
		out[i] = c
	}
	return out, nil
}

func marshalInput(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("{}"), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("input must marshal to a JSON object, got %.40s", b)
	}
	return b, nil
}

// URL is the base URL to put in ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Requests returns a copy of the recorded requests in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

// Close stops the listener, cuts open connections, and waits until every
// handler and the serving goroutine have returned. Later calls return the
// first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		// Cancel first so handlers sleeping in a Delay return at once.
		s.cancel()
		s.closeErr = s.srv.Close()
		s.handler.Wait()
		<-s.served
	})
	return s.closeErr
}

// begin registers a handler unless the server is closing; the registration is
// under the mutex so it always happens before Close's Wait.
func (s *Server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handler.Add(1)
	s.inflight.Add(1)
	return true
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.begin() {
		writeError(w, http.StatusServiceUnavailable, "api_error", "server closing")
		return
	}
	defer s.handler.Done()
	defer s.inflight.Add(-1)
	ctx := r.Context()

	body, readErr := readBody(r)
	idx := s.record(body, r.Header)

	if r.Method == http.MethodPost && r.URL.Path == "/v1/responses" && readErr == nil {
		s.serveResponses(w, r, idx, body) // the Codex CLI's API (responses.go)
		return
	}
	if strings.HasPrefix(r.URL.Path, geminiPrefix) {
		s.serveGemini(w, r, idx, body, readErr) // gemini.go
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		if sleep(ctx, s.script.Latency) {
			s.answerError(w, idx, http.StatusNotFound, "not_found_error",
				fmt.Sprintf("scripted: no route for %s %s", r.Method, r.URL.Path))
		}
		return
	}
	if readErr != nil {
		return // the client went away mid-body
	}
	c, err := classify(body)
	if err != nil {
		if sleep(ctx, s.script.Latency) {
			s.answerError(w, idx, http.StatusBadRequest, "invalid_request_error", err.Error())
		}
		return
	}

	sid := r.Header.Get("X-Claude-Code-Session-Id")
	ruleIdx, step := s.route(idx, sid, c)

	if !sleep(ctx, s.script.Latency+step.Delay) {
		return
	}

	s.mu.Lock()
	if step.Error != nil && step.Error.Count > 0 {
		k := errKey{session: sid, turn: c.Turn, step: c.Step, rule: ruleIdx}
		if s.errCounts[k] < step.Error.Count {
			s.errCounts[k]++
			s.mu.Unlock()
			typ, msg := errorDefaults(step.Error)
			s.answerError(w, idx, step.Error.Status, typ, msg)
			return
		}
	}
	// A sub-agent's conversation grows apart from its parent's, in the
	// same session: its figures are its own.
	usageKey := sid
	if c.Subagent {
		usageKey = sid + "\x00" + c.Prompt
	}
	u := s.usage(usageKey, len(body), c.Prompt)
	text, uses := step.Text, step.uses
	u.Output = outputTokens(text, uses)
	s.requests[idx].Status = http.StatusOK
	s.requests[idx].Usage = u
	seq := s.requests[idx].Seq
	s.mu.Unlock()

	model := c.Model
	if step.Model != "" {
		model = step.Model
	}
	msg := message{
		ID:    fmt.Sprintf("msg_scripted_%06d", seq),
		Model: model,
		Text:  text,
		Uses:  uses,
		Usage: u,
		Seq:   seq,
	}
	if c.Stream {
		writeSSE(ctx, w, msg)
	} else {
		writeJSON(w, msg)
	}
}

// readBody is io.ReadAll(io.LimitReader(r.Body, maxBody)) into a buffer of
// the length the request announces: the CLI's bodies are tens of KB, which
// ReadAll reaches by doubling from 512 bytes, copying each time.
func readBody(r *http.Request) ([]byte, error) {
	n := int64(512)
	if r.ContentLength > 0 && r.ContentLength < maxBody {
		n = r.ContentLength + 1 // room for the read that meets EOF
	}
	lr := io.LimitReader(r.Body, maxBody)
	b := make([]byte, 0, n)
	for {
		m, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// record appends a request to the log and returns its index.
func (s *Server) record(body []byte, h http.Header) int {
	hdr := h.Clone()
	for k := range hdr {
		switch strings.ToLower(k) {
		case "x-api-key", "authorization", "proxy-authorization":
			for i := range hdr[k] {
				hdr[k][i] = "[redacted]"
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{
		Seq:       len(s.requests) + 1,
		SessionID: h.Get("X-Claude-Code-Session-Id"),
		Body:      json.RawMessage(body),
		Header:    hdr,
	})
	return len(s.requests) - 1
}

// plannedStep is a Step with its tool inputs already marshalled.
type plannedStep struct {
	Step
	uses []toolUse
}

type toolUse struct {
	Name  string
	Input json.RawMessage
}

// route assigns the persona, picks the rule and step, and fills in the record.
func (s *Server) route(idx int, sid string, c classified) (int, plannedStep) {
	s.mu.Lock()
	defer s.mu.Unlock()
	persona := ""
	if c.Kind == KindAgent && len(s.script.Personas) > 0 {
		p, ok := s.personas[sid]
		if !ok {
			if s.personaRe != nil && !s.personaRe.MatchString(c.Prompt) {
				p = s.script.OthersPersona
			} else {
				p = s.script.Personas[s.nextPersona%len(s.script.Personas)]
				s.nextPersona++
			}
			s.personas[sid] = p
		}
		persona = p
	}
	// The session's place among those that sent this prompt at this turn.
	key := fmt.Sprintf("%d\x00%s", c.Turn, c.Prompt)
	ord, ok := s.ordinal[sid+"\x00"+key]
	if !ok {
		ord = s.arrivals[key]
		s.arrivals[key]++
		s.ordinal[sid+"\x00"+key] = ord
	}
	rec := &s.requests[idx]
	rec.Kind, rec.Persona, rec.Turn, rec.Step, rec.Prompt, rec.Subagent = c.Kind, persona, c.Turn, c.Step, c.Prompt, c.Subagent

	for i := range s.rules {
		r := &s.rules[i]
		if !r.matches(c, persona) {
			continue
		}
		if r.EveryNth > 1 && ord%r.EveryNth != r.EveryNth-1 {
			continue
		}
		if c.Step >= len(r.Steps) {
			return i, plannedStep{Step: Step{Text: "Done."}}
		}
		st := r.Steps[c.Step]
		p := plannedStep{Step: st}
		for k, tu := range st.ToolUses {
			in := r.inputs[c.Step][k]
			if tu.FromPrompt {
				in = fillInput(in, r.re, c.Prompt)
			}
			p.uses = append(p.uses, toolUse{Name: tu.Name, Input: in})
		}
		if p.Text == "" && len(p.uses) == 0 {
			// An empty message would leave the CLI with nothing to show; a
			// step that only carries an Error or Delay still ends the turn.
			p.Text = "Done."
		}
		return i, p
	}
	if c.Kind == KindAgent {
		return -1, plannedStep{Step: Step{Text: "Done."}}
	}
	// A StructuredOutput call with {} would pass for an answer; plain text
	// makes the CLI enforce and then return no structured_output, which a
	// caller can detect.
	return -1, plannedStep{Step: Step{Text: "no scripted answer"}}
}

// fillInput expands the string values of a tool input (ToolUse.FromPrompt)
// with re's submatches in prompt.
func fillInput(in json.RawMessage, re *regexp.Regexp, prompt string) json.RawMessage {
	match := re.FindStringSubmatchIndex(prompt)
	var v any
	if match == nil || json.Unmarshal(in, &v) != nil {
		return in
	}
	var fill func(any) any
	fill = func(v any) any {
		switch x := v.(type) {
		case string:
			return string(re.ExpandString(nil, x, prompt, match))
		case map[string]any:
			for k, e := range x {
				x[k] = fill(e)
			}
		case []any:
			for i, e := range x {
				x[i] = fill(e)
			}
		}
		return v
	}
	b, err := json.Marshal(fill(v))
	if err != nil {
		return in
	}
	return b
}

func (r *compiledRule) matches(c classified, persona string) bool {
	if r.Kind != "" && r.Kind != c.Kind {
		return false
	}
	if r.Persona != "" && r.Persona != persona {
		return false
	}
	if r.Turns != nil {
		found := false
		for _, t := range r.Turns {
			if t == c.Turn {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if r.Contains != "" && !strings.Contains(c.Prompt, r.Contains) {
		return false
	}
	if r.re != nil && !r.matchPrompt(c.Prompt) {
		return false
	}
	if r.BodyLacks != "" && bytes.Contains(c.Body, []byte(r.BodyLacks)) {
		return false
	}
	if r.BodyHas != "" && !bytes.Contains(c.Body, []byte(r.BodyHas)) {
		return false
	}
	return true
}

// matchPrompt is re.MatchString(prompt), each prompt matched once.
func (r *compiledRule) matchPrompt(prompt string) bool {
	m, ok := r.matched[prompt]
	if !ok {
		m = r.re.MatchString(prompt)
		r.matched[prompt] = m
	}
	return m
}

// usage makes figures that grow like a real conversation: the previous call's
// total is read from cache, the new prompt is uncached input, and the rest of
// the growth (tool results, the previous answer) is cache creation. Caller
// holds s.mu.
func (s *Server) usage(sid string, bodyLen int, prompt string) Usage {
	total := int64(bodyLen / 4)
	var u Usage
	if prev, ok := s.lastTotal[sid]; ok && prev <= total {
		u.CacheRead = prev
	}
	u.Input = min(total-u.CacheRead, int64(3+len(prompt)/4))
	u.CacheCreation = total - u.CacheRead - u.Input
	s.lastTotal[sid] = total
	return u
}

func outputTokens(text string, uses []toolUse) int64 {
	n := len(text)
	for _, u := range uses {
		n += len(u.Input)
	}
	return int64(n/4 + 1)
}

func errorDefaults(e *HTTPError) (typ, msg string) {
	typ, msg = e.Type, e.Message
	var dt, dm string
	switch e.Status {
	case 400:
		dt, dm = "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"
	case 401:
		dt, dm = "authentication_error", "invalid x-api-key"
	case 403:
		dt, dm = "permission_error", "Your API key does not have permission to use the specified resource."
	case 404:
		dt, dm = "not_found_error", "Not found"
	case 413:
		dt, dm = "request_too_large", "Request exceeds the maximum allowed number of bytes."
	case 429:
		dt, dm = "rate_limit_error", "Rate limited (scripted)"
	case 500:
		dt, dm = "api_error", "Internal server error (scripted)"
	case 529:
		dt, dm = "overloaded_error", "Overloaded (scripted)"
	default:
		dt, dm = "api_error", http.StatusText(e.Status)
		if dm == "" {
			dm = fmt.Sprintf("HTTP %d (scripted)", e.Status)
		}
	}
	if typ == "" {
		typ = dt
	}
	if msg == "" {
		msg = dm
	}
	return typ, msg
}

func (s *Server) answerError(w http.ResponseWriter, idx, status int, typ, msg string) {
	s.mu.Lock()
	s.requests[idx].Status = status
	s.mu.Unlock()
	writeError(w, status, typ, msg)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": typ, "message": msg},
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// sleep waits d unless ctx ends first; it reports whether to go on.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
