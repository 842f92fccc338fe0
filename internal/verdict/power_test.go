package verdict

import (
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
)

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
