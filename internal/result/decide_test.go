package result

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
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

// withFresh adds a fresh triple per conversation with the given results.
func withFresh(convs []Conversation, results ...string) *Run {
	r := &Run{Conversations: convs}
	for i := range convs {
		r.Fresh = append(r.Fresh, fresh(i+1, results...))
	}
	return r
}

func TestDecideExitCodes(t *testing.T) {
	P, F, E := judge.Pass, judge.Fail, judge.JudgeError
	many := func(n int, c func(i int) Conversation) []Conversation {
		var out []Conversation
		for i := 1; i <= n; i++ {
			out = append(out, c(i))
		}
		return out
	}
	cases := []struct {
		name string
		run  *Run
		exit int
		want string
	}{
		{"two all-pass: not enough to say held", withFresh([]Conversation{conv(1, StatusCompleted, P, P, P, P), conv(2, StatusCompleted, P, P, P, P)}, P, P, P), 0, VerdictNotEnough},
		{"one decayed of two: noise, not decay", withFresh([]Conversation{conv(1, StatusCompleted, P, P, F, F), conv(2, StatusCompleted, P, P, P, P)}, P, P, P), 0, VerdictNotEnough},
		{"collapse in five against fresh passes", withFresh(many(5, func(i int) Conversation { return conv(i, StatusCompleted, P, F, F, F) }), P, P, P), 1, VerdictDecay},
		{"same collapse fresh: a probe the skill never handles", withFresh(many(5, func(i int) Conversation { return conv(i, StatusCompleted, P, F, F, F) }), F, F, F), 0, VerdictNotEnough},
		{"held at 12", withFresh(many(12, func(i int) Conversation { return conv(i, StatusCompleted, P, P, P, P) }), P, P, P), 0, VerdictHeld},
		{"gate", withFresh([]Conversation{conv(1, StatusBaselineFailed, F)}, P, P, P), 2, VerdictBaselineFailed},
		{"a failed baseline in a minority is not exit 2", withFresh([]Conversation{conv(1, StatusCompleted, P, P, P, P), conv(2, StatusCompleted, P, P, P, P), conv(3, StatusBaselineFailed, F)}, P, P, P), 0, VerdictNotEnough},
		{"bypassed gate, flat fail", withFresh([]Conversation{conv(1, StatusCompleted, F, F, F, F)}, P, P, P), 2, VerdictBaselineFailed},
		{"judge error is neither", withFresh([]Conversation{conv(1, StatusCompleted, P, E, P, P), conv(2, StatusCompleted, P, P, P, P)}, P, P, P), 3, VerdictError},
		{"conversation error", withFresh([]Conversation{conv(1, StatusError, P)}, P, P, P), 3, VerdictError},
		{"interrupted", withFresh([]Conversation{conv(1, StatusInterrupted, P)}, P, P, P), 130, VerdictInterrupted},
		{"no fresh arm (an old run)", &Run{Conversations: []Conversation{conv(1, StatusCompleted, P, F, F, F)}}, 2, VerdictNotComparable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			Decide(c.run)
			if c.run.Outcome.Exit != c.exit || c.run.Outcome.Verdict != c.want {
				t.Fatalf("exit %d verdict %s (%s), want %d %s", c.run.Outcome.Exit, c.run.Outcome.Verdict, c.run.Outcome.Sentence, c.exit, c.want)
			}
		})
	}
	r := &Run{Conversations: []Conversation{conv(1, StatusBaselineFailed, F), conv(2, StatusBaselineFailed, F)}}
	Decide(r)
	if r.Status != StatusBaselineFailed {
		t.Errorf("every conversation at the gate: status %s", r.Status)
	}
}

// A run that could have caught a 30-point drop and did not says held, with
// the drop it could have caught; seed 002's rule on the same run says what
// it is and how often it fires on a stable skill.
func TestHeldAndSeedRule(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	r := &Run{}
	for i := 1; i <= 30; i++ {
		c := conv(i, StatusCompleted, P, P, P, P)
		if i%5 == 0 {
			c = conv(i, StatusCompleted, P, P, F, P)
		}
		r.Conversations = append(r.Conversations, c)
		fr := fresh(i, P, P, P)
		if i%5 == 1 {
			fr = fresh(i, P, F, P)
		}
		r.Fresh = append(r.Fresh, fr)
	}
	Decide(r)
	o := r.Outcome
	if o.Exit != 0 || o.Verdict != VerdictHeld || !strings.Contains(o.Sentence, "would have caught a drop of") {
		t.Fatalf("%d %s: %s", o.Exit, o.Verdict, o.Sentence)
	}
	r.Config.Rule = RuleAnyProbeFailed
	Decide(r)
	o = r.Outcome
	if o.Exit != 1 || !strings.Contains(o.Sentence, "not a test") || !strings.Contains(o.Sentence, "fires") {
		t.Fatalf("seed rule: %d %s", o.Exit, o.Sentence)
	}
	// 84 of 90 fresh probes passed (0.9333), 90 judged diluted probes:
	// 1 - 0.9333^90.
	want := 1 - math.Pow(84.0/90, 90)
	if math.Abs(o.AnyFailureChance-want) > 1e-9 {
		t.Errorf("chance %v, want %v", o.AnyFailureChance, want)
	}
}

// The sequential looks are replayed from the record, so the verdict
// follows from the data whoever wrote the looks.
func TestSequentialReplay(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	r := &Run{Config: Config{Alpha: 0.05}, Sequential: &Sequential{Alpha: 0.05, Max: 20, Batch: 4, Effect: 0.3}}
	for i := 1; i <= 8; i++ {
		r.Conversations = append(r.Conversations, conv(i, StatusCompleted, P, F, F, F))
		r.Fresh = append(r.Fresh, fresh(i, P, P, P))
		if i%4 == 0 {
			r.Sequential.Observe(r)
		}
	}
	if r.Sequential.InterimLevel() != 0.001 || math.Abs(r.Sequential.FinalLevel()-0.046) > 1e-12 {
		t.Errorf("levels %v %v", r.Sequential.InterimLevel(), r.Sequential.FinalLevel())
	}
	Decide(r)
	if r.Outcome.Exit != 1 || !strings.Contains(r.Outcome.Sentence, "sequentially") {
		t.Fatalf("%d %s", r.Outcome.Exit, r.Outcome.Sentence)
	}
	// A rejudge that turns every diluted probe into a pass undoes it.
	for i := range r.Conversations {
		for k := range r.Conversations[i].Turns {
			if r.Conversations[i].Turns[k].Verdict != nil {
				r.Conversations[i].Turns[k].Verdict.Result = P
			}
		}
	}
	Decide(r)
	if r.Outcome.Exit != 0 {
		t.Errorf("after rejudge: %d %s", r.Outcome.Exit, r.Outcome.Sentence)
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

// A schema-1 record's undiluted controls are exactly a fresh arm: Load
// makes them one, so such a run gets today's verdict.
func TestLoadMigratesUndilutedControls(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	r := &Run{SchemaVersion: 1, Status: StatusCompleted}
	for i := 1; i <= 4; i++ {
		r.Conversations = append(r.Conversations, conv(i, StatusCompleted, P, F, F, F))
		u := fresh(i, P, P, P)
		u.Control = ControlUndiluted
		r.Controls = append(r.Controls, u)
	}
	dir := t.TempDir()
	if err := Save(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Fresh) != 4 || len(got.Controls) != 0 || got.Fresh[0].Control != ArmFresh {
		t.Fatalf("fresh %d controls %d", len(got.Fresh), len(got.Controls))
	}
	Decide(got)
	if got.Outcome.Exit != 1 {
		t.Errorf("%d %s", got.Outcome.Exit, got.Outcome.Sentence)
	}
}
