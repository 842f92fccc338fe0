package verdict

import (
	"fmt"

	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// passCount counts pass/fail verdicts of judged turn k (0: the baseline,
// else probe k) over conversations.
func passCount(convs []record.Conversation, control string, k int) (pass, n int) {
	for i := range convs {
		c := &convs[i]
		if c.Control != control {
			continue
		}
		if p, ok := judgedResult(c, k); ok {
			n++
			if p {
				pass++
			}
		}
	}
	return pass, n
}

// ComputeControls compares the run with its controls; a lift is read as
// the skill's only when its one-sided p is at most alpha.
func ComputeControls(r *record.Run, alpha float64) []record.ControlStat {
	var out []record.ControlStat
	kinds := map[string]bool{}
	for _, c := range r.Controls {
		kinds[c.Control] = true
	}
	if kinds[record.ControlNoSkill] {
		// Where the skill earns its lines: the lift over an agent that never
		// saw it, one-sided (the skill helps).
		for k := 0; k <= probeCount; k++ {
			turn := 1
			if k > 0 {
				turn = plan.ProbeTurns[k-1]
			}
			s := record.ControlStat{Control: record.ControlNoSkill, Turn: turn, Probe: k}
			s.Passes, s.N = passCount(r.Conversations, "", k)
			s.ControlPass, s.ControlN = passCount(r.Controls, record.ControlNoSkill, k)
			if s.N == 0 || s.ControlN == 0 {
				continue
			}
			s.Lift = float64(s.Passes)/float64(s.N) - float64(s.ControlPass)/float64(s.ControlN)
			s.P = stats.FisherGreater(s.Passes, s.N-s.Passes, s.ControlPass, s.ControlN-s.ControlPass)
			// "The skill lifts the pass rate by 100 points" on one
			// conversation a side (p = 0.5) claimed what chance alone
			// gives half the time.
			switch {
			case s.Lift > 0 && s.P <= alpha:
				s.Reading = fmt.Sprintf("the skill lifts the pass rate by %.0f points", 100*s.Lift)
			case s.Lift > 0:
				s.Reading = fmt.Sprintf("a lift of %.0f points, not significant at alpha %.2g: on these counts chance alone could give it", 100*s.Lift, alpha)
			case s.Lift == 0:
				s.Reading = "no lift: the same pass rate without the skill"
			default:
				s.Reading = fmt.Sprintf("no lift: the agent passed %.0f points more often without the skill", -100*s.Lift)
			}
			out = append(out, s)
		}
	}
	return out
}
