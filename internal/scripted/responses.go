package scripted

// The OpenAI Responses API side of the server: POST /v1/responses, as the
// Codex CLI calls it (its model provider's base_url is URL()+"/v1";
// internal/codex and docs/agents.md have the recipe). The same Script
// answers it: a request is translated into the view the rules route on
// (kind, turn, step, newest prompt), and the chosen step back into
// Responses output items, claude's tool names mapped onto codex's tools
// (responsesItems), so one script serves claude and codex alike.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strings"
)

// respRequest is the part of a Responses request the server looks at.
type respRequest struct {
	Model  string            `json:"model"`
	Stream *bool             `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Text struct {
		Format struct {
			Type   string `json:"type"`
			Schema struct {
				Title json.RawMessage `json:"title"`
			} `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

type respItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type respPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// codexContext are the openings of the user-message parts codex adds
// around a prompt (PROTOCOL.md §3, §5.2, §6.2): project instructions,
// the environment, an injected skill, an interrupted turn. They are not
// prompts.
var codexContext = []string{"# AGENTS.md instructions for ", "<environment_context>", "<skill>", "<turn_aborted>",
	"<user_instructions>", "<user_shell_command>", "<subagent_notification>", "<collaboration_mode>"}

// tagBlock is a part that is one XML-like block, <name>…</name>: how codex
// frames every context it adds, so one of a later version is not taken
// for a prompt either.
var tagBlock = regexp.MustCompile(`(?s)^<([a-z_]+)[^>]*>.*</([a-z_]+)>$`)

// CodexSummaryRequest opens the user text of codex's compaction call
// (thread/compact/start, 0.171.0), and CodexContinuation the message the
// compacted history carries the summary in, in place of the assistant's
// turns (the user's own messages are kept). The server shows them to the
// script as claude's SummaryRequest and Continuation, so the personas'
// compaction rules serve both CLIs.
const (
	CodexSummaryRequest = "You are performing a CONTEXT CHECKPOINT COMPACTION."
	CodexContinuation   = "Another language model started to solve this problem and produced a summary of its thinking process."
)

func isCodexContext(text string) bool {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, CodexContinuation) {
		return true
	}
	for _, p := range codexContext {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	if m := tagBlock.FindStringSubmatch(t); m != nil && m[1] == m[2] {
		return true
	}
	return false
}

// outputItem: the types a response puts in the history.
func outputItem(typ, role string) bool {
	switch typ {
	case "function_call", "custom_tool_call", "local_shell_call", "reasoning", "web_search_call", "tool_search_call":
		return true
	case "message", "":
		return role == "assistant"
	}
	return false
}

// respExtra is what serveResponses needs of a Responses request beside
// the rules' view.
type respExtra struct {
	hasPatch bool   // an apply_patch tool is declared
	cacheKey string // prompt_cache_key, the session when no Session-Id header came
}

// classifyResponses derives kind, turn, step and prompt from a Responses
// request. The turn counts user messages that carry a prompt (a part that
// is not codex's context); the step counts the responses after the newest
// one, each a run of output items (a response's message and calls are
// stored together, their outputs after them), which survives codex's
// retries and resumes: it resends the whole history every time.
func classifyResponses(body []byte) (classified, respExtra, error) {
	if c, x, ok := classifyResponsesFast(body); ok {
		return c, x, nil
	}
	return classifyResponsesDecoded(body)
}

// classifyResponsesDecoded is classifyResponses by encoding/json, the
// reference of classifyResponsesFast and the way of the bodies it
// declines.
func classifyResponsesDecoded(body []byte) (classified, respExtra, error) {
	var req respRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return classified{}, respExtra{}, fmt.Errorf("request body is not valid JSON: %v", err)
	}
	c := classified{
		Body:   body,
		Model:  req.Model,
		Stream: req.Stream == nil || *req.Stream,
		Kind:   KindAgent,
	}
	if req.Text.Format.Type == "json_schema" {
		c.Kind = schemaTitleKind(req.Text.Format.Schema.Title)
	}
	items := make([]respItem, len(req.Input))
	for i, raw := range req.Input {
		if err := json.Unmarshal(raw, &items[i]); err != nil {
			return classified{}, respExtra{}, fmt.Errorf("input[%d]: %v", i, err)
		}
	}
	newest := -1
	for i, it := range items {
		if (it.Type != "message" && it.Type != "") || it.Role != "user" {
			continue
		}
		prompt, ok, err := respPrompt(it.Content)
		if err != nil {
			return classified{}, respExtra{}, fmt.Errorf("input[%d]: %v", i, err)
		}
		if ok {
			c.Turn++
			newest = i
			c.Prompt = prompt
		}
	}
	var x respExtra
	for _, t := range req.Tools {
		if t.Name == "apply_patch" {
			x.hasPatch = true
		}
	}
	var k struct {
		Key string `json:"prompt_cache_key"`
	}
	_ = json.Unmarshal(body, &k)
	x.cacheKey = k.Key
	c.Step = respSteps(items[newest+1:])
	return respCompaction(c, string(body)), x, nil
}

// schemaTitleKind is the kind of a structured call by its schema's title
// (the Messages API's StructuredOutput tool, the Responses API's
// json_schema format).
func schemaTitleKind(title json.RawMessage) CallKind {
	var t string
	if len(title) > 0 && json.Unmarshal(title, &t) == nil {
		switch t {
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

// respSteps counts the responses among the items after the newest prompt.
func respSteps(items []respItem) int {
	steps, inRun := 0, false
	for _, it := range items {
		out := outputItem(it.Type, it.Role)
		if out && !inRun {
			steps++
		}
		inRun = out
	}
	return steps
}

// respCompaction shows the script codex's compaction as claude's (see
// CodexSummaryRequest); body is c.Body as a string.
func respCompaction(c classified, body string) classified {
	if strings.HasPrefix(strings.TrimSpace(c.Prompt), CodexSummaryRequest) {
		c.Prompt = SummaryRequest + "\n" + c.Prompt
	}
	if strings.Contains(body, jsonText(CodexContinuation)) {
		c.Body = append(append([]byte{}, c.Body...), "\n"+Continuation...)
	}
	return c
}

// The fields of a Responses request that classifyResponsesDecoded decodes.
var (
	respFields       = []string{"model", "stream", "input", "tools", "text", "prompt_cache_key"}
	respItemFields   = []string{"type", "role", "content"}
	respToolFields   = []string{"type", "name"}
	respTextFields   = []string{"format"}
	respFormatFields = []string{"type", "schema"}
)

// classifyResponsesFast is classifyResponsesDecoded reading only the
// fields it needs (jsonscan.go); ok is false for a body it leaves to the
// decoder.
func classifyResponsesFast(body []byte) (c classified, x respExtra, ok bool) {
	s := string(body)
	if !validJSON(s) {
		return c, x, false
	}
	obj := topValue(s)
	var f [6]string
	if obj[0] != '{' || !fields(obj, respFields, f[:]) {
		return c, x, false
	}
	model, stream, input, tools, text, cacheKey := f[0], f[1], f[2], f[3], f[4], f[5]
	c = classified{Body: body, Stream: stream != "false", Kind: KindAgent}
	if c.Model, ok = stringOrNull(model); !ok {
		return c, x, false
	}
	if _, ok = boolOrNull(stream); !ok {
		return c, x, false
	}
	if stringsOrNull(cacheKey) {
		x.cacheKey, _ = stringOrNull(cacheKey) // another type leaves it "", as the decoder does
	}
	if !forObjects(tools, func(t string) bool {
		var tf [2]string
		if !fields(t, respToolFields, tf[:]) || !stringsOrNull(tf[:]...) {
			return false
		}
		if name, _ := stringOrNull(tf[1]); name == "apply_patch" {
			x.hasPatch = true
		}
		return true
	}) {
		return c, x, false
	}
	var formatType, title string
	if !inObject(text, respTextFields, func(tf []string) bool {
		return inObject(tf[0], respFormatFields, func(ff []string) bool {
			var ok bool
			formatType, ok = stringOrNull(ff[0])
			return ok && inObject(ff[1], titleFields, func(sf []string) bool {
				title = sf[0]
				return true
			})
		})
	}) {
		return c, x, false
	}
	if formatType == "json_schema" {
		c.Kind = schemaTitleKind(json.RawMessage(title))
	}
	var items []respItem
	newest := -1
	if !forObjects(input, func(raw string) bool {
		var itf [3]string
		if !fields(raw, respItemFields, itf[:]) || !stringsOrNull(itf[:2]...) {
			return false
		}
		var it respItem
		it.Type, _ = stringOrNull(itf[0])
		it.Role, _ = stringOrNull(itf[1])
		items = append(items, it)
		if (it.Type != "message" && it.Type != "") || it.Role != "user" {
			return true
		}
		parts, ok := respParts(itf[2])
		if !ok {
			return false
		}
		if prompt, ok := respPromptOf(parts); ok {
			c.Turn++
			newest = len(items) - 1
			c.Prompt = prompt
		}
		return true
	}) {
		return c, x, false
	}
	c.Step = respSteps(items[newest+1:])
	// Parts of s, which they would keep alive in the records.
	c.Model, c.Prompt, x.cacheKey = strings.Clone(c.Model), strings.Clone(c.Prompt), strings.Clone(x.cacheKey)
	return respCompaction(c, s), x, true
}

// respParts reads a user message's content as respPrompt decodes it.
func respParts(raw string) ([]respPart, bool) {
	switch {
	case raw == "" || raw == "null":
		return nil, true
	case raw[0] == '"':
		return []respPart{{Type: "input_text", Text: unquote(raw)}}, true
	}
	var parts []respPart
	ok := forObjects(raw, func(p string) bool {
		var pf [2]string
		if !fields(p, blockFields, pf[:]) || !stringsOrNull(pf[:]...) {
			return false
		}
		var part respPart
		part.Type, _ = stringOrNull(pf[0])
		if part.Type == "input_text" || part.Type == "text" {
			part.Text, _ = stringOrNull(pf[1])
		}
		parts = append(parts, part)
		return true
	})
	return parts, ok
}

// respPrompt is the prompt of a user message: its last part that is not
// codex's context.
func respPrompt(content json.RawMessage) (string, bool, error) {
	var parts []respPart
	if len(content) > 0 && content[0] == '"' {
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return "", false, err
		}
		parts = []respPart{{Type: "input_text", Text: s}}
	} else if len(content) > 0 {
		if err := json.Unmarshal(content, &parts); err != nil {
			return "", false, err
		}
	}
	prompt, ok := respPromptOf(parts)
	return prompt, ok, nil
}

func respPromptOf(parts []respPart) (string, bool) {
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		if p.Type != "input_text" && p.Type != "text" {
			continue
		}
		if strings.TrimSpace(p.Text) == "" || isCodexContext(p.Text) {
			continue
		}
		return p.Text, true
	}
	return "", false
}

// serveResponses answers one POST /v1/responses (serveHTTP has recorded
// it at idx).
func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request, idx int, body []byte) {
	ctx := r.Context()
	c, x, err := classifyResponses(body)
	if err != nil {
		if sleep(ctx, s.script.Latency) {
			s.answerRespError(w, idx, http.StatusBadRequest, "invalid_request_error", err.Error(), "")
		}
		return
	}
	sid := r.Header.Get("Session-Id")
	if sid == "" {
		sid = x.cacheKey
	}
	s.mu.Lock()
	s.requests[idx].SessionID = sid
	s.mu.Unlock()
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
			s.answerRespError(w, idx, step.Error.Status, respErrorType(step.Error.Status, typ), msg, respErrorCode(step.Error))
			return
		}
	}
	u := s.usage(sid, len(body), c.Prompt)
	u.Output = outputTokens(step.Text, step.uses)
	s.requests[idx].Status = http.StatusOK
	s.requests[idx].Usage = u
	seq := s.requests[idx].Seq
	s.mu.Unlock()

	model := c.Model
	if step.Model != "" {
		model = step.Model
	}
	resp := response{
		ID:    fmt.Sprintf("resp_scripted_%06d", seq),
		Model: model,
		Items: responsesItems(seq, step.Text, step.uses, x.hasPatch),
		Usage: u,
	}
	if c.Stream {
		writeResponsesSSE(ctx, w, resp)
	} else {
		writeResponsesJSON(w, resp)
	}
}

// response is one scripted answer in Responses terms.
type response struct {
	ID    string
	Model string
	Items []map[string]any
	Usage Usage
}

// responsesItems translates a step into output items: its text as an
// assistant message, then each tool use as codex's tool for it:
//
//	Bash {command}            exec_command {cmd}
//	Read {file_path}          exec_command cat <file>
//	Skill {skill}             exec_command cat .agents/skills/<skill>/SKILL.md (how codex loads a skill)
//	Write {file_path,content} apply_patch "*** Add File"
//	Edit {file_path,old_string,new_string} apply_patch "*** Update File" (whole lines)
//	Glob {pattern[,path]}     exec_command printf of the globbed names
//	Grep {pattern[,path]}     exec_command grep -rn
//	StructuredOutput {…}      the input as the message text (codex's
//	                          structured output is the final message)
//
// A path under .claude/skills/ becomes .agents/skills/, codex's project
// skill folder, so a script that runs a skill's files runs them there.
// Any other name is sent as a function call of that name with the input
// as its arguments (codex's own tools, or one it does not have). Without
// an apply_patch tool in the request, writes and edits go through the
// shell too.
func responsesItems(seq int, text string, uses []toolUse, hasPatch bool) []map[string]any {
	var items []map[string]any
	var texts []string
	if text != "" {
		texts = append(texts, text)
	}
	var calls []map[string]any
	for i, u := range uses {
		callID := fmt.Sprintf("call_scripted_%06d_%d", seq, i)
		var in map[string]any
		_ = json.Unmarshal(u.Input, &in)
		str := func(k string) string {
			v, _ := in[k].(string)
			return codexPath(v)
		}
		shell := func(cmd string) map[string]any {
			args, _ := json.Marshal(map[string]string{"cmd": cmd})
			return map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_scripted_%06d_%d", seq, i),
				"call_id": callID, "name": "exec_command", "arguments": string(args), "status": "completed"}
		}
		patch := func(p string) map[string]any {
			return map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_scripted_%06d_%d", seq, i),
				"call_id": callID, "name": "apply_patch", "input": p, "status": "completed"}
		}
		switch u.Name {
		case "Bash":
			calls = append(calls, shell(str("command")))
		case "Read":
			calls = append(calls, shell("cat "+shellQuote(str("file_path"))))
		case "Skill":
			calls = append(calls, shell("cat "+shellQuote(path.Join(".agents/skills", str("skill"), "SKILL.md"))))
		case "Write":
			if hasPatch {
				calls = append(calls, patch("*** Begin Patch\n*** Add File: "+str("file_path")+"\n"+patchLines("+", str("content"))+"*** End Patch\n"))
			} else {
				calls = append(calls, shell("cat > "+shellQuote(str("file_path"))+" <<'CONTENT_END'\n"+strings.TrimSuffix(str("content"), "\n")+"\nCONTENT_END"))
			}
		case "Edit":
			if hasPatch {
				calls = append(calls, patch("*** Begin Patch\n*** Update File: "+str("file_path")+"\n@@\n"+
					patchLines("-", str("old_string"))+patchLines("+", str("new_string"))+"*** End Patch\n"))
			} else {
				py := fmt.Sprintf("import sys\np=%q\ns=open(p).read()\nopen(p,'w').write(s.replace(%q,%q,1))", str("file_path"), str("old_string"), str("new_string"))
				calls = append(calls, shell("python3 -c "+shellQuote(py)))
			}
		case "Glob":
			cmd := "shopt -s globstar nullglob; printf '%s\\n' " + str("pattern")
			if p := str("path"); p != "" {
				cmd = "cd " + shellQuote(p) + " && " + cmd
			}
			calls = append(calls, shell(cmd))
		case "Grep":
			p := str("path")
			if p == "" {
				p = "."
			}
			calls = append(calls, shell("grep -rn -- "+shellQuote(str("pattern"))+" "+shellQuote(p)))
		case "StructuredOutput":
			texts = append(texts, string(u.Input))
		default:
			calls = append(calls, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_scripted_%06d_%d", seq, i),
				"call_id": callID, "name": u.Name, "arguments": string(u.Input), "status": "completed"})
		}
	}
	if len(texts) > 0 {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_scripted_%06d", seq),
			"role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": strings.Join(texts, "\n\n"), "annotations": []any{}}}})
	}
	return append(items, calls...)
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// codexPath moves a path under claude's project skill folder to codex's.
func codexPath(s string) string { return strings.ReplaceAll(s, ".claude/skills/", ".agents/skills/") }

// patchLines prefixes every line of s for an apply_patch hunk.
func patchLines(prefix, s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell, leaving a plain word as it is.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// usageJSON is a response's usage: every input token, the cached part
// (the previous call's total, as the Anthropic side reports it as cache
// reads) and the output.
func (r response) usageJSON() map[string]any {
	in := r.Usage.Context()
	return map[string]any{
		"input_tokens":          in,
		"input_tokens_details":  map[string]any{"cached_tokens": r.Usage.CacheRead},
		"output_tokens":         r.Usage.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          in + r.Usage.Output,
	}
}

// writeResponsesSSE streams the response as the Responses API does:
// response.created, each item added, its deltas and done, then
// response.completed with the usage (codex builds its items from
// output_item.done and needs response.completed, PROTOCOL.md §1). It stops
// at the first failed write or when ctx ends.
func writeResponsesSSE(ctx context.Context, w http.ResponseWriter, r response) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Request-Id", "req_"+r.ID)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	n := 0
	send := func(data map[string]any) bool {
		if ctx.Err() != nil {
			return false
		}
		data["sequence_number"] = n
		n++
		b, err := json.Marshal(data)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	base := map[string]any{"id": r.ID, "object": "response", "model": r.Model, "status": "in_progress", "output": []any{}}
	if !send(map[string]any{"type": "response.created", "response": base}) {
		return
	}
	for i, it := range r.Items {
		added := map[string]any{}
		for k, v := range it {
			added[k] = v
		}
		added["status"] = "in_progress"
		switch it["type"] {
		case "message":
			added["content"] = []any{}
		case "function_call":
			added["arguments"] = ""
		case "custom_tool_call":
			added["input"] = ""
		}
		if !send(map[string]any{"type": "response.output_item.added", "output_index": i, "item": added}) {
			return
		}
		ok := true
		switch it["type"] {
		case "message":
			text := it["content"].([]any)[0].(map[string]any)["text"].(string)
			ok = send(map[string]any{"type": "response.content_part.added", "item_id": it["id"], "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}) &&
				send(map[string]any{"type": "response.output_text.delta", "item_id": it["id"], "output_index": i, "content_index": 0, "delta": text}) &&
				send(map[string]any{"type": "response.output_text.done", "item_id": it["id"], "output_index": i, "content_index": 0, "text": text})
		case "function_call":
			ok = send(map[string]any{"type": "response.function_call_arguments.delta", "item_id": it["id"], "output_index": i, "delta": it["arguments"]}) &&
				send(map[string]any{"type": "response.function_call_arguments.done", "item_id": it["id"], "output_index": i, "arguments": it["arguments"]})
		case "custom_tool_call":
			ok = send(map[string]any{"type": "response.custom_tool_call_input.delta", "item_id": it["id"], "output_index": i, "delta": it["input"]}) &&
				send(map[string]any{"type": "response.custom_tool_call_input.done", "item_id": it["id"], "output_index": i, "input": it["input"]})
		}
		if !ok || !send(map[string]any{"type": "response.output_item.done", "output_index": i, "item": it}) {
			return
		}
	}
	done := map[string]any{"id": r.ID, "object": "response", "model": r.Model, "status": "completed",
		"output": r.Items, "usage": r.usageJSON()}
	send(map[string]any{"type": "response.completed", "response": done})
}

// writeResponsesJSON answers a request that asked for "stream": false.
func writeResponsesJSON(w http.ResponseWriter, r response) {
	b, _ := json.Marshal(map[string]any{"id": r.ID, "object": "response", "model": r.Model, "status": "completed",
		"output": r.Items, "usage": r.usageJSON()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// respErrorType maps the Anthropic-style error type of the shared
// defaults onto OpenAI's.
func respErrorType(status int, typ string) string {
	switch {
	case status == 429:
		return "rate_limit_exceeded"
	case status == 401:
		return "invalid_request_error"
	case status >= 500:
		return "server_error"
	}
	if typ == "" {
		return "invalid_request_error"
	}
	return typ
}

// respErrorCode: a default 400 is the full context window (the shared
// default's message says so), which codex reports in its own words.
func respErrorCode(e *HTTPError) string {
	switch {
	case e.Status == 400 && e.Type == "" && e.Message == "":
		return "context_length_exceeded"
	case e.Status == 429 && e.Type == "insufficient_quota":
		return "insufficient_quota"
	}
	return ""
}

// answerRespError answers an HTTP error in OpenAI's shape. A 429 carries
// Retry-After: 0, without which codex gives up on the first 429 (with it,
// it retries at its stream layer; seen on 0.171.0), so a script's 429 then
// success plays out as a rate limit the CLI rides through. Whether the
// real API sends the header was not verified.
func (s *Server) answerRespError(w http.ResponseWriter, idx, status int, typ, msg, code string) {
	s.mu.Lock()
	s.requests[idx].Status = status
	s.mu.Unlock()
	var c any
	if code != "" {
		c = code
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": c, "param": nil}})
	w.Header().Set("Content-Type", "application/json")
	if status == 429 {
		w.Header().Set("Retry-After", "0")
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
