package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// fixture parses one recorded transcript (testdata/transcripts, made by
// TestRecord -record with the pinned CLI).
func fixture(t *testing.T, name string) (agent.Turn, recEntry) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "transcripts", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	turn, err := ParseTurn(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "transcripts", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx recIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	e, ok := idx.Transcripts[name+".jsonl"]
	if !ok {
		t.Fatalf("index.json has no %s.jsonl", name)
	}
	return turn, e
}

func names(t agent.Turn) []string {
	var out []string
	for _, c := range t.Calls {
		out = append(out, c.Name)
	}
	return out
}

// The recordings were made by the pinned CLI.
func TestFixturesVersion(t *testing.T) {
	for _, dir := range []string{filepath.Join("testdata", "transcripts"), filepath.Join("..", "scripted", "testdata", "gemini")} {
		b, err := os.ReadFile(filepath.Join(dir, "index.json"))
		if err != nil {
			t.Fatal(err)
		}
		if v := gjson.GetBytes(b, "gemini_cli_version").String(); v != VerifiedVersion {
			t.Errorf("%s was recorded with gemini %q, VerifiedVersion is %q", dir, v, VerifiedVersion)
		}
	}
}

// The pinned CLI is the verified one.
func TestPinnedVersionMatches(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "tools", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(b, `dependencies.@google/gemini-cli`).String(); got != VerifiedVersion {
		t.Fatalf("tools/package.json pins %q, VerifiedVersion is %q", got, VerifiedVersion)
	}
}

func TestParsePlainTurn(t *testing.T) {
	turn, e := fixture(t, "plain")
	if f := turn.Failure(e.Exit); f != "" {
		t.Fatalf("failure %q", f)
	}
	if turn.Text != "A plain answer, in two chunks." {
		t.Errorf("text %q: the deltas joined", turn.Text)
	}
	if turn.APICalls != 1 || len(turn.Calls) != 0 {
		t.Errorf("api calls %d, calls %d", turn.APICalls, len(turn.Calls))
	}
	if turn.ContextTokens != e.Context || e.Context == 0 {
		t.Errorf("context %d, the server sent %d", turn.ContextTokens, e.Context)
	}
	if turn.SessionID == "" || turn.Model != DefaultModel || len(turn.AnsweredBy) != 1 || turn.AnsweredBy[0] != DefaultModel {
		t.Errorf("session %q model %q answered by %v", turn.SessionID, turn.Model, turn.AnsweredBy)
	}
	want := Cost(DefaultModel, CallTokens{Prompt: turn.ContextTokens, Cached: turn.LastUsage.CacheRead, Output: turn.LastUsage.Output})
	if turn.CostUSD <= 0 || turn.CostUSD != want {
		t.Errorf("cost %v, want %v from the call's tokens", turn.CostUSD, want)
	}
}

// Every tool in claude's names, with the CLI's exact arguments and the
// results the model got (the stream has only display strings), the last
// call's text, and the context of the last of four calls.
func TestParseToolCalls(t *testing.T) {
	turn, e := fixture(t, "tools")
	if f := turn.Failure(e.Exit); f != "" {
		t.Fatalf("failure %q", f)
	}
	want := []string{"Bash", "Read", "Write", "Glob", "Grep", "Edit", "Read"}
	if got := names(turn); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("calls %v, want %v", got, want)
	}
	bash, missing, write, glob, edit, read := turn.Calls[0], turn.Calls[1], turn.Calls[2], turn.Calls[3], turn.Calls[5], turn.Calls[6]
	if !strings.Contains(bash.Result, "Exit Code: 3") || !strings.Contains(bash.Result, "oops") || bash.IsError {
		t.Errorf("bash result %q: the model sees the exit code; a failing command is no tool error", bash.Result)
	}
	if gjson.GetBytes(bash.Input, "command").String() == "" {
		t.Errorf("bash input %s", bash.Input)
	}
	if !missing.IsError || !strings.Contains(missing.Result, "File not found") || missing.Denied {
		t.Errorf("missing file: %+v", missing)
	}
	if gjson.GetBytes(write.Input, "file_path").String() != "b.txt" || gjson.GetBytes(write.Input, "content").String() == "" {
		t.Errorf("write input %s: the arguments as the model sent them", write.Input)
	}
	if !strings.Contains(glob.Result, "b.txt") {
		t.Errorf("glob result %q: the model-facing list, not the display line", glob.Result)
	}
	if edit.IsError || gjson.GetBytes(edit.Input, "new_string").String() != "new" {
		t.Errorf("edit %+v", edit)
	}
	if read.Result != "new line\n" {
		t.Errorf("read after the edit %q", read.Result)
	}
	for _, c := range turn.Calls {
		if !c.HasResult {
			t.Errorf("%s has no result", c.Name)
		}
	}
	if turn.Text != "All tools ran; the last answer." {
		t.Errorf("text %q: the last call's only", turn.Text)
	}
	if turn.APICalls != 4 || turn.ContextTokens != e.Context {
		t.Errorf("api calls %d, context %d (server %d)", turn.APICalls, turn.ContextTokens, e.Context)
	}
}

func TestParseSkillLoad(t *testing.T) {
	turn, e := fixture(t, "skill")
	a := Agent{}
	if !a.SkillLoaded(turn, skillName) {
		t.Fatalf("activate_skill(%s) not seen: %v", skillName, names(turn))
	}
	if a.SkillLoaded(turn, "other") {
		t.Error("another skill counted as loaded")
	}
	skill := turn.Calls[0]
	if skill.Name != "Skill" || gjson.GetBytes(skill.Input, "skill").String() != skillName {
		t.Errorf("skill call %s %s", skill.Name, skill.Input)
	}
	if !strings.Contains(skill.Result, skillBody) {
		t.Errorf("the skill's result is what the model got, its body: %q", skill.Result)
	}
	if turn.ContextTokens != e.Context {
		t.Errorf("context %d, server %d", turn.ContextTokens, e.Context)
	}
}

// A resumed turn reports its own call only, in the same session: the
// skill its session loaded at the turn before is not loaded by it.
func TestParseResumedTurn(t *testing.T) {
	first, _ := fixture(t, "plain")
	skill, _ := fixture(t, "skill")
	turn, e := fixture(t, "resumed")
	if turn.SessionID != first.SessionID || skill.SessionID != first.SessionID {
		t.Errorf("session %q, the resumed ones are %q and %q", first.SessionID, skill.SessionID, turn.SessionID)
	}
	if a := (Agent{}); !a.SkillLoaded(skill, skillName) || a.SkillLoaded(turn, skillName) {
		t.Errorf("skill loaded: at the skill turn %v, at the next %v", a.SkillLoaded(skill, skillName), a.SkillLoaded(turn, skillName))
	}
	if turn.APICalls != 1 || turn.ContextTokens != e.Context || turn.ContextTokens <= first.ContextTokens {
		t.Errorf("api calls %d, context %d (server %d, first turn %d)", turn.APICalls, turn.ContextTokens, e.Context, first.ContextTokens)
	}
}

// API errors after the CLI's retries: an error turn with the status (429
// from the exit code's 173, 500 from the message), the retries counted.
func TestParseAPIErrors(t *testing.T) {
	for name, status := range map[string]int{"err429": 429, "err500": 500} {
		turn, e := fixture(t, name)
		if e.Exit != status-256 {
			t.Errorf("%s: exit %d, the CLI exits with the status mod 256", name, e.Exit)
		}
		f := turn.Failure(e.Exit)
		if !turn.IsError || turn.APIErrorStatus != status || turn.TerminalReason != "api_error" || !strings.Contains(f, "HTTP") {
			t.Errorf("%s: status %d reason %q failure %q", name, turn.APIErrorStatus, turn.TerminalReason, f)
		}
		if turn.Retries != 1 {
			t.Errorf("%s: retries %d, want 1 (two attempts)", name, turn.Retries)
		}
	}
	turn, e := fixture(t, "retried")
	if turn.Failure(e.Exit) != "" || turn.Retries != 1 || turn.Text != "Answered after one retry." {
		t.Errorf("a 503 retried once: failure %q retries %d text %q", turn.Failure(e.Exit), turn.Retries, turn.Text)
	}
}

// A command outside a prefix grant is refused by the policy: denied; the
// granted one runs.
func TestParseDenied(t *testing.T) {
	turn, _ := fixture(t, "denied")
	if len(turn.Calls) != 2 || !turn.Calls[0].Denied || turn.Calls[1].Denied || turn.Calls[1].IsError {
		t.Fatalf("calls %+v", turn.Calls)
	}
}

// A turn stopped in the middle of a tool call: no result line (the CLI
// exits 0 on SIGTERM, the jail 143), the call without a result, the
// context of the call that asked for it from the session file.
func TestParseKilled(t *testing.T) {
	turn, e := fixture(t, "killed")
	if turn.HasResult || turn.Failure(0) == "" || turn.Failure(e.Exit) == "" {
		t.Fatalf("a killed turn must fail: %+v", turn)
	}
	if len(turn.Calls) != 1 || turn.Calls[0].HasResult || turn.Calls[0].Name != "Bash" {
		t.Errorf("calls %+v", turn.Calls)
	}
	if turn.ContextTokens != e.Context || e.Context == 0 {
		t.Errorf("context %d, server %d", turn.ContextTokens, e.Context)
	}
}

// A live session of three messages: each turn its own calls and context,
// in one session.
func TestParseLiveSession(t *testing.T) {
	var session string
	for i, name := range []string{"live-1", "live-2", "live-3"} {
		turn, e := fixture(t, name)
		if f := turn.Failure(0); f != "" {
			t.Fatalf("%s: %s", name, f)
		}
		if i == 0 {
			session = turn.SessionID
		}
		if turn.SessionID == "" || turn.SessionID != session {
			t.Errorf("%s: session %q, want %q", name, turn.SessionID, session)
		}
		if turn.ContextTokens != e.Context || e.Context == 0 {
			t.Errorf("%s: context %d, server %d", name, turn.ContextTokens, e.Context)
		}
		if turn.CostUSD <= 0 {
			t.Errorf("%s: no estimated cost", name)
		}
	}
	one, _ := fixture(t, "live-1")
	if !(Agent{}).SkillLoaded(one, skillName) || one.APICalls != 3 || one.Text != "Noted, as the skill says." {
		t.Errorf("live-1: calls %v, api calls %d, text %q", names(one), one.APICalls, one.Text)
	}
	if gjson.GetBytes(one.Calls[1].Input, "command").String() != "echo noted >> notes.log" {
		t.Errorf("live-1: bash input %s", one.Calls[1].Input)
	}
	two, _ := fixture(t, "live-2")
	if len(two.Calls) != 0 || two.APICalls != 1 {
		t.Errorf("live-2: calls %v api calls %d: nothing of turn 1", names(two), two.APICalls)
	}
	three, _ := fixture(t, "live-3")
	if got := strings.Join(names(three), ","); got != "Bash,Read,Write,Glob,Grep,Edit,Read" {
		t.Errorf("live-3: calls %s", got)
	}
	// The CLI wrote turn 1's tool calls again in place of turn 3's (see
	// turnRecords): none of them may show up here.
	for _, c := range three.Calls {
		if c.Name == "Skill" || strings.Contains(string(c.Input), "notes.log") {
			t.Errorf("live-3 carries a call of turn 1: %s %s", c.Name, c.Input)
		}
	}
	if three.APICalls != 4 {
		t.Errorf("live-3: api calls %d, want 4", three.APICalls)
	}
}

// Lines that are not JSON are counted, never fatal; an empty stream is a
// failed turn.
func TestParseDamaged(t *testing.T) {
	turn, err := ParseTurn(strings.NewReader("{\"type\":\"init\",\"session_id\":\"s\"}\nnot json\n{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"cut"))
	if err != nil {
		t.Fatal(err)
	}
	if turn.BadLines != 2 || turn.HasResult || turn.Failure(0) == "" || turn.SessionID != "s" {
		t.Errorf("%+v", turn)
	}
	turn, _ = ParseTurn(strings.NewReader(""))
	if turn.Failure(0) == "" {
		t.Error("an empty stream passed")
	}
}

// Exit 0 is not success (PROTOCOL §2.1): an error event, or a result with
// status error, fails the turn; a loop warning does not.
func TestParseStatusRules(t *testing.T) {
	cases := []struct {
		name, stream string
		fails        bool
		reason       string
	}{
		{"empty stream after retries",
			`{"type":"error","severity":"error","message":"Model stream ended without a finish reason."}` + "\n" + `{"type":"result","status":"error","stats":{}}`,
			true, "model_error"},
		{"loop detected",
			`{"type":"message","role":"assistant","content":"x","delta":true}` + "\n" + `{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}` + "\n" + `{"type":"result","status":"success","stats":{}}`,
			false, "loop_detected"},
		{"fetch failed",
			`{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: exception TypeError: fetch failed sending request]"},"stats":{}}`,
			true, "api_error"},
		{"acp rate limit",
			`{"jsonrpc":"2.0","id":3,"error":{"code":429,"message":"Rate limit exceeded. Try again later."}}`,
			true, "api_error"},
		{"acp end turn",
			`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}}}` + "\n" + `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`,
			false, ""},
		// A turn cut short is not a turn that finished (it passed).
		{"acp max tokens",
			`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"The answer is cut mid-sen"}}}}` + "\n" + `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"max_tokens"}}`,
			true, "max_tokens"},
		{"acp max turn requests",
			`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"max_turn_requests"}}`,
			true, "max_turn_requests"},
	}
	for _, c := range cases {
		turn, _ := ParseTurn(strings.NewReader(c.stream))
		if (turn.Failure(0) != "") != c.fails || turn.TerminalReason != c.reason {
			t.Errorf("%s: failure %q reason %q", c.name, turn.Failure(0), turn.TerminalReason)
		}
	}
	turn, _ := ParseTurn(strings.NewReader(cases[3].stream))
	if turn.APIErrorStatus != 429 {
		t.Errorf("acp 429: status %d", turn.APIErrorStatus)
	}
}

func TestStatusOfExit(t *testing.T) {
	for code, want := range map[int]int{173: 429, 244: 500, 247: 503, 144: 400, 145: 401, 0: 0, 1: 0, 41: 0, 143: 0} {
		if got := statusOfExit(code); got != want {
			t.Errorf("exit %d: status %d, want %d", code, got, want)
		}
	}
}

func FuzzParseTurn(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "transcripts", "*.jsonl"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		turn, err := ParseTurn(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range turn.Calls {
			if !json.Valid(c.Input) {
				t.Fatalf("call %s has input %q, not JSON", c.Name, c.Input)
			}
		}
	})
}

// Google refuses a bad key with 400 INVALID_ARGUMENT, reason
// API_KEY_INVALID: a refused credential (read as 401), not a plain error
// (400) nor, with no status at all, a transient one retried each turn.
func TestRefusedKeyStatus(t *testing.T) {
	for msg, want := range map[string]int{
		`[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}]`: 401,
		`[API Error: API key not valid. Please pass a valid API key. (Status: INVALID_ARGUMENT)]`:                                                                              401,
		`[API Error: {"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}]`:                                                    400,
		`[API Error: {"error":{"code":500,"message":"Internal error"}}]`:                                                                                                       500,
	} {
		if got := apiStatus(msg); got != want {
			t.Errorf("apiStatus(%.60s…) = %d, want %d", msg, got, want)
		}
	}
}
