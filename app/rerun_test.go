package app

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/demo"
	"github.com/vibe-test/vibe-test/result"
	"github.com/vibe-test/vibe-test/scripted"
)

// holdOnce is a turn whose first Bash call blocks until the process is
// stopped, while every later try of the turn (the file it leaves says one
// ran) goes straight on. The turn's prompt is already in the session file
// when it blocks.
func holdOnce(turn int) scripted.Rule {
	cmd := fmt.Sprintf("test -e .hold-%d || { : > .hold-%d; exec sleep 600; }", turn, turn)
	return scripted.Rule{Kind: scripted.KindAgent, Turns: []int{turn}, Steps: []scripted.Step{
		{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": cmd, "description": "wait for the file"}}}},
	}}
}

// TestEveryPromptSentOnce stops one conversation's turns in the four ways
// a turn is run again after the CLI saved its prompt: a timeout (turn 3,
// retried at once), API errors past the CLI's own retries (turn 6, rerun
// by vibe-test), SIGINT of vibe-test then resume (turn 4) and SIGKILL of
// vibe-test then resume (turn 7). The scripted server counts the prompt
// messages of every request: each must carry exactly as many as its turn
// number, so no prompt reached the model twice.
func TestEveryPromptSentOnce(t *testing.T) {
	t.Parallel()
	bin := vibeTestBinary(t)
	claudeBin := realCLI(t)
	srv, err := scripted.Start(faultScript(t,
		holdOnce(3), holdOnce(4), holdOnce(7),
		scripted.Rule{Kind: scripted.KindAgent, Turns: []int{6}, Pattern: "gaskets", Steps: followAfterError(529, 4)},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	files := t.TempDir()
	paths, err := demo.Materialize(files)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	env := append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+claudeBin, "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"))
	command := func(args ...string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		return cmd, &buf
	}
	// stopAt runs cmd until an agent request of prompt turn `turn` has been
	// answered (the CLI then runs the held Bash call), then sends sig.
	stopAt := func(cmd *exec.Cmd, buf *bytes.Buffer, turn int, sig syscall.Signal) {
		t.Helper()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for held := false; !held; {
			select {
			case err := <-done:
				t.Fatalf("vibe-test ended (%v) before turn %d was held\n%s", err, turn, buf)
			case <-tick.C:
			}
			for _, r := range srv.Requests() {
				if r.Kind == scripted.KindAgent && r.Turn == turn && r.Status == 200 && r.Step == 0 {
					held = true
				}
			}
		}
		time.Sleep(time.Second) // let the CLI start the held call
		_ = cmd.Process.Signal(sig)
		err := <-done
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if sig == syscall.SIGINT && cmd.ProcessState.ExitCode() != 130 || sig == syscall.SIGKILL && !(ok && ws.Signaled()) {
			t.Fatalf("after %s at turn %d: %v\n%s", sig, turn, err, buf)
		}
	}

	cmd, buf := command(paths.Skill, "--config", paths.Config, "--out", out, "--seed", "7", "--conversations", "1",
		// 30s: room for every other real turn on a loaded 2-core machine;
		// only the held turn 3 waits it out.
		"--concurrency", "1", "--max-retries", "1", "--retry-backoff", "200ms", "--turn-timeout", "30s")
	stopAt(cmd, buf, 4, syscall.SIGINT)
	cmd, buf = command("resume", out, "--retry-backoff", "200ms")
	stopAt(cmd, buf, 7, syscall.SIGKILL)
	cmd, buf = command("resume", out, "--retry-backoff", "200ms")
	if err := cmd.Run(); err != nil {
		t.Fatalf("last resume: %v\n%s", err, buf)
	}
	t.Logf("last resume:\n%s", buf)

	r, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var conv *result.Conversation
	for i := range r.Conversations {
		if r.Conversations[i].Control == "" {
			conv = &r.Conversations[i]
		}
	}
	if conv == nil || conv.Status != result.StatusCompleted || len(conv.Turns) != 10 {
		t.Fatalf("the conversation did not complete: %+v", conv)
	}
	promptsOnce(t, srv, conv)
	// Each rerun was cut back first, and the record says so.
	want := map[int]string{3: result.TurnTimedOut, 4: "resume", 6: result.TurnError, 7: "resume"}
	got := map[int]string{}
	for _, rw := range conv.Rewinds {
		got[rw.Turn] = rw.Reason
		if rw.RemovedBytes <= 0 || rw.RemovedLines <= 0 {
			t.Errorf("rewind %+v removed nothing", rw)
		}
	}
	for turn, reason := range want {
		if got[turn] != reason {
			t.Errorf("turn %d: rewind reason %q, want %q (rewinds %+v)", turn, got[turn], reason, conv.Rewinds)
		}
	}
	for _, tr := range conv.Turns {
		if tr.SessionBytes <= 0 {
			t.Errorf("turn %d: session_bytes %d", tr.Turn, tr.SessionBytes)
		}
	}
	rep, rbuf := command("report", out)
	_ = rep.Run()
	if !strings.Contains(rbuf.String(), "turn 7 ran again (resume)") {
		t.Errorf("the summary does not show the rewinds:\n%s", rbuf)
	}
}

// promptsOnce checks that every request of a completed conversation's
// session carries each turn's prompt once and in order: a request for turn
// k holds k prompt messages.
func promptsOnce(t *testing.T, srv *scripted.Server, conv *result.Conversation) {
	t.Helper()
	turnOf := map[string]int{}
	for _, tr := range conv.Turns {
		turnOf[tr.Prompt] = tr.Turn
	}
	seen := map[int]int{}
	for _, q := range srv.Requests() {
		if q.Kind != scripted.KindAgent || q.SessionID != conv.SessionID {
			continue
		}
		want, ok := turnOf[q.Prompt]
		if !ok {
			t.Errorf("conversation %d, request %d: newest prompt %.60q is no turn's prompt", conv.Index, q.Seq, q.Prompt)
			continue
		}
		if q.Turn != want {
			t.Errorf("conversation %d, request %d (turn %d's prompt, step %d) holds %d prompts: a prompt was sent twice", conv.Index, q.Seq, want, q.Step, q.Turn)
		}
		seen[want]++
	}
	for _, tr := range conv.Turns {
		if seen[tr.Turn] == 0 {
			t.Errorf("conversation %d: no request of its session carried turn %d's prompt", conv.Index, tr.Turn)
		}
	}
}
