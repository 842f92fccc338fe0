package fakeclaude

import (
	"context"
	"strings"
	"time"
)

// What the pinned CLI does with the prompt "/compact" (seen on 2.1.328
// against package scripted, in -p mode with --resume and as a stream-json
// user message; the same in both):
//
//   - stdout: system/status "compacting", system/status with
//     compact_result "success", init, system/compact_boundary with
//     compact_metadata (trigger "manual", pre_tokens, post_tokens, ...),
//     the synthetic continuation message as a user event (isSynthetic),
//     the replayed "<local-command-stdout>Compacted </local-command-stdout>"
//     and a result: subtype success, result "", num_turns 0, usage all 0,
//     local_command "compact", total_cost_usd the session's running total
//     (the summary calls included), exit 0. No assistant events.
//   - the API: one ordinary agent call (same tools) whose history is the
//     conversation with the summary instructions (compactPrompt) appended
//     as user text; when the answer has no <summary> block, a second one
//     with compactRetry added, whose answer is then taken as it is.
//   - afterwards the history is the continuation message (the summary
//     inside it) and the newest messages kept verbatim: in every case seen,
//     the last assistant message.
//   - the session file under projects/ is appended to, never rewritten:
//     what was there before is a prefix of what is there after, so a file
//     cut back to a length saved before the compaction is the session
//     before it.

// compactPrompt opens the user text the CLI sends for the summary (its
// first lines verbatim; the CLI's goes on with a long list of sections).
const compactPrompt = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n" +
	"- Do NOT use Read, Bash, Grep, Glob, Edit, Write, or ANY other tool.\n" +
	"- You already have all the context you need in the conversation above.\n" +
	"- Tool calls will be REJECTED and will waste your only turn — you will fail the task.\n" +
	"- Your entire response must be plain text: an <analysis> block followed by a <summary> block.\n\n" +
	"Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions.\n\n" +
	"REMINDER: Do NOT call any tools. Respond with plain text only — an <analysis> block followed by a <summary> block. Tool calls will be rejected and you will fail the task."

// compactRetry is what the CLI adds to compactPrompt for its second try
// when the first answer had no <summary> block (verbatim).
const compactRetry = "\n\nFor this reply only: write what the instructions above ask for, with the summary inside <summary></summary> tags. Every message before those instructions, the newest one included, is conversation to summarize: do not answer it, and do not do the work that it asks for. What it says on how to summarize still holds. This paragraph is about how to write this summary. The user did not write it."

// continuationHead and continuationTail surround the summary in the first
// message of a compacted session (verbatim; the CLI names the session file
// between them, as here).
const (
	continuationHead = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n"
	continuationTail = "Continue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with \"I'll continue\" or similar. Pick up the last task as if the break never happened.\n\n" +
		"The messages after this summary are the most recent messages from before compaction, kept verbatim. The summary was written without seeing them, so something it says has not happened yet may already have happened in them."
)

// isCompact reports whether a prompt is the /compact command.
func isCompact(prompt []block) bool {
	return len(prompt) == 1 && prompt[0].Type == "text" && strings.TrimSpace(prompt[0].Text) == "/compact"
}

// compact summarises the session through the API and replaces its history
// with the continuation message and the last assistant message. It
// returns the exit code of a -p run.
func (f *fake) compact(ctx context.Context) int {
	start := time.Now()
	f.emit(map[string]any{"type": "system", "subtype": "status", "status": "compacting", "session_id": f.sessionID, "uuid": newUUID()})
	if len(f.history) == 0 {
		// Not seen on the real CLI: a new session has nothing to compact.
		f.emitInit()
		f.emitCompactResult(start, "Not enough messages to compact.", true)
		return 1
	}
	pre := int64(0)
	for _, m := range f.history {
		if m.Usage != nil {
			pre = m.Usage.Context() + m.Usage.Output
		}
	}

	// The summary request: the conversation with the instructions as the
	// newest user text. After a turn that used tools the CLI left the
	// final answer out and joined the instructions to the last tool
	// results; after a plain answer it sent everything and the
	// instructions as a message of their own.
	base := f.history
	if n := len(base); n >= 2 && base[n-1].Role == "assistant" && hasToolResult(base[n-2]) {
		base = base[:n-1]
	}
	var summary string
	for try := 0; try < 2; try++ {
		text := compactPrompt
		if try == 1 {
			text += compactRetry
		}
		req := append([]message{}, base...)
		if last := &req[len(req)-1]; last.Role == "user" {
			*last = message{Role: "user", Content: append(append([]block{}, last.Content...), block{Type: "text", Text: text})}
		} else {
			req = append(req, message{Role: "user", Content: []block{{Type: "text", Text: text}}})
		}
		m, _, err := f.callWithRetries(ctx, f.requestBodyOf(req))
		if err != nil {
			// Not seen on the real CLI; the history stays as it was.
			f.emitInit()
			f.emitCompactResult(start, "Error during compaction: "+syntheticText(err.(*apiError), f.api.base), true)
			return 1
		}
		f.sessionUsage.add(*m.Usage)
		f.appendLine(map[string]any{"type": "assistant", "isSidechain": true, "message": m})
		summary = ""
		for _, b := range m.Content {
			if b.Type == "text" {
				summary += b.Text
			}
		}
		if inner, ok := summaryBlock(summary); ok {
			summary = "Summary:\n" + inner
			break
		}
		summary = strings.TrimSpace(summary)
	}

	var kept []message
	if n := len(f.history); f.history[n-1].Role == "assistant" {
		k := f.history[n-1]
		k.Usage = nil // counted once, where it was first written
		kept = append(kept, k)
	}
	var b strings.Builder
	b.WriteString(continuationHead)
	b.WriteString("<system-reminder>\n<tools-used-before-summary>")
	b.WriteString(strings.Join(toolsUsed(f.history), ", "))
	b.WriteString("</tools-used-before-summary>\n</system-reminder>\n")
	b.WriteString(summary)
	b.WriteString("\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: ")
	b.WriteString(f.session)
	b.WriteString("\n")
	b.WriteString(continuationTail)
	continuation := b.String()

	f.emit(map[string]any{"type": "system", "subtype": "status", "status": nil, "compact_result": "success", "session_id": f.sessionID, "uuid": newUUID()})
	f.emitInit()

	f.history = append([]message{{Role: "user", Content: []block{{Type: "text", Text: continuation}}}}, kept...)
	wire, _ := marshal(f.history)
	post := int64(len(wire) / 4)
	anchor, keptIDs := newUUID(), []string{}
	for range kept {
		keptIDs = append(keptIDs, newUUID())
	}
	head, tail := "", ""
	if len(keptIDs) > 0 {
		head, tail = keptIDs[0], keptIDs[len(keptIDs)-1]
	}
	boundary := map[string]any{"type": "system", "subtype": "compact_boundary", "session_id": f.sessionID, "uuid": newUUID(),
		"compact_metadata": map[string]any{"trigger": "manual", "pre_tokens": pre, "post_tokens": post,
			"cumulative_dropped_tokens": max(pre-post, 0), "duration_ms": time.Since(start).Milliseconds(),
			"preserved_segment":  map[string]any{"head_uuid": head, "anchor_uuid": anchor, "tail_uuid": tail},
			"preserved_messages": map[string]any{"anchor_uuid": anchor, "uuids": keptIDs, "all_uuids": keptIDs}},
		"logical_parent_uuid": tail}
	f.emit(boundary)
	// The file: the boundary (load starts the history again there), the
	// continuation, the kept messages; appended like every other line.
	f.appendLine(boundary)
	for _, m := range f.history {
		f.appendLine(map[string]any{"type": m.Role, "message": m, "sessionId": f.sessionID, "cwd": f.cwd,
			"uuid": newUUID(), "timestamp": time.Now().UTC().Format(time.RFC3339Nano)})
	}

	f.emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": continuation},
		"session_id": f.sessionID, "parent_tool_use_id": nil, "uuid": anchor,
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "isReplay": false, "isSynthetic": true})
	f.emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "<local-command-stdout>Compacted </local-command-stdout>"},
		"session_id": f.sessionID, "parent_tool_use_id": nil, "uuid": newUUID(),
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "isReplay": true})
	f.emitCompactResult(start, "", false)
	return 0
}

// emitCompactResult prints the result of the local command: no calls of
// its own (usage 0, num_turns 0, duration_api_ms 0), the session's total.
func (f *fake) emitCompactResult(start time.Time, text string, isErr bool) {
	r := f.resultEvent(start, usage{}, 0, text, "", isErr, nil, nil)
	delete(r, "terminal_reason")
	r["stop_reason"] = nil
	r["duration_api_ms"] = 0
	r["local_command"] = "compact"
	f.emit(r)
}

// summaryBlock returns the trimmed text inside <summary></summary>.
func summaryBlock(s string) (string, bool) {
	_, rest, ok := strings.Cut(s, "<summary>")
	if !ok {
		return "", false
	}
	inner, _, ok := strings.Cut(rest, "</summary>")
	if !ok {
		return "", false
	}
	return strings.TrimSpace(inner), true
}

func hasToolResult(m message) bool {
	if m.Role != "user" {
		return false
	}
	for _, b := range m.Content {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// toolsUsed names the tools the history called, each once, in order.
func toolsUsed(history []message) []string {
	seen := map[string]bool{}
	var names []string
	for _, m := range history {
		for _, b := range m.Content {
			if b.Type == "tool_use" && !seen[b.Name] {
				seen[b.Name] = true
				names = append(names, b.Name)
			}
		}
	}
	return names
}
