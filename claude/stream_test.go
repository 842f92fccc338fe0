package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
