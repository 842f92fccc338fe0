package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/jsonline"
	"github.com/vibe-test/vibe-test/internal/redact"
)

// Turn and the rest are the shapes every agent reports (package agent).
type (
	Turn     = agent.Turn
	Outcome  = agent.Outcome
	ToolCall = claude.ToolCall
	Usage    = claude.Usage
)

// maxLine bounds one line of the stream; a command's output can be large.
const maxLine = 64 << 20

// ParseTurn reads one turn as codex printed it: the JSONL of `codex exec
// --json` (resume mode), or the JSON-RPC messages `codex app-server` sent
// during one turn (live mode, the lines Live.Send saves). It never fails on
// content: a malformed line is counted in BadLines, and a stream without
// its last line (turn.completed / turn.failed, or turn/completed) leaves
// HasResult false, which Failure reports. Only a read error is returned.
//
// Tool calls carry claude's names, so rubric checks and the judge read
// every agent alike: a command_execution is Bash with {"command": <what
// the model ran>} (the /bin/bash -lc wrapper taken off), a file_change
// is one Write (a file added) or Edit (updated) or Delete per file, with
// {"file_path": <absolute path>}. Codex reports no usage per call in the
// exec stream: APICalls, LastUsage, ContextTokens, OutputTokens, Model
// and CostUSD come from the rollout file (Run reads it, ReadRollout).
func ParseTurn(r io.Reader) (Turn, error) {
	t, _, err := parseTurn(r)
	return t, err
}

// parseTurn is ParseTurn, also saying whether the stream showed the turn
// start (turn.started): only then is the rollout's newest turn this one.
func parseTurn(r io.Reader) (Turn, bool, error) {
	p := newParser()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		p.line(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			p.t.BadLines++ // treated like a cut stream, not a crash
		} else {
			return p.t, p.started, fmt.Errorf("reading the codex stream: %w", err)
		}
	}
	return p.finish(), p.started, nil
}

// parser builds a Turn line by line; Live feeds it as lines arrive.
type parser struct {
	t      Turn
	byID   map[string]int // item id → index in t.Calls (the first call of a file_change)
	text   string         // the latest agent message
	outSum int64          // app-server: output tokens of this turn's calls
	done   bool           // the turn's last line was seen
	// started: the stream said turn.started (turn/started): a process can
	// die, or a turn/start be refused, after the thread is known.
	started bool
	// calls are the app-server's model calls of the turn; prevTotal the
	// thread's total tokens at the last usage update (-1: not known).
	calls       []CallUsage
	prevTotal   int64
	turnID      string // this turn's id (turn/start's answer, turn/started)
	compacting  bool   // between a contextCompaction item's start and end
	compactCall bool   // a call was counted during it
	compaction  claude.Compaction
}

func newParser() *parser { return &parser{byID: map[string]int{}, prevTotal: -1} }

// line takes one line of either format.
func (p *parser) line(raw []byte) {
	line := bytes.TrimSpace(raw)
	if len(line) == 0 {
		return
	}
	if !jsonline.Valid(line) {
		p.t.BadLines++
		return
	}
	ev := gjson.ParseBytes(line)
	if m := ev.Get("method"); m.Exists() || ev.Get("id").Exists() && !ev.Get("type").Exists() {
		p.rpc(m.String(), ev)
		return
	}
	p.exec(ev)
}

// exec takes one event of `codex exec --json` (PROTOCOL.md §2).
func (p *parser) exec(ev gjson.Result) {
	switch ev.Get("type").String() {
	case "thread.started":
		p.t.SessionID = ev.Get("thread_id").String()
	case "turn.started":
		p.started = true
	case "item.started", "item.completed":
		p.item(ev.Get("item"), ev.Get("type").String() == "item.completed", false)
	case "error":
		// A retry ("Reconnecting... 2/5 (…)") or the final error, which
		// turn.failed repeats; warnings about the model or the session
		// are error items, not these.
		if strings.HasPrefix(ev.Get("message").String(), "Reconnecting...") {
			p.t.Retries++
		}
	case "turn.completed":
		p.t.HasResult, p.t.IsError = true, false
		p.t.TerminalReason = "completed"
		p.done = true
	case "turn.failed":
		p.fail(ev.Get("error.message").String(), 0)
	}
}

// rpc takes one JSON-RPC message of `codex app-server` (PROTOCOL.md §6.2).
func (p *parser) rpc(method string, m gjson.Result) {
	params := m.Get("params")
	if id := params.Get("threadId").String(); id != "" && p.t.SessionID == "" {
		p.t.SessionID = id
	}
	switch method {
	case "":
		// A response: thread/start and thread/resume say the thread.
		if th := m.Get("result.thread"); th.Exists() {
			p.t.SessionID = th.Get("id").String()
			p.t.CLIVersion = th.Get("cliVersion").String()
			if mod := m.Get("result.model").String(); mod != "" {
				p.t.Model = mod
			}
		}
		if id := m.Get("result.turn.id").String(); id != "" {
			p.turnID = id // turn/start's answer, before turn/started
		}
		if e := m.Get("error"); e.Exists() && e.Type != gjson.Null {
			p.t.Errors = append(p.t.Errors, e.Get("message").String())
		}
	case "thread/started":
		p.t.SessionID = params.Get("thread.id").String()
	case "turn/started":
		p.started = true
		if id := params.Get("turn.id").String(); id != "" {
			p.turnID = id
		}
	case "item/started", "item/completed":
		p.item(params.Get("item"), method == "item/completed", true)
	case "thread/tokenUsage/updated":
		// After every model call: last is that call, total the thread's.
		// A compaction also sends updates that are no call: the thread's
		// state again (total unchanged) and, after it, codex's estimate
		// of the compacted history (last with no input).
		last, total := params.Get("tokenUsage.last"), params.Get("tokenUsage.total.totalTokens").Int()
		if id := params.Get("turnId").String(); !p.started || id != "" && p.turnID != "" && id != p.turnID {
			// thread/resume replays the thread's last update (the turn
			// before's last call, under its turnId), sent on its own as
			// this turn starts, before or after turn/started: no call of
			// this turn, but the total the next one adds to. Read as a
			// call, a restarted session charged that call again.
			p.prevTotal = total
			return
		}
		call := (p.prevTotal < 0 || total > p.prevTotal) && last.Get("inputTokens").Int() > 0
		p.prevTotal = total
		if !call {
			if p.compacting && last.Get("inputTokens").Int() == 0 {
				p.compaction.PostTokens = last.Get("totalTokens").Int()
			}
			return
		}
		u := CallUsage{
			Input:      last.Get("inputTokens").Int(),
			Cached:     last.Get("cachedInputTokens").Int(),
			CacheWrite: last.Get("cacheWriteInputTokens").Int(),
			Output:     last.Get("outputTokens").Int(),
			Reasoning:  last.Get("reasoningOutputTokens").Int(),
		}
		if p.compacting && p.compactCall {
			// A compaction makes one call; read alone, a transcript
			// cannot tell the repeat of the thread's state before it
			// (prevTotal unknown), so the later one is the call.
			p.outSum -= p.calls[len(p.calls)-1].Output
			p.calls = p.calls[:len(p.calls)-1]
			p.t.APICalls--
		}
		p.calls = append(p.calls, u)
		p.t.APICalls++
		p.t.LastUsage = usageOf(u)
		p.outSum += u.Output
		if p.compacting {
			p.compaction.PreTokens = u.Input
			p.compactCall = true
		}
	case "error":
		if params.Get("willRetry").Bool() {
			p.t.Retries++
		}
	case "turn/completed":
		turn := params.Get("turn")
		switch turn.Get("status").String() {
		case "completed":
			p.t.HasResult, p.t.IsError = true, false
			p.t.TerminalReason = "completed"
			p.done = true
		case "interrupted":
			p.t.HasResult, p.t.IsError = true, true
			p.t.TerminalReason = "interrupted"
			p.t.Errors = append(p.t.Errors, "the turn was interrupted")
			p.done = true
		default:
			p.fail(turn.Get("error.message").String(), httpStatusOf(turn.Get("error.codexErrorInfo")))
		}
	}
}

// item takes an exec item or an app-server ThreadItem (camelCase types
// and fields there).
func (p *parser) item(it gjson.Result, completed, rpc bool) {
	id := it.Get("id").String()
	switch it.Get("type").String() {
	case "contextCompaction":
		// Codex compacting the thread: its summary call, then the
		// history replaced (PreTokens: that call's input; PostTokens:
		// codex's estimate after).
		if !completed {
			p.compacting, p.compactCall = true, false
			p.compaction = claude.Compaction{Trigger: "auto"}
			return
		}
		p.compacting = false
		p.t.Compactions = append(p.t.Compactions, p.compaction)
	case "agent_message", "agentMessage":
		if completed {
			p.text = it.Get("text").String()
		}
	case "command_execution", "commandExecution":
		cmd := unwrapShell(it.Get("command").String())
		out := it.Get("aggregated_output").String()
		exit := it.Get("exit_code")
		if rpc {
			out = it.Get("aggregatedOutput").String()
			exit = it.Get("exitCode")
		}
		i := p.call(id, "Bash", map[string]string{"command": cmd})
		if completed {
			c := &p.t.Calls[i]
			c.HasResult = true
			c.Result = out
			c.IsError = it.Get("status").String() != "completed" || exit.Exists() && exit.Type != gjson.Null && exit.Int() != 0
		}
	case "file_change", "fileChange":
		if !completed {
			return // the changes are listed when the patch is applied
		}
		failed := it.Get("status").String() != "completed"
		for k, ch := range it.Get("changes").Array() {
			kind := ch.Get("kind").String()
			if rpc {
				kind = ch.Get("kind.type").String()
			}
			name := map[string]string{"add": "Write", "update": "Edit", "delete": "Delete"}[kind]
			if name == "" {
				name = "Edit"
			}
			i := p.call(fmt.Sprintf("%s#%d", id, k), name, map[string]string{"file_path": ch.Get("path").String()})
			c := &p.t.Calls[i]
			c.HasResult, c.IsError = true, failed
			if rpc {
				c.Result = ch.Get("diff").String()
			}
		}
	case "mcp_tool_call", "mcpToolCall":
		// Not seen with the pinned CLI (no MCP servers are configured);
		// named as claude names MCP tools.
		i := p.call(id, "mcp__"+it.Get("server").String()+"__"+it.Get("tool").String(), json.RawMessage(orEmpty(it.Get("arguments").Raw)))
		if completed {
			c := &p.t.Calls[i]
			c.HasResult = true
			c.IsError = it.Get("status").String() != "completed" || it.Get("error").Exists() && it.Get("error").Type != gjson.Null
			c.Result = it.Get("result").Raw
		}
	case "web_search", "webSearch":
		i := p.call(id, "WebSearch", map[string]string{"query": it.Get("query").String()})
		if completed {
			p.t.Calls[i].HasResult = true
		}
	}
}

// call finds or adds the call of an item id.
func (p *parser) call(id, name string, input any) int {
	if i, ok := p.byID[id]; ok && id != "" {
		return i
	}
	// Unescaped, as the model wrote it: a rubric check's pattern (">>
	// ledger.log") reads the input as claude's raw JSON, where Marshal's
	// \u003e would hide it.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	b := []byte("{}")
	if err := enc.Encode(input); err == nil {
		b = bytes.TrimRight(buf.Bytes(), "\n")
	}
	p.t.Calls = append(p.t.Calls, ToolCall{ID: id, Name: name, Input: b})
	p.byID[id] = len(p.t.Calls) - 1
	return len(p.t.Calls) - 1
}

// fail records the turn's failure: message is codex's own text; status,
// when the app-server gave one, the HTTP status.
func (p *parser) fail(message string, status int) {
	p.t.HasResult, p.t.IsError = true, true
	p.done = true
	p.t.Errors = append(p.t.Errors, message)
	reason, s := classifyError(message)
	if status == 0 {
		status = s
	}
	p.t.TerminalReason, p.t.APIErrorStatus = reason, status
}

func (p *parser) finish() Turn {
	p.t.Text = p.text
	if p.t.OutputTokens == 0 {
		p.t.OutputTokens = p.outSum
	}
	p.t.ContextTokens = p.t.LastUsage.Context()
	if p.t.Calls == nil {
		p.t.Calls = []ToolCall{}
	}
	return p.t
}

var statusRE = regexp.MustCompile(`(?:unexpected status|last status:) (\d{3})\b`)

// classifyError maps codex's failure texts (PROTOCOL.md §7) onto claude's
// terminal reasons, so the conversation driver's retry rules read both
// alike: "api_error" is what a later try may pass (status 429, 5xx, or 0
// for a cut stream or connection), "prompt_too_long" the full context
// window, anything else is not retried.
func classifyError(msg string) (reason string, status int) {
	if m := statusRE.FindStringSubmatch(msg); m != nil {
		fmt.Sscan(m[1], &status)
		return "api_error", status
	}
	switch {
	case strings.Contains(msg, "out of room in the model's context window"):
		return "prompt_too_long", 400
	case strings.Contains(msg, "experiencing high demand"):
		// Codex's own text for an HTTP 500, the server's message dropped
		// (PROTOCOL.md §7.1).
		return "api_error", 500
	case strings.HasPrefix(msg, "Quota exceeded"):
		// 429 insufficient_quota: no later try passes it.
		return "quota_exceeded", 429
	case strings.Contains(msg, "stream disconnected"), strings.Contains(msg, "stream closed"),
		strings.Contains(msg, "Connection failed"), strings.Contains(msg, "error sending request"):
		return "api_error", 0
	case strings.HasPrefix(msg, "Missing environment variable"):
		return "config_error", 0
	}
	if strings.HasPrefix(strings.TrimSpace(msg), "{") {
		// A 400's body, passed through as the message.
		return "api_error", 400
	}
	return "error", 0
}

// httpStatusOf reads the status out of an app-server codexErrorInfo
// ({"responseTooManyFailedAttempts": {"httpStatusCode": 429}} and the
// like, or a bare name such as "internalServerError").
func httpStatusOf(info gjson.Result) int {
	if info.Type == gjson.String {
		switch info.String() {
		case "internalServerError":
			return 500
		case "unauthorized":
			return 401
		case "contextWindowExceeded", "badRequest":
			return 400
		case "rateLimitExceeded", "usageLimitExceeded":
			return 429
		}
		return 0
	}
	var status int
	info.ForEach(func(_, v gjson.Result) bool {
		status = int(v.Get("httpStatusCode").Int())
		return status == 0
	})
	return status
}

// usageOf turns a call's usage into claude's shape, whose Input is the
// uncached part: codex's input count includes its cached tokens (and,
// taken the same way though always 0 so far, cache writes), so Context()
// is the whole input picture of the call.
func usageOf(u CallUsage) Usage {
	cached := min(max(u.Cached, 0), u.Input)
	write := min(max(u.CacheWrite, 0), u.Input-cached)
	return Usage{Input: u.Input - cached - write, CacheRead: cached, CacheCreation: write, Output: u.Output}
}

func orEmpty(raw string) string {
	if raw == "" || !json.Valid([]byte(raw)) {
		return "{}"
	}
	return raw
}

// Failure says why a turn failed, or "" when it succeeded, in codex's
// terms: success is exit 0 and a last line that completed the turn
// (PROTOCOL.md §2); a missing last line, a failed or interrupted turn, or
// a non-zero exit is a failure.
func Failure(t Turn, exitCode int) string {
	switch {
	case !t.HasResult && exitCode == 0:
		return "the codex stream ended before the turn did"
	case !t.HasResult:
		return fmt.Sprintf("codex exited with code %d before the turn ended", exitCode)
	case t.IsError:
		msg := strings.Join(t.Errors, "; ")
		if msg == "" {
			msg = "no message"
		}
		if t.APIErrorStatus != 0 {
			return fmt.Sprintf("%s (HTTP %d): %s", t.TerminalReason, t.APIErrorStatus, msg)
		}
		return fmt.Sprintf("%s: %s", t.TerminalReason, msg)
	case exitCode != 0:
		return fmt.Sprintf("codex exited with code %d", exitCode)
	}
	return ""
}

// Piece says whether a line of codex's app-server stream is one piece of
// a text it streams (item/agentMessage/delta, item/commandExecution/
// outputDelta, the reasoning deltas): its stream (the item) and the path
// of its text; or the end of a stream (item/completed ends its item,
// turn/completed every one). The transcript writer joins the pieces to
// mask a secret split across them (redact.NewStreamWriter).
func Piece(line []byte) (stream, path string, ok bool) {
	switch m := gjson.GetBytes(line, "method").String(); {
	case strings.HasSuffix(m, "/delta") || strings.HasSuffix(m, "Delta"):
		return gjson.GetBytes(line, "params.itemId").String(), "params.delta", true
	case m == "item/completed":
		return gjson.GetBytes(line, "params.item.id").String(), "", true
	case m == "turn/completed":
		return redact.EveryStream, "", true
	}
	return "", "", false
}

// SkillLoadFailure is why codex says, on its stderr, it could not load the
// skill installed as name (.agents/skills/<name>/SKILL.md), "" when it
// says nothing of it. CLI 0.171.0 logs "failed to load skill <path>:
// <why>" at the session's start and lists the skill nowhere, so the model
// can never see it: a turn run so measures the CLI, not the skill.
func SkillLoadFailure(stderr, name string) string {
	const mark = "failed to load skill "
	tail := "/.agents/skills/" + name + "/SKILL.md: "
	for line := range strings.Lines(stderr) {
		_, rest, ok := strings.Cut(line, mark)
		if !ok {
			continue
		}
		if _, why, ok := strings.Cut(rest, tail); ok {
			return strings.TrimSpace(why)
		}
	}
	return ""
}
