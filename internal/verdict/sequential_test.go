package verdict

import (
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
