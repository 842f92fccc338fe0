package result

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/judge"
)

// conv builds a conversation from results at turns 1, 6, 8, 10 ("" = not run).
func conv(idx int, status string, results ...string) Conversation {
	c := Conversation{Index: idx, Status: status}
	for i, r := range results {
		n := []int{1, 6, 8, 10}[i]
		if r == "" {
			continue
		}
		kind := "probe"
		if n == 1 {
			kind = "base"
		}
		c.Turns = append(c.Turns, Turn{Turn: n, Kind: kind, Status: TurnOK, ToolCallCount: 3, Verdict: &judge.Verdict{Result: r}})
	}
	for n := len(c.Turns); n < 10 && status == StatusCompleted; n++ {
		c.Turns = append(c.Turns, Turn{Turn: 100 + n, Kind: "filler", Status: TurnOK})
	}
	return c
}

func TestShapes(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	cases := []struct {
		seq  []string
		want string
	}{
		{[]string{P, P, P, P}, ShapeHeld},
		{[]string{P, P, F, F}, ShapeDecayed},
		{[]string{F, F, F, F}, ShapeNeverWorked},
		{[]string{F, P, P, P}, ShapeUnstable},
		{[]string{P, F, P, F}, ShapeUnstable},
		{[]string{F}, ShapeBaselineFailed},
		{[]string{P, judge.JudgeError, F, F}, ShapeDecayed},
	}
	for _, c := range cases {
		cv := conv(1, StatusCompleted, c.seq...)
		if got := ShapeOf(&cv); got != c.want {
			t.Errorf("%v: %q, want %q", c.seq, got, c.want)
		}
	}
}

func TestDecideExitCodes(t *testing.T) {
	P, F, E := judge.Pass, judge.Fail, judge.JudgeError
	cases := []struct {
		name  string
		convs []Conversation
		exit  int
		want  string
	}{
		{"held", []Conversation{conv(1, StatusCompleted, P, P, P, P), conv(2, StatusCompleted, P, P, P, P)}, 0, "no-decay"},
		{"decay in one", []Conversation{conv(1, StatusCompleted, P, P, F, F), conv(2, StatusCompleted, P, P, P, P)}, 1, "decay"},
		{"gate", []Conversation{conv(1, StatusBaselineFailed, F)}, 2, "baseline-failed"},
		{"decay beats a failed baseline elsewhere", []Conversation{conv(1, StatusCompleted, P, F, F, F), conv(2, StatusBaselineFailed, F)}, 1, "decay"},
		{"bypassed gate, flat fail", []Conversation{conv(1, StatusCompleted, F, F, F, F)}, 2, "baseline-failed"},
		{"judge error is neither", []Conversation{conv(1, StatusCompleted, P, E, P, P)}, 3, "error"},
		{"conversation error", []Conversation{conv(1, StatusError, P)}, 3, "error"},
		{"interrupted", []Conversation{conv(1, StatusInterrupted, P)}, 130, "interrupted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Run{Conversations: c.convs}
			Decide(r)
			if r.Outcome.Exit != c.exit || r.Outcome.Verdict != c.want {
				t.Fatalf("exit %d verdict %s (%s), want %d %s", r.Outcome.Exit, r.Outcome.Verdict, r.Outcome.Sentence, c.exit, c.want)
			}
		})
	}
	r := &Run{Conversations: []Conversation{conv(1, StatusBaselineFailed, F), conv(2, StatusBaselineFailed, F)}}
	Decide(r)
	if r.Status != StatusBaselineFailed {
		t.Errorf("every conversation at the gate: status %s", r.Status)
	}
	r = &Run{Conversations: []Conversation{conv(1, StatusCompleted, P, P, P, P), conv(2, StatusCompleted, P, P, P, P)}}
	Decide(r)
	if !strings.Contains(strings.Join(r.Outcome.Notes, " "), "Underpowered") {
		t.Error("n=2 no-decay must say underpowered")
	}
}

func TestStoppedConsulting(t *testing.T) {
	c := conv(1, StatusCompleted, judge.Pass, judge.Pass, judge.Pass, judge.Pass)
	c.Turns[0].ToolCallCount = 14
	c.Turns[1].ToolCallCount = 0
	c.Turns[2].ToolCallCount = 1
	c.Turns[3].ToolCallCount = 12
	r := &Run{Conversations: []Conversation{c}}
	Decide(r)
	if got := len(r.Outcome.StoppedConsulting); got != 2 {
		t.Fatalf("%v", r.Outcome.StoppedConsulting)
	}
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	r := &Run{SchemaVersion: SchemaVersion, Status: StatusCompleted, Conversations: []Conversation{conv(1, StatusCompleted, judge.Pass)}}
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
