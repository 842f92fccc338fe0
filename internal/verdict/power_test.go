package verdict

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
)

// A remembered figure is the one its simulation gives, asked again or
// not, kept under its world and arguments.
func TestPowerFiguresRemembered(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	r := &record.Run{}
	for i := 1; i <= 12; i++ {
		c := conv(i, record.StatusCompleted, P, P, F, P)
		if i%3 == 0 {
			c = conv(i, record.StatusCompleted, P, P, P, P)
		}
		r.Conversations = append(r.Conversations, c)
		r.Fresh = append(r.Fresh, fresh(i, P, P, P))
	}
	w := worldOf(r, indexRun(r), 0, 0.05)
	mdd, units := pointsUp(w.simulatedMinDrop(12)), w.searchConversations(0.6, 13)
	for range 2 {
		if got := w.minDetectableDrop(12); got != mdd {
			t.Errorf("minDetectableDrop(12) = %v, simulated %v rounded up", got, mdd)
		}
		if got := w.conversationsFor(0.6, 13); got != units {
			t.Errorf("conversationsFor(0.6, 13) = %d, searched %d", got, units)
		}
	}
	memo.Lock()
	defer memo.Unlock()
	for _, key := range []string{fmt.Sprint("minDetectableDrop", w, 12), fmt.Sprint("conversationsFor", w, 0.6, 13)} {
		if _, ok := memo.m[key]; !ok {
			t.Errorf("not remembered: %.60s", key)
		}
	}
	if _, ok := memo.m[fmt.Sprint("minDetectableDrop", worldOf(r, indexRun(r), 8, 0.05), 12)]; ok {
		t.Error("another world's figure is remembered before it was asked")
	}
}

// BenchmarkSequentialPower is one simulated power figure of a look at 10
// conversations (nine of them held, one decayed; one fresh probe failed):
// the unit of cost of a sequential run's looks, which a calibration grid
// asks for thousands of times.
func BenchmarkSequentialPower(b *testing.B) {
	P, F := judge.Pass, judge.Fail
	var convs []record.Conversation
	for i := 1; i <= 10; i++ {
		if i == 4 {
			convs = append(convs, conv(i, record.StatusCompleted, P, P, F, F))
			continue
		}
		convs = append(convs, conv(i, record.StatusCompleted, P, P, P, P))
	}
	r := withFresh(convs, P, P, P)
	r.Fresh[2] = fresh(3, P, F, P)
	w := worldOf(r, indexRun(r), 0, 0.05)
	for b.Loop() {
		w.sequentialPower(10, 0.3)
	}
}

// The smallest drop is rounded up to whole points, never down: a run
// whose rule needs 30.5 points is not held at an effect of 30, and must
// not print 30 beside "would catch a drop of 30 points" (9 conversations,
// one fresh probe failed: 0.3047 before the rounding).
func TestMinDetectableDropRoundsUp(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{0, 0}, {0.3, 0.3}, {0.3046875, 0.31}, {0.298828125, 0.3}, {0.01, 0.01}, {0.0019531, 0.01}, {1, 1},
	} {
		if got := pointsUp(tc.in); got != tc.want {
			t.Errorf("pointsUp(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	P, F := judge.Pass, judge.Fail
	r := &record.Run{}
	for i := 1; i <= 9; i++ {
		r.Conversations = append(r.Conversations, conv(i, record.StatusCompleted, P, P, P, P))
		fr := fresh(i, P, P, P)
		if i == 1 {
			fr = fresh(i, P, P, F)
		}
		r.Fresh = append(r.Fresh, fr)
	}
	Decide(r)
	o := r.Outcome
	raw := worldOf(r, indexRun(r), 0, 0.05).simulatedMinDrop(9)
	if o.Stats.MinDetectableDrop < raw || o.Stats.MinDetectableDrop-raw >= 0.01 {
		t.Errorf("printed figure %v for a simulated %v", o.Stats.MinDetectableDrop, raw)
	}
	if o.Verdict == record.VerdictHeld && o.Stats.MinDetectableDrop > o.Stats.Effect {
		t.Errorf("held with a smallest drop of %v above the effect %v", o.Stats.MinDetectableDrop, o.Stats.Effect)
	}
	if o.Verdict == record.VerdictNotEnough && o.Stats.MinDetectableDrop <= o.Stats.Effect && o.Stats.MinDetectableDrop > 0 {
		t.Errorf("not enough evidence, though the rule catches %v <= the effect %v: %s", o.Stats.MinDetectableDrop, o.Stats.Effect, o.Sentence)
	}
	if at := fmt.Sprintf("catches only a drop of %.0f points", 100*o.Stats.Effect); o.Verdict == record.VerdictNotEnough && strings.Contains(o.Sentence, at) {
		t.Errorf("not enough evidence says the run %s, the effect itself: %s", at, o.Sentence)
	}
}
