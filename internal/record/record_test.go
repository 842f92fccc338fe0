package record

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/redact"
)

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	r := &Run{SchemaVersion: SchemaVersion, Status: StatusCompleted, Conversations: []Conversation{{Index: 1, Status: StatusCompleted, Turns: []Turn{{Turn: 1, Kind: "base", Status: TurnOK, Verdict: &judge.Verdict{Result: judge.Pass}}}}}}
	if err := Save(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil || got.Conversations[0].Turns[0].Result() != judge.Pass {
		t.Fatalf("%v %+v", err, got)
	}
	if _, err := Load(filepath.Join(dir, "nope")); err == nil {
		t.Error("loaded a missing run")
	}
	if err := WriteJSON(filepath.Join(dir, "run.json"), map[string]int{"schema_version": 99}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("newer schema: %v", err)
	}
}

// A pre-release record (schema 1: no fresh arm) is refused in one line
// that says what to do, rather than decided on a design it cannot fit.
func TestLoadRefusesSchema1(t *testing.T) {
	dir := t.TempDir()
	if err := WriteJSON(filepath.Join(dir, "run.json"), map[string]int{"schema_version": 1}); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "schema_version 1 was written by a pre-release vibe-test") || !strings.Contains(err.Error(), "run the measurement again") {
		t.Errorf("schema 1: %v", err)
	}
}

// A sub-agent's calls are saved with the number of the call that started
// it, in the same list.
func TestCallsOfMarksSubagentCalls(t *testing.T) {
	calls := CallsOf(claude.Turn{Calls: []claude.ToolCall{
		{ID: "a", Name: "Read"}, {ID: "s", Name: "Skill"},
		{ID: "b", Name: "Bash", Parent: "s", Agent: "general-purpose"}, {ID: "c", Name: "Read", Parent: "s"},
	}}, nil)
	var got []string
	for _, c := range calls {
		got = append(got, fmt.Sprintf("%s:%d:%s", c.Name, c.SubagentOf, c.Agent))
	}
	if strings.Join(got, " ") != "Read:0: Skill:0: Bash:2:general-purpose Read:2:sub-agent" {
		t.Errorf("calls %v", got)
	}
}

// A result is redacted before it is cut to ResultChars: a secret across
// the cut, or a private key longer than the cut (its END line past it),
// is masked whole, not kept as the head the redactor no longer matched.
func TestCallsOfRedactsBeforeTheCut(t *testing.T) {
	secret := "Zq8vN3pL1xR7tY2wK9mB4cD6fH0jS5uA"
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + strings.Repeat("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n", 14) + "-----END OPENSSH PRIVATE KEY-----"
	r := redact.New(secret) // the key goes by its shape
	long := strings.Repeat("x", ResultChars-10) + "password=" + secret
	calls := CallsOf(claude.Turn{Calls: []claude.ToolCall{
		{ID: "a", Name: "Bash", Input: json.RawMessage(`{"command":"echo ` + secret + `"}`), Result: long},
		{ID: "b", Name: "Read", Result: key},
		{ID: "c", Name: "Read", Result: strings.Repeat("é", ResultChars)},
	}}, r.Bytes)
	for _, c := range calls {
		for _, part := range []string{secret[:8], "b3BlbnNzaC1rZXkt"} {
			if strings.Contains(c.Result, part) || strings.Contains(string(c.Input), part) {
				t.Errorf("%s keeps %q: result %q input %s", c.Name, part, c.Result, c.Input)
			}
		}
	}
	if !utf8.ValidString(calls[2].Result) || len(calls[2].Result) > ResultChars+len("…") {
		t.Errorf("a long result cut inside a character, or not cut: %d bytes", len(calls[2].Result))
	}
}

// A transcript path that leaves the run folder is refused as the record
// is read: rejudge would read the file it names and send it to the judge.
func TestTranscriptOutsideRefused(t *testing.T) {
	dir := t.TempDir()
	r := &Run{SchemaVersion: SchemaVersion, Status: StatusCompleted, Conversations: []Conversation{{Index: 1, Status: StatusCompleted,
		Turns: []Turn{{Turn: 1, Kind: "base", Status: TurnOK, Transcript: "conv-1/turn-01.jsonl"}, {Turn: 2, Kind: "filler", Status: TurnOK, Transcript: "../../.ssh/id_rsa"}}}}}
	if err := Save(dir, r); err != nil {
		t.Fatal(err)
	}
	_, err := Load(dir)
	want := `field "conversations[0].turns[1].transcript": "../../.ssh/id_rsa", expected a path inside the run folder`
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Load: %v, want one line with %s", err, want)
	}
}

// A secret inside a number of a tool call's input is masked without
// breaking the input's JSON: {"pin":[REDACTED]} made every later save of
// run.json fail. A missing input is {}.
func TestCallsOfKeepsInputsJSON(t *testing.T) {
	r := redact.New("31415926535")
	calls := CallsOf(claude.Turn{Calls: []claude.ToolCall{
		{ID: "a", Name: "Bash", Input: json.RawMessage(`{"pin":31415926535}`)},
		{ID: "b", Name: "Read"},
	}}, r.Bytes)
	for _, c := range calls {
		if !json.Valid(c.Input) || strings.Contains(string(c.Input), "31415926535") {
			t.Errorf("%s: input %s", c.Name, c.Input)
		}
	}
	if _, err := Encode(&Run{SchemaVersion: SchemaVersion, Conversations: []Conversation{{Turns: []Turn{{ToolCalls: calls}}}}}); err != nil {
		t.Errorf("run.json with these calls: %v", err)
	}
}

// A FIFO named run.json or suite.json is refused in one line: read, it
// blocked report, resume, rejudge, compare and merge for ever, Ctrl-C
// included.
func TestLoadRefusesAFIFO(t *testing.T) {
	for _, c := range []struct {
		file string
		load func(string) error
	}{
		{"run.json", func(d string) error { _, err := Load(d); return err }},
		{"suite.json", func(d string) error { _, err := LoadSuite(d); return err }},
	} {
		dir := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(dir, c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.load(dir) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "is a FIFO, expected a regular file") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s as a FIFO: %v", c.file, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s as a FIFO: still reading after 10 s", c.file)
		}
	}
}

// The CLIs that took part, by name, with their versions: claude only
// when it drove or judged, another agent's version under its own name.
func TestCLIs(t *testing.T) {
	v := Versions{Claude: "2.1.330", ClaudeVerified: "2.1.328", ClaudeMismatch: true,
		Agent: "0.150.0", AgentVerified: "0.171.0", JudgeAgent: "0.61.0", JudgeAgentVerified: "0.61.0"}
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"claude", Config{}, "claude 2.1.330 (2.1.328)!"},
		{"codex judged by codex", Config{Agent: "codex", JudgeAgent: "codex"}, "codex 0.150.0 (0.171.0)!"},
		{"codex judged by claude", Config{Agent: "codex"}, "claude 2.1.330 (2.1.328)! codex 0.150.0 (0.171.0)!"},
		{"claude judged by codex", Config{JudgeAgent: "codex"}, "claude 2.1.330 (2.1.328)! codex 0.150.0 (0.171.0)!"},
		{"codex judged by gemini", Config{Agent: "codex", JudgeAgent: "gemini"}, "codex 0.150.0 (0.171.0)! gemini 0.61.0 (0.61.0)"},
	} {
		var parts []string
		for _, cli := range v.CLIs(c.cfg) {
			p := cli.Name + " " + cli.Version + " (" + cli.Verified + ")"
			if cli.Mismatch {
				p += "!"
			}
			parts = append(parts, p)
		}
		if got := strings.Join(parts, " "); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
