package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
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
	p, how, err := engine.LocateClaude(env, []string{empty, repo})
	if err != nil || p != pinned || !strings.Contains(how, filepath.Join(repo, "tools")) {
		t.Fatalf("pinned: %q (%s), %v", p, how, err)
	}

	onPath := t.TempDir()
	if err := os.WriteFile(filepath.Join(onPath, "claude"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, how, err := engine.LocateClaude([]string{"PATH=" + onPath}, []string{repo}); err != nil || p != filepath.Join(onPath, "claude") || how != "PATH" {
		t.Errorf("PATH should win over tools/: %q (%s), %v", p, how, err)
	}

	_, _, err = engine.LocateClaude(env, []string{empty})
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
	done := func() *record.Run {
		return &record.Run{
			Status:        record.StatusCompleted,
			Conversations: []record.Conversation{{Index: 1, Status: record.StatusCompleted}, {Index: 2, Status: record.StatusBaselineFailed}},
			Fresh:         []record.Conversation{{Index: 1, Status: record.StatusCompleted}},
		}
	}
	if !finished(done()) {
		t.Error("a completed run should be finished")
	}
	interrupted := done()
	interrupted.Status, interrupted.Fresh[0].Status = record.StatusInterrupted, record.StatusInterrupted
	errored := done()
	errored.Error = "the API refused the credentials"
	budget := done()
	budget.Status, budget.Conversations[0].Status = record.StatusBudgetExhausted, record.StatusBudgetExhausted
	empty := done()
	empty.Conversations = nil
	for name, r := range map[string]*record.Run{"interrupted": interrupted, "errored": errored, "budget": budget, "no conversations": empty} {
		if finished(r) {
			t.Errorf("%s: has work left to resume", name)
		}
	}
	if !demo.IsRun(&record.Run{Config: record.Config{Args: demo.Args([]string{"steady"})}}) || demo.IsRun(&record.Run{Config: record.Config{Args: []string{"./demo"}}}) {
		t.Error("demo.IsRun")
	}
}

// --keep-sandbox says where each kept sandbox is.
func TestKeptSandboxes(t *testing.T) {
	r := &record.Run{
		Conversations: []record.Conversation{{Index: 1, Sandbox: "/tmp/a/work"}, {Index: 2}},
		Controls:      []record.Conversation{{Index: 1, Control: record.ControlNoSkill, Sandbox: "/tmp/b/work"}},
	}
	got := engine.KeptSandboxes(r)
	want := "sandbox kept (conversation 1): /tmp/a/work\nsandbox kept (no-skill control 1): /tmp/b/work\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := engine.KeptSandboxes(&record.Run{}); !strings.Contains(got, "no sandbox was kept") {
		t.Errorf("none kept: %q", got)
	}
}

// `vibe-test help` and every command's --help: help, not a skill path; the
// usage lines aligned; each default said once; no project-internal words.
func TestHelp(t *testing.T) {
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), append([]string{"vibe-test"}, args...), IO{Env: []string{"PATH=" + t.TempDir()}, Stdout: &stdout, Stderr: &stderr})
		if code != 0 || stderr.Len() > 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
		return stdout.String()
	}
	top := run("help")
	if top != run("--help") || !strings.Contains(top, "COMMANDS:") {
		t.Errorf("`vibe-test help` differs from --help:\n%s", top)
	}
	usage := strings.SplitN(strings.SplitN(top, "USAGE:\n", 2)[1], "\n\n", 2)[0]
	for _, line := range strings.Split(usage, "\n") {
		if !strings.HasPrefix(line, "   vibe-test ") {
			t.Errorf("usage line not aligned: %q", line)
		}
	}
	pages := []string{top}
	for _, cmd := range []string{"run", "demo", "eval", "resume", "report", "rejudge", "compare", "init"} {
		pages = append(pages, run("help", cmd), run(cmd, "--help"))
	}
	for _, page := range pages {
		for _, line := range strings.Split(page, "\n") {
			if strings.Count(line, "(default") > 1 || strings.Contains(line, "default: 0)") {
				t.Errorf("default said twice or as a bare zero: %q", line)
			}
			if low := strings.ToLower(line); strings.Contains(low, "seed 0") || strings.Contains(low, "protocol.md") {
				t.Errorf("project-internal words: %q", line)
			}
		}
	}
}

// Under `make demo` claude comes from PATH, but only make's: the next step
// names the pinned install, which ./vibe-test finds without PATH.
func TestPinnedHow(t *testing.T) {
	if got := pinnedHow("/r/tools/node_modules/.bin/claude", "PATH"); got != "the pinned install in /r/tools" {
		t.Errorf("pinned on PATH: %q", got)
	}
	if got := pinnedHow("/usr/bin/claude", "PATH"); got != "PATH" {
		t.Errorf("a global claude: %q", got)
	}
}

// A run that cannot draft its tasks (the key is refused) stops at once with
// one line of advice, and `report` shows it as it ended: status error, the
// cause, exit 3, never "completed".
func TestDraftRefusedThenReport(t *testing.T) {
	t.Parallel()
	paths, err := demo.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	refused := []scripted.Step{{Error: &scripted.HTTPError{Status: 403, Count: 1000}}}
	script := scripted.Script{Rules: []scripted.Rule{{Kind: scripted.KindPlan, Steps: refused}, {Kind: scripted.KindRubric, Steps: refused}}}
	r := runAgainst(t, script, paths.Skill, "--out", out) // no vibe-test.yaml beside it: the tasks are drafted
	if r.code != 3 || !strings.Contains(r.stderr, "drafting the tasks: the API refused the credentials (HTTP 403)") || !strings.Contains(r.stderr, "ANTHROPIC_API_KEY") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	plans := map[string]bool{}
	for _, q := range r.srv.Requests() {
		if q.Kind == scripted.KindPlan {
			plans[q.SessionID] = true
		}
	}
	if len(plans) != 1 {
		t.Errorf("%d drafting calls, want 1", len(plans))
	}

	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "report", out}, IO{Env: []string{"PATH=" + t.TempDir()}, Stdout: &stdout, Stderr: &stderr})
	if code != 3 || !strings.Contains(stdout.String(), "status error") || !strings.Contains(stdout.String()+stderr.String(), "HTTP 403") {
		t.Errorf("report: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

// Only vibe-test's own repository is trusted to hold the pinned CLI in the
// working folder.
func TestIsVibeTestRepo(t *testing.T) {
	if !engine.IsVibeTestRepo("../..") {
		t.Error("the repository root is not recognised")
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/skill\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if engine.IsVibeTestRepo(other) || engine.IsVibeTestRepo(t.TempDir()) {
		t.Error("another folder is taken for the repository")
	}
}

// TestDraftedRunJSON: a run that drafts its tasks (no vibe-test.yaml) with
// --json prints one JSON object on stdout; the drafted tasks go to stderr.
func TestDraftedRunJSON(t *testing.T) {
	t.Parallel()
	paths, err := demo.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script, err := demo.Script([]string{"steady"}, false)
	if err != nil {
		t.Fatal(err)
	}
	r := runAgainst(t, script, paths.Skill, "--out", filepath.Join(t.TempDir(), "run"), "--conversations", "1", "--json", "--isolation", "none")
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("stdout is not one JSON object (%v):\n%s", err, r.stdout)
	}
	if !strings.Contains(r.stderr, "Drafted tasks") {
		t.Errorf("the drafted tasks are not on stderr:\n%s", r.stderr)
	}
}
