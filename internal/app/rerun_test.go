package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// holdOnce is a turn whose first Bash call blocks until the process is
// stopped, while every later try of the turn (the file it leaves says one
// ran) goes straight on. The turn's prompt is already in the session file
// when it blocks. The blocking call is `sleep <marker>` (sleepers finds
// it): a stop must take it along.
func holdOnce(turn int, marker string) scripted.Rule {
	cmd := fmt.Sprintf("test -e .hold-%d || { : > .hold-%d; exec sleep %s; }", turn, turn, marker)
	return scripted.Rule{Kind: scripted.KindAgent, Turns: []int{turn}, Steps: []scripted.Step{
		{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": cmd, "description": "wait for the file"}}}},
	}}
}

// savedInSession reports whether a session file under configDir's
// projects/ holds text.
func savedInSession(configDir, text string) bool {
	found := false
	_ = filepath.WalkDir(filepath.Join(configDir, "projects"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || filepath.Ext(path) != ".jsonl" {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(text)) {
			found = true
		}
		return nil
	})
	return found
}

// TestEveryPromptSentOnce stops one conversation's turns in the four ways
// a turn is run again after the CLI saved its prompt: a timeout (turn 3,
// retried at once), API errors past the CLI's own retries (turn 6, rerun
// by vibe-test), SIGINT of vibe-test then resume (turn 4) and SIGKILL of
// vibe-test then resume (turn 7), in both session modes (the timeout in
// interactive mode only); the real CLI's Bash calls held at turns 3, 4
// and 7 must not outlive their stops. The scripted
// server counts the prompt messages of every request: each must carry
// exactly as many as its turn number, and no prompt's text twice, so no
// prompt reached the model twice. In interactive mode each failed turn
// ends the process and the rerun resumes the session in a new one.
//
// The two modes are two top-level tests, not subtests: a parallel test's
// subtests queue behind every other parallel test of the package, and these
// are the package's longest (about a minute each, mostly waiting on turn
// timeouts), so as subtests they started last and set its end.
func TestEveryPromptSentOnce(t *testing.T) {
	t.Parallel()
	everyPromptSentOnce(t, claude.SessionInteractive)
}

// TestEveryPromptSentOnceResume is TestEveryPromptSentOnce in resume mode.
func TestEveryPromptSentOnceResume(t *testing.T) {
	t.Parallel()
	everyPromptSentOnce(t, claude.SessionResume)
}

func everyPromptSentOnce(t *testing.T, mode string) {
	bin := vibeTestBinary(t)
	claudeBin := realCLI(t)
	if mode == claude.SessionInteractive {
		// The subject is the conversation's live session; its fresh
		// probes' one-shot sessions run on the stand-in.
		claudeBin = realConversationCLI(t)
	}
	// 600 seconds and a fraction this test's own.
	marker := fmt.Sprintf("600.%d", time.Now().UnixNano()%1e9)
	faults := []scripted.Rule{holdOnce(4, marker), holdOnce(7, marker),
		{Kind: scripted.KindAgent, Turns: []int{6}, Pattern: "gaskets", Steps: followAfterError(529, 4)}}
	// The turn timeout is waited out in interactive mode only: the rerun
	// after it cuts the session file back by the same code in both modes,
	// and the wait is 30 s of the package's wall clock.
	timeout := mode == claude.SessionInteractive
	if timeout {
		faults = append(faults, holdOnce(3, marker))
	}
	srv, files, paths := startDemo(t, faultScript(t, faults...))
	out := filepath.Join(t.TempDir(), "run")
	// The second run is killed (SIGKILL): TMPDIR keeps its leftovers.
	env := append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+claudeBin, "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"),
		"TMPDIR="+killedRunTmp(t))
	command := func(args ...string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		return cmd, &buf
	}
	// held says whether the agent runs turn's held Bash call: the file it
	// leaves is in the conversation's sandbox (named in run.json), and the
	// CLI has saved the call in the session file, so the turn's prompt
	// before it is there too. (The CLI writes the session file a moment
	// after it starts a tool: a stop in between leaves nothing to cut back,
	// which is right, but is not the stop this test is about.)
	// The folders are read from run.json until they are there, then kept:
	// decoding it 20 times a second was a twentieth of the package's
	// in-process CPU under the race detector.
	var dirs [][2]string // sandbox, config dir
	held := func(turn int) bool {
		if dirs == nil {
			r, err := record.Load(out)
			if err != nil {
				return false // not written yet
			}
			for _, c := range r.Conversations {
				if c.Sandbox != "" && c.ConfigDir != "" {
					dirs = append(dirs, [2]string{c.Sandbox, c.ConfigDir})
				}
			}
		}
		mark := fmt.Sprintf(".hold-%d", turn)
		for _, d := range dirs {
			if _, err := os.Stat(filepath.Join(d[0], mark)); err == nil && savedInSession(d[1], mark) {
				return true
			}
		}
		return false
	}
	// stopAt runs cmd until the agent runs the held call of prompt turn
	// `turn`, then sends sig.
	stopAt := func(cmd *exec.Cmd, buf *bytes.Buffer, turn int, sig syscall.Signal) {
		t.Helper()
		dirs = nil // a resume may open the sandbox elsewhere
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for !held(turn) {
			select {
			case err := <-done:
				t.Fatalf("vibe-test ended (%v) before turn %d was held\n%s", err, turn, buf)
			case <-tick.C:
			}
		}
		// The held call runs (it leaves its file just before), so the
		// check at the end that none outlived its stop can fail.
		for wait := time.Now().Add(10 * time.Second); len(sleepers(marker)) == 0 && time.Now().Before(wait); {
			time.Sleep(20 * time.Millisecond)
		}
		if len(sleepers(marker)) == 0 {
			t.Errorf("turn %d's held call is not running as sleep %s", turn, marker)
		}
		t.Logf("%s at turn %d", sig, turn)
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
		"--concurrency", "1", "--max-retries", "1", "--retry-backoff", "200ms", "--turn-timeout", "30s", "--session", mode)
	stopAt(cmd, buf, 4, syscall.SIGINT)
	cmd, buf = command("resume", out, "--retry-backoff", "200ms")
	stopAt(cmd, buf, 7, syscall.SIGKILL)
	cmd, buf = command("resume", out, "--retry-backoff", "200ms")
	// Only the conversation is this test's subject: a fresh session or a
	// judge call stopped by the turn timeout on a loaded machine makes the
	// exit 3 but changes nothing checked below.
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("last resume: %v\n%s", err, buf)
	}
	t.Logf("last resume:\n%s", buf)

	r, err := record.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.SessionMode != mode {
		t.Errorf("run.json records session mode %q, want %q", r.Config.SessionMode, mode)
	}
	var conv *record.Conversation
	for i := range r.Conversations {
		if r.Conversations[i].Control == "" {
			conv = &r.Conversations[i]
		}
	}
	if conv == nil || conv.Status != record.StatusCompleted || len(conv.Turns) != 10 {
		t.Fatalf("the conversation did not complete: %+v", conv)
	}
	promptsOnce(t, srv, conv)
	// The held Bash calls the real CLI ran in sessions of their own died
	// with their turn: at the timeout (turn 3, interactive mode), at SIGINT
	// (turn 4) and at SIGKILL of vibe-test (turn 7).
	noneLeft(t, marker)
	// Each rerun was cut back first, and the record says so.
	want := map[int]string{4: "resume", 6: record.TurnError, 7: "resume"}
	if timeout {
		want[3] = record.TurnTimedOut
	}
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
	if mode == claude.SessionResume {
		// Each turn is a process of its own, so the probe at turn 8 invokes
		// the skill anew and the pinned CLI re-injects its body (in a live
		// session the demo's test sees "already loaded" instead).
		tr := conv.TurnAt(8)
		b, err := os.ReadFile(filepath.Join(out, tr.Transcript))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("Base directory for this skill")) || bytes.Contains(b, []byte("already loaded above")) {
			t.Errorf("resume mode, turn 8's Skill call: the skill's body must be injected again, not answered \"already loaded\"")
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
func promptsOnce(t *testing.T, srv *scripted.Server, conv *record.Conversation) {
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
		texts := userTexts(t, q.Body)
		for prompt, turn := range turnOf {
			if n := promptCopies(texts, prompt); n > 1 {
				t.Errorf("conversation %d, request %d: turn %d's prompt appears %d times in its user messages", conv.Index, q.Seq, turn, n)
			}
		}
	}
	for _, tr := range conv.Turns {
		if seen[tr.Turn] == 0 {
			t.Errorf("conversation %d: no request of its session carried turn %d's prompt", conv.Index, tr.Turn)
		}
	}
}

// promptCopies counts the copies of prompt in the text of a request's user
// messages: a prompt the CLI folded into a later message (as it does with
// a failed one in a live session) shows up twice though the request holds
// one prompt message per turn.
func promptCopies(texts []string, prompt string) int {
	n := 0
	for _, text := range texts {
		n += strings.Count(text, prompt)
	}
	return n
}

// userTexts are the texts of a request's user messages, decoded once per
// request rather than once per prompt looked for (ten decodes of a whole
// conversation's history per request were a twentieth of the package's
// in-process CPU under the race detector).
func userTexts(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body: %v", err)
	}
	var texts []string
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			texts = append(texts, text)
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
	}
	return texts
}
