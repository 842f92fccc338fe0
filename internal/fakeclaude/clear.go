package fakeclaude

import (
	"path/filepath"
	"strings"
	"time"
)

// /clear in a live session (--input-format stream-json), as the pinned CLI
// does it (verified on 2.1.328 against package scripted): no API call; a
// conversation_reset event, an init with a new session id and a result
// with local_command "clear"; the history and total_cost_usd start again
// from nothing, and the next prompt reaches the model after the command's
// record (clearRecord) in the same user message.

func isClear(prompt []block) bool {
	return len(prompt) == 1 && prompt[0].Type == "text" && strings.TrimSpace(prompt[0].Text) == "/clear"
}

// clearRecord is what the CLI puts before the first prompt after /clear.
var clearRecord = []block{
	{Type: "text", Text: "<local-command-caveat>The command below was run directly in Claude Code, not sent to you as a request, and its output goes straight to the user. It's recorded here as context for later messages.</local-command-caveat>\n"},
	{Type: "text", Text: "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>\n"},
	{Type: "text", Text: "<local-command-stdout></local-command-stdout>\n"},
}

// clear starts a new conversation in the same process.
func (f *fake) clear() int {
	start := time.Now()
	f.emit(map[string]any{"type": "conversation_reset", "new_conversation_id": newUUID(), "uuid": newUUID(),
		"trigger": "clear", "session_id": f.sessionID, "timestamp": start.UTC().Format(time.RFC3339Nano)})
	f.history, f.sessionUsage = nil, usage{}
	f.sessionID, f.fresh = newUUID(), true
	f.api.session = f.sessionID
	if f.session != "" {
		f.session = filepath.Join(filepath.Dir(f.session), f.sessionID+".jsonl")
	}
	f.cleared = true
	f.emitInit()
	r := f.resultEvent(start, usage{}, 0, "", "", false, nil, nil)
	delete(r, "terminal_reason")
	r["stop_reason"] = nil
	r["duration_api_ms"] = 0
	r["local_command"] = "clear"
	f.emit(r)
	return 0
}
