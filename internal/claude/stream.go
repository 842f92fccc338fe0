// Package claude runs the Claude Code CLI headless and reads what it printed.
//
// It is the only package that knows the CLI's flags and the shapes of its
// stream-json events (recorded from the version in VerifiedVersion in
// testdata/transcripts; `make fixtures` records them again). Everything else in vibe-test works with the
// Turn values this package produces.
package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/jsonline"
)

// ToolCall is one tool the agent executed, in the order the model asked for it.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Result    string          `json:"result,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	HasResult bool            `json:"has_result"`
	Denied    bool            `json:"denied,omitempty"`
	// Parent is set on a sub-agent's call: the id of the call that started
	// the sub-agent (the Skill call of a context: fork skill), whose result
	// comes after all of its sub-agent's calls. Agent is the sub-agent's
	// type (general-purpose, or the skill's agent:).
	Parent string `json:"parent,omitempty"`
	Agent  string `json:"agent,omitempty"`
}

// Usage is the input picture (and output) of one API call.
type Usage struct {
	Input         int64 `json:"input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	Output        int64 `json:"output_tokens"`
}

// Context is the number of tokens the model saw on this call.
func (u Usage) Context() int64 { return u.Input + u.CacheCreation + u.CacheRead }

// Turn is one invocation of `claude -p`, parsed from its stream-json.
type Turn struct {
	SessionID string `json:"session_id,omitempty"`
	// Model is the model the CLI was asked for (the init event).
	Model string `json:"model,omitempty"`
	// AnsweredBy are the models that answered this invocation's API calls
	// (assistant message.model), each once, in order: what the API says it
	// ran, which a fallback or a plan limit can make differ from Model.
	AnsweredBy []string `json:"answered_by,omitempty"`
	CLIVersion string   `json:"claude_code_version,omitempty"`
	Skills     []string `json:"skills,omitempty"`
	// Calls are every tool call of the invocation in the order the stream
	// gave them: the main agent's and, between a call that started a
	// sub-agent and its result, that sub-agent's (Parent set).
	Calls []ToolCall `json:"tool_calls"`
	Text  string     `json:"text,omitempty"`
	// APICalls are the main agent's; SubagentAPICalls its sub-agents' as far
	// as the stream shows them (a sub-agent's call that answered with text
	// only never reaches it), whose usage never stands for the main agent's
	// context (LastUsage).
	APICalls         int      `json:"api_calls"`
	SubagentAPICalls int      `json:"subagent_api_calls,omitempty"`
	SubagentModels   []string `json:"subagent_models,omitempty"`
	LastUsage        Usage    `json:"last_usage"`
	ContextTokens    int64    `json:"context_tokens"`
	CostUSD          float64  `json:"cost_usd"`
	// CostEstimated: CostUSD is priced from Spent (a cold call stopped
	// before its result line, the only place the CLI says a cost:
	// Caller.Price), not the CLI's.
	CostEstimated bool `json:"-"`
	// OutputTokens is the turn's output over all its calls (result.usage:
	// a sum, right for output, wrong for context).
	OutputTokens   int64    `json:"output_tokens"`
	HasResult      bool     `json:"has_result"`
	IsError        bool     `json:"is_error,omitempty"`
	TerminalReason string   `json:"terminal_reason,omitempty"`
	APIErrorStatus int      `json:"api_error_status,omitempty"`
	Errors         []string `json:"errors,omitempty"`
	Retries        int      `json:"api_retries,omitempty"`
	// StructuredOutput is set by --json-schema calls when the model called
	// the StructuredOutput tool; absent otherwise, even on "success".
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	// BadLines counts lines that were not valid JSON (a stream cut mid-line).
	BadLines int `json:"bad_lines,omitempty"`
	// Compactions are the session's compactions in this invocation
	// (system/compact_boundary): a /compact, or the CLI compacting on its
	// own in the middle of a turn (trigger "auto").
	Compactions []Compaction `json:"compactions,omitempty"`
	// LocalCommand is the result's local_command: "compact" when the
	// invocation ran /compact rather than asking the model.
	LocalCommand string `json:"local_command,omitempty"`
	// Hooks are the hooks that ran (system/hook_response, printed only
	// with --include-hook-events): a skill's frontmatter hooks.
	Hooks []HookRun `json:"hooks,omitempty"`
	// Spent is each API call's model and usage, the main agent's and its
	// sub-agents', as the stream last showed them: what an invocation
	// stopped before its result line (which alone says its cost) was
	// billed for.
	Spent []CallSpend `json:"spent,omitempty"`
}

// CallSpend is one API call's model and usage.
type CallSpend struct {
	Model string `json:"model"`
	Usage Usage  `json:"usage"`
}

// HookRun is one hook the CLI ran: its name ("PreToolUse:Bash", the event
// and the matcher), its outcome (success, error, …) and exit code.
type HookRun struct {
	Name     string `json:"name"`
	Outcome  string `json:"outcome"`
	ExitCode int    `json:"exit_code"`
}

// Compaction is one compact_boundary: the context before (PreTokens) and
// the CLI's estimate of it after (PostTokens).
type Compaction struct {
	Trigger    string `json:"trigger"` // manual (/compact) or auto
	PreTokens  int64  `json:"pre_tokens"`
	PostTokens int64  `json:"post_tokens"`
}

// maxLine bounds one stream-json line; tool results can be large.
const maxLine = 64 << 20

// ParseTurn reads one invocation's stream-json. It never fails on content:
// malformed lines are counted, and a missing result line leaves HasResult
// false, which Failure reports. Only a read error is returned.
func ParseTurn(r io.Reader) (Turn, error) {
	var t Turn
	byID := map[string]int{} // tool_use id → index in t.Calls
	var lastMsgID string
	subMsgID := map[string]string{} // a sub-agent's parent call → its last message id
	spentAt := map[string]int{}     // a message id → its place in t.Spent
	var lastText strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !jsonline.Valid(line) {
			t.BadLines++
			continue
		}
		ev := gjson.ParseBytes(line)
		switch ev.Get("type").String() {
		case "system":
			switch ev.Get("subtype").String() {
			case "init":
				t.SessionID = ev.Get("session_id").String()
				t.Model = ev.Get("model").String()
				t.CLIVersion = ev.Get("claude_code_version").String()
				t.Skills = t.Skills[:0]
				for _, s := range ev.Get("skills").Array() {
					t.Skills = append(t.Skills, s.String())
				}
			case "api_retry":
				t.Retries++
			case "compact_boundary":
				m := ev.Get("compact_metadata")
				t.Compactions = append(t.Compactions, Compaction{
					Trigger:    m.Get("trigger").String(),
					PreTokens:  m.Get("pre_tokens").Int(),
					PostTokens: m.Get("post_tokens").Int(),
				})
			case "hook_response":
				t.Hooks = append(t.Hooks, HookRun{
					Name:     ev.Get("hook_name").String(),
					Outcome:  ev.Get("outcome").String(),
					ExitCode: int(ev.Get("exit_code").Int()),
				})
			case "permission_denied":
				if i, ok := byID[ev.Get("tool_use_id").String()]; ok {
					t.Calls[i].Denied = true
				}
			}
		case "assistant":
			// Each object read in one pass (pick): a tool call's input can
			// be a whole file.
			var e, m [4]gjson.Result
			pick(ev, assistantKeys, e[:])
			pick(e[0], messageKeys, m[:])
			isAPIError, parent, agent := e[1], e[2], e[3]
			model, id, usage, content := m[0].String(), m[1].String(), m[2], m[3]
			// Synthetic messages report API errors; they are not model calls.
			if model == "<synthetic>" || isAPIError.Bool() {
				continue
			}
			spend := CallSpend{Model: model, Usage: Usage{
				Input:         usage.Get("input_tokens").Int(),
				CacheCreation: usage.Get("cache_creation_input_tokens").Int(),
				CacheRead:     usage.Get("cache_read_input_tokens").Int(),
				Output:        usage.Get("output_tokens").Int(),
			}}
			// A message's blocks come as lines of their own, each with the
			// message's usage so far: the last one seen is the call's.
			if i, ok := spentAt[id]; ok && id != "" {
				t.Spent[i] = spend
			} else {
				spentAt[id] = len(t.Spent)
				t.Spent = append(t.Spent, spend)
			}
			if parent.Type == gjson.String && parent.String() != "" {
				// A sub-agent's message (a context: fork skill runs as one):
				// its tool calls are the skill's steps, kept in order and
				// marked; its texts never reach the stream, and its usage is
				// not the main agent's context.
				p := parent.String()
				if id != subMsgID[p] {
					subMsgID[p] = id
					t.SubagentAPICalls++
					if model != "" && !contains(t.SubagentModels, model) {
						t.SubagentModels = append(t.SubagentModels, model)
					}
				}
				content.ForEach(func(_, block gjson.Result) bool {
					if b := readBlock(block); b.kind == "tool_use" {
						b.call.Parent, b.call.Agent = p, agent.String()
						byID[b.call.ID] = len(t.Calls)
						t.Calls = append(t.Calls, b.call)
					}
					return true
				})
				continue
			}
			if model != "" && !contains(t.AnsweredBy, model) {
				t.AnsweredBy = append(t.AnsweredBy, model)
			}
			if id != lastMsgID {
				// A new API call: its text replaces the previous call's as the
				// candidate final text.
				t.APICalls++
				lastMsgID = id
				lastText.Reset()
				t.LastUsage = Usage{
					Input:         usage.Get("input_tokens").Int(),
					CacheCreation: usage.Get("cache_creation_input_tokens").Int(),
					CacheRead:     usage.Get("cache_read_input_tokens").Int(),
					Output:        usage.Get("output_tokens").Int(),
				}
			}
			content.ForEach(func(_, block gjson.Result) bool {
				switch b := readBlock(block); b.kind {
				case "text":
					lastText.WriteString(b.text)
				case "tool_use":
					byID[b.call.ID] = len(t.Calls)
					t.Calls = append(t.Calls, b.call)
				}
				return true
			})
		case "user":
			// A user line carries a tool's whole output (twice: the block
			// and tool_use_result), so each block is read in one pass.
			ev.Get("message.content").ForEach(func(_, block gjson.Result) bool {
				var f [4]gjson.Result
				pick(block, resultBlockKeys, f[:])
				typ, id, isError, content := f[0], f[1], f[2], f[3]
				if typ.Str != "tool_result" {
					return true
				}
				if i, ok := byID[id.String()]; ok {
					t.Calls[i].HasResult = true
					t.Calls[i].IsError = isError.Bool()
					t.Calls[i].Result = resultText(content)
				}
				return true
			})
		case "result":
			t.HasResult = true
			t.IsError = ev.Get("is_error").Bool()
			t.TerminalReason = ev.Get("terminal_reason").String()
			t.APIErrorStatus = int(ev.Get("api_error_status").Int())
			t.CostUSD = ev.Get("total_cost_usd").Float()
			t.OutputTokens = ev.Get("usage.output_tokens").Int()
			t.LocalCommand = ev.Get("local_command").String()
			if t.SessionID == "" {
				t.SessionID = ev.Get("session_id").String()
			}
			if res := ev.Get("result"); res.Exists() {
				t.Text = res.String()
			}
			// The result lists every denied call too (PROTOCOL.md §2).
			for _, d := range ev.Get("permission_denials").Array() {
				if i, ok := byID[d.Get("tool_use_id").String()]; ok {
					t.Calls[i].Denied = true
				}
			}
			for _, e := range ev.Get("errors").Array() {
				t.Errors = append(t.Errors, e.String())
			}
			if so := ev.Get("structured_output"); so.Exists() && so.Type != gjson.Null {
				t.StructuredOutput = json.RawMessage(so.Raw)
			}
			// result.usage is a sum over the turn's calls; only its
			// iterations element (the last call's) says what the model saw.
			its := ev.Get("usage.iterations").Array()
			for k := len(its) - 1; k >= 0; k-- {
				if its[k].Get("type").String() == "message" {
					t.LastUsage = Usage{
						Input:         its[k].Get("input_tokens").Int(),
						CacheCreation: its[k].Get("cache_creation_input_tokens").Int(),
						CacheRead:     its[k].Get("cache_read_input_tokens").Int(),
						Output:        its[k].Get("output_tokens").Int(),
					}
					break
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			// An absurdly long line is treated like a cut stream, not a crash.
			t.BadLines++
		} else {
			return t, fmt.Errorf("reading stream-json: %w", err)
		}
	}
	if !t.HasResult {
		t.Text = lastText.String()
	}
	t.ContextTokens = t.LastUsage.Context()
	return t, nil
}

// The keys ParseTurn reads with pick: of an assistant line, of its
// message, of a block of that message's content, of a user line's content
// block (a tool result).
var (
	assistantKeys    = []string{"message", "is_api_error_message", "parent_tool_use_id", "subagent_type"}
	messageKeys      = []string{"model", "id", "usage", "content"}
	contentBlockKeys = []string{"type", "text", "id", "name", "input"}
	resultBlockKeys  = []string{"type", "tool_use_id", "is_error", "content"}
)

// pick reads the values of keys in obj into out (out[i] for keys[i]) in
// one pass: gjson's Get scans the object from its start for each key, over
// every value before it, however long. A repeated key gives its first
// value, as Get does.
func pick(obj gjson.Result, keys []string, out []gjson.Result) {
	obj.ForEach(func(k, v gjson.Result) bool {
		for i, key := range keys {
			if k.Str == key && !out[i].Exists() {
				out[i] = v
			}
		}
		return true
	})
}

// block is one block of an assistant message's content: its type, and
// its text or its tool call.
type block struct {
	kind, text string
	call       ToolCall
}

func readBlock(b gjson.Result) block {
	var f [5]gjson.Result
	pick(b, contentBlockKeys, f[:])
	kind, text, id, name, input := f[0], f[1], f[2], f[3], f[4]
	if kind.String() == "tool_use" {
		return block{kind: "tool_use", call: ToolCall{ID: id.String(), Name: name.String(), Input: json.RawMessage(input.Raw)}}
	}
	return block{kind: kind.String(), text: text.String()}
}

// resultText flattens a tool_result content (a string, or an array of blocks).
func resultText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.String()
	}
	var b strings.Builder
	for _, part := range c.Array() {
		if part.Get("type").String() == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(part.Get("text").String())
		}
	}
	if b.Len() == 0 && c.Exists() {
		return c.Raw
	}
	return b.String()
}

// Failure says why a turn failed, or "" when it succeeded: a non-zero exit,
// is_error, or no result line is a failure; the result's subtype is never
// trusted (an API error ends with subtype "success" and is_error true).
func (t Turn) Failure(exitCode int) string { return t.FailureOf("claude", exitCode) }

// FailureOf is Failure for a turn that the CLI named cli ran: the Gemini
// CLI's turns are parsed into the same Turn, and its exit codes must not be
// reported as claude's.
func (t Turn) FailureOf(cli string, exitCode int) string {
	switch {
	case !t.HasResult && exitCode == 0:
		return "the stream ended without a result line"
	case !t.HasResult:
		return fmt.Sprintf("%s exited with code %d and no result line", cli, exitCode)
	case t.IsError:
		reason := t.TerminalReason
		if reason == "" {
			reason = "error"
		}
		msg := strings.Join(t.Errors, "; ")
		if msg == "" {
			msg = firstLine(t.Text)
		}
		if t.APIErrorStatus != 0 {
			return fmt.Sprintf("%s (HTTP %d): %s", reason, t.APIErrorStatus, msg)
		}
		return fmt.Sprintf("%s: %s", reason, msg)
	case exitCode != 0:
		return fmt.Sprintf("%s exited with code %d", cli, exitCode)
	}
	return ""
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// OwnCalls counts the main agent's own calls, without its sub-agents'.
func (t Turn) OwnCalls() int {
	n := 0
	for _, c := range t.Calls {
		if c.Parent == "" {
			n++
		}
	}
	return n
}

// OutsideSkillGrant numbers (1-based, in Calls) the calls that ran on a
// tool of granted (SessionWide's list, matched by tool name) outside the
// window in which the CLI itself grants a skill's allowed-tools: before
// the turn's first successful Skill call for one of names, or in a turn
// with none. A denied call did not run on the grant and does not count.
func (t Turn) OutsideSkillGrant(names, granted []string) []int {
	if len(granted) == 0 {
		return nil
	}
	var out []int
	for i, c := range t.Calls {
		if c.Name == "Skill" && c.Parent == "" && c.HasResult && !c.IsError && !c.Denied {
			if skill := gjson.GetBytes(c.Input, "skill").String(); skill != "" && contains(names, strings.TrimPrefix(skill, "/")) {
				break // from here to the end of the turn the CLI grants them too
			}
		}
		if c.Denied {
			continue
		}
		for _, g := range granted {
			if tool, _, _ := strings.Cut(g, "("); tool == c.Name {
				out = append(out, i+1)
				break
			}
		}
	}
	return out
}

// SkillUse says what became of the agent's Skill tool calls for one skill
// name: Invoked when a call for it succeeded (a result that is not an error
// and not denied), denied the 1-based call numbers of calls for it that
// were denied permission (PROTOCOL.md §2, §9: permission_denied, an error
// result "Execute skill: <name>").
func (t Turn) SkillUse(name string) (invoked bool, denied []int) {
	for i, c := range t.Calls {
		if c.Name != "Skill" || gjson.GetBytes(c.Input, "skill").String() != name {
			continue
		}
		switch {
		case c.Denied:
			denied = append(denied, i+1)
		case c.HasResult && !c.IsError:
			invoked = true
		}
	}
	return invoked, denied
}
