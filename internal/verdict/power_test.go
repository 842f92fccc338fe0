package verdict

import (
	"fmt"
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
	mdd, units := w.simulatedMinDrop(12), w.searchConversations(0.6, 13)
	for range 2 {
		if got := w.minDetectableDrop(12); got != mdd {
			t.Errorf("minDetectableDrop(12) = %v, simulated %v", got, mdd)
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
