// Package compare is the rule `vibe-test compare` applies between two
// versions of a skill: does the candidate do worse than the base?
//
// The units are conversations, never turns: turns of one conversation
// share a context and are not independent. Each conversation contributes,
// per measure, the share of its judged turns that passed: the total (a
// turn passes when every must-criterion does) and each criterion of the
// rubrics the runs share. Base runs are pooled into one sample.
//
// The test is a permutation test of the conversations' labels (base or
// candidate): if the versions do not differ, which conversation came from
// which run is arbitrary, so the observed gap is compared with the gaps of
// relabellings (every one where there are few, else random ones). That
// holds the level exactly at any sizes (a base
// of 6 conversations against a candidate of 30 was rejected up to 0.089 of
// the time by Welch's t with alpha split over the measures; skewed shares
// at small n are where the t distribution misleads). Each permutation
// relabels whole conversations, so the measures keep their dependence,
// and a measure is rejected only when its statistic beats the largest
// statistic over every measure in all but alpha of the relabellings
// (Westfall–Young maxT): an unchanged skill is rejected on any measure at
// most alpha of the time, which the calibrate package measures on A/A
// pairs, equal and unequal in size.
package compare

import (
	"fmt"
	"math"
	"slices"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// Total names the measure "share of judged turns that passed".
const Total = "total"

// Scored is one conversation's scores: per measure (Total and each
// criterion id it was judged on), its judged turns passed of those judged.
type Scored map[string]stats.Unit

// Score scores a run's conversations: one Scored per conversation with a
// pass or fail on some measure. Judge errors and uncertain turns count as
// neither.
func Score(r *record.Run) []Scored {
	var out []Scored
	for i := range r.Conversations {
		c := &r.Conversations[i]
		sc := Scored{}
		total := stats.Unit{}
		for k := range c.Turns {
			t := &c.Turns[k] // a turn is large: not copied
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
				u := sc[cv.ID]
				u.Judged++
				if cv.Result == judge.Pass {
					u.Passed++
				}
				sc[cv.ID] = u
			}
		}
		if total.Judged > 0 {
			sc[Total] = total
			out = append(out, sc)
		}
	}
	return out
}

// ByMeasure regroups conversations' scores by measure, in conversation
// order.
func ByMeasure(convs []Scored) map[string][]stats.Unit {
	out := map[string][]stats.Unit{}
	for _, c := range convs {
		for id, u := range c {
			out[id] = append(out[id], u)
		}
	}
	return out
}

// Permutations is how many relabellings the test draws: enough that a
// p-value near alpha/10 is resolved, and a decision takes milliseconds.
// Where there are no more relabellings than that, it takes each once.
const Permutations = 1999

// permutationSeed fixes the relabellings, so the same runs always get the
// same verdict.
const permutationSeed = 20261202

// Measure is one measure's comparison.
type Measure struct {
	Name string
	// Test compares the candidate (its Diluted side) with the base (its
	// Fresh side): Drop is base mean minus candidate mean. Its P is Welch's
	// t distribution's, shown for reference only.
	Test stats.TwoArm
	// P is the permutation p-value of this measure alone, Adjusted the one
	// adjusted for every measure tested (the one compared with alpha).
	P, Adjusted float64
	Reject      bool
}

// Result is the rule's outcome.
type Result struct {
	Alpha    float64
	Measures []Measure
	// Reject: some measure dropped significantly.
	Reject bool
	// Undecided names why no verdict is possible (the total cannot be
	// tested: fewer than two scored conversations on a side).
	Undecided string
}

// Decide compares the candidate's conversations with the base's on the
// total and on the given criteria (those every run's rubric shares) by the
// permutation test, rejecting a measure whose adjusted p-value is at most
// alpha. A criterion either side never scored is left out.
func Decide(base, cand []Scored, criteria []string, alpha float64) Result {
	// A conversation with no scored total is no unit (Score gives none):
	// relabelled with the rest, it made the smallest p-value a count the
	// gate below could not see.
	scoredOnly := func(convs []Scored) []Scored {
		return slices.DeleteFunc(slices.Clone(convs), func(c Scored) bool { return c[Total].Judged == 0 })
	}
	base, cand = scoredOnly(base), scoredOnly(cand)
	baseBy, candBy := ByMeasure(base), ByMeasure(cand)
	names := []string{Total}
	for _, id := range criteria {
		if len(baseBy[id]) > 0 && len(candBy[id]) > 0 && !slices.Contains(names, id) {
			names = append(names, id)
		}
	}
	vectors := func(convs []Scored) []stats.Scores {
		out := make([]stats.Scores, len(convs))
		for i, c := range convs {
			out[i] = make(stats.Scores, len(names))
			for m, name := range names {
				out[i][m] = c[name]
			}
		}
		return out
	}
	perm := stats.PermuteLower(vectors(base), vectors(cand), len(names), Permutations, permutationSeed)
	res := Result{Alpha: alpha}
	for m, name := range names {
		me := Measure{Name: name, Test: perm[m].Test, P: perm[m].P, Adjusted: perm[m].Adjusted}
		me.Reject = me.Test.Testable && me.Adjusted <= alpha
		res.Reject = res.Reject || me.Reject
		res.Measures = append(res.Measures, me)
	}
	t := res.Measures[0].Test
	if !t.Testable {
		res.Undecided = "the total needs at least 2 scored conversations in the base runs and in the candidate"
		res.Reject = false
		return res
	}
	// A relabelling test's p-value is at least one over the number of ways
	// to choose the candidate's conversations among all: with 2 and 2 that
	// is 1/6, and no scores, however far apart, reach alpha 0.05. An
	// ACCEPT there passed a candidate that failed every turn.
	// Counted as the test relabels: every scored conversation.
	if ways := float64(stats.Subsets(len(base)+len(cand), min(len(base), len(cand)), int(math.Ceil(1/alpha)))); 1/ways > alpha*(1+1e-9) {
		res.Undecided = fmt.Sprintf("with %d base and %d candidate conversations the test cannot reject at alpha %.3g whatever the scores: its smallest p-value is 1/%.0f = %.3g; run more conversations",
			len(base), len(cand), alpha, ways, 1/ways)
		res.Reject = false
		for i := range res.Measures {
			res.Measures[i].Reject = false
		}
	}
	return res
}
