package scripted

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// responsesBody loads a request body the real Codex CLI sent to this
// server, recorded in testdata/responses by `make fixtures`
// (internal/codex's TestRecordFixtures).
func responsesBody(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "responses", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestClassifyRecordedResponses(t *testing.T) {
	for _, tc := range []struct {
		file       string
		kind       CallKind
		turn, step int
		prompt     string // a prefix
	}{
		{"first-request.json", KindAgent, 1, 0, "[plain] say hello"},
		// ls and cat in one response, then their outputs: one step.
		{"tool-output-followup.json", KindAgent, 1, 1, "[tools]"},
		{"apply-patch-followup.json", KindAgent, 1, 3, "[tools]"},
		{"skill-read-followup.json", KindAgent, 1, 1, "[skill]"},
		// The <skill> message codex injects after the prompt is no prompt.
		{"skill-dollar-request.json", KindAgent, 1, 0, "use $release-notes for this week"},
		{"resumed-turn-request.json", KindAgent, 2, 0, "[second] run it again"},
		// Codex's summary request, shown to the script as claude's.
		{"compact-summary-request.json", KindAgent, 4, 0, SummaryRequest + "\n" + CodexSummaryRequest},
		// After the compaction: the three prompts kept, the summary
		// message not counted, the new prompt.
		{"compact-continued-request.json", KindAgent, 4, 0, "[after] and now?"},
		{"structured-request.json", KindJudge, 1, 0, "judge the answer"},
	} {
		c, _, err := classifyResponses(responsesBody(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if c.Kind != tc.kind || c.Turn != tc.turn || c.Step != tc.step || !strings.HasPrefix(c.Prompt, tc.prompt) {
			t.Errorf("%s: kind %s turn %d step %d prompt %.80q; want %s %d %d %q", tc.file, c.Kind, c.Turn, c.Step, c.Prompt, tc.kind, tc.turn, tc.step, tc.prompt)
		}
		if !c.Stream {
			t.Errorf("%s: codex streams", tc.file)
		}
	}
	// The demo's no-skill control (BodyLacks "- <name>:") reads codex's
	// skills listing as it reads claude's.
	if !bytes.Contains(responsesBody(t, "first-request.json"), []byte("- release-notes: ")) {
		t.Error("codex's skills listing has no \"- <name>:\" line")
	}
	c, _, _ := classifyResponses(responsesBody(t, "compact-continued-request.json"))
	if !bytes.Contains(c.Body, []byte(Continuation)) {
		t.Error("a compacted history does not carry claude's continuation for BodyHas rules")
	}
	c, _, _ = classifyResponses(responsesBody(t, "resumed-turn-request.json"))
	if bytes.Contains(c.Body, []byte(Continuation)) {
		t.Error("an uncompacted history carries the continuation")
	}
}

func TestCodexContext(t *testing.T) {
	for text, want := range map[string]bool{
		"# AGENTS.md instructions for /tmp/work\n\n<INSTRUCTIONS>x</INSTRUCTIONS>": true,
		"<environment_context>\n  <cwd>/tmp</cwd>\n</environment_context>":         true,
		"<skill>\n<name>x</name>\n</skill>":                                        true,
		"<some_new_block>\nstuff\n</some_new_block>":                               true,
		CodexContinuation + "\nsummary":                                            true,
		"How many <b>widgets</b> are in stock?":                                    false,
		"<b>bold</b> text then more":                                               false,
		"Run `tail -n 5 app.log` and summarise":                                    false,
	} {
		if got := isCodexContext(text); got != want {
			t.Errorf("%.40q: context %v, want %v", text, got, want)
		}
	}
}

func callArgs(t *testing.T, it map[string]any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(it["arguments"].(string)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestResponsesItemsMapClaudesTools(t *testing.T) {
	in := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	uses := []toolUse{
		{"Bash", in(map[string]string{"command": "bash .claude/skills/stock/scripts/census.sh", "description": "d"})},
		{"Read", in(map[string]string{"file_path": "my notes.txt"})},
		{"Skill", in(map[string]string{"skill": "stock"})},
		{"Write", in(map[string]string{"file_path": "out.txt", "content": "a\nb\n"})},
		{"Edit", in(map[string]string{"file_path": "n.txt", "old_string": "old", "new_string": "new"})},
		{"Glob", in(map[string]string{"pattern": "**/*.go"})},
		{"Grep", in(map[string]string{"pattern": "TODO", "path": "src"})},
		{"StructuredOutput", in(map[string]any{"verdict": "pass"})},
		{"no_such_tool", in(map[string]any{"x": 1})},
	}
	items := responsesItems(7, "Working.", uses, true)
	if len(items) != 9 {
		t.Fatalf("%d items", len(items))
	}
	msg := items[0]
	text := msg["content"].([]any)[0].(map[string]any)["text"]
	if msg["type"] != "message" || text != "Working.\n\n{\"verdict\":\"pass\"}" {
		t.Errorf("message %v", msg)
	}
	wantCmds := []string{"bash .agents/skills/stock/scripts/census.sh", "cat 'my notes.txt'", "cat .agents/skills/stock/SKILL.md"}
	for i, want := range wantCmds {
		it := items[1+i]
		if it["name"] != "exec_command" || callArgs(t, it)["cmd"] != want {
			t.Errorf("item %d: %v, want exec_command %q", 1+i, it, want)
		}
	}
	if p := items[4]; p["type"] != "custom_tool_call" || p["name"] != "apply_patch" ||
		p["input"] != "*** Begin Patch\n*** Add File: out.txt\n+a\n+b\n*** End Patch\n" {
		t.Errorf("write %v", p)
	}
	if p := items[5]; p["input"] != "*** Begin Patch\n*** Update File: n.txt\n@@\n-old\n+new\n*** End Patch\n" {
		t.Errorf("edit %v", p)
	}
	if c := callArgs(t, items[6])["cmd"]; c != `shopt -s globstar nullglob; printf '%s\n' **/*.go` {
		t.Errorf("glob %q", c)
	}
	if c := callArgs(t, items[7])["cmd"]; c != "grep -rn -- TODO src" {
		t.Errorf("grep %q", c)
	}
	if it := items[8]; it["name"] != "no_such_tool" || it["arguments"] != `{"x":1}` {
		t.Errorf("pass-through %v", it)
	}
	ids := map[any]bool{}
	for _, it := range items[1:] {
		if ids[it["call_id"]] {
			t.Errorf("call id %v twice", it["call_id"])
		}
		ids[it["call_id"]] = true
	}
	// Without apply_patch, writes and edits go through the shell.
	items = responsesItems(8, "", uses[3:5], false)
	for _, it := range items {
		if it["name"] != "exec_command" {
			t.Errorf("without apply_patch: %v", it)
		}
	}
}

// respEvent is one server-sent event of a Responses stream.
type respEvent struct {
	Type string
	Data map[string]any
}

func postResponses(t *testing.T, url, session string, body []byte) (*http.Response, []respEvent) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/responses", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-local")
	if session != "" {
		req.Header.Set("Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []respEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	ev := respEvent{}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Data); err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
			ev = respEvent{}
		}
	}
	return resp, evs
}

// withPrompt is a recorded first request with its prompt replaced.
func withPrompt(t *testing.T, prompt string) []byte {
	t.Helper()
	b := responsesBody(t, "first-request.json")
	old, _ := json.Marshal("[plain] say hello")
	repl, _ := json.Marshal(prompt)
	if !bytes.Contains(b, old) {
		t.Fatal("first-request.json lost its prompt")
	}
	return bytes.Replace(b, old, repl, 1)
}

func TestResponsesStream(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{
		{Kind: KindAgent, Contains: "look", Steps: []Step{{Text: "Looking.", ToolUses: []ToolUse{{Name: "Bash", Input: map[string]string{"command": "ls"}}}}}},
		{Kind: KindAgent, Contains: "busy", Steps: []Step{{Error: &HTTPError{Status: 429, Count: 1}, Text: "ok now"}}},
	}})
	resp, evs := postResponses(t, srv.URL(), "thread-1", withPrompt(t, "look around"))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
		if e.Data["type"] != e.Type {
			t.Errorf("event %s has data type %v", e.Type, e.Data["type"])
		}
	}
	want := []string{"response.created",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.completed"}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("events %v", types)
	}
	done := evs[len(evs)-1].Data["response"].(map[string]any)
	usage := done["usage"].(map[string]any)
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].SessionID != "thread-1" || reqs[0].Kind != KindAgent || reqs[0].Prompt != "look around" {
		t.Fatalf("recorded %+v", reqs)
	}
	if usage["input_tokens"].(float64) != float64(reqs[0].Usage.Context()) || usage["output_tokens"].(float64) != float64(reqs[0].Usage.Output) {
		t.Errorf("usage %v, recorded %+v", usage, reqs[0].Usage)
	}
	if done["model"] != "gpt-5.5" || reqs[0].Header.Get("Authorization") != "[redacted]" {
		t.Errorf("model %v, authorization %q", done["model"], reqs[0].Header.Get("Authorization"))
	}

	// A 429 carries Retry-After, so codex retries it; then the answer.
	resp, _ = postResponses(t, srv.URL(), "thread-2", withPrompt(t, "busy now"))
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "0" {
		t.Errorf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp, evs = postResponses(t, srv.URL(), "thread-2", withPrompt(t, "busy now"))
	if resp.StatusCode != 200 || len(evs) == 0 {
		t.Errorf("after the 429: status %d", resp.StatusCode)
	}
}

// The personas play on codex's requests as on claude's: the steady one
// reads the skill with the shell, the forgetting one follows until its
// history was compacted.
func TestPersonasOnResponses(t *testing.T) {
	proc := Procedure{
		TaskPattern: `\[tools\]|\[after\]`,
		Follow:      []Step{{ToolUses: []ToolUse{{Name: "Skill", Input: map[string]any{"skill": "release-notes"}}}}, {Text: "Followed."}},
		FromMemory:  "From memory.",
	}
	var rules []Rule
	for _, p := range []string{PersonaSteady, PersonaForgetting} {
		r, err := PersonaRules(p, proc)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r...)
	}
	srv := startServer(t, Script{Personas: []string{PersonaSteady, PersonaForgetting}, Rules: rules})
	_, evs := postResponses(t, srv.URL(), "steady", responsesBody(t, "first-request.json"))
	_, evs = postResponses(t, srv.URL(), "steady", withPrompt(t, "[tools] tidy up"))
	item := evs[len(evs)-1].Data["response"].(map[string]any)["output"].([]any)[0].(map[string]any)
	if item["name"] != "exec_command" || callArgs(t, item)["cmd"] != "cat .agents/skills/release-notes/SKILL.md" {
		t.Errorf("steady: %v", item)
	}
	// The forgetting persona, after codex compacted its thread.
	text := func(evs []respEvent) string {
		out := evs[len(evs)-1].Data["response"].(map[string]any)["output"].([]any)
		return out[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	}
	_, evs = postResponses(t, srv.URL(), "forgetting", responsesBody(t, "compact-summary-request.json"))
	if got := text(evs); !strings.Contains(got, "<summary>") {
		t.Errorf("the forgetting persona's summary: %q", got)
	}
	_, evs = postResponses(t, srv.URL(), "forgetting", responsesBody(t, "compact-continued-request.json"))
	if got := text(evs); got != "From memory." {
		t.Errorf("after compaction the forgetting persona answered %q", got)
	}
	for _, r := range srv.Requests() {
		if r.Status != 200 {
			t.Errorf("request %d: status %d", r.Seq, r.Status)
		}
	}
}

func TestResponsesBadRequest(t *testing.T) {
	srv := startServer(t, Script{})
	resp, _ := postResponses(t, srv.URL(), "", []byte("{not json"))
	if resp.StatusCode != 400 {
		t.Errorf("status %d", resp.StatusCode)
	}
	if r := srv.Requests(); len(r) != 1 || r[0].Status != 400 {
		t.Errorf("%+v", r)
	}
}
