package claude

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

func parseFixture(t *testing.T, name string) Turn {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.SharedDir(t), "transcripts", name))
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

// Every captured transcript parses, and the failure rule of PROTOCOL.md
// holds on each with the exit code the CLI gave it.
func TestParseEveryTranscript(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.SharedDir(t), "transcripts", "*.jsonl"))
	if err != nil || len(files) < 20 {
		t.Fatalf("expected the captured transcripts, found %d (%v)", len(files), err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			turn := parseFixture(t, name)
			if turn.BadLines != 0 {
				t.Errorf("bad lines: %d", turn.BadLines)
			}
			if turn.SessionID == "" {
				t.Error("no session id")
			}
			killed := strings.HasPrefix(name, "killed-")
			if turn.HasResult == killed {
				t.Errorf("HasResult = %v for a killed=%v transcript", turn.HasResult, killed)
			}
			// Exit codes the CLI gave each case (PROTOCOL.md §2 table).
			exit := 0
			switch {
			case strings.HasPrefix(name, "api-error"), name == "max-budget.jsonl",
				name == "max-turns.jsonl", name == "resume-missing-session.jsonl":
				exit = 1
			case strings.Contains(name, "sigkill"):
				exit = 137
			case killed:
				exit = 143
			}
			wantFail := exit != 0
			if got := turn.Failure(exit) != ""; got != wantFail {
				t.Errorf("Failure(%d) = %q, want failure=%v", exit, turn.Failure(exit), wantFail)
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
		t.Errorf("APICalls = %d, want 3 (distinct message ids; num_turns says 9)", turn.APICalls)
	}
	// Results arrive in completion order but attach to their own call.
	if c := turn.Calls[0]; !c.HasResult || c.IsError || c.Result != "README.md\nnotes.txt\nsrc" {
		t.Errorf("Bash ls: %+v", c)
	}
	if c := turn.Calls[6]; !c.IsError || c.Result != "Exit code 3\noops" {
		t.Errorf("failing Bash: %+v", c)
	}
	if c := turn.Calls[7]; !c.IsError || !strings.HasPrefix(c.Result, "File does not exist") {
		t.Errorf("missing Read: %+v", c)
	}
	// Context = the last call's input picture (301+3002+30003), not the sum
	// result.usage reports (603+6006+60009).
	if turn.ContextTokens != 301+3002+30003 {
		t.Errorf("ContextTokens = %d, want %d", turn.ContextTokens, 301+3002+30003)
	}
	if turn.Text != "All tools done." || turn.CostUSD != 0.0458838 {
		t.Errorf("text %q cost %v", turn.Text, turn.CostUSD)
	}
}

func TestContextWithoutIterations(t *testing.T) {
	turn := parseFixture(t, "usage-no-iterations.jsonl")
	// No iterations: the last assistant event's message_start usage.
	if turn.ContextTokens == 0 || turn.ContextTokens != turn.LastUsage.Context() {
		t.Fatalf("context %d, last usage %+v", turn.ContextTokens, turn.LastUsage)
	}
	partial := parseFixture(t, "usage-partial-messages.jsonl")
	if partial.ContextTokens == 0 || partial.APICalls == 0 {
		t.Fatalf("partial messages: %+v", partial)
	}
}

func TestParseResumeKeepsSession(t *testing.T) {
	a, b, c := parseFixture(t, "resume-turn1.jsonl"), parseFixture(t, "resume-turn2.jsonl"), parseFixture(t, "resume-turn3.jsonl")
	if a.SessionID != b.SessionID || b.SessionID != c.SessionID {
		t.Fatalf("session ids differ: %s %s %s", a.SessionID, b.SessionID, c.SessionID)
	}
	if !(a.ContextTokens < b.ContextTokens && b.ContextTokens < c.ContextTokens) {
		t.Errorf("context should grow over resumed turns: %d %d %d", a.ContextTokens, b.ContextTokens, c.ContextTokens)
	}
}

func TestParseErrors(t *testing.T) {
	turn := parseFixture(t, "api-error-429.jsonl")
	if !turn.IsError || turn.APIErrorStatus != 429 || turn.TerminalReason != "api_error" {
		t.Fatalf("429: %+v", turn)
	}
	if turn.APICalls != 0 {
		t.Errorf("the synthetic error message is not an API call: %d", turn.APICalls)
	}
	if f := turn.Failure(1); !strings.Contains(f, "HTTP 429") {
		t.Errorf("Failure = %q", f)
	}
	killed := parseFixture(t, "killed-midtool-sigkill.jsonl")
	if killed.HasResult || len(killed.Calls) != 1 || killed.Calls[0].HasResult {
		t.Errorf("sigkill mid-tool: %+v", killed)
	}
	skill := parseFixture(t, "skill-invoked.jsonl")
	if len(skill.Calls) == 0 || skill.Calls[0].Name != "Skill" || !strings.Contains(string(skill.Calls[0].Input), "probe-skill") {
		t.Errorf("skill call: %+v", skill.Calls)
	}
	denied := parseFixture(t, "permission-denied.jsonl")
	var n int
	for _, c := range denied.Calls {
		if c.Denied {
			n++
		}
	}
	if n == 0 || denied.Failure(0) != "" {
		t.Errorf("permission denied: %d denied, failure %q", n, denied.Failure(0))
	}
	so := parseFixture(t, "json-schema-stream.jsonl")
	if len(so.StructuredOutput) == 0 {
		t.Error("structured_output not read from the stream's result line")
	}
}

func TestParseTruncatedLine(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.SharedDir(t), "transcripts", "tool-calls.jsonl"))
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
	files, _ := filepath.Glob(filepath.Join(testenv.SharedDir(f), "transcripts", "*.jsonl"))
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
	if ok, denied := turn.SkillUse("probe-skill"); !ok || len(denied) != 0 {
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

// ResolveModel asks the real CLI, with no model call: the API address is
// a closed port, so any request would fail the resolution.
func TestResolveModel(t *testing.T) {
	bin := testenv.Claude(t)
	home := t.TempDir()
	c := Caller{Binary: bin, Timeout: time.Minute, Grace: time.Second, Env: func(string) []string {
		return Env([]string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "ANTHROPIC_API_KEY=sk-x"},
			EnvOptions{Home: home, ConfigDir: filepath.Join(home, ".claude"), Extra: []string{"CLAUDE_CODE_MAX_RETRIES=0"}})
	}}
	for in, want := range map[string]string{"": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "claude-x-1": "claude-x-1"} {
		got, err := c.ResolveModel(context.Background(), in)
		if err != nil || got != want {
			t.Errorf("ResolveModel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
