package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/result"
)

// Without claude on PATH, the pinned install in tools/node_modules/.bin (as
// `make tools` leaves it) beside the binary or in the working folder is
// used; PATH still wins, and a miss names every place looked.
func TestLocateClaudePinned(t *testing.T) {
	empty := t.TempDir()
	repo := t.TempDir()
	pinned := filepath.Join(repo, "tools", "node_modules", ".bin", "claude")
	if err := os.MkdirAll(filepath.Dir(pinned), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pinned, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + empty}
	p, how, err := locateClaude(env, []string{empty, repo})
	if err != nil || p != pinned || !strings.Contains(how, filepath.Join(repo, "tools")) {
		t.Fatalf("pinned: %q (%s), %v", p, how, err)
	}

	onPath := t.TempDir()
	if err := os.WriteFile(filepath.Join(onPath, "claude"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, how, err := locateClaude([]string{"PATH=" + onPath}, []string{repo}); err != nil || p != filepath.Join(onPath, "claude") || how != "PATH" {
		t.Errorf("PATH should win over tools/: %q (%s), %v", p, how, err)
	}

	_, _, err = locateClaude(env, []string{empty})
	if err == nil || !strings.Contains(err.Error(), "claude not found on PATH nor in tools/node_modules/.bin/claude") || !strings.Contains(err.Error(), "make tools") {
		t.Errorf("miss: %v", err)
	}
}

// The demo ends with commands that run the tool on one's own skill, named
// as the user invoked it, and says which claude they will use.
func TestNextSteps(t *testing.T) {
	got := nextSteps("./vibe-test", "/repo/tools/node_modules/.bin/claude", "the pinned install in /repo/tools")
	for _, want := range []string{
		"  ./vibe-test init ./path/to/your-skill ",
		"  ./vibe-test ./path/to/your-skill ",
		"ANTHROPIC_API_KEY",
		"claude: /repo/tools/node_modules/.bin/claude (found via the pinned install in /repo/tools",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if (IO{}).prog() != "vibe-test" {
		t.Errorf("default program name: %q", (IO{}).prog())
	}
}

// A run is finished, with nothing to resume, only when every conversation
// of every arm came to its end and the run recorded no error.
func TestFinished(t *testing.T) {
	done := func() *result.Run {
		return &result.Run{
			Status:        result.StatusCompleted,
			Conversations: []result.Conversation{{Index: 1, Status: result.StatusCompleted}, {Index: 2, Status: result.StatusBaselineFailed}},
			Fresh:         []result.Conversation{{Index: 1, Status: result.StatusCompleted}},
		}
	}
	if !finished(done()) {
		t.Error("a completed run should be finished")
	}
	interrupted := done()
	interrupted.Status, interrupted.Fresh[0].Status = result.StatusInterrupted, result.StatusInterrupted
	errored := done()
	errored.Error = "the API refused the credentials"
	budget := done()
	budget.Status, budget.Conversations[0].Status = result.StatusBudgetExhausted, result.StatusBudgetExhausted
	empty := done()
	empty.Conversations = nil
	for name, r := range map[string]*result.Run{"interrupted": interrupted, "errored": errored, "budget": budget, "no conversations": empty} {
		if finished(r) {
			t.Errorf("%s: has work left to resume", name)
		}
	}
	if !isDemoRun(&result.Run{Config: result.Config{Args: demoArgs([]string{"steady"})}}) || isDemoRun(&result.Run{Config: result.Config{Args: []string{"./demo"}}}) {
		t.Error("isDemoRun")
	}
}
