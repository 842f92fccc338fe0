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

// kindOf tells an agent turn from structured and cold calls by the tools sent.
func kindOf(tools []wireTool) CallKind {
	real := 0
	for _, t := range tools {
		if t.Name == structuredTool {
			var title string
			if len(t.InputSchema.Title) > 0 && json.Unmarshal(t.InputSchema.Title, &title) == nil {
				switch title {
				case "rubric":
					return KindRubric
				case "verdict":
					return KindJudge
				case "plan":
					return KindPlan
				case "reading":
					return KindReader
				case "grades":
					return KindGrader
				}
			}
			return KindCold
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
		results := false
		for _, b := range blocks {
			switch b.Type {
			case "tool_result":
				results = true
			case "text":
				texts = append(texts, b.Text)
			}
		}
		if results {
			for _, t := range texts {
				if strings.HasPrefix(strings.TrimSpace(t), SummaryRequest) {
					return []string{t}, true, nil
				}
			}
			return nil, false, nil
		}
	}
	meaningful := 0
	for _, t := range texts {
		trimmed := strings.TrimSpace(t)
		if strings.HasPrefix(trimmed, enforcePrefix) {
			return nil, false, nil
		}
		if trimmed != "" && trimmed != noContent {
			meaningful++
		}
	}
	return texts, meaningful > 0, nil
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
