package fakeclaude

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

func TestRestringify(t *testing.T) {
	for in, want := range map[string]string{
		`{"command":"echo a \u003e\u003e ledger.log","description":"x"}`: `{"command":"echo a >> ledger.log","description":"x"}`,
		`{ "z": [1, 2.5, {"b": true, "a": null}], "a": "\u0026" }`:       `{"z":[1,2.5,{"b":true,"a":null}],"a":"&"}`,
		`{}`: `{}`,
	} {
		if got := string(restringify([]byte(in))); got != want {
			t.Errorf("restringify(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	o, err := parseArgs(append(claude.AgentArgs("hello there", "sid", "sonnet", []string{"Bash", "Bash(git diff:*)", "Skill"}), "--no-session-persistence"))
	if err != nil {
		t.Fatal(err)
	}
	if !o.print || o.prompt != "hello there" || o.resume != "sid" || o.model != "sonnet" || o.outputFormat != "stream-json" ||
		strings.Join(o.allowed, "|") != "Bash|Bash(git diff:*)|Skill" || !o.noPersist {
		t.Errorf("parsed %+v", o)
	}
	o, err = parseArgs(claude.StructuredArgs("judge", `{"title":"verdict"}`, ""))
	if err != nil || !o.toolsSet || len(o.tools) != 0 || o.jsonSchema == "" || o.prompt != "judge" {
		t.Errorf("cold call parsed %+v, %v", o, err)
	}
	if _, err := parseArgs([]string{"-p", "x", "--no-such-flag"}); err == nil || !strings.Contains(err.Error(), "unknown option") {
		t.Errorf("an unknown flag: %v", err)
	}
}

// run starts the built stand-in in dir with the server's address.
func run(t *testing.T, srv *scripted.Server, dir string, stdin string, args ...string) (claude.Turn, int, string) {
	t.Helper()
	cmd := exec.Command(testenv.FakeClaude(t), args...)
	cmd.Dir = dir
	home := filepath.Join(dir, ".home")
	cmd.Env = claude.Env([]string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-offline-placeholder"},
		claude.EnvOptions{Home: home, ConfigDir: filepath.Join(home, ".claude"), Extra: []string{"CLAUDE_CODE_MAX_RETRIES=1"}})
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	turn, perr := claude.ParseTurn(strings.NewReader(string(out)))
	if perr != nil {
		t.Fatal(perr)
	}
	return turn, code, string(out)
}

func start(t *testing.T, rules ...scripted.Rule) *scripted.Server {
	t.Helper()
	srv, err := scripted.Start(scripted.Script{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestResumeOfAMissingSessionFails(t *testing.T) {
	t.Parallel()
	srv := start(t)
	turn, code, _ := run(t, srv, t.TempDir(), "", claude.AgentArgs("hi", "00000000-0000-4000-8000-000000000000", "", claude.BaseTools)...)
	if code != 1 || !strings.Contains(turn.Failure(code), "No conversation found") || len(srv.Requests()) != 0 {
		t.Errorf("exit %d, failure %q, %d requests", code, turn.Failure(code), len(srv.Requests()))
	}
}

func TestDeniedAndRetried(t *testing.T) {
	t.Parallel()
	srv := start(t, scripted.Rule{Kind: scripted.KindAgent, Steps: []scripted.Step{
		{Error: &scripted.HTTPError{Status: 529, Count: 1},
			ToolUses: []scripted.ToolUse{{Name: "Write", Input: map[string]string{"file_path": "x.txt", "content": "x"}}}},
		{Text: "not allowed"},
	}})
	dir := t.TempDir()
	turn, code, _ := run(t, srv, dir, "", claude.AgentArgs("write it", "", "", []string{"Read"})...)
	if code != 0 || turn.Retries != 1 || len(turn.Calls) != 1 || !turn.Calls[0].Denied || turn.Text != "not allowed" {
		t.Errorf("exit %d, retries %d, calls %+v, text %q", code, turn.Retries, turn.Calls, turn.Text)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
		t.Error("a denied Write wrote its file")
	}
}

func TestAPIErrorGivenUp(t *testing.T) {
	t.Parallel()
	srv := start(t, scripted.Rule{Kind: scripted.KindAgent, Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 429, Count: 100}}}})
	turn, code, _ := run(t, srv, t.TempDir(), "", claude.AgentArgs("hi", "", "", claude.BaseTools)...)
	if code != 1 || !turn.IsError || turn.APIErrorStatus != 429 || turn.TerminalReason != "api_error" || len(srv.Requests()) != 2 {
		t.Errorf("exit %d, turn %+v, %d requests (want 2: one retry)", code, turn, len(srv.Requests()))
	}
}

// With --input-format stream-json, each stdin line is one prompt of the
// same session, answered with its own result; stdin's end ends the process.
func TestInteractiveSession(t *testing.T) {
	t.Parallel()
	srv := start(t, scripted.Rule{Kind: scripted.KindAgent, Steps: []scripted.Step{{Text: "ok"}}})
	in := `{"type":"user","message":{"role":"user","content":"first"}}` + "\n" +
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second"}]}}` + "\n"
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"}
	_, code, out := run(t, srv, t.TempDir(), in, args...)
	if code != 0 || strings.Count(out, `"type":"result"`) != 2 {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Turn != 1 || reqs[1].Turn != 2 || reqs[1].Prompt != "second" || reqs[0].SessionID != reqs[1].SessionID {
		t.Errorf("requests %+v", reqs)
	}
}

// SIGTERM in the middle of a Bash call ends the stand-in with 143 and
// takes the command's process group with it.
func TestSIGTERMMidTool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := start(t, scripted.Rule{Kind: scripted.KindAgent, Steps: []scripted.Step{
		{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]string{"command": "echo $$ > started; exec tail -f /dev/null"}}}},
	}})
	// Become the subreaper of orphans, so the Bash command (in its own
	// session) is reparented here when the stand-in exits.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenv.FakeClaude(t), claude.AgentArgs("wait", "", "", claude.BaseTools)...)
	cmd.Dir = dir
	home := filepath.Join(dir, ".home")
	cmd.Env = claude.Env([]string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-x"},
		claude.EnvOptions{Home: home, ConfigDir: filepath.Join(home, ".claude")})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Opening the FIFO blocks until the command has written its pid.
	f, err := os.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(f).ReadString('\n')
	f.Close()
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("pid %q: %v", line, err)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Errorf("exit after SIGTERM: %v, want 143", err)
	}
	// The command was reparented to this process (a subreaper), so its
	// death can be waited for: it must die of the stand-in's SIGKILL. Or
	// the stand-in reaped it itself between its kill and its exit (its
	// Bash goroutine waits on the command): then it is already gone.
	var ws syscall.WaitStatus
	_, err = syscall.Wait4(pid, &ws, 0, nil)
	switch {
	case errors.Is(err, syscall.ECHILD):
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("the Bash command %d is neither this process's child nor gone (kill -0: %v)", pid, err)
		}
	case err != nil:
		t.Fatalf("waiting for the Bash command %d: %v", pid, err)
	case !ws.Signaled() || ws.Signal() != syscall.SIGKILL:
		t.Errorf("the Bash command ended with %v, want killed by SIGKILL", ws)
	}
}

// /compact keeps the <summary> block of an answer that has one (no second
// try), and the session file is only appended to: cut back to its length
// before /compact, a resumed turn sees the whole conversation again.
func TestCompactSummaryAndCutBack(t *testing.T) {
	t.Parallel()
	srv := start(t,
		scripted.Rule{Kind: scripted.KindAgent, Contains: scripted.SummaryRequest, Steps: []scripted.Step{
			{Text: "<analysis>\nworking it out\n</analysis>\n\n<summary>\nThe user asked about gardens.\n</summary>"}}},
		scripted.Rule{Kind: scripted.KindAgent, Steps: []scripted.Step{{Text: "ok"}}})
	dir := t.TempDir()
	first, code, _ := run(t, srv, dir, "", claude.AgentArgs("about gardens", "", "", claude.BaseTools)...)
	if code != 0 {
		t.Fatalf("first turn: exit %d", code)
	}
	id := first.SessionID
	file := filepath.Join(sandbox.SessionDir(filepath.Join(dir, ".home", ".claude"), dir), id+".jsonl")
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, code, out := run(t, srv, dir, "", claude.AgentArgs("/compact", id, "", claude.BaseTools)...); code != 0 || !strings.Contains(out, `"local_command":"compact"`) {
		t.Fatalf("/compact: exit %d\n%s", code, out)
	}
	if _, code, _ := run(t, srv, dir, "", claude.AgentArgs("about tea", id, "", claude.BaseTools)...); code != 0 {
		t.Fatalf("after /compact: exit %d", code)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !strings.HasPrefix(reqs[1].Prompt, scripted.SummaryRequest) {
		t.Fatalf("want the turn, one summary call, the next turn; got %d requests", len(reqs))
	}
	next := string(reqs[2].Body)
	if !strings.Contains(next, scripted.Continuation) || !strings.Contains(next, `Summary:\nThe user asked about gardens.`) ||
		strings.Contains(next, "working it out") || strings.Contains(next, "about gardens\"") {
		t.Errorf("the turn after /compact does not start from the summary alone:\n%s", next)
	}

	after, err := os.ReadFile(file)
	if err != nil || !bytes.HasPrefix(after, before) {
		t.Fatalf("the session file was rewritten (%v)", err)
	}
	if err := os.WriteFile(file, before, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, code, _ := run(t, srv, dir, "", claude.AgentArgs("about bikes", id, "", claude.BaseTools)...); code != 0 {
		t.Fatalf("after the cut: exit %d", code)
	}
	last := srv.Requests()[3]
	if last.Turn != 2 || strings.Contains(string(last.Body), scripted.Continuation) {
		t.Errorf("after the cut back, turn %d (want 2, the uncompacted session); continuation present: %v",
			last.Turn, strings.Contains(string(last.Body), scripted.Continuation))
	}
}
