package codex

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/agent"
)

func readRolloutFixture(t *testing.T, name string) Rollout {
	t.Helper()
	ro, err := ReadRollout(filepath.Join("testdata", "rollouts", name))
	if err != nil {
		t.Fatal(err)
	}
	return ro
}

// The rollout's newest turn has the usage the exec stream lacks: one
// record per model call, the last one's input being the context.
func TestRolloutNewestTurn(t *testing.T) {
	idx := readIndex(t)
	for _, tc := range []struct{ rollout, transcript string }{
		{"plain.jsonl", "plain.jsonl"},
		{"tool-calls.jsonl", "tool-calls.jsonl"},
		{"resume.jsonl", "resume-turn2.jsonl"},
		{"live.jsonl", "live-after-compact.jsonl"},
	} {
		ro := readRolloutFixture(t, tc.rollout)
		turn := parseFixture(t, tc.transcript)
		ro.apply(&turn)
		want := idx.Transcripts[tc.transcript]
		if turn.APICalls != want.APICalls || turn.ContextTokens != want.Context {
			t.Errorf("%s: %d calls, context %d; recorded %d, %d", tc.rollout, turn.APICalls, turn.ContextTokens, want.APICalls, want.Context)
		}
		if turn.Model != "gpt-5.5" || turn.CLIVersion != VerifiedVersion {
			t.Errorf("%s: model %q, version %q", tc.rollout, turn.Model, turn.CLIVersion)
		}
		if turn.OutputTokens <= 0 || turn.CostUSD <= 0 {
			t.Errorf("%s: output %d, cost %v", tc.rollout, turn.OutputTokens, turn.CostUSD)
		}
	}
}

// The running cost covers the whole thread, every call at its price.
func TestThreadCostIsTheRunningTotal(t *testing.T) {
	ro := readRolloutFixture(t, "resume.jsonl")
	if len(ro.ThreadCalls) != 3 || len(ro.Calls) != 2 {
		t.Fatalf("%d calls in the thread, %d in its newest turn; want 3 and 2", len(ro.ThreadCalls), len(ro.Calls))
	}
	p := Prices["gpt-5.5"]
	var want float64
	for _, c := range ro.ThreadCalls {
		want += (float64(c.Input-c.Cached)*p.Input + float64(c.Cached)*p.CachedInput + float64(c.Output)*p.Output) / 1e6
	}
	if got := ro.ThreadCost(); math.Abs(got-want) > 1e-12 || got <= 0 {
		t.Errorf("thread cost %v, want %v", got, want)
	}
	live := readRolloutFixture(t, "live.jsonl")
	// 1 + 3 + 1 calls, the compaction's one, the last turn's one.
	if len(live.ThreadCalls) != 7 {
		t.Errorf("the live thread made %d calls, want 7", len(live.ThreadCalls))
	}
}

func TestRolloutInjectedSkill(t *testing.T) {
	ro := readRolloutFixture(t, "skill-dollar.jsonl")
	if !slices.Equal(ro.Skills, []string{skillName}) {
		t.Fatalf("injected skills %q", ro.Skills)
	}
	turn := parseFixture(t, "skill-dollar.jsonl")
	ro.apply(&turn)
	if !(Agent{}).SkillLoaded(turn, skillName) {
		t.Error("a $name mention did not count as loading the skill")
	}
	if s := readRolloutFixture(t, "plain.jsonl").Skills; len(s) != 0 {
		t.Errorf("skills injected without a mention: %q", s)
	}
}

func TestRolloutFile(t *testing.T) {
	home := t.TempDir()
	id := "01a23748-6419-77a3-a6b0-1c341ed71af3"
	dir := filepath.Join(home, "sessions", "2026", "12", "02")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "rollout-2026-12-02T15-00-00-"+id+".jsonl")
	if err := os.WriteFile(want, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := RolloutFile(home, id); err != nil || got != want {
		t.Errorf("RolloutFile = %q, %v", got, err)
	}
	if _, err := RolloutFile(home, "01a23748-0000-7000-8000-000000000000"); err == nil {
		t.Error("a thread with no file was found")
	}
	for _, bad := range []string{"", "../../etc/passwd", "*"} {
		if _, err := RolloutFile(home, bad); err == nil {
			t.Errorf("thread id %q accepted", bad)
		}
	}
}

// A resumed turn's process that printed thread.started and died before
// turn.started has no turn in the rollout: the thread's newest turn there
// is the previous one, whose calls, usage and context it must not take.
func TestRolloutOnlyForATurnThatStarted(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "rollouts", "resume.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	home := CodexHome(root)
	const thread = "01a23750-a111-7591-9508-5ecaf941c068"
	dir := filepath.Join(home, "sessions", "2026", "12", "01")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-12-01T00-00-00-"+thread+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, started := range []bool{false, true} {
		turn := Turn{SessionID: thread}
		applyRollout(&turn, started, home)
		if got := turn.APICalls > 0 || turn.ContextTokens > 0 || turn.CostUSD > 0; got != started {
			t.Errorf("turn started %v: %d calls, context %d, cost %v taken from the rollout", started, turn.APICalls, turn.ContextTokens, turn.CostUSD)
		}
	}
	// The live process reads the injected skills the same way: a turn
	// whose turn/start was refused is not given the previous turn's.
	b, err = os.ReadFile(filepath.Join("testdata", "rollouts", "skill-dollar.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const skillThread = "01a23750-b222-7591-9508-5ecaf941c068"
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-12-01T00-00-01-"+skillThread+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, started := range []bool{false, true} {
		l := &Live{thread: skillThread, spec: agent.TurnSpec{Home: root}}
		var turn Turn
		l.fill(&turn, started)
		if got := len(turn.Skills) > 0; got != started || turn.CLIVersion == "" {
			t.Errorf("live turn started %v: skills %v, version %q", started, turn.Skills, turn.CLIVersion)
		}
	}
	// The stream says which: a turn.started line, or none.
	for _, tc := range []struct {
		stream string
		want   bool
	}{
		{`{"type":"thread.started","thread_id":"` + thread + `"}` + "\n", false},
		{`{"type":"thread.started","thread_id":"` + thread + `"}` + "\n" + `{"type":"turn.started"}` + "\n", true},
	} {
		if _, started, err := parseTurn(strings.NewReader(tc.stream)); err != nil || started != tc.want {
			t.Errorf("%q: started %v (%v), want %v", tc.stream, started, err, tc.want)
		}
	}
	// Every recorded stream, exec's and the app-server's, errored and
	// killed turns too, shows its turn start.
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded streams: %v", err)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		_, started, err := parseTurn(fh)
		fh.Close()
		if err != nil || !started {
			t.Errorf("%s: turn start seen %v (%v)", f, started, err)
		}
	}
}
