package scripted

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// The Gemini API side: the Gemini CLI (GOOGLE_GEMINI_BASE_URL pointing
// here) calls POST /v1beta/models/<model>:streamGenerateContent?alt=sse for
// every agent step and :generateContent for its compression calls; nothing
// else was seen with a pinned model (gemini/PROTOCOL §2.2). The same Script
// answers it: each request is translated into the view the rules match (a
// classified call: kind, prompt turn, step, newest prompt, a body), the
// chosen step is translated back (claude's tool names to the CLI's, a
// StructuredOutput answer to JSON text), and usage grows as on the
// Anthropic side, promptTokenCount being the whole input picture.
//
// The view of a request:
//   - kind: a generationConfig.responseJsonSchema whose title is rubric,
//     verdict or plan makes a rubric, judge or plan call; another schema a
//     cold call, except the CLI's own side calls (routing classifier,
//     next-speaker and loop checks), which get a canned answer and never
//     reach the rules (KindSide); no schema: an agent call when tools are
//     declared, else cold;
//   - prompt turn: the user contents that carry text and no
//     functionResponse; the newest prompt is the first text part of the
//     newest of them that is not the CLI's <session_context> (the parts
//     after it are files an @path inlined);
//   - step: model contents after the newest prompt;
//   - session: a hash of the first user content's <session_context> up to
//     its folder tree (the date, the project's temp folder and the
//     workspace, the same on every resume; the tree is written anew), as
//     the CLI sends no session header; two sessions in one folder and home
//     on the same day share it;
//   - the CLI's compression calls (a <state_snapshot> system instruction)
//     are agent calls whose prompt is SummaryRequest followed by the CLI's
//     text, at step 0, so a persona's summary rule answers them;
//   - body rules (BodyHas, BodyLacks) see the raw request followed by the
//     lines the Anthropic side would have carried: "- <name>: <description>"
//     for each skill the CLI lists, and Continuation once the history was
//     compressed (the CLI's "Got it. Thanks for the additional context!"
//     answer after the snapshot). So a script written for claude's wire
//     serves the CLI unchanged.
//
// Tool uses are sent as functionCalls with the CLI's tool names and
// arguments: Bash → run_shell_command, Read → read_file (offset/limit →
// start_line/end_line), Edit → replace (replace_all → allow_multiple),
// Write → write_file, Glob → glob and Grep → grep_search (path →
// dir_path, glob → include_pattern), Skill → activate_skill ({"skill"} →
// {"name"}), WebFetch → web_fetch, WebSearch → google_web_search; other
// names go as they are. String arguments have ".claude/skills/" replaced
// by ".agents/skills/", where the CLI's skills are installed.

// geminiPrefix is the path prefix of every Gemini API call.
const geminiPrefix = "/v1beta/models/"

// KindSide is a Gemini CLI side call (its routing classifier, next-speaker
// or loop check): answered with a canned JSON, never routed to the rules.
const KindSide CallKind = "side"

// Markers of the CLI's own text (gemini-cli 0.61.0).
const (
	geminiSessionContext = "<session_context>"
	geminiTreeHeading    = "- **Directory Structure:**"
	geminiSnapshotSystem = "<state_snapshot>"
	geminiCompressedAck  = "Got it. Thanks for the additional context!"
)

type geminiPart struct {
	Text             *string         `json:"text"`
	Thought          bool            `json:"thought"`
	FunctionCall     json.RawMessage `json:"functionCall"`
	FunctionResponse json.RawMessage `json:"functionResponse"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	} `json:"generationConfig"`
}

func (c geminiContent) texts() (texts []string, responses bool) {
	for _, p := range c.Parts {
		switch {
		case p.FunctionResponse != nil:
			responses = true
		case p.Text != nil && !p.Thought:
			texts = append(texts, *p.Text)
		}
	}
	return texts, responses
}

// geminiCall is a classified Gemini request plus what the Gemini side
// needs beside the rules' view.
type geminiCall struct {
	classified
	session string
	side    string // the canned answer of a side call
	method  string // streamGenerateContent, generateContent, countTokens
}

var skillListingRE = regexp.MustCompile(`(?s)<skill>\s*<name>(.*?)</name>\s*<description>(.*?)</description>`)

// geminiSeen is what classifyGemini reads of a request.
type geminiSeen struct {
	contents []geminiTexts
	system   string // the system instruction's texts, joined by newlines
	tools    int    // function declarations
	schema   json.RawMessage
	first    func() []byte // contents[0] as json.Marshal writes it
}

// geminiTexts is a content's role, text parts that are not thoughts, and
// whether it carries a functionResponse.
type geminiTexts struct {
	role      string
	texts     []string
	responses bool
}

// classifyGemini derives the rules' view of a Gemini API request.
func classifyGemini(model, method string, body []byte) (geminiCall, error) {
	seen, ok := geminiSeenFast(body)
	if !ok {
		var err error
		if seen, err = geminiSeenDecoded(body); err != nil {
			return geminiCall{}, err
		}
	}
	g := classifyGeminiSeen(model, method, body, seen)
	g.Prompt = strings.Clone(g.Prompt) // not a part of the body's string copy, kept in the records
	return g, nil
}

// geminiSeenDecoded reads a request by encoding/json: the reference of
// geminiSeenFast and the way of the bodies it declines.
func geminiSeenDecoded(body []byte) (geminiSeen, error) {
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return geminiSeen{}, fmt.Errorf("request body is not valid JSON: %v", err)
	}
	var seen geminiSeen
	for _, c := range req.Contents {
		texts, responses := c.texts()
		seen.contents = append(seen.contents, geminiTexts{role: c.Role, texts: texts, responses: responses})
	}
	if req.SystemInstruction != nil {
		texts, _ := req.SystemInstruction.texts()
		seen.system = strings.Join(texts, "\n")
	}
	for _, t := range req.Tools {
		seen.tools += len(t.FunctionDeclarations)
	}
	seen.schema = req.GenerationConfig.ResponseJSONSchema
	if len(seen.schema) == 0 {
		seen.schema = req.GenerationConfig.ResponseSchema
	}
	if len(req.Contents) > 0 {
		seen.first = func() []byte {
			b, _ := json.Marshal(req.Contents[0])
			return b
		}
	}
	return seen, nil
}

// The fields of a Gemini request that geminiSeenDecoded decodes.
var (
	geminiFields        = []string{"contents", "systemInstruction", "tools", "generationConfig"}
	geminiContentFields = []string{"role", "parts"}
	geminiPartFields    = []string{"text", "thought", "functionCall", "functionResponse"}
	geminiToolFields    = []string{"functionDeclarations"}
	geminiDeclFields    = []string{"name"}
	geminiConfigFields  = []string{"responseJsonSchema", "responseSchema"}
)

// geminiSeenFast is geminiSeenDecoded reading only the fields it needs
// (jsonscan.go); ok is false for a body it leaves to the decoder.
func geminiSeenFast(body []byte) (seen geminiSeen, ok bool) {
	s := string(body)
	if !validJSON(s) {
		return seen, false
	}
	obj := topValue(s)
	var f [4]string
	if obj[0] != '{' || !fields(obj, geminiFields, f[:]) {
		return seen, false
	}
	contents, system, tools, config := f[0], f[1], f[2], f[3]
	first := ""
	if !forObjects(contents, func(c string) bool {
		t, ok := geminiTextsOf(c)
		if first == "" {
			first = c
		}
		seen.contents = append(seen.contents, t)
		return ok
	}) {
		return seen, false
	}
	if first != "" {
		seen.first = func() []byte {
			var c geminiContent
			_ = json.Unmarshal([]byte(first), &c)
			b, _ := json.Marshal(c)
			return b
		}
	}
	switch {
	case system == "" || system == "null":
	case system[0] != '{':
		return seen, false
	default:
		t, ok := geminiTextsOf(system)
		if !ok {
			return seen, false
		}
		seen.system = strings.Join(t.texts, "\n")
	}
	if !forObjects(tools, func(t string) bool {
		var tf [1]string
		return fields(t, geminiToolFields, tf[:]) && forObjects(tf[0], func(d string) bool {
			var df [1]string
			seen.tools++
			return fields(d, geminiDeclFields, df[:]) && stringsOrNull(df[0])
		})
	}) {
		return seen, false
	}
	if !inObject(config, geminiConfigFields, func(cf []string) bool {
		if seen.schema = json.RawMessage(cf[0]); cf[0] == "" {
			seen.schema = json.RawMessage(cf[1])
		}
		return true
	}) {
		return seen, false
	}
	if len(seen.schema) == 0 {
		seen.schema = nil
	}
	return seen, true
}

// geminiTextsOf reads a content object as geminiContent.texts does.
func geminiTextsOf(raw string) (t geminiTexts, ok bool) {
	var cf [2]string
	if !fields(raw, geminiContentFields, cf[:]) {
		return t, false
	}
	if t.role, ok = stringOrNull(cf[0]); !ok {
		return t, false
	}
	ok = forObjects(cf[1], func(p string) bool {
		var pf [4]string
		if !fields(p, geminiPartFields, pf[:]) || !stringsOrNull(pf[0]) {
			return false
		}
		thought, ok := boolOrNull(pf[1])
		switch {
		case !ok:
			return false
		case pf[3] != "": // a functionResponse, even null
			t.responses = true
		case pf[0] != "" && pf[0] != "null" && !thought:
			t.texts = append(t.texts, unquote(pf[0]))
		}
		return true
	})
	return t, ok
}

// classifyGeminiSeen derives the rules' view from what was read of a
// request.
func classifyGeminiSeen(model, method string, body []byte, req geminiSeen) geminiCall {
	g := geminiCall{method: method}
	g.Model = model
	g.Stream = method == "streamGenerateContent"
	system, tools, schema := req.system, req.tools, req.schema
	compression := strings.Contains(system, geminiSnapshotSystem) && tools == 0
	switch {
	case compression:
		g.Kind = KindAgent
	case len(schema) > 0:
		g.Kind, g.side = schemaKind(schema)
	case tools > 0:
		g.Kind = KindAgent
	default:
		g.Kind = KindCold
	}

	newest := -1
	compressed := false
	for i, c := range req.contents {
		if c.role == "model" {
			if len(c.texts) > 0 && strings.TrimSpace(c.texts[0]) == geminiCompressedAck {
				compressed = true
			}
			continue
		}
		if c.role != "user" || c.responses || len(c.texts) == 0 {
			continue
		}
		prompt, ok := geminiPrompt(c.texts)
		if !ok {
			continue
		}
		g.Turn++
		newest = i
		g.Prompt = prompt
	}
	if len(req.contents) > 0 {
		if texts := req.contents[0].texts; len(texts) > 0 && strings.HasPrefix(texts[0], geminiSessionContext) {
			// Up to the folder tree, which a resumed CLI writes anew.
			head, _, _ := strings.Cut(texts[0], geminiTreeHeading)
			g.session = hashOf(head)
		} else {
			g.session = hashOf(string(req.first()))
		}
	}
	if compression {
		g.Prompt = SummaryRequest + "\n" + g.Prompt
	} else {
		for _, c := range req.contents[newest+1:] {
			if c.role == "model" {
				g.Step++
			}
		}
	}

	// The body the rules see: the request, then what claude's wire would
	// have carried around the prompt.
	view := bytes.NewBuffer(append([]byte(nil), body...))
	for _, m := range skillListingRE.FindAllStringSubmatch(system, -1) {
		fmt.Fprintf(view, "\n- %s: %s", strings.TrimSpace(m[1]), strings.TrimSpace(m[2]))
	}
	if compressed {
		view.WriteString("\n" + Continuation)
	}
	g.Body = view.Bytes()
	return g
}

// geminiPrompt is the prompt of a user content's text parts: the first
// that is not the session context (later parts are files an @path in the
// prompt inlined).
func geminiPrompt(texts []string) (string, bool) {
	for _, t := range texts {
		trimmed := strings.TrimSpace(t)
		if trimmed == "" || strings.HasPrefix(trimmed, geminiSessionContext) {
			continue
		}
		return t, true
	}
	return "", false
}

// schemaKind tells structured calls apart by their schema's title, and the
// CLI's side calls by the properties they ask for.
func schemaKind(schema json.RawMessage) (CallKind, string) {
	var s struct {
		Title      string                     `json:"title"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	switch {
	case s.Properties["complexity_score"] != nil:
		return KindSide, `{"complexity_reasoning":"a scripted answer","complexity_score":10}`
	case s.Properties["model_choice"] != nil:
		return KindSide, `{"reasoning":"a scripted answer","model_choice":"flash"}`
	case s.Properties["next_speaker"] != nil:
		return KindSide, `{"reasoning":"a scripted answer","next_speaker":"user"}`
	case s.Properties["unproductive_state_confidence"] != nil:
		return KindSide, `{"unproductive_state_analysis":"a scripted answer","unproductive_state_confidence":0}`
	}
	switch s.Title {
	case "rubric":
		return KindRubric, ""
	case "verdict":
		return KindJudge, ""
	case "plan":
		return KindPlan, ""
	case "reading":
		return KindReader, ""
	case "grades":
		return KindGrader, ""
	}
	return KindCold, ""
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return "gemini-" + hex.EncodeToString(h[:8])
}

// geminiModelPath splits /v1beta/models/<model>:<method>.
func geminiModelPath(path string) (model, method string) {
	rest := strings.TrimPrefix(path, geminiPrefix)
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		return rest[:i], rest[i+1:]
	}
	return rest, ""
}

// serveGemini answers one Gemini API request (idx is its record).
func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request, idx int, body []byte, readErr error) {
	ctx := r.Context()
	model, method := geminiModelPath(r.URL.Path)
	s.mu.Lock()
	for k, v := range s.requests[idx].Header {
		if strings.EqualFold(k, "X-Goog-Api-Key") {
			for i := range v {
				v[i] = "[redacted]"
			}
		}
	}
	s.mu.Unlock()
	switch {
	case r.Method != http.MethodPost || (method != "streamGenerateContent" && method != "generateContent" && method != "countTokens"):
		if sleep(ctx, s.script.Latency) {
			s.answerGeminiError(w, idx, http.StatusNotFound, fmt.Sprintf("scripted: no route for %s %s", r.Method, r.URL.Path))
		}
		return
	case readErr != nil:
		return // the client went away mid-body
	case method == "countTokens":
		s.mu.Lock()
		s.requests[idx].Status = http.StatusOK
		s.mu.Unlock()
		writeGeminiJSON(w, http.StatusOK, map[string]any{"totalTokens": len(body) / 4})
		return
	}
	g, err := classifyGemini(model, method, body)
	if err != nil {
		if sleep(ctx, s.script.Latency) {
			s.answerGeminiError(w, idx, http.StatusBadRequest, err.Error())
		}
		return
	}
	s.mu.Lock()
	s.requests[idx].SessionID = g.session
	s.mu.Unlock()

	if g.Kind == KindSide {
		s.mu.Lock()
		rec := &s.requests[idx]
		rec.Kind, rec.Turn, rec.Step, rec.Prompt, rec.Status = g.Kind, g.Turn, g.Step, g.Prompt, http.StatusOK
		s.mu.Unlock()
		if sleep(ctx, s.script.Latency) {
			writeGemini(ctx, w, g, geminiAnswer{model: model, text: g.side, usage: Usage{Input: int64(len(body) / 4), Output: 10}})
		}
		return
	}

	ruleIdx, step := s.route(idx, g.session, g.classified)
	if !sleep(ctx, s.script.Latency+step.Delay) {
		return
	}
	s.mu.Lock()
	if step.Error != nil && step.Error.Count > 0 {
		k := errKey{session: g.session, turn: g.Turn, step: g.Step, rule: ruleIdx}
		if s.errCounts[k] < step.Error.Count {
			s.errCounts[k]++
			s.mu.Unlock()
			_, msg := errorDefaults(step.Error)
			s.answerGeminiError(w, idx, step.Error.Status, msg)
			return
		}
	}
	u := s.usage(g.session, len(body), g.Prompt)
	a := geminiAnswer{model: model, seq: s.requests[idx].Seq}
	if step.Model != "" {
		a.model = step.Model
	}
	a.text = step.Text
	for _, tu := range step.uses {
		if g.Kind != KindAgent && tu.Name == structuredTool {
			// A structured call answers with the JSON itself: the CLI's
			// JSON mode has no StructuredOutput tool.
			a.text = string(tu.Input)
			a.calls = nil
			break
		}
		name, args := geminiTool(tu.Name, tu.Input)
		a.calls = append(a.calls, geminiFunctionCall{Name: name, Args: args})
	}
	u.Output = outputTokens(a.text, step.uses)
	a.usage = u
	s.requests[idx].Status = http.StatusOK
	s.requests[idx].Usage = u
	s.mu.Unlock()
	writeGemini(ctx, w, g, a)
}

type geminiFunctionCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type geminiAnswer struct {
	model string
	seq   int
	text  string
	calls []geminiFunctionCall
	usage Usage
}

// geminiArgRenames are the claude input keys whose Gemini tool argument is
// named differently, per claude tool.
var geminiArgRenames = map[string]map[string]string{
	"Read":  {"offset": "start_line", "limit": "end_line"},
	"Edit":  {"replace_all": "allow_multiple"},
	"Glob":  {"path": "dir_path"},
	"Grep":  {"path": "dir_path", "glob": "include_pattern"},
	"Skill": {"skill": "name"},
}

var geminiToolNames = map[string]string{
	"Bash": "run_shell_command", "Read": "read_file", "Edit": "replace", "Write": "write_file",
	"Glob": "glob", "Grep": "grep_search", "Skill": "activate_skill",
	"WebFetch": "web_fetch", "WebSearch": "google_web_search",
}

// geminiTool translates a script's tool use (claude's names) into the
// CLI's functionCall.
func geminiTool(name string, input json.RawMessage) (string, json.RawMessage) {
	native, ok := geminiToolNames[name]
	if !ok {
		return name, input
	}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return native, input
	}
	out := map[string]any{}
	for k, v := range in {
		if to, ok := geminiArgRenames[name][k]; ok {
			k = to
		}
		if s, ok := v.(string); ok {
			v = strings.ReplaceAll(s, ".claude/skills/", ".agents/skills/")
		}
		out[k] = v
	}
	if _, ok := out["instruction"]; name == "Edit" && !ok {
		// The CLI's replace requires it (an error result otherwise).
		out["instruction"] = "Replace the old string with the new one."
	}
	if name == "Read" {
		// claude's limit is a line count; the CLI's end_line a line number.
		if limit, ok := out["end_line"].(float64); ok {
			start, _ := out["start_line"].(float64)
			out["end_line"] = max(start, 1) + limit - 1
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return native, input
	}
	return native, b
}

// usageMetadata is the Gemini API's usage of an answer: the prompt is the
// whole input picture, cached included.
func (a geminiAnswer) usageMetadata() map[string]int64 {
	prompt := a.usage.Context()
	return map[string]int64{
		"promptTokenCount":        prompt,
		"cachedContentTokenCount": a.usage.CacheRead,
		"candidatesTokenCount":    a.usage.Output,
		"totalTokenCount":         prompt + a.usage.Output,
	}
}

func (a geminiAnswer) response(parts []map[string]any, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	resp := map[string]any{"candidates": []any{cand}, "modelVersion": a.model,
		"responseId": fmt.Sprintf("resp_scripted_%06d", a.seq)}
	if last {
		cand["finishReason"] = "STOP"
		resp["usageMetadata"] = a.usageMetadata()
	}
	return resp
}

func (a geminiAnswer) callParts() []map[string]any {
	var parts []map[string]any
	for _, c := range a.calls {
		parts = append(parts, map[string]any{"functionCall": c})
	}
	return parts
}

// writeGemini answers as the Gemini API does: SSE chunks for
// streamGenerateContent (the text in two, so the CLI's deltas are
// exercised; the function calls and the usage in the last), one JSON for
// generateContent. It stops at the first failed write or when ctx ends.
func writeGemini(ctx context.Context, w http.ResponseWriter, g geminiCall, a geminiAnswer) {
	if !g.Stream {
		var parts []map[string]any
		if a.text != "" {
			parts = append(parts, map[string]any{"text": a.text})
		}
		writeGeminiJSON(w, http.StatusOK, a.response(append(parts, a.callParts()...), true))
		return
	}
	var chunks []map[string]any
	if t := a.text; t != "" {
		cut := len(t) / 2
		for cut > 0 && cut < len(t) && (t[cut]&0xC0) == 0x80 {
			cut++ // never split a UTF-8 sequence
		}
		for _, piece := range []string{t[:cut], t[cut:]} {
			if piece != "" {
				chunks = append(chunks, a.response([]map[string]any{{"text": piece}}, false))
			}
		}
	}
	if calls := a.callParts(); len(calls) > 0 || len(chunks) == 0 {
		if len(calls) == 0 {
			calls = []map[string]any{{"text": ""}}
		}
		chunks = append(chunks, a.response(calls, true))
	} else {
		last := chunks[len(chunks)-1]
		cand := last["candidates"].([]any)[0].(map[string]any)
		cand["finishReason"] = "STOP"
		last["usageMetadata"] = a.usageMetadata()
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for _, c := range chunks {
		if ctx.Err() != nil {
			return
		}
		b, err := json.Marshal(c)
		if err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\r\n\r\n", b); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// geminiStatus is the Google API status name of an HTTP status.
func geminiStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 500:
		return "INTERNAL"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "UNKNOWN"
	}
	return "FAILED_PRECONDITION"
}

func (s *Server) answerGeminiError(w http.ResponseWriter, idx, status int, msg string) {
	s.mu.Lock()
	s.requests[idx].Status = status
	s.mu.Unlock()
	writeGeminiJSON(w, status, map[string]any{"error": map[string]any{
		"code": status, "message": msg, "status": geminiStatus(status)}})
}

func writeGeminiJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
