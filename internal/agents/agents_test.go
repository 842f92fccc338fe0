package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/claude"
)

func TestCheck(t *testing.T) {
	for _, n := range Names {
		if err := Check("agent", n); err != nil {
			t.Errorf("Check(%q) = %v, want nil", n, err)
		}
	}
	err := Check("judge-agent", "cursor")
	if err == nil || !strings.Contains(err.Error(), `--judge-agent "cursor": expected one of claude, codex, gemini`) {
		t.Errorf("Check(cursor) = %v", err)
	}
}

func TestDefaultJudge(t *testing.T) {
	for _, c := range []struct {
		driven string
		env    []string
		want   string
	}{
		{Claude, nil, Claude},
		{Codex, []string{"OPENAI_API_KEY=k"}, Codex},
		{Codex, []string{"ANTHROPIC_API_KEY=k"}, Claude},
		{Gemini, []string{"OPENAI_API_KEY=k"}, Codex},
		{Gemini, []string{"GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:1"}, Gemini},
		{Gemini, nil, Claude}, // the author's own claude login
		{Codex, []string{"OPENAI_API_KEY="}, Claude},
	} {
		if got := DefaultJudge(c.driven, c.env); got != c.want {
			t.Errorf("DefaultJudge(%s, %v) = %s, want %s", c.driven, c.env, got, c.want)
		}
	}
}

func TestBaseURL(t *testing.T) {
	env := []string{"OPENAI_BASE_URL=http://127.0.0.1:9/", "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8", "ANTHROPIC_BASE_URL=http://127.0.0.1:7"}
	if got := BaseURL(Codex, env); got != "http://127.0.0.1:9" {
		t.Errorf("codex: %q", got)
	}
	if got := BaseURL(Gemini, env); got != "http://127.0.0.1:8" {
		t.Errorf("gemini: %q", got)
	}
	if got := BaseURL(Claude, env); got != "" {
		t.Errorf("claude: %q, want the CLI to read its own", got)
	}
}

func TestFindBinary(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, pinnedDir)
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	g := filepath.Join(bin, "gemini")
	if err := os.WriteFile(g, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := FindBinary(Gemini, []string{"PATH=/nonexistent"}, []string{root})
	if err != nil || got != g {
		t.Errorf("FindBinary(gemini) = %q, %v; want %q", got, err, g)
	}
	_, err = FindBinary(Codex, []string{"PATH=/nonexistent"}, []string{t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "VIBE_TEST_CODEX") {
		t.Errorf("FindBinary(codex) with none installed = %v, want advice naming VIBE_TEST_CODEX", err)
	}
}

// A failed turn names the CLI that ran it: the Gemini CLI's turns are
// parsed into claude's Turn, and once said "claude exited with code 3".
func TestFailureNamesItsCLI(t *testing.T) {
	for _, c := range []struct {
		agent string
		exit  int
		want  string
	}{
		{Claude, 3, "claude exited with code 3 and no result line"},
		{Gemini, 3, "gemini exited with code 3 and no result line"},
		{Codex, 3, "codex exited with code 3"},
	} {
		got := Failure(c.agent, claude.Turn{}, c.exit)
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("Failure(%s, no result, exit %d) = %q, want it to start %q", c.agent, c.exit, got, c.want)
		}
	}
	done := claude.Turn{HasResult: true}
	if got := Failure(Gemini, done, 41); got != "gemini exited with code 41" {
		t.Errorf("Failure(gemini, result, exit 41) = %q", got)
	}
}
