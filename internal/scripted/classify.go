package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// wireRequest is the part of a Messages API request body the server looks at.
// Everything else (system, metadata, thinking, ...) is ignored but recorded raw.
type wireRequest struct {
	Model    string          `json:"model"`
	Stream   *bool           `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []wireMessage   `json:"messages"`
	Tools    []wireTool      `json:"tools"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wireTool struct {
	Name        string `json:"name"`
	InputSchema struct {
		Title json.RawMessage `json:"title"`
	} `json:"input_schema"`
}

type wireBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// classified is what routing needs to know about one request.
type classified struct {
	Model  string
	Stream bool // false only when the body says "stream": false
	Kind   CallKind
	Turn   int
	Step   int
	Prompt string
	// Subagent: the CLI sent it for a sub-agent (a context: fork skill's
	// run), whose prompt is the skill's body, in the parent's session.
	Subagent bool
	Body     []byte // the raw request, for rules on what the CLI sent around the prompt
}

// SubagentMark is in the first system block (the billing header) of every
// request the pinned CLI (2.1.328) sends for a sub-agent, and in no other:
// "x-anthropic-billing-header: cc_version=…; cc_entrypoint=sdk-cli;
// cc_is_subagent=true;". A rule with BodyHas: SubagentMark (and Contains:
// a phrase of the skill's body, the sub-agent's prompt) answers a context:
// fork skill's sub-agent; put it before the rules for the main agent.
const SubagentMark = "cc_is_subagent=true"

// isSubagent reads the first system block of a request.
func isSubagent(system json.RawMessage) bool {
	var blocks []wireBlock
	if json.Unmarshal(system, &blocks) != nil || len(blocks) == 0 {
		return false
	}
	return strings.Contains(blocks[0].Text, SubagentMark)
}

// enforcePrefix starts the user message the CLI adds when a --json-schema call
// answered with text instead of the StructuredOutput tool (PROTOCOL §7). It is a
// nudge inside the same call, not a new prompt.
const enforcePrefix = "[structured-output-enforce]"

// noContent is the placeholder text the CLI was seen sending as a user message
// (PROTOCOL "A mock that works"); it is not a prompt either.
const noContent = "(no content)"

// SummaryRequest opens the user text of the CLI's /compact summary call
// (2.1.328): an ordinary agent call whose newest text asks for a summary
// of the conversation. After a turn that used tools the CLI joins it to
// the last tool results, so it would not pass for a prompt by the rule
// below; it is one all the same, answered at step 0.
const SummaryRequest = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools."

// Continuation opens the first message of a session the CLI has compacted
// (2.1.328): the summary follows it, then the newest messages from before
// the compaction. A request that carries it comes after a compaction.
const Continuation = "This session is being continued from a previous conversation that ran out of context."

// structuredTool is the tool the CLI adds for --json-schema.
const structuredTool = "StructuredOutput"

// deferredPlaceholder is sent even with --tools ""; it is not a real tool, so a
// request whose only tool it is counts as having no tools.
const deferredPlaceholder = "DeferredToolPlaceholder"

// classify parses a request body and derives kind, turn, step and prompt.
func classify(body []byte) (classified, error) {
	if c, ok := classifyFast(body); ok {
		return c, nil
	}
	return classifyDecoded(body)
}

// classifyDecoded is classify by encoding/json: the reference the fast
// reader (classifyFast) is held to, and the way of the bodies it declines.
func classifyDecoded(body []byte) (classified, error) {
	var req wireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return classified{}, fmt.Errorf("request body is not valid JSON: %v", err)
	}
	c := classified{
		Body:   body,
		Model:  req.Model,
		Stream: req.Stream == nil || *req.Stream,
		Kind:   kindOf(req.Tools),
		// A sub-agent's first request carries the skill's body as its one
		// prompt, so turn 1 and the step count work as for any session.
		Subagent: isSubagent(req.System),
	}
	newest := -1
	for i, m := range req.Messages {
		texts, isPrompt, err := promptTexts(m)
		if err != nil {
			return classified{}, fmt.Errorf("messages[%d]: %v", i, err)
		}
		if !isPrompt {
			continue
		}
		c.Turn++
		newest = i
		c.Prompt = newestText(texts)
	}
	// Step counts assistant messages after the newest prompt: each one is an
	// earlier response of this agentic loop (the CLI keeps one assistant message
	// per response id, see PROTOCOL "A mock that works").
	for _, m := range req.Messages[newest+1:] {
		if m.Role == "assistant" {
			c.Step++
		}
	}
	return c, nil
}

// The fields of the Messages API request that classifyDecoded decodes,
// for the fast reader (jsonscan.go).
var (
	requestFields = []string{"model", "stream", "system", "messages", "tools"}
	messageFields = []string{"role", "content"}
	blockFields   = []string{"type", "text"}
	toolFields    = []string{"name", "input_schema"}
	titleFields   = []string{"title"}
)

// classifyFast is classifyDecoded without decoding the body: it reads the
// fields classification needs and skips the rest. ok is false for a body
// it cannot answer for as classifyDecoded would (invalid JSON, a field of
// another type, a field set twice, ...).
func classifyFast(body []byte) (c classified, ok bool) {
	s := string(body)
	if !validJSON(s) {
		return c, false
	}
	obj := topValue(s)
	var f [5]string
	if obj[0] != '{' || !fields(obj, requestFields, f[:]) {
		return c, false
	}
	model, stream, system, messages, tools := f[0], f[1], f[2], f[3], f[4]
	c = classified{Body: body, Stream: stream != "false"}
	if c.Model, ok = stringOrNull(model); !ok {
		return c, false
	}
	if _, ok = boolOrNull(stream); !ok {
		return c, false
	}
	var wt []wireTool
	if !forObjects(tools, func(t string) bool {
		var w wireTool
		var tf [2]string
		if !fields(t, toolFields, tf[:]) {
			return false
		}
		if w.Name, ok = stringOrNull(tf[0]); !ok {
			return false
		}
		wt = append(wt, w)
		return inObject(tf[1], titleFields, func(sf []string) bool {
			if sf[0] != "" {
				wt[len(wt)-1].InputSchema.Title = json.RawMessage(sf[0])
			}
			return true
		})
	}) {
		return c, false
	}
	c.Kind = kindOf(wt)
	if c.Subagent, ok = subagentOf(system); !ok {
		return c, false
	}
	if !forObjects(messages, func(m string) bool {
		var mf [2]string
		if !fields(m, messageFields, mf[:]) {
			return false
		}
		role, ok := stringOrNull(mf[0])
		if !ok {
			return false
		}
		switch role {
		case "assistant":
			c.Step++
		case "user":
			texts, isPrompt, ok := contentPrompt(mf[1])
			if !ok {
				return false
			}
			if isPrompt {
				c.Turn++
				c.Step = 0 // Step counts the assistant messages after the newest prompt
				c.Prompt = newestText(texts)
			}
		}
		return true
	}) {
		return c, false
	}
	// Both may be parts of s, which they would keep alive in the records.
	c.Model, c.Prompt = strings.Clone(c.Model), strings.Clone(c.Prompt)
	return c, true
}

// subagentOf is isSubagent on the raw system field: false for a field that
// does not decode into text blocks.
func subagentOf(raw string) (subagent, ok bool) {
	if raw == "" || raw[0] != '[' {
		return false, true // absent, null or not an array: no blocks
	}
	first, typed, n := "", true, 0
	for b := range elements(raw) {
		var bf [2]string
		switch {
		case b == "null":
			b = "{}"
		case b[0] != '{':
			typed = false
			continue
		}
		if !fields(b, blockFields, bf[:]) {
			return false, false
		}
		typed = typed && stringsOrNull(bf[:]...)
		if n == 0 && stringsOrNull(bf[1]) {
			first, _ = stringOrNull(bf[1])
		}
		n++
	}
	return typed && n > 0 && strings.Contains(first, SubagentMark), true
}

// contentPrompt is promptTexts on a user message's raw content.
func contentPrompt(raw string) (texts []string, isPrompt, ok bool) {
	switch {
	case raw == "" || raw == "null":
		return nil, false, true
	case raw[0] == '"':
		texts, isPrompt = userPrompt([]string{unquote(raw)}, false)
		return texts, isPrompt, true
	}
	results := false
	if !forObjects(raw, func(b string) bool {
		var bf [2]string
		if !fields(b, blockFields, bf[:]) || !stringsOrNull(bf[:]...) {
			return false
		}
		switch typ, _ := stringOrNull(bf[0]); typ {
		case "tool_result":
			results = true
		case "text":
			text, _ := stringOrNull(bf[1])
			texts = append(texts, text)
		}
		return true
	}) {
		return nil, false, false
	}
	texts, isPrompt = userPrompt(texts, results)
	return texts, isPrompt, true
}

// kindOf tells an agent turn from structured and cold calls by the tools sent.
func kindOf(tools []wireTool) CallKind {
	real := 0
	for _, t := range tools {
		if t.Name == structuredTool {
			return schemaTitleKind(t.InputSchema.Title)
		}
		if t.Name != deferredPlaceholder {
			real++
		}
	}
	if real == 0 {
		return KindCold
	}
	return KindAgent
}

// promptTexts returns the text blocks of a message and whether it is a real
// prompt: a user message that carries no tool_result (tool results and the
// skill body that rides with them belong to the agentic loop), is not the
// "(no content)" placeholder and is not a structured-output enforcement.
// A summary request (SummaryRequest) is a prompt even beside tool results.
func promptTexts(m wireMessage) ([]string, bool, error) {
	if m.Role != "user" {
		return nil, false, nil
	}
	var texts []string
	results := false
	content := bytes.TrimSpace(m.Content)
	switch {
	case len(content) == 0 || bytes.Equal(content, []byte("null")):
		return nil, false, nil
	case content[0] == '"':
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return nil, false, err
		}
		texts = []string{s}
	default:
		var blocks []wireBlock
		if err := json.Unmarshal(content, &blocks); err != nil {
			return nil, false, err
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_result":
				results = true
			case "text":
				texts = append(texts, b.Text)
			}
		}
	}
	texts, isPrompt := userPrompt(texts, results)
	return texts, isPrompt, nil
}

// userPrompt is promptTexts' judgement on a user message's text blocks and
// whether it carries tool results.
func userPrompt(texts []string, results bool) ([]string, bool) {
	if results {
		for _, t := range texts {
			if strings.HasPrefix(strings.TrimSpace(t), SummaryRequest) {
				return []string{t}, true
			}
		}
		return nil, false
	}
	meaningful := 0
	for _, t := range texts {
		trimmed := strings.TrimSpace(t)
		if strings.HasPrefix(trimmed, enforcePrefix) {
			return nil, false
		}
		if trimmed != "" && trimmed != noContent {
			meaningful++
		}
	}
	return texts, meaningful > 0
}

// newestText picks the prompt out of a prompt message: the last text block.
// The first user message carries <system-reminder> blocks (CLAUDE.md, git
// status) before the prompt, so the last block is the one the user typed;
// trailing reminder or empty blocks are skipped in case a CLI version appends
// them after the prompt.
func newestText(texts []string) string {
	for i := len(texts) - 1; i >= 0; i-- {
		t := strings.TrimSpace(texts[i])
		if t == "" || t == noContent || strings.HasPrefix(t, "<system-reminder>") {
			continue
		}
		return texts[i]
	}
	if len(texts) > 0 {
		return texts[len(texts)-1]
	}
	return ""
}
