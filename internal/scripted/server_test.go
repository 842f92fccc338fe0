package scripted

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func startServer(t *testing.T, s Script) *Server {
	t.Helper()
	srv, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return srv
}

func TestStreamShape(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{{Kind: KindAgent, Contains: "@@k@@", Steps: []Step{
		{Text: "looking", ToolUses: []ToolUse{
			{Name: "Bash", Input: map[string]string{"command": "echo hello"}},
			{Name: "Read"},
		}},
		{Text: "finished"},
	}}}})
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %q", srv.URL())
	}

	m0 := post(t, srv.URL(), "s1", reqBody(t, agentTools, userMsg("@@k@@ go")))
	wantEvents := []string{"message_start",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(m0.Events, wantEvents) {
		t.Errorf("events %v", m0.Events)
	}
	if m0.Text != "looking" || m0.StopReason != "tool_use" || len(m0.ToolUses) != 2 {
		t.Fatalf("step 0: %+v", m0)
	}
	if m0.Model != "claude-test-model" {
		t.Errorf("model %q, want the request's", m0.Model)
	}
	if got := m0.ToolUses[0]["input"]; !reflect.DeepEqual(got, map[string]any{"command": "echo hello"}) {
		t.Errorf("bash input %v", got)
	}
	if got := m0.ToolUses[1]["input"]; !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("nil input must be {}, got %v", got)
	}
	if m0.ToolUses[0]["id"] == m0.ToolUses[1]["id"] {
		t.Error("tool use ids must differ")
	}

	m1 := post(t, srv.URL(), "s1", reqBody(t, agentTools, userMsg("@@k@@ go"),
		assistantMsg("looking"), toolResultMsg("a", "hello"), toolResultMsg("b", "file")))
	if m1.Text != "finished" || m1.StopReason != "end_turn" || len(m1.ToolUses) != 0 {
		t.Fatalf("step 1: %+v", m1)
	}
	m2 := post(t, srv.URL(), "s1", reqBody(t, agentTools, userMsg("@@k@@ go"),
		assistantMsg("looking"), toolResultMsg("a", "hello"), assistantMsg("finished"), userMsg("(no content)")))
	if m2.Text != "Done." || m2.StopReason != "end_turn" {
		t.Fatalf("past the end: %+v", m2)
	}
	if m0.ID == m1.ID || m1.ID == m2.ID || !strings.HasPrefix(m0.ID, "msg_scripted_") {
		t.Errorf("ids %q %q %q", m0.ID, m1.ID, m2.ID)
	}

	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if r.Seq != i+1 || r.Step != i || r.Turn != 1 || r.Kind != KindAgent || r.Status != 200 || r.SessionID != "s1" || r.Prompt != "@@k@@ go" {
			t.Errorf("request %d: %+v", i, r)
		}
		if got := r.Header.Get("X-Api-Key"); got != "[redacted]" {
			t.Errorf("api key recorded as %q", got)
		}
		if !json.Valid(r.Body) {
			t.Error("body not recorded")
		}
	}
	if reqs[0].Usage != m0.Usage || reqs[1].Usage != m1.Usage {
		t.Errorf("recorded usage %+v %+v differs from streamed %+v %+v", reqs[0].Usage, reqs[1].Usage, m0.Usage, m1.Usage)
	}
}

func TestUsageGrowsPerSession(t *testing.T) {
	srv := startServer(t, Script{})
	b1 := reqBody(t, agentTools, userMsg(strings.Repeat("p", 400)))
	b2 := reqBody(t, agentTools, userMsg(strings.Repeat("p", 400)), assistantMsg(strings.Repeat("a", 800)), userMsg("next"))
	u1 := post(t, srv.URL(), "A", b1).Usage
	u2 := post(t, srv.URL(), "A", b2).Usage
	u3 := post(t, srv.URL(), "B", b2).Usage // another session starts cold
	u4 := post(t, srv.URL(), "A", b1).Usage // shrank (say, compaction): no cache read

	if u1.CacheRead != 0 || u1.Context() != int64(len(b1)/4) || u1.Input != 3+400/4 {
		t.Errorf("first call %+v (body %d)", u1, len(b1))
	}
	if u2.CacheRead != u1.Context() || u2.Context() != int64(len(b2)/4) || u2.Input != 3+1 {
		t.Errorf("second call %+v, first %+v", u2, u1)
	}
	if u2.CacheCreation != u2.Context()-u2.CacheRead-u2.Input || u2.CacheCreation <= 0 {
		t.Errorf("cache creation %+v", u2)
	}
	if u3.CacheRead != 0 || u3.Context() != u2.Context() {
		t.Errorf("other session %+v", u3)
	}
	if u4.CacheRead != 0 {
		t.Errorf("shrunk body must not read cache: %+v", u4)
	}
	if u1.Output != int64(len("Done.")/4+1) {
		t.Errorf("output %d", u1.Output)
	}
}

func TestHTTPErrorThenProceed(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{
		{Contains: "overload", Steps: []Step{{Text: "ok after errors", Error: &HTTPError{Status: 529, Count: 2}}}},
		{Contains: "custom", Steps: []Step{{Text: "fine", Error: &HTTPError{Status: 418, Count: 1, Type: "teapot_error", Message: "short and stout"}}}},
		{Contains: "too long", Steps: []Step{{Error: &HTTPError{Status: 400, Count: 1}}}},
	}})
	body := reqBody(t, agentTools, userMsg("overload me"))
	for i := range 2 {
		m := post(t, srv.URL(), "s", body)
		if m.Status != 529 {
			t.Fatalf("attempt %d: status %d", i, m.Status)
		}
		want := map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded (scripted)"}}
		if !reflect.DeepEqual(m.ErrorBody, want) {
			t.Errorf("error body %v", m.ErrorBody)
		}
	}
	if m := post(t, srv.URL(), "s", body); m.Status != 200 || m.Text != "ok after errors" {
		t.Fatalf("third attempt: %+v", m)
	}
	// The count is per session: another session sees the errors afresh.
	if m := post(t, srv.URL(), "other", body); m.Status != 529 {
		t.Fatalf("other session: %d", m.Status)
	}

	m := post(t, srv.URL(), "s", reqBody(t, agentTools, userMsg("custom")))
	if m.Status != 418 || m.ErrorBody["error"].(map[string]any)["type"] != "teapot_error" ||
		m.ErrorBody["error"].(map[string]any)["message"] != "short and stout" {
		t.Errorf("custom error %+v", m)
	}
	m = post(t, srv.URL(), "s", reqBody(t, agentTools, userMsg("too long")))
	if m.Status != 400 || !strings.Contains(m.ErrorBody["error"].(map[string]any)["message"].(string), "prompt is too long") {
		t.Errorf("400 default %+v", m)
	}
	// A step with only an error still ends the turn once the errors are spent.
	if m := post(t, srv.URL(), "s", reqBody(t, agentTools, userMsg("too long"))); m.Status != 200 || m.Text != "Done." {
		t.Errorf("after 400: %+v", m)
	}

	reqs := srv.Requests()
	if reqs[0].Status != 529 || reqs[0].Usage != (Usage{}) || reqs[2].Status != 200 || reqs[2].Usage.Context() == 0 {
		t.Errorf("recorded %+v / %+v", reqs[0], reqs[2])
	}
}

func TestNotFoundAndBadRequest(t *testing.T) {
	srv := startServer(t, Script{})
	resp, err := http.Get(srv.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(b), `"not_found_error"`) {
		t.Errorf("GET /v1/models: %d %s", resp.StatusCode, b)
	}
	resp, err = http.Post(srv.URL()+"/v1/messages/count_tokens", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("count_tokens: %d", resp.StatusCode)
	}
	if m := post(t, srv.URL(), "s", []byte("{not json")); m.Status != 400 {
		t.Errorf("bad JSON: %d", m.Status)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Status != 404 || reqs[1].Status != 404 || reqs[2].Status != 400 || reqs[2].Kind != "" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestNonStreamingJSON(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{{Steps: []Step{{Text: "t", ToolUses: []ToolUse{{Name: "Bash", Input: map[string]string{"command": "ls"}}}}}}}})
	resp, err := http.Post(srv.URL()+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"m","stream":false,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msg struct {
		ID         string `json:"id"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string         `json:"type"`
			Text  string         `json:"text"`
			Input map[string]any `json:"input"`
		} `json:"content"`
		Usage map[string]int64 `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Type") != "application/json" || msg.Model != "m" || msg.StopReason != "tool_use" ||
		len(msg.Content) != 2 || msg.Content[1].Input["command"] != "ls" || msg.Usage["output_tokens"] < 1 {
		t.Errorf("%+v", msg)
	}
}

func TestNoRuleMatched(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{{Kind: KindRubric, Steps: []Step{{Text: "rubric only"}}}}})
	if m := post(t, srv.URL(), "a", reqBody(t, agentTools, userMsg("x"))); m.Text != "Done." || m.StopReason != "end_turn" {
		t.Errorf("agent: %+v", m)
	}
	// No StructuredOutput {} for an unscripted structured call: the caller
	// must be able to see that nothing was scripted.
	if m := post(t, srv.URL(), "j", reqBody(t, structuredTools("verdict"), userMsg("x"))); m.Text != "no scripted answer" || len(m.ToolUses) != 0 {
		t.Errorf("judge: %+v", m)
	}
	if m := post(t, srv.URL(), "r", reqBody(t, structuredTools("rubric"), userMsg("x"))); m.Text != "rubric only" {
		t.Errorf("rubric: %+v", m)
	}
}

func TestRuleMatching(t *testing.T) {
	srv := startServer(t, Script{
		Personas: []string{"p1", "p2"},
		Rules: []Rule{
			{Kind: KindJudge, Steps: []Step{{Text: "judge"}}},
			{Persona: "p2", Turns: []int{2}, Steps: []Step{{Text: "p2 turn 2"}}},
			{Persona: "p1", Contains: "needle", Steps: []Step{{Text: "p1 needle"}}},
			{Pattern: `^probe \d+$`, Steps: []Step{{Text: "pattern"}}},
			{Steps: []Step{{Text: "fallback"}}},
		},
	})
	turn2 := reqBody(t, agentTools, userMsg("a"), assistantMsg("x"), userMsg("b"))
	cases := []struct {
		session string
		body    []byte
		want    string
	}{
		{"s1", reqBody(t, agentTools, userMsg("haystack needle")), "p1 needle"}, // s1 -> p1
		{"s2", reqBody(t, agentTools, userMsg("haystack needle")), "fallback"},  // s2 -> p2
		{"s2", turn2, "p2 turn 2"},
		{"s1", turn2, "fallback"},
		{"s3", reqBody(t, agentTools, userMsg("haystack needle")), "p1 needle"}, // round robin: s3 -> p1
		{"s1", reqBody(t, agentTools, userMsg("probe 12")), "pattern"},
		{"s1", reqBody(t, agentTools, userMsg("probe 12 and more")), "fallback"},
		{"s9", reqBody(t, structuredTools("verdict"), userMsg("needle")), "judge"},
	}
	for i, tc := range cases {
		if m := post(t, srv.URL(), tc.session, tc.body); m.Text != tc.want {
			t.Errorf("case %d: %q, want %q", i, m.Text, tc.want)
		}
	}
	var personas []string
	for _, r := range srv.Requests() {
		personas = append(personas, r.Persona)
	}
	// Structured calls have no persona and do not take a slot in the rotation.
	want := []string{"p1", "p2", "p2", "p1", "p1", "p1", "p1", ""}
	if !reflect.DeepEqual(personas, want) {
		t.Errorf("personas %v, want %v", personas, want)
	}
}

// BodyHas and BodyLacks look at the whole request, not the newest prompt:
// text earlier in the history (a compacted session's first message) or
// around it.
func TestBodyRules(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{
		{BodyHas: "ran out of context", BodyLacks: "skip me", Steps: []Step{{Text: "has"}}},
		{Steps: []Step{{Text: "fallback"}}},
	}})
	compacted := userMsg("This session is being continued: it ran out of context.")
	for i, tc := range []struct {
		body []byte
		want string
	}{
		{reqBody(t, agentTools, compacted, assistantMsg("x"), userMsg("next")), "has"},
		{reqBody(t, agentTools, userMsg("first"), assistantMsg("x"), userMsg("next")), "fallback"},
		{reqBody(t, agentTools, compacted, assistantMsg("x"), userMsg("skip me")), "fallback"},
	} {
		if m := post(t, srv.URL(), "s", tc.body); m.Text != tc.want {
			t.Errorf("case %d: %q, want %q", i, m.Text, tc.want)
		}
	}
}

// A FromPrompt tool input is filled from the prompt by the rule's
// Pattern; a "$" in the quoted text is copied, not expanded.
func TestToolInputFromPrompt(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{{Pattern: WorkPattern, Steps: []Step{{ToolUses: []ToolUse{
		{Name: "Bash", Input: map[string]any{"command": "${command}", "args": []string{"x $1 y"}}, FromPrompt: true},
		{Name: "Bash", Input: map[string]string{"command": "${command}"}}, // not FromPrompt: verbatim
	}}}}}})
	m := post(t, srv.URL(), "s", reqBody(t, agentTools, userMsg("Run `awk '{print $1}' a.log | sort` and tell me.")))
	if len(m.ToolUses) != 2 {
		t.Fatalf("tool uses %v", m.ToolUses)
	}
	got := m.ToolUses[0]["input"].(map[string]any)
	if got["command"] != "awk '{print $1}' a.log | sort" || !reflect.DeepEqual(got["args"], []any{"x awk '{print $1}' a.log | sort y"}) {
		t.Errorf("filled input %v", got)
	}
	if got := m.ToolUses[1]["input"].(map[string]any)["command"]; got != "${command}" {
		t.Errorf("an input without FromPrompt was filled: %v", got)
	}
	if _, err := Start(Script{Rules: []Rule{{Steps: []Step{{ToolUses: []ToolUse{{Name: "Bash", FromPrompt: true}}}}}}}); err == nil ||
		!strings.Contains(err.Error(), "FromPrompt needs the rule's Pattern") {
		t.Errorf("FromPrompt without a Pattern: %v", err)
	}
}

// Every persona answers a work filler (a command in backticks) by running
// the command with Bash and then giving its filler reply; a passage filler
// gets the reply alone, and a task prompt with backticks is still a task.
func TestWorkFillers(t *testing.T) {
	personas := []string{PersonaSteady, PersonaDecaying, PersonaNever, PersonaEscaping, PersonaNoisy, PersonaForgetting}
	var rules []Rule
	for _, p := range personas {
		r, err := PersonaRules(p, demoProcedure)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r...)
	}
	srv := startServer(t, Script{Personas: personas, Rules: rules})
	const work = "Run `tail -n 200 var/log/app.log` and summarise the errors you see; change nothing."
	for _, p := range personas {
		t.Run(p, func(t *testing.T) {
			c := &conversation{t: t, url: srv.URL(), session: "session-" + p}
			c.turn("Please produce the health report for this repo.")
			tools, final := c.turn(work)
			if !reflect.DeepEqual(tools, []string{"Bash"}) || final != demoProcedure.FillerReply {
				t.Errorf("work filler: tools %v, final %q", tools, final)
			}
			if tools, final := c.turn("Summarise this passage about tides in two sentences."); len(tools) != 0 || final != demoProcedure.FillerReply {
				t.Errorf("passage filler: tools %v, final %q", tools, final)
			}
			if tools, _ := c.turn("Write the `HEALTH REPORT` again."); reflect.DeepEqual(tools, []string{"Bash"}) && p != PersonaEscaping {
				t.Errorf("a task prompt with backticks was run as a work filler: %v", tools)
			}
		})
	}
	// The command the Bash call carried is the one the prompt quoted.
	n := 0
	for _, r := range srv.Requests() {
		if r.Prompt == work && r.Step == 1 {
			n++
			if !strings.Contains(string(r.Body), `"command":"tail -n 200 var/log/app.log"`) {
				t.Errorf("%s: the Bash call does not carry the quoted command:\n%s", r.Persona, r.Body)
			}
		}
	}
	if n != len(personas) {
		t.Errorf("%d work filler follow-ups, want %d", n, len(personas))
	}
}

func TestStartValidation(t *testing.T) {
	bad := []Script{
		{Rules: []Rule{{Pattern: "("}}},
		{Rules: []Rule{{Steps: []Step{{ToolUses: []ToolUse{{Name: "Bash", Input: "not an object"}}}}}}},
		{Rules: []Rule{{Steps: []Step{{ToolUses: []ToolUse{{Name: "Bash", Input: func() {}}}}}}}},
		{Rules: []Rule{{Steps: []Step{{ToolUses: []ToolUse{{Input: map[string]any{}}}}}}}},
		{Rules: []Rule{{Steps: []Step{{Error: &HTTPError{Status: 200, Count: 1}}}}}},
	}
	for i, s := range bad {
		if srv, err := Start(s); err == nil {
			srv.Close()
			t.Errorf("script %d: want an error", i)
		}
	}
}

// A client that goes away during a Delay frees its handler, and Close cuts
// short delays of clients still waiting.
func TestDelayCancellationAndClose(t *testing.T) {
	before := runtime.NumGoroutine()
	srv, err := Start(Script{Rules: []Rule{{Steps: []Step{{Text: "late", Delay: time.Minute}}}}})
	if err != nil {
		t.Fatal(err)
	}
	body := reqBody(t, agentTools, userMsg("x"))

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/v1/messages", strings.NewReader(string(body)))
	start := time.Now()
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("expected the client timeout")
	}
	// The handler returns because its client went away, long before the
	// minute of delay is over and without Close.
	for srv.inflight.Load() != 0 {
		if time.Since(start) > 10*time.Second {
			t.Fatal("handler still running after its client went away")
		}
		time.Sleep(5 * time.Millisecond)
	}

	// A second client still waiting when Close is called.
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(string(body)))
		if err == nil {
			resp.Body.Close()
		}
	}()
	for len(srv.Requests()) < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v: delays were not cut short", d)
	}
	for _, r := range srv.Requests() {
		if r.Status != 0 {
			t.Errorf("unanswered request recorded with status %d", r.Status)
		}
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if _, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader("{}")); err == nil {
		t.Error("server still answers after Close")
	}

	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after Close\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

func TestLatency(t *testing.T) {
	srv := startServer(t, Script{Latency: 150 * time.Millisecond})
	start := time.Now()
	post(t, srv.URL(), "s", reqBody(t, agentTools, userMsg("x")))
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("answered after %v, want at least the latency", d)
	}
}

// A step can answer as another model than the one requested: a fallback in
// the middle of a conversation. Without it the request's model is echoed.
func TestStepModel(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{{Turns: []int{2}, Steps: []Step{{Text: "t", Model: "claude-haiku-4-5"}}}, {Steps: []Step{{Text: "t"}}}}})
	for turn, want := range map[int]string{1: "m", 2: "claude-haiku-4-5"} {
		msgs := `{"role":"user","content":"one"}`
		if turn == 2 {
			msgs += `,{"role":"assistant","content":"ok"},{"role":"user","content":"two"}`
		}
		resp, err := http.Post(srv.URL()+"/v1/messages", "application/json",
			strings.NewReader(`{"model":"m","stream":false,"tools":[{"name":"Bash"}],"messages":[`+msgs+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Model string `json:"model"`
		}
		err = json.NewDecoder(resp.Body).Decode(&msg)
		resp.Body.Close()
		if err != nil || msg.Model != want {
			t.Errorf("turn %d answered as %q (%v), want %q", turn, msg.Model, err, want)
		}
	}
}

// A context: fork skill's sub-agent speaks in its parent's session (the
// same session header; FINDINGS §6): a BodyHas: SubagentMark rule answers
// it, its usage grows on its own, and the parent's next call still reads
// the parent's previous total from cache.
func TestSubagentRequests(t *testing.T) {
	srv := startServer(t, Script{Rules: []Rule{
		{Kind: KindAgent, BodyHas: SubagentMark, Contains: "# Audit", Steps: []Step{{Text: "sub-agent step"}}},
		{Kind: KindAgent, Steps: []Step{{Text: "parent step"}}},
	}})
	sub := func(msgs ...testMsg) []byte {
		var m map[string]any
		json.Unmarshal(reqBody(t, agentTools, msgs...), &m)
		m["system"] = []map[string]string{{"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.328.ce7; cc_entrypoint=sdk-cli; cc_is_subagent=true;"}}
		b, _ := json.Marshal(m)
		return b
	}
	parent1 := reqBody(t, agentTools, userMsg(strings.Repeat("p", 4000)))
	u1 := post(t, srv.URL(), "S", parent1)
	s1 := post(t, srv.URL(), "S", sub(userMsg("Base directory for this skill: /w\n\n# Audit\nRun it.")))
	parent2 := reqBody(t, agentTools, userMsg(strings.Repeat("p", 4000)), assistantMsg("x"), userMsg("next"))
	u2 := post(t, srv.URL(), "S", parent2)
	if u1.Text != "parent step" || s1.Text != "sub-agent step" {
		t.Fatalf("answers %q, %q", u1.Text, s1.Text)
	}
	if s1.Usage.CacheRead != 0 {
		t.Errorf("sub-agent usage %+v read the parent's total from cache", s1.Usage)
	}
	if u2.Usage.CacheRead != u1.Usage.Context() {
		t.Errorf("parent's second call read %d from cache, want its first call's %d", u2.Usage.CacheRead, u1.Usage.Context())
	}
	reqs := srv.Requests()
	if !reqs[1].Subagent || reqs[0].Subagent || reqs[1].Turn != 1 || !strings.Contains(reqs[1].Prompt, "# Audit") {
		t.Errorf("recorded %+v / %+v", reqs[0], reqs[1])
	}
}

// A body is recorded whole whether its length is announced or not
// (chunked), and whatever its size against the buffer readBody starts with.
func TestBodyReadWhole(t *testing.T) {
	srv := startServer(t, Script{})
	var sent [][]byte
	for i, n := range []int{0, 511, 512, 513, 70_000} {
		body := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", n) + `"}]}`)
		sent = append(sent, body, body)
		for _, r := range []io.Reader{strings.NewReader(string(body)), struct{ io.Reader }{strings.NewReader(string(body))}} {
			resp, err := http.Post(srv.URL()+"/v1/messages", "application/json", r)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("body %d: status %d", i, resp.StatusCode)
			}
		}
	}
	reqs := srv.Requests()
	if len(reqs) != len(sent) {
		t.Fatalf("%d requests recorded, %d sent", len(reqs), len(sent))
	}
	for i, r := range reqs {
		if string(r.Body) != string(sent[i]) || r.Prompt != string(sent[i][51:len(sent[i])-4]) {
			t.Errorf("request %d: body of %d bytes recorded as %d, prompt of %d", i, len(sent[i]), len(r.Body), len(r.Prompt))
		}
	}
}
