// Package compare is the rule `vibe-test compare` applies between two
// versions of a skill: does the candidate do worse than the base?
//
// The units are conversations, never turns: turns of one conversation
// share a context and are not independent. Each conversation contributes,
// per measure, the share of its judged turns that passed: the total (a
// turn passes when every must-criterion does) and each criterion of the
// rubrics the runs share. Base runs are pooled into one sample.
//
// For each measure, Welch's one-sided test asks whether the candidate's
// conversations score lower than the base's, with both versions' spread
// (stats.CompareArms: the base plays the "fresh" arm, the candidate the
// "diluted" one). With several measures, one of them would dip by chance
// far more often than alpha, so each is tested at alpha / (number of
// measures) (Bonferroni): an unchanged skill is rejected at most alpha of
// the time in all, which the calibrate package measures on A/A pairs. The
// rule is symmetric: swapping base and candidate asks the mirror question
// with the same arithmetic.
package compare

import (
	"slices"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// Total names the measure "share of judged turns that passed".
const Total = "total"

// Units scores a run's conversations: per measure (Total and each criterion
// id seen), one unit per conversation that has a pass or fail for it.
// Judge errors and uncertain turns count as neither.
func Units(r *record.Run) map[string][]stats.Unit {
	out := map[string][]stats.Unit{}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		total := stats.Unit{}
		crit := map[string]*stats.Unit{}
		var order []string
		for _, t := range c.Turns {
			if t.Kind == plan.KindFiller || t.Verdict == nil {
				continue
			}
			switch t.Verdict.Result {
			case judge.Pass:
				total.Passed++
			case judge.Fail:
			default:
				continue
			}
			total.Judged++
			for _, cv := range t.Verdict.Criteria {
				if cv.Result != judge.Pass && cv.Result != judge.Fail {
					continue
				}
				u, ok := crit[cv.ID]
				if !ok {
					u = &stats.Unit{}
					crit[cv.ID] = u
					order = append(order, cv.ID)
				}
				u.Judged++
				if cv.Result == judge.Pass {
					u.Passed++
				}
			}
		}
		if total.Judged > 0 {
			out[Total] = append(out[Total], total)
		}
		for _, id := range order {
			out[id] = append(out[id], *crit[id])
		}
	}
	return out
}

// Pool joins the units of several runs, measure by measure.
func Pool(runs ...map[string][]stats.Unit) map[string][]stats.Unit {
	out := map[string][]stats.Unit{}
	for _, r := range runs {
		for k, v := range r {
			out[k] = append(out[k], v...)
		}
	}
	return out
}

// Measure is one measure's comparison.
type Measure struct {
	Name string
	// Test compares the candidate (its Diluted side) with the base (its
	// Fresh side): Drop is base mean minus candidate mean.
	Test   stats.TwoArm
	Reject bool
}

// Result is the rule's outcome.
type Result struct {
	Alpha    float64
	Level    float64 // each measure's level: Alpha / len(Measures)
	Measures []Measure
	// Reject: some measure dropped significantly at Level.
	Reject bool
	// Undecided names why no verdict is possible (the total cannot be
	// tested: fewer than two scored conversations on a side).
	Undecided string
}

// Decide compares the candidate with the base on the total and on the
// given criteria (those every run's rubric shares), each at alpha divided
// by the number of measures. A criterion either side never scored is left
// out (and not counted in the division).
func Decide(base, cand map[string][]stats.Unit, criteria []string, alpha float64) Result {
	names := []string{Total}
	for _, id := range criteria {
		if len(base[id]) > 0 && len(cand[id]) > 0 && !slices.Contains(names, id) {
			names = append(names, id)
		}
	}
	res := Result{Alpha: alpha, Level: alpha / float64(len(names))}
	for _, name := range names {
		m := Measure{Name: name, Test: stats.CompareArms(cand[name], base[name])}
		m.Reject = m.Test.Testable && m.Test.P <= res.Level
		res.Reject = res.Reject || m.Reject
		res.Measures = append(res.Measures, m)
	}
	if t := res.Measures[0].Test; !t.Testable {
		res.Undecided = "the total needs at least 2 scored conversations in the base runs and in the candidate"
		res.Reject = false
	}
	return res
}
