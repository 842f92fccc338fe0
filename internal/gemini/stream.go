package gemini

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/jsonline"
	"github.com/vibe-test/vibe-test/internal/redact"
)

// maxLine bounds one line; tool results and session records can be large.
const maxLine = 64 << 20

// turnEndType is the type of the line this package appends to a turn's
// transcript after the turn (a stream-json type the CLI never prints): the
// exit code when the process ended, the retries its stderr reported, and
// the session file's records of the turn's model calls (see TurnEnd).
const turnEndType = "turn_end"

// line is the turn_end line, newline-terminated, with the session
// records' text as the CLI wrote it: Marshal would write ">" in a tool's
// arguments as \u003e, which a rubric check's pattern (">> ledger.log")
// reading the call's input as raw JSON would miss.
func (e TurnEnd) line() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(e) // ends the line
	return buf.Bytes()
}

// TurnEnd is the turn_end line: what the CLI did not print.
type TurnEnd struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id,omitempty"`
	// ExitCode is set when the turn ended with its process (resume mode,
	// or a live process that died).
	ExitCode *int `json:"exit_code,omitempty"`
	// Retries counts the "Attempt N failed" lines on stderr: model calls
	// the CLI tried again.
	Retries int `json:"retries,omitempty"`
	// Records are the session file's records of the turn's model calls
	// (type "gemini", one per call, the last copy of each id), raw.
	Records []json.RawMessage `json:"records"`
	// SessionFile is the file they were read from ("" when none was
	// found), or why none was read.
	SessionFile string `json:"session_file,omitempty"`
	Note        string `json:"note,omitempty"`
}

// parser is the state of one ParseTurn.
type parser struct {
	t       agent.Turn
	byID    map[string]int    // call id → index in t.Calls
	native  map[string]string // call id → the CLI's tool name
	text    strings.Builder   // assistant text since the last tool event
	steps   int               // model calls seen in the stream
	inModel bool              // the last event was model output
	// stats is the result's per-model sums, the fallback when the session
	// file gave nothing.
	stats   []modelSums
	records []gjson.Result
	ended   bool // a turn_end line was read
	exit    *int
}

type modelSums struct {
	model                  string
	input, cached, outputs int64
}

// ParseTurn reads one turn's transcript: the CLI's stream-json lines (-p),
// or its ACP messages (--acp), then the turn_end line this package
// appends. It never fails on content: malformed lines are counted, a
// missing result leaves HasResult false. Only a read error is returned.
//
// What the turn reports: the calls in claude's names (see the package
// comment) with their exact arguments and the results the model got (from
// the session records; the stream's display strings otherwise); Text, the
// text of the last model call; APICalls, the calls in the session records;
// ContextTokens, the prompt size of the last of them; CostUSD, estimated
// from their token counts at the price table (0 when a model is not in
// it). A turn failed (Turn.Failure) when the result says error, an error
// event came, or the result never came (a SIGTERM ends the CLI with exit 0
// and no result).
func ParseTurn(r io.Reader) (agent.Turn, error) {
	p := &parser{byID: map[string]int{}, native: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !jsonline.Valid(line) {
			p.t.BadLines++
			continue
		}
		ev := gjson.ParseBytes(line)
		if ev.Get("jsonrpc").Exists() {
			p.acp(ev)
		} else {
			p.event(ev)
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			p.t.BadLines++
		} else {
			return p.t, fmt.Errorf("reading the gemini stream: %w", err)
		}
	}
	p.finish()
	return p.t, nil
}

// event reads one stream-json line (-p --output-format stream-json).
func (p *parser) event(ev gjson.Result) {
	switch ev.Get("type").String() {
	case "init":
		p.t.SessionID = ev.Get("session_id").String()
		p.t.Model = ev.Get("model").String()
	case "message":
		if ev.Get("role").String() == "assistant" {
			p.modelOutput()
			p.text.WriteString(ev.Get("content").String())
		}
	case "tool_use":
		p.modelOutput()
		p.text.Reset()
		id := ev.Get("tool_id").String()
		p.addCall(id, ev.Get("tool_name").String(), json.RawMessage(ev.Get("parameters").Raw))
	case "tool_result":
		p.inModel = false
		p.text.Reset()
		i, ok := p.byID[ev.Get("tool_id").String()]
		if !ok {
			return
		}
		c := &p.t.Calls[i]
		c.HasResult = true
		c.IsError = ev.Get("status").String() != "success"
		c.Result = ev.Get("output").String()
		if msg := ev.Get("error.message").String(); c.IsError && msg != "" {
			c.Result = msg
		}
		switch ev.Get("error.type").String() {
		case "policy_violation", "tool_not_registered":
			c.Denied = true
		default:
			c.Denied = c.IsError && deniedText(c.Result)
		}
	case "error":
		msg := ev.Get("message").String()
		if ev.Get("severity").String() == "error" {
			p.t.IsError = true
			p.t.Errors = append(p.t.Errors, msg)
			if p.t.TerminalReason == "" {
				p.t.TerminalReason = "model_error"
			}
		} else if strings.Contains(msg, "Loop detected") {
			p.t.TerminalReason = "loop_detected"
		}
	case "result":
		p.t.HasResult = true
		if ev.Get("status").String() != "success" {
			p.t.IsError = true
		}
		if msg := ev.Get("error.message").String(); msg != "" {
			p.t.Errors = append(p.t.Errors, msg)
			if strings.HasPrefix(msg, "[API Error") {
				p.t.TerminalReason = "api_error"
				p.t.APIErrorStatus = apiStatus(msg)
			}
		}
		if p.t.IsError && p.t.TerminalReason == "" {
			p.t.TerminalReason = "error"
		}
		if p.t.SessionID == "" {
			p.t.SessionID = ev.Get("session_id").String()
		}
		p.stats = p.stats[:0]
		ev.Get("stats.models").ForEach(func(k, v gjson.Result) bool {
			p.stats = append(p.stats, modelSums{model: k.String(),
				input: v.Get("input_tokens").Int(), cached: v.Get("cached").Int(), outputs: v.Get("output_tokens").Int()})
			return true
		})
	case turnEndType:
		p.turnEnd(ev)
	}
}

// acp reads one ACP JSON-RPC message the CLI wrote (--acp).
func (p *parser) acp(ev gjson.Result) {
	method := ev.Get("method").String()
	switch {
	case method == "session/update":
		u := ev.Get("params.update")
		switch u.Get("sessionUpdate").String() {
		case "agent_message_chunk":
			p.modelOutput()
			p.text.WriteString(u.Get("content.text").String())
		case "tool_call":
			p.modelOutput()
			p.text.Reset()
			id := u.Get("toolCallId").String()
			native, _, _ := strings.Cut(id, "__")
			p.addCall(id, native, acpInput(native, u))
			p.toolUpdate(u)
		case "tool_call_update":
			p.inModel = false
			p.text.Reset()
			p.toolUpdate(u)
		}
	case method == "session/request_permission":
		// The policy grants what the turn may use; anything the CLI still
		// asks about is refused (the client answers cancel).
		if i, ok := p.byID[ev.Get("params.toolCall.toolCallId").String()]; ok {
			p.t.Calls[i].Denied = true
		}
	case method != "":
	case ev.Get("result.sessionId").Exists():
		p.t.SessionID = ev.Get("result.sessionId").String()
	case ev.Get("result.stopReason").Exists():
		p.t.HasResult = true
		if r := ev.Get("result.stopReason").String(); r != "end_turn" {
			p.t.TerminalReason = r
			// ACP's stop reasons other than end_turn: a refusal, a stop,
			// output cut at max_tokens or a turn cut at
			// max_turn_requests are each a turn that did not finish, as
			// claude's max_turns is an error (it passed as a success).
			if r == "refusal" || r == "cancelled" || r == "max_tokens" || r == "max_turn_requests" {
				p.t.IsError = true
				p.t.Errors = append(p.t.Errors, "the turn ended with stop reason "+r)
			}
		}
	case ev.Get("error").Exists():
		p.t.HasResult = true
		p.t.IsError = true
		msg := ev.Get("error.message").String()
		if d := ev.Get("error.data").String(); d != "" && !strings.Contains(msg, d) {
			msg += ": " + d
		}
		p.t.Errors = append(p.t.Errors, msg)
		// The CLI answers an API error with its HTTP status as the
		// JSON-RPC code (429: "Rate limit exceeded").
		if c := int(ev.Get("error.code").Int()); c >= 400 && c <= 599 {
			p.t.TerminalReason = "api_error"
			p.t.APIErrorStatus = c
		} else {
			p.t.TerminalReason = "error"
			if s := apiStatus(msg); s != 0 || strings.Contains(msg, "API Error") {
				p.t.TerminalReason = "api_error"
				p.t.APIErrorStatus = s
			}
		}
	}
}

// toolUpdate applies an ACP tool_call(_update)'s status and content.
func (p *parser) toolUpdate(u gjson.Result) {
	i, ok := p.byID[u.Get("toolCallId").String()]
	if !ok {
		return
	}
	c := &p.t.Calls[i]
	var text []string
	for _, part := range u.Get("content").Array() {
		if t := part.Get("content.text").String(); t != "" {
			text = append(text, t)
		}
	}
	switch u.Get("status").String() {
	case "completed":
		c.HasResult = true
		c.IsError = false
	case "failed":
		c.HasResult = true
		c.IsError = true
	default:
		return // in progress: its content describes the call, not a result
	}
	c.Result = strings.Join(text, "\n")
	c.Denied = c.IsError && deniedText(c.Result)
}

// acpInput is what ACP says of a call's input, which it does not send:
// the command of a shell call (its title), the name of a skill (the title
// is "\"name\": description"), the file of a file tool (its first
// location). The session records replace it where they have the call.
func acpInput(native string, u gjson.Result) json.RawMessage {
	title := u.Get("title").String()
	var v any
	switch native {
	case "run_shell_command":
		v = map[string]string{"command": title}
	case "activate_skill":
		name := title
		if s, err := strconv.QuotedPrefix(title); err == nil {
			name, _ = strconv.Unquote(s)
		}
		v = map[string]string{"name": name}
	case "read_file", "write_file", "replace":
		path := u.Get("locations.0.path").String()
		if path == "" {
			return json.RawMessage("{}")
		}
		v = map[string]string{"file_path": path}
	default:
		return json.RawMessage("{}")
	}
	// Unescaped, as the CLI showed it (see TurnEnd.line).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func (p *parser) modelOutput() {
	if !p.inModel {
		p.steps++
		p.inModel = true
	}
}

func (p *parser) addCall(id, native string, input json.RawMessage) {
	if _, ok := p.byID[id]; ok {
		return // a retried stream re-emits what it had already streamed
	}
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	p.byID[id] = len(p.t.Calls)
	p.native[id] = native
	p.t.Calls = append(p.t.Calls, claude.ToolCall{ID: id, Name: native, Input: input})
}

func (p *parser) turnEnd(ev gjson.Result) {
	p.ended = true
	if id := ev.Get("session_id").String(); id != "" && p.t.SessionID == "" {
		p.t.SessionID = id
	}
	if e := ev.Get("exit_code"); e.Exists() {
		code := int(e.Int())
		p.exit = &code
	}
	p.t.Retries += int(ev.Get("retries").Int())
	p.records = append(p.records, ev.Get("records").Array()...)
}

// finish folds the session records in and maps the calls to claude's
// names.
func (p *parser) finish() {
	t := &p.t
	t.Text = p.text.String()
	t.APICalls = p.steps
	if len(p.records) > 0 {
		p.fromRecords()
	}
	if t.APICalls == 0 {
		// No model call in the session records (the file was not found,
		// or the turn was stopped first): the stream's count, and the
		// result's sums, which give the context only for a turn of one
		// call.
		t.APICalls = p.steps
		for _, s := range p.stats {
			t.AnsweredBy = appendOnce(t.AnsweredBy, s.model)
			t.CostUSD += Cost(s.model, CallTokens{Prompt: s.input, Cached: s.cached, Output: s.outputs})
			t.OutputTokens += s.outputs
			if len(p.stats) == 1 && p.steps == 1 {
				t.LastUsage = claude.Usage{Input: s.input - s.cached, CacheRead: s.cached, Output: s.outputs}
			}
		}
	}
	if p.exit != nil && t.IsError && t.APIErrorStatus == 0 && t.TerminalReason == "api_error" {
		t.APIErrorStatus = statusOfExit(*p.exit)
	}
	t.ContextTokens = t.LastUsage.Context()
	for i := range t.Calls {
		c := &t.Calls[i]
		native := p.native[c.ID]
		c.Name = ClaudeName(native)
		c.Input = claudeInput(native, c.Input)
	}
}

// fromRecords takes the turn's model calls from the session records: per
// call tokens and model, the exact arguments of the calls the stream
// reported and the results the model got, and the last call's text. A
// call only the records name is not added: the stream (or ACP) reports
// every call of the turn, the records can hold a stale copy (see
// turnRecords).
func (p *parser) fromRecords() {
	t := &p.t
	t.APICalls, t.CostUSD, t.OutputTokens = 0, 0, 0
	var last gjson.Result
	for _, r := range p.records {
		if r.Get("type").String() == "user" {
			for _, part := range r.Get("content").Array() {
				fr := part.Get("functionResponse")
				i, ok := p.byID[fr.Get("id").String()]
				if !fr.Exists() || !ok {
					continue
				}
				c := &t.Calls[i]
				c.HasResult = true
				if res, ok := responseText(gjson.Parse("[" + part.Raw + "]")); ok {
					c.Result = res
				}
				c.IsError = fr.Get("response.error").Exists()
				c.Denied = c.Denied || (c.IsError && deniedText(c.Result))
			}
			continue
		}
		if tok := r.Get("tokens"); tok.Exists() {
			// A model call. In a live (ACP) session the CLI writes the
			// call's tool calls as another record, with an id of its own
			// and no tokens.
			last = r
			t.APICalls++
			p.callTokens(r, tok)
		}
		for _, tc := range r.Get("toolCalls").Array() {
			p.enrichCall(tc)
		}
	}
	if last.Exists() {
		t.Text = contentText(last.Get("content"))
	}
}

// callTokens adds one model call's tokens, model and cost.
func (p *parser) callTokens(r, tok gjson.Result) {
	t := &p.t
	ct := CallTokens{Prompt: tok.Get("input").Int(), Cached: tok.Get("cached").Int(),
		Output: tok.Get("output").Int(), Thoughts: tok.Get("thoughts").Int()}
	model := r.Get("model").String()
	if model != "" {
		t.AnsweredBy = appendOnce(t.AnsweredBy, model)
	}
	t.CostUSD += Cost(model, ct)
	t.OutputTokens += ct.Output + ct.Thoughts
	t.LastUsage = claude.Usage{Input: ct.Prompt - ct.Cached, CacheRead: ct.Cached, Output: ct.Output + ct.Thoughts}
}

// enrichCall gives a call the stream reported its exact arguments and the
// result the model got, from a record's toolCalls entry.
func (p *parser) enrichCall(tc gjson.Result) {
	i, ok := p.byID[tc.Get("id").String()]
	if !ok {
		return
	}
	c := &p.t.Calls[i]
	if args := tc.Get("args"); args.Exists() {
		c.Input = json.RawMessage(args.Raw)
	}
	status := tc.Get("status").String()
	if status == "" {
		return // not run yet: the turn was stopped
	}
	c.HasResult = true
	c.IsError = status != "success"
	if res, ok := responseText(tc.Get("result")); ok {
		c.Result = res
	}
	c.Denied = c.Denied || (c.IsError && deniedText(c.Result))
}

// responseText is the model-facing text of a tool call's result: its
// functionResponse's output, else its error.
func responseText(result gjson.Result) (string, bool) {
	var parts []string
	for _, fr := range result.Array() {
		resp := fr.Get("functionResponse.response")
		switch {
		case resp.Get("output").Exists():
			parts = append(parts, resp.Get("output").String())
		case resp.Get("error").Exists():
			parts = append(parts, resp.Get("error").String())
		case resp.Exists():
			parts = append(parts, resp.Raw)
		}
	}
	return strings.Join(parts, "\n"), len(parts) > 0
}

// contentText flattens a record's content: a string, or parts with text.
func contentText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.String()
	}
	var b strings.Builder
	for _, part := range c.Array() {
		if part.Get("thought").Bool() {
			continue
		}
		b.WriteString(part.Get("text").String())
	}
	return b.String()
}

// deniedText: a result that says the policy refused the call, or that it
// needed a confirmation headless mode cannot give (PROTOCOL §2).
func deniedText(s string) bool {
	return strings.Contains(s, "denied by policy") || strings.Contains(s, "requires user confirmation")
}

var codeRE = regexp.MustCompile(`"code"\s*:\s*([45]\d\d)\b`)

// apiStatus is the HTTP status an API error message carries ("[API Error:
// {"error":{"code":500,...}}]"); the 429 message carries none but its
// advice.
func apiStatus(msg string) int {
	// Google refuses a bad key with 400 INVALID_ARGUMENT, reason
	// API_KEY_INVALID ("API key not valid. Please pass a valid API
	// key."): a refused credential, as 401 is elsewhere, so the run stops
	// with the agent's advice instead of erring turn after turn.
	if strings.Contains(msg, "API_KEY_INVALID") || strings.Contains(msg, "API key not valid") {
		return 401
	}
	if m := codeRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if strings.Contains(msg, "Please wait and try again later") {
		return 429
	}
	return 0
}

// statusOfExit undoes the CLI's exit code for an API error, the HTTP status
// modulo 256 (429 → 173, 500 → 244, 400 → 144): 0 when it is none.
func statusOfExit(code int) int {
	if s := code + 256; code > 1 && s >= 400 && s <= 599 {
		return s
	}
	return 0
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// Piece says whether a line of gemini's output is one piece of a text it
// streams: an assistant message with "delta": true (stream-json), or a
// session/update chunk (agent_message_chunk, agent_thought_chunk) in
// interactive mode. Any other line ends every stream: gemini sends a
// message's chunks together, and a tool call between two is a new
// message. The transcript writer joins the pieces to mask a secret split
// across them (redact.NewStreamWriter).
func Piece(line []byte) (stream, path string, ok bool) {
	if gjson.GetBytes(line, "method").String() == "session/update" {
		kind := gjson.GetBytes(line, "params.update.sessionUpdate").String()
		if strings.HasSuffix(kind, "_chunk") {
			return kind, "params.update.content.text", true
		}
		return redact.EveryStream, "", true
	}
	if gjson.GetBytes(line, "type").String() == "message" && gjson.GetBytes(line, "delta").Bool() {
		return "message " + gjson.GetBytes(line, "role").String(), "content", true
	}
	return redact.EveryStream, "", true
}
