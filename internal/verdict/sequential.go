package verdict

import (
	"fmt"
	"math"

	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// plannedLooks is how many looks the plan allows: one per batch up to the
// cap.
func plannedLooks(s *record.Sequential) int {
	return max(1, (s.Max+s.Batch-1)/s.Batch)
}

// InterimLevel is the level of a look before the cap: small, so that the
// final look keeps most of Alpha (Haybittle–Peto's idea), and at most
// Alpha/(2(K-1)) so the final look keeps at least half whatever K is.
func InterimLevel(s *record.Sequential) float64 {
	k := plannedLooks(s)
	if k <= 1 {
		return 0
	}
	return math.Min(s.Alpha/50, s.Alpha/float64(2*(k-1)))
}

// FinalLevel is the level of the look at the cap: what the interim looks
// did not use.
func FinalLevel(s *record.Sequential) float64 {
	return s.Alpha - float64(plannedLooks(s)-1)*InterimLevel(s)
}

// levelAt is the level of a look after n conversations.
func levelAt(s *record.Sequential, n int) float64 {
	if n >= s.Max {
		return FinalLevel(s)
	}
	return InterimLevel(s)
}

// evaluate computes one look from the record: the comparison over the
// first n conversations and their fresh triples.
func evaluate(s *record.Sequential, r *record.Run, n int) record.Look {
	d, f, _ := Arms(r, n)
	cmp := stats.CompareProbes(d, f)
	look := record.Look{Conversations: n, DilutedUnits: cmp.Diluted.Units, FreshUnits: cmp.Fresh.Units,
		Drop: cmp.Drop, P: cmp.P, Level: levelAt(s, n)}
	mdd := stats.MinDetectableDrop(cmp, s.Alpha, 0.8)
	if !math.IsInf(mdd, 1) {
		look.MinDetectableDrop = mdd
	}
	upper := math.Inf(1)
	if cmp.Testable && cmp.SE > 0 {
		upper = cmp.Drop + stats.StudentTQuantile(1-s.Alpha, cmp.DF)*cmp.SE
	} else if cmp.Testable && cmp.SE == 0 {
		upper = cmp.Drop
	}
	switch {
	case cmp.Testable && cmp.P <= look.Level:
		look.Decision = record.SeqDecay
	case mdd <= s.Effect && upper < s.Effect:
		// The run could catch the effect and the drop it saw is confidently
		// below it: more conversations would only buy a narrower "held".
		look.Decision = record.SeqHeld
	case n >= s.Max && mdd <= s.Effect:
		look.Decision = record.SeqHeld
	case n >= s.Max:
		look.Decision = record.SeqNotEnuf
	default:
		look.Decision = record.SeqContinue
	}
	return look
}

// Observe records the look after the conversations run so far and returns
// its decision.
func Observe(s *record.Sequential, r *record.Run) string {
	look := evaluate(s, r, len(r.Conversations))
	s.Looks = append(s.Looks, look)
	s.Decision = look.Decision
	s.Reason = reason(s, look)
	return s.Decision
}

// Replay recomputes every recorded look from the record (after a rejudge,
// say) and returns the decision they reach: the first look that decided.
// Decide uses it, so the exit code always follows from the record.
func Replay(s *record.Sequential, r *record.Run) (record.Look, bool) {
	for i, old := range s.Looks {
		look := evaluate(s, r, old.Conversations)
		s.Looks[i] = look
		if look.Decision != record.SeqContinue {
			s.Looks = s.Looks[:i+1]
			s.Decision, s.Reason = look.Decision, reason(s, look)
			return look, true
		}
	}
	if len(s.Looks) == 0 {
		return record.Look{}, false
	}
	last := s.Looks[len(s.Looks)-1]
	s.Decision, s.Reason = last.Decision, reason(s, last)
	return last, false
}

func reason(s *record.Sequential, l record.Look) string {
	switch l.Decision {
	case record.SeqDecay:
		return fmt.Sprintf("after %d conversations the diluted probes passed %.0f points less often than fresh, p = %.3g <= %.3g (this look's share of alpha %.2g)", l.Conversations, 100*l.Drop, l.P, l.Level, s.Alpha)
	case record.SeqHeld:
		return fmt.Sprintf("after %d conversations no decay shown (p = %.3g > %.3g); this run would have caught a drop of %.0f points with 80%% power", l.Conversations, l.P, l.Level, 100*l.MinDetectableDrop)
	case record.SeqNotEnuf:
		return fmt.Sprintf("reached the cap of %d conversations without showing decay (p = %.3g > %.3g), and the run could not have caught a drop of %.0f points reliably", s.Max, l.P, l.Level, 100*s.Effect)
	}
	return fmt.Sprintf("after %d conversations p = %.3g > %.3g: another batch", l.Conversations, l.P, l.Level)
}
