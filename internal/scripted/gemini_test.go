package scripted

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// geminiBody loads a request body the real Gemini CLI sent, recorded in
// testdata/gemini by the gemini package's TestRecord -record.
func geminiBody(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "gemini", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f.Body
}

// The rules' view of what the CLI sent: a session's first prompt, a
// resumed turn (the skill listed in the claude-shaped body lines), the
// step after activate_skill, the fourth turn of a history whose tool
// results the CLI resends twice, a judge call by its schema's title.
func TestClassifyGeminiCaptured(t *testing.T) {
	cases := []struct {
		name       string
		kind       CallKind
		turn, step int
		prompt     string
	}{
		{"plain-first", KindAgent, 1, 0, "@@plain@@ say something"},
		{"skill-listing-resumed", KindAgent, 3, 0, "@@skill@@ note this down"},
		{"skill-activated-followup", KindAgent, 3, 1, "@@skill@@ note this down"},
		{"resumed-history", KindAgent, 4, 0, "@@plain@@ and again"},
		{"structured-judge", KindJudge, 1, 0, "Judge this: the notes were kept."},
	}
	var session string
	for _, c := range cases {
		g, err := classifyGemini("gemini-2.5-flash", "streamGenerateContent", geminiBody(t, c.name))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if g.Kind != c.kind || g.Turn != c.turn || g.Step != c.step || g.Prompt != c.prompt {
			t.Errorf("%s: kind %s turn %d step %d prompt %q", c.name, g.Kind, g.Turn, g.Step, g.Prompt)
		}
		if g.session == "" {
			t.Errorf("%s: no session key", c.name)
		}
		if c.name == "plain-first" {
			session = g.session
		} else if c.kind == KindAgent && g.session != session {
			t.Errorf("%s: session %s, the resumed session is %s", c.name, g.session, session)
		}
	}
	g, _ := classifyGemini("gemini-2.5-flash", "streamGenerateContent", geminiBody(t, "skill-listing-resumed"))
	if !bytes.Contains(g.Body, []byte("\n- notes: Keeps the notes file.")) {
		t.Error("the view body lacks the claude-shaped skills listing")
	}
}

func geminiPost(t *testing.T, url, model, method string, body any) (int, []map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	path := url + "/v1beta/models/" + model + ":" + method
	if method == "streamGenerateContent" {
		path += "?alt=sse"
	}
	req, _ := http.NewRequest(http.MethodPost, path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Goog-Api-Key", "secret-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var chunks []map[string]any
	if method != "streamGenerateContent" || resp.StatusCode != http.StatusOK {
		var v map[string]any
		data, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("body %q: %v", data, err)
		}
		return resp.StatusCode, []map[string]any{v}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var v map[string]any
		if !strings.HasPrefix(line, "data: ") || json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &v) != nil {
			t.Fatalf("bad SSE line %q", line)
		}
		chunks = append(chunks, v)
	}
	return resp.StatusCode, chunks
}

// answer folds an answer's chunks: text, function calls, finish reason of
// the last, usage.
type geminiAnswerSeen struct {
	text   string
	calls  []map[string]any
	finish string
	usage  map[string]any
	model  string
}

func foldAnswer(chunks []map[string]any) geminiAnswerSeen {
	var a geminiAnswerSeen
	for _, c := range chunks {
		cand := c["candidates"].([]any)[0].(map[string]any)
		for _, p := range cand["content"].(map[string]any)["parts"].([]any) {
			part := p.(map[string]any)
			if s, ok := part["text"].(string); ok {
				a.text += s
			}
			if fc, ok := part["functionCall"].(map[string]any); ok {
				a.calls = append(a.calls, fc)
			}
		}
		if f, ok := cand["finishReason"].(string); ok {
			a.finish = f
		}
		if u, ok := c["usageMetadata"].(map[string]any); ok {
			a.usage = u
		}
		a.model, _ = c["modelVersion"].(string)
	}
	return a
}

func gText(s string) map[string]any { return map[string]any{"text": s} }

func gReq(tools bool, contents ...map[string]any) map[string]any {
	r := map[string]any{"contents": contents, "generationConfig": map[string]any{"temperature": 1}}
	if tools {
		r["tools"] = []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "run_shell_command"}}}}
	}
	return r
}

func gUser(parts ...map[string]any) map[string]any {
	return map[string]any{"role": "user", "parts": parts}
}

func gModel(parts ...map[string]any) map[string]any {
	return map[string]any{"role": "model", "parts": parts}
}

const gContext = "<session_context>\nThis is the Gemini CLI. Workspace /tmp/w1\n</session_context>"

// Claude-named tool uses go out as the CLI's function calls, the text in
// chunks, usage on the last chunk only; the next step follows the model
// content.
func TestGeminiStreamAndTools(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{{Kind: KindAgent, Contains: "@@k@@", Steps: []Step{
		{Text: "Looking first.", ToolUses: []ToolUse{
			{Name: "Bash", Input: map[string]any{"command": "bash .claude/skills/s/run.sh", "description": "run"}},
			{Name: "Skill", Input: map[string]any{"skill": "s"}},
			{Name: "Edit", Input: map[string]any{"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": true}},
			{Name: "Read", Input: map[string]any{"file_path": "a", "offset": 10, "limit": 5}},
			{Name: "Grep", Input: map[string]any{"pattern": "p", "path": "src", "glob": "*.go"}},
		}},
		{Text: "Finished.", Model: "gemini-other"},
	}}}})
	first := gUser(gText(gContext), gText("@@k@@ go"))
	status, chunks := geminiPost(t, srv.URL(), "gemini-2.5-flash", "streamGenerateContent", gReq(true, first))
	if status != 200 || len(chunks) != 3 {
		t.Fatalf("status %d, %d chunks: text in two, the calls in the last", status, len(chunks))
	}
	for _, c := range chunks[:2] {
		if _, ok := c["usageMetadata"]; ok {
			t.Error("usage before the last chunk")
		}
	}
	a := foldAnswer(chunks)
	if a.text != "Looking first." || a.finish != "STOP" || a.model != "gemini-2.5-flash" || len(a.calls) != 5 {
		t.Fatalf("answer %+v", a)
	}
	want := []struct {
		name string
		args string
	}{
		{"run_shell_command", `{"command":"bash .agents/skills/s/run.sh","description":"run"}`},
		{"activate_skill", `{"name":"s"}`},
		{"replace", `{"allow_multiple":true,"file_path":"a","instruction":"Replace the old string with the new one.","new_string":"y","old_string":"x"}`},
		{"read_file", `{"end_line":14,"file_path":"a","start_line":10}`},
		{"grep_search", `{"dir_path":"src","include_pattern":"*.go","pattern":"p"}`},
	}
	for i, w := range want {
		args, _ := json.Marshal(a.calls[i]["args"])
		if a.calls[i]["name"] != w.name || string(args) != w.args {
			t.Errorf("call %d: %v %s, want %s %s", i, a.calls[i]["name"], args, w.name, w.args)
		}
	}
	u := a.usage
	if u["promptTokenCount"].(float64) <= 0 || u["totalTokenCount"].(float64) != u["promptTokenCount"].(float64)+u["candidatesTokenCount"].(float64) {
		t.Errorf("usage %v", u)
	}
	next := gReq(true, first, gModel(gText("Looking first."), map[string]any{"functionCall": map[string]any{"name": "run_shell_command"}}),
		gUser(map[string]any{"functionResponse": map[string]any{"id": "x", "name": "run_shell_command", "response": map[string]any{"output": "ok"}}}))
	_, chunks = geminiPost(t, srv.URL(), "gemini-2.5-flash", "streamGenerateContent", next)
	if a := foldAnswer(chunks); a.text != "Finished." || a.model != "gemini-other" || len(a.calls) != 0 {
		t.Errorf("step 1: %+v", a)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Step != 1 || reqs[1].Turn != 1 || reqs[0].SessionID != reqs[1].SessionID {
		t.Errorf("requests %+v", reqs)
	}
	if got := reqs[0].Header.Get("X-Goog-Api-Key"); got != "[redacted]" {
		t.Errorf("api key recorded as %q", got)
	}
	if reqs[1].Usage.CacheRead == 0 {
		t.Error("the second call read nothing from cache: usage does not grow per session")
	}
}

// Errors come back in Google's shape, Count times per step, then the
// answer; a structured call answers the JSON; a side call gets its canned
// answer; generateContent answers one JSON; countTokens and unknown
// methods.
func TestGeminiErrorsStructuredSide(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{
		{Kind: KindAgent, Contains: "@@busy@@", Steps: []Step{{Error: &HTTPError{Status: 429, Count: 2}, Text: "at last"}}},
		{Kind: KindJudge, Steps: []Step{{ToolUses: []ToolUse{{Name: "StructuredOutput", Input: map[string]any{"verdict": "pass"}}}}}},
		{Kind: KindAgent, Steps: []Step{{Text: "plain"}}},
	}})
	busy := gReq(true, gUser(gText(gContext), gText("@@busy@@ now")))
	for i := 0; i < 2; i++ {
		status, body := geminiPost(t, srv.URL(), "m", "streamGenerateContent", busy)
		e, _ := body[0]["error"].(map[string]any)
		if status != 429 || e["status"] != "RESOURCE_EXHAUSTED" || e["code"].(float64) != 429 {
			t.Fatalf("try %d: %d %v", i, status, body)
		}
	}
	if _, chunks := geminiPost(t, srv.URL(), "m", "streamGenerateContent", busy); foldAnswer(chunks).text != "at last" {
		t.Error("the third try was not answered")
	}

	judge := gReq(false, gUser(gText(gContext), gText("judge it")))
	judge["generationConfig"] = map[string]any{"responseMimeType": "application/json",
		"responseJsonSchema": map[string]any{"title": "verdict", "type": "object"}}
	_, chunks := geminiPost(t, srv.URL(), "m", "streamGenerateContent", judge)
	if a := foldAnswer(chunks); a.text != `{"verdict":"pass"}` || len(a.calls) != 0 {
		t.Errorf("judge answer %+v", a)
	}

	side := gReq(false, gUser(gText("route this")))
	side["generationConfig"] = map[string]any{"responseJsonSchema": map[string]any{"properties": map[string]any{"complexity_score": map[string]any{}}}}
	status, body := geminiPost(t, srv.URL(), "gemini-3.5-flash-lite", "generateContent", side)
	if a := foldAnswer(body); status != 200 || !strings.Contains(a.text, `"complexity_score":10`) {
		t.Errorf("side call: %d %+v", status, a)
	}

	status, body = geminiPost(t, srv.URL(), "m", "countTokens", gReq(false, gUser(gText("x"))))
	if status != 200 || body[0]["totalTokens"] == nil {
		t.Errorf("countTokens %d %v", status, body)
	}
	status, body = geminiPost(t, srv.URL(), "m", "embedContent", gReq(false))
	if status != 404 || body[0]["error"] == nil {
		t.Errorf("unknown method %d %v", status, body)
	}
	kinds := map[CallKind]int{}
	for _, r := range srv.Requests() {
		kinds[r.Kind]++
	}
	if kinds[KindAgent] != 3 || kinds[KindJudge] != 1 || kinds[KindSide] != 1 {
		t.Errorf("kinds %v", kinds)
	}
}

// The same personas serve the CLI: the no-skill control by the listing,
// the steady persona's skill load, and the forgetting persona's summary
// of a compression and its lapse after it.
func TestGeminiPersonas(t *testing.T) {
	p := Procedure{
		TaskPattern: `stock`,
		Follow:      []Step{{ToolUses: []ToolUse{{Name: "Skill", Input: map[string]any{"skill": "ledger"}}}}, {Text: "followed"}},
		FromMemory:  "from memory",
	}
	steady, err := PersonaRules(PersonaSteady, p)
	if err != nil {
		t.Fatal(err)
	}
	forgetting, err := PersonaRules(PersonaForgetting, p)
	if err != nil {
		t.Fatal(err)
	}
	rules := append([]Rule{{Kind: KindAgent, Pattern: "stock", BodyLacks: "- ledger:", Steps: []Step{{Text: "never shown the skill"}}}}, steady...)
	srv := startServer(t, Script{Personas: []string{PersonaSteady, PersonaForgetting}, Rules: append(rules, forgetting...)})

	listed := func(contents ...map[string]any) map[string]any {
		r := gReq(true, contents...)
		r["systemInstruction"] = map[string]any{"parts": []any{gText("# Available Agent Skills\n<available_skills>\n  <skill>\n    <name>ledger</name>\n    <description>Counts stock.</description>\n  </skill>\n</available_skills>")}}
		return r
	}
	// Session 1 (steady): the skill is listed and loaded.
	_, chunks := geminiPost(t, srv.URL(), "m", "streamGenerateContent", listed(gUser(gText("<session_context>one</session_context>"), gText("how much stock?"))))
	if a := foldAnswer(chunks); len(a.calls) != 1 || a.calls[0]["name"] != "activate_skill" {
		t.Errorf("steady: %+v", a)
	}
	// Session 2 (forgetting): a compression call gets the summary; the
	// compressed history then answers from memory.
	comp := gReq(false, gUser(gText("<session_context>two</session_context>"), gText("how much stock?")), gModel(gText("followed")),
		gUser(gText("Generate a new <state_snapshot> based on the provided history.")))
	comp["systemInstruction"] = map[string]any{"parts": []any{gText("You are a specialized system component responsible for distilling chat history into a structured XML <state_snapshot>.")}}
	_, body := geminiPost(t, srv.URL(), "m", "generateContent", comp)
	if a := foldAnswer(body); a.text != forgettingSummary {
		t.Errorf("compression answered %q", a.text)
	}
	after := listed(gUser(gText("<session_context>two</session_context>"), gText(forgettingSummary)), gModel(gText(geminiCompressedAck)), gUser(gText("stock again?")))
	_, chunks = geminiPost(t, srv.URL(), "m", "streamGenerateContent", after)
	if a := foldAnswer(chunks); a.text != "from memory" {
		t.Errorf("forgetting after compression: %+v", a)
	}
	// A session never shown the skill (no listing).
	_, chunks = geminiPost(t, srv.URL(), "m", "streamGenerateContent", gReq(true, gUser(gText("<session_context>three</session_context>"), gText("stock?"))))
	if a := foldAnswer(chunks); a.text != "never shown the skill" {
		t.Errorf("no-skill control: %+v", a)
	}
}
