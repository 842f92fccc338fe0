package verdict

import (
	"math"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
)

// conv builds a conversation from results at turns 1, 6, 8, 10 ("" = not run).
func conv(idx int, status string, results ...string) record.Conversation {
	c := record.Conversation{Index: idx, Status: status}
	for i, r := range results {
		n := []int{1, 6, 8, 10}[i]
		if r == "" {
			continue
		}
		kind := "probe"
		if n == 1 {
			kind = "base"
		}
		c.Turns = append(c.Turns, record.Turn{Turn: n, Kind: kind, Status: record.TurnOK, ToolCallCount: 3, Verdict: &judge.Verdict{Result: r}})
	}
	for n := len(c.Turns); n < 10 && status == record.StatusCompleted; n++ {
		c.Turns = append(c.Turns, record.Turn{Turn: 100 + n, Kind: "filler", Status: record.TurnOK})
	}
	return c
}

func TestShapes(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	cases := []struct {
		seq  []string
		want string
	}{
		{[]string{P, P, P, P}, record.ShapeHeld},
		{[]string{P, P, F, F}, record.ShapeDecayed},
		{[]string{F, F, F, F}, record.ShapeNeverWorked},
		{[]string{F, P, P, P}, record.ShapeUnstable},
		{[]string{P, F, P, F}, record.ShapeUnstable},
		{[]string{F}, record.ShapeBaselineFailed},
		{[]string{P, judge.JudgeError, F, F}, record.ShapeDecayed},
	}
	for _, c := range cases {
		cv := conv(1, record.StatusCompleted, c.seq...)
		if got := ShapeOf(&cv); got != c.want {
			t.Errorf("%v: %q, want %q", c.seq, got, c.want)
		}
	}
}

// withFresh adds a fresh triple per conversation with the given results.
func withFresh(convs []record.Conversation, results ...string) *record.Run {
	r := &record.Run{Conversations: convs}
	for i := range convs {
		r.Fresh = append(r.Fresh, fresh(i+1, results...))
	}
	return r
}

// many is n conversations, the i-th (from 1) made by c.
func many(n int, c func(i int) record.Conversation) []record.Conversation {
	var out []record.Conversation
	for i := 1; i <= n; i++ {
		out = append(out, c(i))
	}
	return out
}

func TestDecideExitCodes(t *testing.T) {
	P, F, E, U := judge.Pass, judge.Fail, judge.JudgeError, judge.Uncertain
	cases := []struct {
		name string
		run  *record.Run
		exit int
		want string
	}{
		{"two all-pass: not enough to say held", withFresh([]record.Conversation{conv(1, record.StatusCompleted, P, P, P, P), conv(2, record.StatusCompleted, P, P, P, P)}, P, P, P), 0, record.VerdictNotEnough},
		{"one decayed of two: noise, not decay", withFresh([]record.Conversation{conv(1, record.StatusCompleted, P, P, F, F), conv(2, record.StatusCompleted, P, P, P, P)}, P, P, P), 0, record.VerdictNotEnough},
		{"collapse in five against fresh passes", withFresh(many(5, func(i int) record.Conversation { return conv(i, record.StatusCompleted, P, F, F, F) }), P, P, P), 1, record.VerdictDecay},
		{"same collapse fresh: a probe the skill never handles", withFresh(many(5, func(i int) record.Conversation { return conv(i, record.StatusCompleted, P, F, F, F) }), F, F, F), 0, record.VerdictNotEnough},
		{"held at 12", withFresh(many(12, func(i int) record.Conversation { return conv(i, record.StatusCompleted, P, P, P, P) }), P, P, P), 0, record.VerdictHeld},
		{"gate", withFresh([]record.Conversation{conv(1, record.StatusBaselineFailed, F)}, P, P, P), 2, record.VerdictBaselineFailed},
		{"a failed baseline in a minority is not exit 2", withFresh([]record.Conversation{conv(1, record.StatusCompleted, P, P, P, P), conv(2, record.StatusCompleted, P, P, P, P), conv(3, record.StatusBaselineFailed, F)}, P, P, P), 0, record.VerdictNotEnough},
		{"bypassed gate, flat fail", withFresh([]record.Conversation{conv(1, record.StatusCompleted, F, F, F, F)}, P, P, P), 2, record.VerdictBaselineFailed},
		{"judge error is neither", withFresh([]record.Conversation{conv(1, record.StatusCompleted, P, E, P, P), conv(2, record.StatusCompleted, P, P, P, P)}, P, P, P), 3, record.VerdictError},
		{"conversation error", withFresh([]record.Conversation{conv(1, record.StatusError, P)}, P, P, P), 3, record.VerdictError},
		{"interrupted", withFresh([]record.Conversation{conv(1, record.StatusInterrupted, P)}, P, P, P), 130, record.VerdictInterrupted},
		// SIGINT after the budget stopped a conversation: the process exits
		// 130, and run.json said exit 3 (the budget rule came first).
		{"interrupted after a budget stop", withFresh([]record.Conversation{conv(1, record.StatusBudgetExhausted, P), conv(2, record.StatusInterrupted, P)}, P, P, P), 130, record.VerdictInterrupted},
		// Judge repeats that disagree on every probe measured nothing: no
		// verdict, as judge errors there give (it said not enough
		// evidence, exit 0).
		{"every probe uncertain", withFresh(many(10, func(i int) record.Conversation { return conv(i, record.StatusCompleted, P, U, U, U) }), U, U, U), 3, record.VerdictError},
		{"every fresh probe uncertain", withFresh(many(10, func(i int) record.Conversation { return conv(i, record.StatusCompleted, P, P, P, P) }), U, U, U), 3, record.VerdictError},
		{"some probes uncertain", withFresh(many(12, func(i int) record.Conversation { return conv(i, record.StatusCompleted, P, P, U, P) }), P, U, P), 0, record.VerdictNotEnough},
		// The same for every baseline: the gate lets them run on, and the
		// run said "the skill does not work fresh" (exit 2).
		{"every baseline uncertain", withFresh(many(10, func(i int) record.Conversation { return conv(i, record.StatusCompleted, U, P, P, P) }), P, P, P), 3, record.VerdictError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			Decide(c.run)
			if c.run.Outcome.Exit != c.exit || c.run.Outcome.Verdict != c.want {
				t.Fatalf("exit %d verdict %s (%s), want %d %s", c.run.Outcome.Exit, c.run.Outcome.Verdict, c.run.Outcome.Sentence, c.exit, c.want)
			}
		})
	}
	// A conversation stopped before its baseline was judged (an interrupt
	// at turn 1) was never ruled on by the gate: said so, not "the gate
	// stopped it".
	stopped := withFresh([]record.Conversation{conv(1, record.StatusInterrupted), conv(2, record.StatusCompleted, P, P, P, P)}, P, P, P)
	Decide(stopped)
	for _, d := range stopped.Outcome.Stats.Dropped {
		if strings.Contains(d.Reason, "gate stopped") {
			t.Errorf("a conversation interrupted before its baseline was judged noted as stopped by the gate: %+v", d)
		}
	}
	// A control the budget or an interrupt stopped stops the run too.
	for _, st := range []string{record.StatusBudgetExhausted, record.StatusInterrupted} {
		c := withFresh(many(2, func(i int) record.Conversation { return conv(i, record.StatusCompleted, P, P, P, P) }), P, P, P)
		c.Controls = []record.Conversation{{Index: 1, Control: record.ControlNoSkill, Status: st}}
		Decide(c)
		if c.Status != st {
			t.Errorf("a control %s: run status %s, exit %d", st, c.Status, c.Outcome.Exit)
		}
	}
	u := withFresh(many(10, func(i int) record.Conversation { return conv(i, record.StatusCompleted, U, P, P, P) }), P, P, P)
	Decide(u)
	for _, d := range u.Outcome.Stats.Dropped {
		if strings.Contains(d.Reason, "gate stopped") {
			t.Errorf("uncertain baselines noted as stopped by the gate, whose probes ran: %+v", d)
		}
	}
	r := &record.Run{Conversations: []record.Conversation{conv(1, record.StatusBaselineFailed, F), conv(2, record.StatusBaselineFailed, F)}}
	Decide(r)
	if r.Status != record.StatusBaselineFailed {
		t.Errorf("every conversation at the gate: status %s", r.Status)
	}
}

// A run that could have caught a 30-point drop and did not says held, with
// the drop it could have caught; seed 002's rule on the same run says what
// it is and how often it fires on a stable skill.
func TestHeldAndSeedRule(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	r := &record.Run{}
	for i := 1; i <= 30; i++ {
		c := conv(i, record.StatusCompleted, P, P, P, P)
		if i%5 == 0 {
			c = conv(i, record.StatusCompleted, P, P, F, P)
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
	if o.Exit != 0 || o.Verdict != record.VerdictHeld || !strings.Contains(o.Sentence, "this rule catches a drop of") {
		t.Fatalf("%d %s: %s", o.Exit, o.Verdict, o.Sentence)
	}
	r.Config.Rule = record.RuleAnyProbeFailed
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
	r := &record.Run{Config: record.Config{Alpha: 0.05}, Sequential: &record.Sequential{Alpha: 0.05, Max: 20, Batch: 4, Effect: 0.3}}
	for i := 1; i <= 8; i++ {
		r.Conversations = append(r.Conversations, conv(i, record.StatusCompleted, P, F, F, F))
		r.Fresh = append(r.Fresh, fresh(i, P, P, P))
		if i%4 == 0 {
			Observe(r.Sequential, r)
		}
	}
	if InterimLevel(r.Sequential) != 0.001 || math.Abs(FinalLevel(r.Sequential)-0.046) > 1e-12 {
		t.Errorf("levels %v %v", InterimLevel(r.Sequential), FinalLevel(r.Sequential))
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
	c := conv(1, record.StatusCompleted, judge.Pass, judge.Pass, judge.Pass, judge.Pass)
	c.Turns[0].ToolCallCount = 14
	c.Turns[1].ToolCallCount = 0
	c.Turns[2].ToolCallCount = 1
	c.Turns[3].ToolCallCount = 12
	r := &record.Run{Conversations: []record.Conversation{c}}
	Decide(r)
	if got := len(r.Outcome.StoppedConsulting); got != 2 {
		t.Fatalf("%v", r.Outcome.StoppedConsulting)
	}

	// The rule's edges: a baseline of 3 calls or more, a probe of a fifth
	// of them or fewer, and a probe that ran (an errored turn's calls say
	// nothing of the agent's habits).
	for _, tc := range []struct {
		base, probe int
		status      string
		flagged     bool
	}{
		{2, 0, record.TurnOK, false},
		{3, 0, record.TurnOK, true},
		{10, 2, record.TurnOK, true},
		{10, 3, record.TurnOK, false},
		{15, 3, record.TurnOK, true},
		{15, 4, record.TurnOK, false},
		{8, 2, record.TurnOK, false},
		{5, 1, record.TurnOK, true},
		{10, 0, record.TurnError, false},
	} {
		c := conv(1, record.StatusCompleted, judge.Pass, judge.Pass)
		c.Turns[0].ToolCallCount, c.Turns[1].ToolCallCount, c.Turns[1].Status = tc.base, tc.probe, tc.status
		r := &record.Run{Conversations: []record.Conversation{c}}
		Decide(r)
		if got := len(r.Outcome.StoppedConsulting) == 1; got != tc.flagged {
			t.Errorf("baseline %d calls, probe %d (%s): flagged %v, want %v: %v", tc.base, tc.probe, tc.status, got, tc.flagged, r.Outcome.StoppedConsulting)
		}
	}
}

// When no number of conversations is found, the baselines are named as
// the reason only when they are it: a search with their rate drawn from
// its whole posterior finds one. Two conversations that passed, against
// fresh sessions that failed every probe: no size, and not the
// baselines' doing (it said they were, and that more runs would give
// the figure, which no number did).
func TestNoSizeReason(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	allPass := func(i int) record.Conversation { return conv(i, record.StatusCompleted, P, P, P, P) }
	for _, c := range []struct {
		name   string
		run    *record.Run
		reason bool
	}{
		{"two that passed, fresh too", withFresh(many(2, allPass), P, P, P), true},
		{"two that passed, fresh failing", withFresh(many(2, allPass), F, F, F), false},
	} {
		Decide(c.run)
		s := c.run.Outcome.Sentence
		if !strings.Contains(s, "No number of conversations up to 200") {
			t.Errorf("%s: %s", c.name, s)
			continue
		}
		if got := strings.Contains(s, "too few to rule out a skill whose baseline fails"); got != c.reason {
			t.Errorf("%s: the baselines' reason given %v, want %v: %s", c.name, got, c.reason, s)
		}
	}
}
