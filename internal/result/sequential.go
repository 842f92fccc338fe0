package result

import (
	"fmt"
	"math"

	"github.com/vibe-test/vibe-test/internal/stats"
)

// Sequential is the record of --until-decided: conversations are added a
// batch at a time (each with its fresh triple) and the two-arm comparison
// is looked at after every batch, until it shows decay, shows the skill
// held, or the cap is reached.
//
// The false-alarm guarantee holds by construction, whatever the baselines,
// errors and stopping do: a look before the cap tests at InterimLevel, the
// look at the cap at FinalLevel, and the levels of all the looks the plan
// allows add up to Alpha (a union bound, so it needs no assumption about
// how the looks depend on each other). Stopping early for "held" only
// removes chances to say "decay". The calibrate package measures the
// resulting rates.
type Sequential struct {
	Alpha    float64 `json:"alpha"`
	Max      int     `json:"max_conversations"`
	Batch    int     `json:"batch"`
	Effect   float64 `json:"effect"`
	Looks    []Look  `json:"looks"`
	Decision string  `json:"decision"` // decay, held, not-enough-evidence, continue
	Reason   string  `json:"reason,omitempty"`
	// P0, P1 and Beta are set only on runs made with the earlier SPRT
	// design (schema 1), kept so they still load.
	P0   float64 `json:"p0,omitempty"`
	P1   float64 `json:"p1,omitempty"`
	Beta float64 `json:"beta,omitempty"`
}

// Look is one interim look, after a batch.
type Look struct {
	Conversations int     `json:"conversations"` // run so far
	DilutedUnits  int     `json:"diluted_units"`
	FreshUnits    int     `json:"fresh_units"`
	Drop          float64 `json:"drop"`
	P             float64 `json:"p"`
	Level         float64 `json:"level"` // the p-value at or below which this look says decay
	// MinDetectableDrop is 0 when no drop could be detected yet.
	MinDetectableDrop float64 `json:"min_detectable_drop"`
	Decision          string  `json:"decision"`
	// Older runs' SPRT looks.
	Observations int     `json:"observations,omitempty"`
	Decayed      int     `json:"decayed,omitempty"`
	LLR          float64 `json:"llr,omitempty"`
}

// Sequential decisions.
const (
	SeqContinue = "continue"
	SeqDecay    = "decay"
	SeqHeld     = "held"
	SeqNotEnuf  = "not-enough-evidence"
)

// plannedLooks is how many looks the plan allows: one per batch up to the
// cap.
func (s *Sequential) plannedLooks() int {
	return max(1, (s.Max+s.Batch-1)/s.Batch)
}

// InterimLevel is the level of a look before the cap: small, so that the
// final look keeps most of Alpha (Haybittle–Peto's idea), and at most
// Alpha/(2(K-1)) so the final look keeps at least half whatever K is.
func (s *Sequential) InterimLevel() float64 {
	k := s.plannedLooks()
	if k <= 1 {
		return 0
	}
	return math.Min(s.Alpha/50, s.Alpha/float64(2*(k-1)))
}

// FinalLevel is the level of the look at the cap: what the interim looks
// did not use.
func (s *Sequential) FinalLevel() float64 {
	return s.Alpha - float64(s.plannedLooks()-1)*s.InterimLevel()
}

// levelAt is the level of a look after n conversations.
func (s *Sequential) levelAt(n int) float64 {
	if n >= s.Max {
		return s.FinalLevel()
	}
	return s.InterimLevel()
}

// evaluate computes one look from the record: the comparison over the
// first n conversations and their fresh triples.
func (s *Sequential) evaluate(r *Run, n int) Look {
	d, f, _ := Arms(r, n)
	cmp := stats.CompareArms(d, f)
	look := Look{Conversations: n, DilutedUnits: cmp.Diluted.Units, FreshUnits: cmp.Fresh.Units,
		Drop: cmp.Drop, P: cmp.P, Level: s.levelAt(n)}
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
		look.Decision = SeqDecay
	case mdd <= s.Effect && upper < s.Effect:
		// The run could catch the effect and the drop it saw is confidently
		// below it: more conversations would only buy a narrower "held".
		look.Decision = SeqHeld
	case n >= s.Max && mdd <= s.Effect:
		look.Decision = SeqHeld
	case n >= s.Max:
		look.Decision = SeqNotEnuf
	default:
		look.Decision = SeqContinue
	}
	return look
}

// Observe records the look after the conversations run so far and returns
// its decision.
func (s *Sequential) Observe(r *Run) string {
	look := s.evaluate(r, len(r.Conversations))
	s.Looks = append(s.Looks, look)
	s.Decision = look.Decision
	s.Reason = s.reason(look)
	return s.Decision
}

// Replay recomputes every recorded look from the record (after a rejudge,
// say) and returns the decision they reach: the first look that decided.
// Decide uses it, so the exit code always follows from the record.
func (s *Sequential) Replay(r *Run) (Look, bool) {
	for i, old := range s.Looks {
		look := s.evaluate(r, old.Conversations)
		s.Looks[i] = look
		if look.Decision != SeqContinue {
			s.Looks = s.Looks[:i+1]
			s.Decision, s.Reason = look.Decision, s.reason(look)
			return look, true
		}
	}
	if len(s.Looks) == 0 {
		return Look{}, false
	}
	last := s.Looks[len(s.Looks)-1]
	s.Decision, s.Reason = last.Decision, s.reason(last)
	return last, false
}

func (s *Sequential) reason(l Look) string {
	switch l.Decision {
	case SeqDecay:
		return fmt.Sprintf("after %d conversations the diluted probes passed %.0f points less often than fresh, p = %.3g <= %.3g (this look's share of alpha %.2g)", l.Conversations, 100*l.Drop, l.P, l.Level, s.Alpha)
	case SeqHeld:
		return fmt.Sprintf("after %d conversations no decay shown (p = %.3g > %.3g); this run would have caught a drop of %.0f points with 80%% power", l.Conversations, l.P, l.Level, 100*l.MinDetectableDrop)
	case SeqNotEnuf:
		return fmt.Sprintf("reached the cap of %d conversations without showing decay (p = %.3g > %.3g), and the run could not have caught a drop of %.0f points reliably", s.Max, l.P, l.Level, 100*s.Effect)
	}
	return fmt.Sprintf("after %d conversations p = %.3g > %.3g: another batch", l.Conversations, l.P, l.Level)
}
