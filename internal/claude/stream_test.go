package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// The transcripts in testdata/transcripts were recorded from the pinned CLI
// against the scripted server by `make fixtures` (scripted/cmd/record);
// index.json gives each one's exit code and the context size of its last
// call as the server sent it.
const fixtureDir = "testdata/transcripts"

type fixtureEntry struct {
	Exit    int   `json:"exit"`
	Context int64 `json:"context"`
}

func fixtureIndex(t testing.TB) map[string]fixtureEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, "index.json"))
	if err != nil {
		t.Fatalf("%v (regenerate with `make fixtures`)", err)
	}
	var idx struct {
		ClaudeVersion string                  `json:"claude_version"`
		Transcripts   map[string]fixtureEntry `json:"transcripts"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if !strings.HasPrefix(idx.ClaudeVersion, VerifiedVersion) {
		t.Errorf("fixtures were recorded with claude %q, the parser is verified on %s: run `make fixtures`", idx.ClaudeVersion, VerifiedVersion)
	}
	return idx.Transcripts
}

func parseFixture(t *testing.T, name string) Turn {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	turn, err := ParseTurn(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return turn
}

// resultLine decodes a transcript's result line on its own, as a second
// reader to compare the parser with.
func resultLine(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var ev map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev["type"] != "result" {
		t.Fatalf("%s: last line is not a result: %v", name, err)
	}
	return ev
}

// Every recorded transcript parses, and Failure's rule holds on each with
// the exit code the CLI gave it (index.json).
func TestParseEveryTranscript(t *testing.T) {
	idx := fixtureIndex(t)
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.jsonl"))
	if err != nil || len(files) < 20 {
		t.Fatalf("expected the recorded transcripts, found %d (%v)", len(files), err)
	}
	if len(files) != len(idx) {
		t.Errorf("%d transcripts, %d in index.json: run `make fixtures`", len(files), len(idx))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			e, ok := idx[name]
			if !ok {
				t.Fatal("not in index.json: run `make fixtures`")
			}
			turn := parseFixture(t, name)
			if turn.BadLines != 0 {
				t.Errorf("bad lines: %d", turn.BadLines)
			}
			if turn.SessionID == "" {
				t.Error("no session id")
			}
			// A signal (exit 128+n) leaves no result line.
			killed := e.Exit >= 128
			if turn.HasResult == killed {
				t.Errorf("HasResult = %v for exit %d", turn.HasResult, e.Exit)
			}
			if killed != strings.HasPrefix(name, "killed-") {
				t.Errorf("exit %d for a transcript named %s", e.Exit, name)
			}
			wantFail := e.Exit != 0
			if got := turn.Failure(e.Exit) != ""; got != wantFail {
				t.Errorf("Failure(%d) = %q, want failure=%v", e.Exit, turn.Failure(e.Exit), wantFail)
			}
			// A failed turn is a failure whatever exit code comes with it.
			if wantFail && turn.Failure(0) == "" && e.Exit < 128 {
				t.Errorf("Failure(0) is empty for a turn the CLI failed with exit %d", e.Exit)
			}
			for _, c := range turn.Calls {
				if c.Name == "" || c.ID == "" || !json.Valid(c.Input) {
					t.Errorf("malformed call %+v", c)
				}
			}
		})
	}
}

func TestParseToolCalls(t *testing.T) {
	turn := parseFixture(t, "tool-calls.jsonl")
	var names []string
	for _, c := range turn.Calls {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, ","), "Bash,Read,Glob,Grep,Edit,Write,Bash,Read"; got != want {
		t.Fatalf("calls in request order = %s, want %s", got, want)
	}
	if turn.APICalls != 3 {
		t.Errorf("APICalls = %d, want 3 (distinct message ids; num_turns says %v)", turn.APICalls, resultLine(t, "tool-calls.jsonl")["num_turns"])
	}
	// Results arrive in completion order but attach to their own call.
	if c := turn.Calls[0]; !c.HasResult || c.IsError || c.Result != "README.md\nextra.md\ngate\nnotes.txt\nsrc" {
		t.Errorf("Bash ls: %+v", c)
	}
	if c := turn.Calls[1]; !c.HasResult || c.IsError || !strings.Contains(c.Result, "first note") {
		t.Errorf("Read notes.txt: %+v", c)
	}
	if c := turn.Calls[6]; !c.IsError || c.Result != "Exit code 3\noops" {
		t.Errorf("failing Bash: %+v", c)
	}
	if c := turn.Calls[7]; !c.IsError || !strings.HasPrefix(c.Result, "File does not exist") {
		t.Errorf("missing Read: %+v", c)
	}
	// Context = the last call's input picture as the server sent it, not
	// the sum result.usage reports.
	want := fixtureIndex(t)["tool-calls.jsonl"].Context
	if want == 0 || turn.ContextTokens != want {
		t.Errorf("ContextTokens = %d, want %d (the last call's, per the server)", turn.ContextTokens, want)
	}
	res := resultLine(t, "tool-calls.jsonl")
	if sum := res["usage"].(map[string]any)["cache_creation_input_tokens"].(float64); int64(sum) <= turn.LastUsage.CacheCreation {
		t.Errorf("result.usage is a sum over 3 calls and should exceed the last call's: %v vs %d", sum, turn.LastUsage.CacheCreation)
	}
	if cost, _ := res["total_cost_usd"].(float64); turn.Text != "All tools done." || cost <= 0 || turn.CostUSD != cost {
		t.Errorf("text %q cost %v, result line says %v", turn.Text, turn.CostUSD, cost)
	}
}

func TestContextWithoutIterations(t *testing.T) {
	idx := fixtureIndex(t)
	for _, name := range []string{"usage-no-iterations.jsonl", "usage-partial-messages.jsonl"} {
		turn := parseFixture(t, name)
		// No iterations: the last assistant event's message_start usage.
		if turn.ContextTokens != idx[name].Context || turn.ContextTokens != turn.LastUsage.Context() || turn.APICalls != 2 {
			t.Errorf("%s: context %d, server sent %d, last usage %+v, %d calls", name, turn.ContextTokens, idx[name].Context, turn.LastUsage, turn.APICalls)
		}
	}
}

// With usage.iterations on the result line, its last "message" element
// is the context; the recording made it 1000 cache-read tokens larger than
// the last assistant event's usage, so the two sources differ.
func TestContextFromIterations(t *testing.T) {
	turn := parseFixture(t, "usage-iterations.jsonl")
	want := fixtureIndex(t)["usage-iterations.jsonl"].Context
	if want == 0 || turn.ContextTokens != want {
		t.Fatalf("context %d, want %d from usage.iterations", turn.ContextTokens, want)
	}
	its := resultLine(t, "usage-iterations.jsonl")["usage"].(map[string]any)["iterations"].([]any)
	if len(its) != 1 {
		t.Fatalf("iterations %v", its)
	}
	if cr := its[0].(map[string]any)["cache_read_input_tokens"].(float64); turn.LastUsage.CacheRead != int64(cr) {
		t.Errorf("LastUsage %+v is not the iterations element %v", turn.LastUsage, its[0])
	}
}

func TestParseResumeKeepsSession(t *testing.T) {
	idx := fixtureIndex(t)
	names := []string{"resume-turn1.jsonl", "resume-turn2.jsonl", "resume-turn3.jsonl"}
	var turns []Turn
	for _, n := range names {
		turns = append(turns, parseFixture(t, n))
	}
	a, b, c := turns[0], turns[1], turns[2]
	if a.SessionID != b.SessionID || b.SessionID != c.SessionID {
		t.Fatalf("session ids differ: %s %s %s", a.SessionID, b.SessionID, c.SessionID)
	}
	if !(a.ContextTokens < b.ContextTokens && b.ContextTokens < c.ContextTokens) {
		t.Errorf("context should grow over resumed turns: %d %d %d", a.ContextTokens, b.ContextTokens, c.ContextTokens)
	}
	for i, n := range names {
		if turns[i].ContextTokens != idx[n].Context || turns[i].APICalls != 2 {
			t.Errorf("%s: context %d, server sent %d; %d calls (a resumed turn counts only its own)", n, turns[i].ContextTokens, idx[n].Context, turns[i].APICalls)
		}
	}
	missing := parseFixture(t, "resume-missing-session.jsonl")
	if !missing.IsError || len(missing.Errors) != 1 || !strings.Contains(missing.Errors[0], "No conversation found") {
		t.Errorf("unknown session: %+v", missing)
	}
}

func TestParseAPIErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		reason string
	}{
		{"api-error-401.jsonl", 401, "api_error"},
		{"api-error-429.jsonl", 429, "api_error"},
		{"api-error-500.jsonl", 500, "api_error"},
		{"api-error-529.jsonl", 529, "api_error"},
		{"api-error-400-prompt-too-long.jsonl", 400, "prompt_too_long"},
	} {
		name, status, reason := tc.name, tc.status, tc.reason
		turn := parseFixture(t, name)
		if !turn.IsError || turn.APIErrorStatus != status || turn.TerminalReason != reason {
			t.Errorf("%s: error %v status %d reason %q", name, turn.IsError, turn.APIErrorStatus, turn.TerminalReason)
		}
		if turn.APICalls != 0 {
			t.Errorf("%s: the synthetic error message is not an API call: %d", name, turn.APICalls)
		}
		if f := turn.Failure(1); !strings.Contains(f, fmt.Sprintf("HTTP %d", status)) {
			t.Errorf("%s: Failure = %q", name, f)
		}
	}
	// CLAUDE_CODE_MAX_RETRIES=1: one retry before giving up (529 too).
	for _, name := range []string{"api-error-401.jsonl", "api-error-429.jsonl", "api-error-500.jsonl", "api-error-529.jsonl"} {
		if r := parseFixture(t, name).Retries; r != 1 {
			t.Errorf("%s: %d retries, want 1", name, r)
		}
	}
}

func TestParseKilled(t *testing.T) {
	for _, name := range []string{"killed-midtool-sigkill.jsonl", "killed-midtool-sigterm.jsonl"} {
		k := parseFixture(t, name)
		if k.HasResult || len(k.Calls) != 1 || k.Calls[0].Name != "Bash" {
			t.Fatalf("%s: %+v", name, k)
		}
		// SIGTERM: the CLI kills the tool and reports it; SIGKILL: nothing.
		term := strings.Contains(name, "sigterm")
		if c := k.Calls[0]; c.HasResult != term || (term && (!c.IsError || c.Result != "Exit code 137")) {
			t.Errorf("%s: tool call %+v", name, c)
		}
	}
	for _, name := range []string{"killed-midstream-sigterm.jsonl", "killed-midstream-sigterm-partial-messages.jsonl"} {
		k := parseFixture(t, name)
		if k.HasResult || len(k.Calls) != 0 || k.APICalls != 0 || k.Failure(143) == "" {
			t.Errorf("%s: %+v", name, k)
		}
	}
}

func TestParseLimits(t *testing.T) {
	mt := parseFixture(t, "max-turns.jsonl")
	if mt.TerminalReason != "max_turns" || !mt.IsError || mt.APICalls != 1 || len(mt.Errors) != 1 || mt.Failure(1) == "" {
		t.Errorf("max turns: %+v", mt)
	}
	mb := parseFixture(t, "max-budget.jsonl")
	if mb.TerminalReason != "budget_exhausted" || !mb.IsError || len(mb.Errors) != 1 || mb.CostUSD <= 0 {
		t.Errorf("max budget: %+v", mb)
	}
	// The budget is checked after the call: the pending tool never ran.
	if len(mb.Calls) != 1 || mb.Calls[0].HasResult {
		t.Errorf("max budget: calls %+v", mb.Calls)
	}
}

func TestParseSkillsAndPermissions(t *testing.T) {
	skill := parseFixture(t, "skill-invoked.jsonl")
	var in struct{ Skill, Args string }
	if len(skill.Calls) != 1 || skill.Calls[0].Name != "Skill" || json.Unmarshal(skill.Calls[0].Input, &in) != nil ||
		in.Skill != "stock-ledger" || in.Args != "--check" || !skill.Calls[0].HasResult || skill.Calls[0].IsError {
		t.Errorf("skill call: %+v (input %s)", skill.Calls, skill.Calls[0].Input)
	}
	found := false
	for _, s := range skill.Skills {
		found = found || s == "stock-ledger"
	}
	if !found {
		t.Errorf("init skills %v lack the project skill", skill.Skills)
	}
	unknown := parseFixture(t, "skill-unknown.jsonl")
	if len(unknown.Calls) != 1 || !unknown.Calls[0].IsError || !strings.Contains(unknown.Calls[0].Result, "Unknown skill: no-such-skill") {
		t.Errorf("unknown skill: %+v", unknown.Calls)
	}
	denied := parseFixture(t, "permission-denied.jsonl")
	var n int
	for _, c := range denied.Calls {
		if c.Denied {
			n++
			if !c.IsError {
				t.Errorf("denied call without an error result: %+v", c)
			}
		}
	}
	if n != 2 || denied.Failure(0) != "" {
		t.Errorf("permission denied: %d denied (want Write and Bash), failure %q", n, denied.Failure(0))
	}
}

func TestParseStructuredOutput(t *testing.T) {
	so := parseFixture(t, "json-schema-stream.jsonl")
	if string(so.StructuredOutput) != `{"score":7,"verdict":"pass"}` || so.Failure(0) != "" {
		t.Errorf("structured_output %s, failure %q", so.StructuredOutput, so.Failure(0))
	}
	retry := parseFixture(t, "json-schema-invalid-then-valid.jsonl")
	if string(retry.StructuredOutput) != `{"score":2,"verdict":"fail"}` || len(retry.Calls) != 2 || !retry.Calls[0].IsError || retry.Calls[1].IsError {
		t.Errorf("invalid then valid: %s, calls %+v", retry.StructuredOutput, retry.Calls)
	}
	// The model never calls the tool: the CLI reports success without
	// structured_output, which only an explicit check catches.
	never := parseFixture(t, "json-schema-never-calls-tool.jsonl")
	if len(never.StructuredOutput) != 0 || never.IsError || never.Failure(0) != "" || never.APICalls != 2 {
		t.Errorf("never calls the tool: %+v", never)
	}
}

func TestParseTruncatedLine(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fixtureDir, "tool-calls.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cut := b[:len(b)-200] // the result line, cut mid-line
	turn, err := ParseTurn(strings.NewReader(string(cut)))
	if err != nil {
		t.Fatal(err)
	}
	if turn.HasResult || turn.BadLines != 1 || turn.Failure(0) == "" || len(turn.Calls) != 8 {
		t.Fatalf("cut stream: result=%v bad=%d calls=%d", turn.HasResult, turn.BadLines, len(turn.Calls))
	}
}

func FuzzParseTurn(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.jsonl"))
	if len(files) < 20 {
		f.Fatalf("expected the recorded transcripts as seeds, found %d (run `make fixtures`)", len(files))
	}
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		turn, err := ParseTurn(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if turn.ContextTokens != turn.LastUsage.Context() {
			t.Fatal("context differs from the last usage")
		}
		_ = turn.Failure(0)
	})
}

// The skill signal counts a successful call of the named skill only; the
// model that answered is read from each API call.
func TestSkillUseAndAnsweredBy(t *testing.T) {
	turn := parseFixture(t, "skill-invoked.jsonl")
	if ok, denied := turn.SkillUse("stock-ledger"); !ok || len(denied) != 0 {
		t.Errorf("skill-invoked: invoked %v denied %v, want true and none", ok, denied)
	}
	if ok, _ := turn.SkillUse("another-skill"); ok {
		t.Error("a call for another skill counted as the skill under test")
	}
	if strings.Join(turn.AnsweredBy, ",") != "claude-opus-5-5" || turn.Model != "claude-opus-5-5" {
		t.Errorf("model %q answered by %v", turn.Model, turn.AnsweredBy)
	}

	// A denied Skill call (allowed-tools without Skill allowed, PROTOCOL.md
	// §9), an errored one, and one that never got a result.
	lines := []string{
		`{"type":"system","subtype":"init","session_id":"s","model":"claude-opus-5-5"}`,
		`{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"t1","name":"Skill","input":{"skill":"at"}},{"type":"tool_use","id":"t2","name":"Skill","input":{"skill":"at"}}]}}`,
		`{"type":"system","subtype":"permission_denied","tool_name":"Skill","tool_use_id":"t1"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"Execute skill: at","is_error":true}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"<tool_use_error>Unknown skill: at</tool_use_error>","is_error":true}]}}`,
		`{"type":"assistant","message":{"id":"m2","model":"claude-haiku-4-5","content":[{"type":"tool_use","id":"t3","name":"Skill","input":{"skill":"at"}}]}}`,
		`{"type":"result","is_error":false,"permission_denials":[{"tool_name":"Skill","tool_use_id":"t3"}]}`,
	}
	turn, err := ParseTurn(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	ok, denied := turn.SkillUse("at")
	if ok || len(denied) != 2 || denied[0] != 1 || denied[1] != 3 {
		t.Errorf("invoked %v denied %v, want false and calls 1 and 3", ok, denied)
	}
	if strings.Join(turn.AnsweredBy, ",") != "claude-opus-5-5,claude-haiku-4-5" {
		t.Errorf("answered by %v", turn.AnsweredBy)
	}
}

func TestAgentTools(t *testing.T) {
	got := AgentTools([]string{"Bash", "Bash(git diff:*)", "WebFetch"}, []string{"WebFetch", "mcp__x__y"})
	want := "Bash Read Edit Write Glob Grep Skill Bash(git diff:*) WebFetch mcp__x__y"
	if strings.Join(got, " ") != want {
		t.Errorf("tools %q", got)
	}
	args := AgentArgs("p", "", "m", got)
	if strings.Join(args, "|") != "-p|p|--output-format|stream-json|--verbose|--setting-sources|project|--strict-mcp-config|--allowedTools|Bash|Read|Edit|Write|Glob|Grep|Skill|Bash(git diff:*)|WebFetch|mcp__x__y|--model|m" {
		t.Errorf("argv %q", args)
	}
	ng := NotGranted([]string{"Bash(git:*)", "WebFetch", "mcp__github__create_issue", "TodoWrite"})
	if len(ng) != 2 || !strings.HasPrefix(ng[0], "mcp__github__create_issue (an MCP tool") || !strings.HasPrefix(ng[1], "TodoWrite (claude 2.1.328 has no tool") {
		t.Errorf("not granted %q", ng)
	}
}

// The skill's allowed-tools the run grants session-wide while nothing else
// would (FINDINGS §7: the CLI grants them from the Skill call to the end
// of that turn), and the calls that ran on that grant outside the window.
func TestSessionWideGrant(t *testing.T) {
	got := SessionWide([]string{"Bash(git:*)", "Read", "WebFetch", "NotebookEdit", "WebSearch(x)", "Grep(y)"}, []string{"NotebookEdit", "Bash(npm:*)"})
	if strings.Join(got, " ") != "WebFetch WebSearch(x)" {
		t.Errorf("session-wide %q, want what neither the base tools nor --allowed-tools hold", got)
	}
	call := func(id, name, input string) ToolCall {
		return ToolCall{ID: id, Name: name, Input: json.RawMessage(input), HasResult: true}
	}
	denied := call("d", "WebFetch", `{}`)
	denied.Denied = true
	failed := call("f", "Skill", `{"skill":"docs"}`)
	failed.IsError = true
	turn := Turn{Calls: []ToolCall{
		call("a", "WebFetch", `{"url":"u"}`), // before the Skill call: on the session-wide grant
		denied,                               // denied: did not run on it
		call("b", "Bash", `{"command":"ls"}`),
		failed,                                  // a failed Skill call opens no window
		call("c", "WebSearch", `{"query":"q"}`), // still before
		call("s", "Skill", `{"skill":"/docs"}`), // the window opens
		call("e", "WebFetch", `{"url":"u"}`),    // inside it
	}}
	if got := turn.OutsideSkillGrant([]string{"docs", ""}, []string{"WebFetch", "WebSearch(x)"}); fmt.Sprint(got) != "[1 5]" {
		t.Errorf("outside the grant: %v, want calls 1 and 5", got)
	}
	if got := (Turn{Calls: turn.Calls[:1]}).OutsideSkillGrant([]string{"docs"}, nil); got != nil {
		t.Errorf("nothing session-wide, yet %v", got)
	}
}

// ResolveModel asks the real CLI, with no model call: the API address is
// a closed port, so any request would fail the resolution.
func TestResolveModel(t *testing.T) {
	bin := testenv.Claude(t)
	home, tmp := t.TempDir(), t.TempDir()
	// TMPDIR as a run's cold calls have theirs: the CLI left fswatch
	// probes in the machine's /tmp/claude-<uid>.
	c := Caller{Binary: bin, Timeout: time.Minute, Grace: time.Second, Env: func(string) []string {
		return Env([]string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "ANTHROPIC_API_KEY=sk-x"},
			EnvOptions{Home: home, ConfigDir: filepath.Join(home, ".claude"), Extra: []string{"CLAUDE_CODE_MAX_RETRIES=0", "TMPDIR=" + tmp}})
	}}
	for in, want := range map[string]string{"": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "claude-x-1": "claude-x-1"} {
		got, err := c.ResolveModel(context.Background(), in)
		if err != nil || got != want {
			t.Errorf("ResolveModel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// A /compact (recorded from the pinned CLI) is a success with no model
// call of the turn's own: its compact_boundary and the result's
// local_command say the session was compacted, and how far.
func TestParseCompaction(t *testing.T) {
	turn := parseFixture(t, "compact.jsonl")
	if turn.LocalCommand != "compact" || len(turn.Compactions) != 1 || turn.Failure(0) != "" {
		t.Fatalf("local command %q, compactions %+v, failure %q", turn.LocalCommand, turn.Compactions, turn.Failure(0))
	}
	c := turn.Compactions[0]
	if c.Trigger != "manual" || c.PreTokens <= c.PostTokens || c.PostTokens <= 0 {
		t.Errorf("compaction %+v: expected a manual one that shrank the context", c)
	}
	if turn.APICalls != 0 || turn.ContextTokens != 0 || turn.CostUSD <= 0 {
		t.Errorf("api calls %d, context %d, cost %v: the summary calls are the CLI's, the cost the session's running total", turn.APICalls, turn.ContextTokens, turn.CostUSD)
	}
	if plain := parseFixture(t, "tool-calls.jsonl"); plain.LocalCommand != "" || plain.Compactions != nil {
		t.Errorf("an ordinary turn: %q %+v", plain.LocalCommand, plain.Compactions)
	}
}

// A context: fork skill runs as a sub-agent (recorded: fork-skill.jsonl).
// Its tool calls reach the stream tagged with the Skill call's id, between
// that call and its result; they are the skill's steps, so the turn keeps
// them, in order and marked, while the main agent's own count, API calls
// and context stay its own.
func TestSubagentCallsParsed(t *testing.T) {
	turn := parseFixture(t, "fork-skill.jsonl")
	var got []string
	for _, c := range turn.Calls {
		got = append(got, c.Name+"<"+c.Agent+">")
		if !c.HasResult || c.IsError {
			t.Errorf("%s: result %v error %v", c.Name, c.HasResult, c.IsError)
		}
	}
	if strings.Join(got, " ") != "Skill<> Bash<general-purpose> Read<general-purpose>" {
		t.Fatalf("calls %v, want the Skill call then its sub-agent's Bash and Read", got)
	}
	skill := turn.Calls[0]
	for _, c := range turn.Calls[1:] {
		if c.Parent != skill.ID {
			t.Errorf("%s: parent %q, want the Skill call %q", c.Name, c.Parent, skill.ID)
		}
	}
	if skill.Parent != "" || !strings.Contains(skill.Result, `Skill "ledger-audit" completed (forked execution)`) {
		t.Errorf("skill call %+v", skill)
	}
	if !strings.Contains(string(turn.Calls[1].Input), "census.sh") || turn.Calls[1].Result != "total 42" {
		t.Errorf("sub-agent's Bash: %s -> %q", turn.Calls[1].Input, turn.Calls[1].Result)
	}
	// The sub-agent made three API calls; its last answered with text only,
	// which never reaches the stream.
	if turn.OwnCalls() != 1 || turn.APICalls != 2 || turn.SubagentAPICalls != 2 || len(turn.SubagentModels) != 1 {
		t.Errorf("own calls %d, API calls %d + %d sub-agent (%v)", turn.OwnCalls(), turn.APICalls, turn.SubagentAPICalls, turn.SubagentModels)
	}
	if ok, _ := turn.SkillUse("ledger-audit"); !ok || turn.Text != "The audit found a total of 42." {
		t.Errorf("skill invoked %v, text %q", ok, turn.Text)
	}
	if len(turn.AnsweredBy) != 1 {
		t.Errorf("answered by %v: the sub-agent's model counted as the agent's", turn.AnsweredBy)
	}
}

// A skill's frontmatter hooks, printed with HookEvents (recorded:
// skill-hooks.jsonl): each run is kept, in order, with its outcome.
func TestHookRunsParsed(t *testing.T) {
	turn := parseFixture(t, "skill-hooks.jsonl")
	if fmt.Sprint(turn.Hooks) != "[{PostToolUse:Bash success 0} {Stop success 0}]" {
		t.Errorf("hooks %v, want the PostToolUse after the Bash call and the Stop at the end", turn.Hooks)
	}
	if ok, _ := turn.SkillUse("hooked-ledger"); !ok || turn.Failure(0) != "" {
		t.Errorf("skill invoked %v, failure %q", ok, turn.Failure(0))
	}
}
