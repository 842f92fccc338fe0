package scripted

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// End-to-end tests: the real claude CLI against the scripted server.

// resultEvent returns the last "result" event.
func resultEvent(t *testing.T, evs []map[string]any) map[string]any {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i]["type"] == "result" {
			return evs[i]
		}
	}
	t.Fatal("no result event")
	return nil
}

func assertSuccess(t *testing.T, res map[string]any) {
	t.Helper()
	if res["is_error"] != false {
		t.Fatalf("result is an error: %v", res)
	}
}

func TestE2EToolTurnAndResume(t *testing.T) {
	t.Parallel()
	srv := startServer(t, Script{Rules: []Rule{
		{Kind: KindAgent, Contains: "@@tool@@", Steps: []Step{
			{Text: "Let me check.", ToolUses: []ToolUse{{Name: "Bash", Input: map[string]string{"command": "echo hello"}}}},
			{Text: "The command printed hello."},
		}},
		{Kind: KindAgent, Contains: "@@second@@", Turns: []int{2}, Steps: []Step{{Text: "second turn answer"}}},
	}})
	env := newCLIEnv(t, srv.URL())

	out, err := env.run(t, agentArgs("@@tool@@ run echo")...)
	if err != nil {
		t.Fatal(err)
	}
	evs := events(t, out)
	var sawHello bool
	var ids []string
	assistantUsage := map[string]map[string]any{}
	for _, ev := range evs {
		msg, _ := ev["message"].(map[string]any)
		switch ev["type"] {
		case "user":
			for _, b := range msg["content"].([]any) {
				b := b.(map[string]any)
				if b["type"] == "tool_result" && strings.Contains(b["content"].(string), "hello") && b["is_error"] != true {
					sawHello = true
				}
			}
		case "assistant":
			id := msg["id"].(string)
			if len(ids) == 0 || ids[len(ids)-1] != id {
				ids = append(ids, id)
			}
			assistantUsage[id] = msg["usage"].(map[string]any)
		}
	}
	res := resultEvent(t, evs)
	assertSuccess(t, res)
	if !sawHello {
		t.Errorf("no tool_result containing hello in\n%s", out)
	}
	if res["result"] != "The command printed hello." {
		t.Errorf("final text %q", res["result"])
	}
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Errorf("assistant message ids %v, want two distinct", ids)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.Kind != KindAgent || r.Turn != 1 || r.Step != i || r.Status != 200 || r.Prompt != "@@tool@@ run echo" {
			t.Errorf("request %d: kind %s turn %d step %d status %d prompt %q", i, r.Kind, r.Turn, r.Step, r.Status, r.Prompt)
		}
		if r.Header.Get("X-Api-Key") != "[redacted]" {
			t.Errorf("api key not redacted: %q", r.Header.Get("X-Api-Key"))
		}
		// The CLI shows the message_start usage of each call verbatim.
		if len(ids) == 2 {
			u := assistantUsage[ids[i]]
			if int64(u["input_tokens"].(float64)) != r.Usage.Input ||
				int64(u["cache_read_input_tokens"].(float64)) != r.Usage.CacheRead ||
				int64(u["cache_creation_input_tokens"].(float64)) != r.Usage.CacheCreation {
				t.Errorf("call %d: CLI usage %v, recorded %+v", i, u, r.Usage)
			}
		}
	}
	if !(reqs[1].Usage.Context() > reqs[0].Usage.Context()) || reqs[1].Usage.CacheRead != reqs[0].Usage.Context() {
		t.Errorf("usage does not grow: %+v then %+v", reqs[0].Usage, reqs[1].Usage)
	}
	sid, _ := evs[0]["session_id"].(string)
	if sid == "" || reqs[0].SessionID != sid {
		t.Fatalf("session id %q, recorded %q", sid, reqs[0].SessionID)
	}

	// Second turn with --resume: the history is resent, so it is turn 2.
	out, err = env.run(t, agentArgs("@@second@@ and now", "--resume", sid)...)
	if err != nil {
		t.Fatal(err)
	}
	res = resultEvent(t, events(t, out))
	assertSuccess(t, res)
	if res["result"] != "second turn answer" {
		t.Errorf("resumed turn answered %q", res["result"])
	}
	reqs = srv.Requests()
	last := reqs[len(reqs)-1]
	if len(reqs) != 3 || last.Turn != 2 || last.Step != 0 || last.SessionID != sid || last.Prompt != "@@second@@ and now" {
		t.Errorf("resumed request: %d requests, turn %d step %d session %q prompt %q", len(reqs), last.Turn, last.Step, last.SessionID, last.Prompt)
	}
	if last.Usage.CacheRead != reqs[1].Usage.Context() {
		t.Errorf("resumed turn reads %d from cache, want the previous total %d", last.Usage.CacheRead, reqs[1].Usage.Context())
	}
}

const verdictSchema = `{"title":"verdict","type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]},"score":{"type":"integer"}},"required":["verdict","score"]}`

func TestE2EJudgeStructuredOutput(t *testing.T) {
	t.Parallel()
	verdict := map[string]any{"verdict": "pass", "score": 7}
	srv := startServer(t, Script{Rules: []Rule{
		{Kind: KindJudge, Contains: "@@judge@@", Steps: []Step{{ToolUses: []ToolUse{{Name: "StructuredOutput", Input: verdict}}}}},
	}})
	env := newCLIEnv(t, srv.URL())
	out, err := env.run(t, "-p", "@@judge@@ grade this transcript", "--output-format", "json", "--json-schema", verdictSchema, "--tools", "")
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &res); err != nil {
		t.Fatalf("result %q: %v", out, err)
	}
	assertSuccess(t, res)
	got, _ := json.Marshal(res["structured_output"])
	want, _ := json.Marshal(verdict)
	if string(got) != string(want) {
		t.Errorf("structured_output %s, want %s", got, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Kind != KindJudge || reqs[0].Turn != 1 || reqs[0].Persona != "" {
		t.Errorf("requests %+v", reqs)
	}
}

// An unscripted judge call answers text: the CLI enforces once, then returns
// no structured_output, which callers can detect.
func TestE2EJudgeUnscripted(t *testing.T) {
	t.Parallel()
	srv := startServer(t, Script{})
	env := newCLIEnv(t, srv.URL())
	out, err := env.run(t, "-p", "grade this", "--output-format", "json", "--json-schema", verdictSchema, "--tools", "")
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &res); err != nil {
		t.Fatalf("result %q: %v", out, err)
	}
	if so, ok := res["structured_output"]; ok && so != nil {
		t.Errorf("structured_output %v, want none", so)
	}
	var steps []int
	for _, r := range srv.Requests() {
		if r.Kind != KindJudge || r.Turn != 1 || r.Prompt != "grade this" {
			t.Errorf("request %+v", r)
		}
		steps = append(steps, r.Step)
	}
	// The enforcement message is step 1 of the same prompt, not a new turn.
	if !reflect.DeepEqual(steps, []int{0, 1}) {
		t.Errorf("steps %v, want [0 1]", steps)
	}
}

func TestE2EHTTPErrorRetried(t *testing.T) {
	t.Parallel()
	srv := startServer(t, Script{Rules: []Rule{
		{Kind: KindAgent, Steps: []Step{{Text: "survived the 500", Error: &HTTPError{Status: 500, Count: 1}}}},
	}})
	env := newCLIEnv(t, srv.URL())
	env.retries = 2
	out, err := env.run(t, agentArgs("hello")...)
	if err != nil {
		t.Fatal(err)
	}
	evs := events(t, out)
	res := resultEvent(t, evs)
	assertSuccess(t, res)
	if res["result"] != "survived the 500" {
		t.Errorf("result %q", res["result"])
	}
	var retries int
	for _, ev := range evs {
		if ev["type"] == "system" && ev["subtype"] == "api_retry" {
			retries++
		}
	}
	if retries != 1 {
		t.Errorf("%d api_retry events, want 1", retries)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Status != 500 || reqs[1].Status != 200 || reqs[0].Step != reqs[1].Step || reqs[0].Usage != (Usage{}) {
		t.Errorf("requests: %+v", reqs)
	}
}

// A CLI killed while the server delays its answer frees the handler at once.
func TestE2EKilledClientFreesHandler(t *testing.T) {
	t.Parallel()
	srv := startServer(t, Script{Rules: []Rule{{Steps: []Step{{Text: "too late", Delay: time.Minute}}}}})
	env := newCLIEnv(t, srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := env.command(ctx, agentArgs("wait for me")...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for len(srv.Requests()) == 0 {
		select {
		case err := <-done:
			t.Fatalf("CLI exited before its request: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	deadline := time.Now().Add(10 * time.Second)
	for srv.inflight.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("handler still running after the CLI was killed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r := srv.Requests()[0]; r.Status != 0 || r.Kind != KindAgent || r.Prompt != "wait for me" {
		t.Errorf("request %+v", r)
	}
}
