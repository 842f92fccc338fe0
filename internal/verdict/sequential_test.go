package verdict

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
)

// A look's power is its own test's, at its own level: before the cap that
// is alpha/50, where 16 conversations of a skill that never failed cannot
// catch a 30-point drop 80% of the time, so the look goes on rather than
// saying held (it said held here when the power was simulated at the
// whole alpha, which the look's test does not have). At the cap the rest
// of alpha decides, and the same skill is held.
func TestLookPowerAtItsOwnLevel(t *testing.T) {
	P := judge.Pass
	run := func(n int) *record.Run {
		var convs []record.Conversation
		for i := 1; i <= n; i++ {
			convs = append(convs, conv(i, record.StatusCompleted, P, P, P, P))
		}
		return withFresh(convs, P, P, P)
	}
	s := &record.Sequential{Alpha: 0.05, Max: 20, Batch: 2, Effect: 0.3}
	r := run(16)
	early := evaluate(s, r, indexRun(r), 16, false)
	if early.Decision != record.SeqContinue || early.Level != InterimLevel(s) || early.Power >= PowerTarget {
		t.Errorf("after 16: %s at level %.4f with power %.2f; want another batch, the look's test short of %.0f%%", early.Decision, early.Level, early.Power, 100*PowerTarget)
	}
	if atAlpha, _ := worldOf(r, indexRun(r), 16, s.Alpha).reachesPower(16, s.Effect); !atAlpha {
		t.Errorf("at the whole alpha the power reaches %.0f%% too: the case does not tell the levels apart", 100*PowerTarget)
	}
	r = run(20)
	last := evaluate(s, r, indexRun(r), 20, false)
	if last.Decision != record.SeqHeld || last.Level != FinalLevel(s) || last.Power < PowerTarget {
		t.Errorf("at the cap: %s at level %.4f with power %.2f; want held at the final level", last.Decision, last.Level, last.Power)
	}
}

// The smallest drop a sequential run's sentences print is its deciding
// look's, at that look's level: 40 conversations that stop held at the
// first look (level alpha/50) catch some 20 points in 80% of simulated
// runs, where a fixed-size test at the whole alpha would catch 10, the
// figure the held sentence printed before.
func TestSequentialFiguresAtTheLooksLevel(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	r := &record.Run{Config: record.Config{Alpha: 0.05}, Sequential: &record.Sequential{Alpha: 0.05, Max: 100, Batch: 40, Effect: 0.3}}
	for i := 1; i <= 40; i++ {
		r.Conversations = append(r.Conversations, conv(i, record.StatusCompleted, P, P, P, P))
		fr := fresh(i, P, P, P)
		if i%7 == 0 {
			fr = fresh(i, P, F, P)
		}
		r.Fresh = append(r.Fresh, fr)
	}
	if d := Observe(r.Sequential, r); d != record.SeqHeld {
		t.Fatalf("the first look says %s; the case needs held", d)
	}
	look := r.Sequential.Looks[0]
	Decide(r)
	o := r.Outcome
	atAlpha := pointsUp(worldOf(r, indexRun(r), 0, 0.05).simulatedMinDrop(40))
	if o.Verdict != record.VerdictHeld || o.Stats.MinDetectableDrop != look.MinDetectableDrop {
		t.Errorf("%s with a smallest drop of %v; the deciding look's (level %.4g) is %v", o.Verdict, o.Stats.MinDetectableDrop, look.Level, look.MinDetectableDrop)
	}
	if look.MinDetectableDrop <= atAlpha {
		t.Errorf("the look's figure %v is not above the whole alpha's %v: the case does not tell the levels apart", look.MinDetectableDrop, atAlpha)
	}
	if want := fmt.Sprintf("catches a drop of %.0f points", 100*look.MinDetectableDrop); !strings.Contains(o.Sentence, want) {
		t.Errorf("the sentence does not say %q: %s", want, o.Sentence)
	}
}

// A power short of the target is never printed as the target: 0.7975 was
// "in only 80%".
func TestPercentDown(t *testing.T) {
	for _, tc := range []struct{ p, want float64 }{{0.7975, 79}, {0.8, 80}, {0.81, 81}, {0.999, 99}, {1, 100}, {0, 0}} {
		if got := percentDown(tc.p); got != tc.want {
			t.Errorf("percentDown(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

// A look before the cap says held only when the drop's upper bound is
// below the effect, however much power the look has: 40 conversations, 8
// of them failing every diluted probe (a drop of 20 points, p = 0.003 at a
// level of 0.001) could still hide a 30-point drop, so the run goes on;
// with 7 the bound is below 30 points and the look holds.
func TestEarlyHeldNeedsTheBoundBelowTheEffect(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	look := func(bad int) record.Look {
		r := &record.Run{Config: record.Config{Alpha: 0.05}, Sequential: &record.Sequential{Alpha: 0.05, Max: 100, Batch: 40, Effect: 0.3}}
		for i := 1; i <= 40; i++ {
			c := conv(i, record.StatusCompleted, P, P, P, P)
			if i <= bad {
				c = conv(i, record.StatusCompleted, P, F, F, F)
			}
			r.Conversations = append(r.Conversations, c)
			r.Fresh = append(r.Fresh, fresh(i, P, P, P))
		}
		return evaluate(r.Sequential, r, indexRun(r), 40, false)
	}
	if l := look(8); l.Decision != record.SeqContinue {
		t.Errorf("8 of 40 failing: %s (drop %.3f, p %.4g); want another batch: a 30-point drop is not ruled out", l.Decision, l.Drop, l.P)
	}
	if l := look(7); l.Decision != record.SeqHeld {
		t.Errorf("7 of 40 failing: %s (drop %.3f, p %.4g, power %.2f); want held: the case must tell the rule apart", l.Decision, l.Drop, l.P, l.Power)
	}
}

// A --until-decided run that reaches its cap without deciding says how many
// conversations would catch the effect: a cap for a plan like its own,
// whose look at that cap tests at what the looks before it left of alpha.
// The figure was a fixed-size test's at the whole alpha: 15 conversations
// here, where a plan capped at 15 (batches of one) tests at 0.036 and
// catches the effect in some 75% of simulated runs.
func TestSequentialConversationsFigureIsAPlansCap(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	s := &record.Sequential{Alpha: 0.05, Max: 6, Batch: 1, Effect: 0.3}
	r := &record.Run{Config: record.Config{Alpha: 0.05}, Sequential: s}
	for i := 1; i <= 6; i++ {
		c := conv(i, record.StatusCompleted, P, P, P, P)
		if i%3 == 0 {
			c = conv(i, record.StatusCompleted, P, P, F, P)
		}
		r.Conversations = append(r.Conversations, c)
		fr := fresh(i, P, P, P)
		if i%4 == 0 {
			fr = fresh(i, P, F, P)
		}
		r.Fresh = append(r.Fresh, fr)
	}
	for n := 1; n <= 6; n++ {
		s.Looks = append(s.Looks, evaluate(s, r, indexRun(r), n, true))
	}
	Decide(r)
	m := r.Outcome.Stats.UnitsForEffect
	if r.Outcome.Verdict != record.VerdictNotEnough || m == 0 {
		t.Fatalf("%s, %d conversations: the case needs not enough evidence and a figure", r.Outcome.Verdict, m)
	}
	plan := &record.Sequential{Alpha: 0.05, Max: m, Batch: 1}
	at := worldOf(r, indexRun(r), 0, FinalLevel(plan))
	if p := at.powerAt(m, s.Effect); p < PowerTarget-0.02 {
		t.Errorf("About %d conversations: a plan capped there tests at %.4f and catches %.0f points in %.2f of simulated runs", m, FinalLevel(plan), 100*s.Effect, p)
	}
	if !strings.Contains(r.Outcome.Sentence, fmt.Sprintf("--max-conversations %d", m)) {
		t.Errorf("the sentence does not say the figure is a cap: %s", r.Outcome.Sentence)
	}
}
