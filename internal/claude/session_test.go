package claude

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// One interactive session with the real CLI: each Send is one user message
// answered by its own result, the next message reaches the model only after
// the previous result, a second invocation of the skill is answered
// "already loaded" (the body is not sent again), and a turn that times out
// ends the process.
func TestSessionOneMessageAtATime(t *testing.T) {
	t.Parallel()
	bin := testenv.Claude(t)
	skillCall := scripted.Step{ToolUses: []scripted.ToolUse{{Name: "Skill", Input: map[string]any{"skill": "notes"}}}}
	srv, err := scripted.Start(scripted.Script{Rules: []scripted.Rule{
		{Kind: scripted.KindAgent, Contains: "@@task@@", Steps: []scripted.Step{skillCall, {Text: "task done"}}},
		{Kind: scripted.KindAgent, Contains: "@@hold@@", Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": "exec sleep 600", "description": "wait"}}}},
		}},
		{Kind: scripted.KindAgent, Steps: []scripted.Step{{Text: "noted"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	work, home := t.TempDir(), t.TempDir()
	const body = "Write every note in the notes file, one per line."
	if err := os.MkdirAll(filepath.Join(work, ".claude", "skills", "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, ".claude", "skills", "notes", "SKILL.md"),
		[]byte("---\nname: notes\ndescription: Keeps notes in the notes file.\n---\n\n"+body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// TMPDIR in the test's folder: the CLI's task files went to the
	// machine's /tmp/claude-<uid> and stayed.
	env := Env([]string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-x", "TMPDIR=" + t.TempDir()},
		EnvOptions{Home: home, ConfigDir: filepath.Join(home, ".claude"), Extra: []string{"CLAUDE_CODE_MAX_RETRIES=0"}})
	s, err := StartSession(Invocation{Binary: bin, Args: InteractiveArgs("", "", BaseTools), Env: env, Dir: work, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	prompts := []string{"@@task@@ first", "a filler in between", "@@task@@ again"}
	var session string
	for i, p := range prompts {
		before := len(srv.Requests())
		var transcript bytes.Buffer
		out, err := s.Send(t.Context(), p, &transcript, time.Minute)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		if f := out.Turn.Failure(out.ExitCode); f != "" {
			t.Fatalf("turn %d failed: %s\n%s", i+1, f, s.Stderr())
		}
		if n := strings.Count(transcript.String(), `"type":"result"`); n != 1 {
			t.Errorf("turn %d: %d result events in its transcript, want 1", i+1, n)
		}
		if session == "" {
			session = out.Turn.SessionID
		} else if out.Turn.SessionID != session {
			t.Errorf("turn %d: session %s, want %s (one session)", i+1, out.Turn.SessionID, session)
		}
		// Every request made while this turn ran carries this turn's
		// prompt as its newest, after exactly i earlier prompts: nothing of
		// the next message arrived before this result.
		reqs := srv.Requests()[before:]
		if len(reqs) == 0 {
			t.Fatalf("turn %d made no request", i+1)
		}
		for _, q := range reqs {
			if q.Turn != i+1 || q.Prompt != p {
				t.Errorf("turn %d: request %d holds %d prompts, newest %q", i+1, q.Seq, q.Turn, q.Prompt)
			}
		}
		if i == 2 {
			last := string(reqs[len(reqs)-1].Body)
			if !strings.Contains(last, "already loaded above") {
				t.Errorf("turn 3: the second Skill call was not answered \"already loaded\"")
			}
			if n := strings.Count(last, body); n != 1 {
				t.Errorf("turn 3: the skill's body is in the request %d times, want 1 (from turn 1)", n)
			}
		}
	}

	var transcript bytes.Buffer
	out, err := s.Send(t.Context(), "@@hold@@ now", &transcript, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !out.TimedOut || out.Turn.HasResult || out.ExitCode == 0 {
		t.Errorf("held turn: timed out %v, result %v, exit %d; want a timeout that ended the process", out.TimedOut, out.Turn.HasResult, out.ExitCode)
	}
	if len(out.Turn.Calls) != 1 || out.Turn.Calls[0].Name != "Bash" {
		t.Errorf("held turn: calls %+v, want its Bash call kept", out.Turn.Calls)
	}
	if s.ProcessState() == nil {
		t.Errorf("the process still runs after a timed-out turn")
	}
	if _, err := s.Send(context.Background(), "anything", nil, time.Minute); err == nil {
		t.Errorf("Send after the process ended: no error")
	}
}

func TestInteractiveArgs(t *testing.T) {
	got := strings.Join(InteractiveArgs("sid", "m", []string{"Bash", "Skill"}), " ")
	want := "-p --input-format stream-json --output-format stream-json --verbose --setting-sources project --strict-mcp-config --allowedTools Bash Skill --resume sid --model m"
	if got != want {
		t.Errorf("InteractiveArgs:\n got %s\nwant %s", got, want)
	}
	if got := string(UserMessage("a \"b\"\n")); got != `{"message":{"content":"a \"b\"\n","role":"user"},"type":"user"}`+"\n" {
		t.Errorf("UserMessage: %s", got)
	}
}
