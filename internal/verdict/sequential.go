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
// first n conversations and their fresh triples. A look says held early
// only when the drop seen is confidently below the effect (its one-sided
// upper bound) and the rule catches the effect at this size in
// PowerTarget of simulated runs like this one (power.go); at the cap the
// power alone decides between held and not enough evidence, as at a fixed
// size. The power is the test's at this look's own level (a small share
// of alpha before the cap, the rest at it), the level the look decides
// with: the looks before it can only add to it, so the figure is a lower
// bound of what the rule catches by this look, never more. wording adds
// the smallest drop caught at a deciding look, which only the sentences
// use.
func evaluate(s *record.Sequential, r *record.Run, ix *runIndex, n int, wording bool) record.Look {
	d, f, _ := arms(r, ix, n)
	cmp := stats.CompareProbes(d, f)
	look := record.Look{Conversations: n, DilutedUnits: cmp.Diluted.Units, FreshUnits: cmp.Fresh.Units,
		Drop: cmp.Drop, P: cmp.P, Level: levelAt(s, n)}
	powered := func(filtered bool) bool {
		if !cmp.Testable {
			return false
		}
		// Before the cap a closed-form bound that overstates power (it
		// takes the spread seen as the truth) filters the simulation:
		// where even it says the effect is out of reach, the simulated
		// power is lower still. At the cap the power is always simulated,
		// for the sentence.
		if filtered && stats.MinDetectableDrop(cmp, look.Level, PowerTarget) > s.Effect {
			return false
		}
		ok, power := worldOf(r, ix, n, look.Level).reachesPower(n, s.Effect)
		look.Power = power
		return ok
	}
	switch {
	case cmp.Testable && cmp.P <= look.Level:
		look.Decision = record.SeqDecay
	case n < s.Max && upperDrop(cmp, s.Alpha) < s.Effect && powered(true):
		look.Decision = record.SeqHeld
	case n >= s.Max && powered(false):
		look.Decision = record.SeqHeld
	case n >= s.Max:
		look.Decision = record.SeqNotEnuf
	default:
		look.Decision = record.SeqContinue
	}
	if wording && look.Decision != record.SeqContinue && look.Decision != record.SeqDecay && cmp.Testable {
		if mdd := worldOf(r, ix, n, look.Level).minDetectableDrop(n); !math.IsInf(mdd, 1) {
			look.MinDetectableDrop = mdd
		}
	}
	return look
}

// upperDrop is the one-sided (1-alpha) upper confidence bound of the drop
// (+Inf when the comparison is not testable).
func upperDrop(cmp stats.TwoArm, alpha float64) float64 {
	switch {
	case !cmp.Testable:
		return math.Inf(1)
	case cmp.SE == 0:
		return cmp.Drop
	}
	return cmp.Drop + stats.StudentTQuantile(1-alpha, cmp.DF)*cmp.SE
}

// Observe records the look after the conversations run so far and returns
// its decision.
func Observe(s *record.Sequential, r *record.Run) string {
	return ObserveWith(s, r, Options{})
}

// ObserveWith is Observe with options (ExitOnly skips the wording's
// simulated smallest drop, never the power a decision needs).
func ObserveWith(s *record.Sequential, r *record.Run, opts Options) string {
	look := evaluate(s, r, indexRun(r), len(r.Conversations), !opts.ExitOnly)
	s.Looks = append(s.Looks, look)
	s.Decision = look.Decision
	s.Reason = reason(s, look)
	return s.Decision
}

// replay recomputes every recorded look from the record (after a rejudge,
// say) and returns the decision they reach: the first look that decided.
// Decide uses it, so the exit code always follows from the record.
func replay(s *record.Sequential, r *record.Run, ix *runIndex, wording bool) (record.Look, bool) {
	for i, old := range s.Looks {
		look := evaluate(s, r, ix, old.Conversations, wording)
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
		return fmt.Sprintf("after %d conversations no decay shown (p = %.3g > %.3g); simulated on runs like this one, this look's test alone catches a drop of %.0f points in %.0f%% of runs (the looks before it only add to that)", l.Conversations, l.P, l.Level, 100*s.Effect, percentDown(l.Power))
	case record.SeqNotEnuf:
		return fmt.Sprintf("reached the cap of %d conversations without showing decay (p = %.3g > %.3g), and the test at the cap catches a drop of %.0f points in only %.0f%% of simulated runs like this one", s.Max, l.P, l.Level, 100*s.Effect, percentDown(l.Power))
	}
	return fmt.Sprintf("after %d conversations p = %.3g > %.3g: another batch", l.Conversations, l.P, l.Level)
}

// percentDown is a power in whole percent, rounded down: a power of
// 0.7975 is short of PowerTarget and was printed "in only 80%".
func percentDown(p float64) float64 {
	return math.Floor(100*p + 1e-9)
}
