package result

import (
	"fmt"

	"github.com/vibe-test/vibe-test/stats"
)

// Sequential is the record of --until-decided: every interim look of the
// SPRT and why the run stopped.
type Sequential struct {
	P0       float64 `json:"p0"`
	P1       float64 `json:"p1"`
	Alpha    float64 `json:"alpha"`
	Beta     float64 `json:"beta"`
	Max      int     `json:"max_conversations"`
	Batch    int     `json:"batch"`
	Looks    []Look  `json:"looks"`
	Decision string  `json:"decision"` // decay, no-decay, continue, cap
	Reason   string  `json:"reason,omitempty"`
}

// Look is one interim look, after a batch.
type Look struct {
	Conversations int     `json:"conversations"` // run so far
	Observations  int     `json:"observations"`  // of them, with a passed baseline and a judged probe
	Decayed       int     `json:"decayed"`
	LLR           float64 `json:"llr"`
	Decision      string  `json:"decision"`
}

// SPRT returns the test the record describes.
func (s *Sequential) SPRT() stats.SPRT {
	return stats.SPRT{P0: s.P0, P1: s.P1, Alpha: s.Alpha, Beta: s.Beta, Max: s.Max}
}

// Observe feeds the finished conversations, in order, to the SPRT and
// records the look. It returns the decision.
func (s *Sequential) Observe(r *Run) string {
	test := s.SPRT()
	st := stats.SPRTState{}
	look := Look{}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		look.Conversations++
		base, ok := judgedResult(c, 1)
		if !ok {
			continue
		}
		var probes []bool
		for _, n := range judgedTurns[1:] {
			if p, ok := judgedResult(c, n); ok {
				probes = append(probes, p)
			}
		}
		decayed, counted := stats.Classify(base, probes)
		if !counted {
			continue
		}
		st = test.Update(st, decayed)
		if st.Decision != stats.DecisionContinue && st.Decision != "" {
			break
		}
	}
	look.Observations, look.Decayed, look.LLR = st.N, st.Decayed, st.LLR
	look.Decision = st.Decision
	if look.Decision == "" {
		look.Decision = stats.DecisionContinue
	}
	if look.Decision == stats.DecisionContinue && look.Conversations >= s.Max {
		look.Decision = stats.DecisionCap
	}
	s.Looks = append(s.Looks, look)
	s.Decision = look.Decision
	upper, lower := test.Bounds()
	switch s.Decision {
	case stats.DecisionDecay:
		s.Reason = fmt.Sprintf("the log-likelihood ratio %.2f crossed the upper bound %.2f after %d observations: decay of at least P1 = %.2f is the better explanation (false-alarm rate %.2g)", look.LLR, upper, look.Observations, s.P1, s.Alpha)
	case stats.DecisionNoDecay:
		s.Reason = fmt.Sprintf("the log-likelihood ratio %.2f crossed the lower bound %.2f after %d observations: no decay beyond the noise floor P0 = %.2f (miss rate %.2g against P1 = %.2f)", look.LLR, lower, look.Observations, s.P0, s.Beta, s.P1)
	case stats.DecisionCap:
		s.Reason = fmt.Sprintf("reached the cap of %d conversations without crossing a bound (log-likelihood ratio %.2f, bounds %.2f and %.2f): undecided", s.Max, look.LLR, lower, upper)
	default:
		s.Reason = fmt.Sprintf("log-likelihood ratio %.2f between the bounds %.2f and %.2f: another batch", look.LLR, lower, upper)
	}
	return s.Decision
}
