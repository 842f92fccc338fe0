package rejudge

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/codex"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

func TestRejudgeVerdictChanges(t *testing.T) {
	t.Parallel()
	old := &judge.Verdict{Result: judge.Pass, Criteria: []judge.CriterionVerdict{
		{ID: "a", Kind: "must", Result: judge.Pass, Source: "check"},
		{ID: "b", Kind: "should", Result: judge.Pass, Source: "judge"},
	}}
	var st changeStats
	got := verdictChanges("conv 2", 6, old, judge.Verdict{Result: judge.Fail, EscapeHatch: true, EscapeReason: "hand-rolled\nit", Criteria: []judge.CriterionVerdict{
		{ID: "a", Kind: "must", Result: judge.Fail, Source: "check"},
		{ID: "b", Kind: "should", Result: judge.Pass, Source: "judge"},
	}}, &st)
	want := []string{"conv 2 turn 6: pass → fail", "conv 2 turn 6 a: pass → fail (check)", "conv 2 turn 6 escape-hatch: no → yes (hand-rolled it)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || st != (changeStats{results: 1, criteria: 1}) {
		t.Errorf("got %q %+v", got, st)
	}
	// A judge error on either side shows no criterion as a pass or a fail.
	st = changeStats{}
	got = verdictChanges("conv 1", 1, &judge.Verdict{Result: judge.JudgeError, Error: "x"}, *old, &st)
	if strings.Join(got, "\n") != "conv 1 turn 1: judge-error → pass" {
		t.Errorf("got %q", got)
	}
	got = verdictChanges("conv 1", 1, old, judge.Verdict{Result: judge.JudgeError, Error: "bad answer"}, &st)
	if strings.Join(got, "\n") != "conv 1 turn 1: pass → judge-error (bad answer)" || st.errors != 1 {
		t.Errorf("got %q %+v", got, st)
	}
}

// calledCaller fails the test if the judge is asked anything.
type calledCaller struct{ t *testing.T }

func (c calledCaller) Structured(context.Context, string, string, string) (claude.Turn, error) {
	c.t.Error("the judge was asked about a damaged transcript")
	return claude.Turn{}, errors.New("not called")
}

// A transcript damaged since its turn was judged is a judge error, never a
// pass or a fail: garbage parsed as a turn with no call, and the judge
// failed it (a pass became a fail, exit 0).
func TestDamagedTranscriptIsAJudgeError(t *testing.T) {
	j := &judge.Judge{Caller: calledCaller{t}, Model: "m"}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"garbage.jsonl": "garbage not json\n",
		"cut.jsonl":     `{"type":"system","subtype":"init","session_id":"s"}` + "\n" + `{"type":"assistant","message":{"content":[{"type":"te`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if v := judgeTranscript(context.Background(), j, "claude", path, "task"); v.Result != judge.JudgeError || !strings.Contains(v.Error, "is damaged") {
			t.Errorf("%s: %s %q, want a judge error", name, v.Result, v.Error)
		}
	}
}

// A FIFO in a transcript's place blocked rejudge for ever: it is a judge
// error, found without waiting.
func TestTranscriptFIFOIsAJudgeError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "turn-01.jsonl")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan judge.Verdict, 1)
	go func() {
		done <- judgeTranscript(context.Background(), &judge.Judge{Caller: calledCaller{t}, Model: "m"}, "claude", path, "task")
	}()
	select {
	case v := <-done:
		if v.Result != judge.JudgeError || !strings.Contains(v.Error, "FIFO") {
			t.Errorf("%s %q, want a judge error naming the FIFO", v.Result, v.Error)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still reading the FIFO after 10 s")
	}
}

// Where no jail can start, a rejudge says so, as a run does: its judges
// read what an agent wrote. It ran them unjailed in silence.
func TestNoJailWarned(t *testing.T) {
	env := []string{"PATH=" + t.TempDir(), "HOME=" + t.TempDir(), "ANTHROPIC_API_KEY=sk-offline-placeholder"}
	var stderr strings.Builder
	r := &record.Run{}
	c, err := judgeCaller(t.Context(), t.TempDir(), r, Settings{}, env, testenv.Claude(t), true, time.Minute, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if cc, ok := c.(claude.Caller); !ok || cc.Jail != nil {
		t.Fatalf("a jail without bwrap on PATH: %T %+v", c, c)
	}
	if got := stderr.String(); !strings.HasPrefix(got, "warning: NO JAIL: the judges read the agent's transcripts outside a jail: bubblewrap (bwrap) is not installed") {
		t.Errorf("stderr:\n%s", got)
	}
}

// A rejudge's judges run in the jail where the machine allows one, as a
// run's do: they read what an agent wrote. They ran outside it (a
// security review saw them in the host's mount namespace).
func TestJudgesJailed(t *testing.T) {
	// The judges' CLIs are the pinned ones, which `go test` outside make
	// (whose PATH has tools/) finds too.
	t.Setenv("VIBE_TEST_CLAUDE", testenv.Claude(t))
	t.Setenv("VIBE_TEST_CODEX", testenv.Codex(t))
	env := append(os.Environ(), "ANTHROPIC_API_KEY=sk-offline-placeholder")
	kind, note, err := engine.ChooseJail(t.Context(), "", env)
	if err != nil {
		t.Fatal(err)
	}
	if kind != jail.Bubblewrap {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no jail on CI: %s", note)
		}
		t.Skipf("no jail here: %s", note)
	}
	dir := t.TempDir()
	for _, judgeAgent := range []string{"", agents.Codex} {
		r := &record.Run{Config: record.Config{JudgeAgent: judgeAgent}}
		c, err := judgeCaller(t.Context(), dir, r, Settings{}, env, testenv.Claude(t), true, time.Minute, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var spec *jail.Spec
		switch c := c.(type) {
		case claude.Caller:
			spec = c.Jail
		case codex.Caller:
			spec = c.Jail
		default:
			t.Fatalf("judge agent %q: a %T", judgeAgent, c)
		}
		if spec == nil {
			t.Errorf("judge agent %q: no jail", judgeAgent)
		}
	}
	// A codex run judged by claude, with the author's login (no key): the
	// jail shows the judge the login's credentials file, as the run's
	// did. It had none, and the judge could not sign in.
	config := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	var login []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "CLAUDE_CODE_OAUTH") {
			login = append(login, kv)
		}
	}
	r := &record.Run{Config: record.Config{Agent: agents.Codex}}
	c, err := judgeCaller(t.Context(), dir, r, Settings{}, login, testenv.Claude(t), false, time.Minute, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cc, ok := c.(claude.Caller)
	if !ok || cc.Jail == nil || !slices.Contains(cc.Jail.ReadOnly, filepath.Join(config, ".credentials.json")) {
		t.Errorf("a claude judge of a codex run, signed in by login: %T %+v", c, cc.Jail)
	}
}
