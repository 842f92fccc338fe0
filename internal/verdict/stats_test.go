package verdict

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// fresh builds a fresh triple from results at turns 6, 8, 10.
func fresh(idx int, results ...string) record.Conversation {
	c := record.Conversation{Index: idx, Control: record.ArmFresh, Status: record.StatusCompleted}
	for i, r := range results {
		if r == "" {
			continue
		}
		c.Turns = append(c.Turns, record.Turn{Turn: []int{6, 8, 10}[i], Kind: "probe", Status: record.TurnOK, Verdict: &judge.Verdict{Result: r}})
	}
	return c
}

func TestComputeStats(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	r := &record.Run{}
	for i := 1; i <= 10; i++ {
		r.Conversations = append(r.Conversations, conv(i, record.StatusCompleted, P, P, P, P))
		r.Fresh = append(r.Fresh, fresh(i, P, P, P))
	}
	s := ComputeStats(r, 0.05, 0.3)
	// Wilson 95% for 10/10: [0.72, 1.00] (STATISTICS.md).
	if ts := s.PerTurn[0]; ts.N != 10 || math.Round(ts.Lo*100) != 72 || ts.Hi != 1 || ts.Population != record.PopAll {
		t.Errorf("turn 1: %+v", ts)
	}
	if s.EffectiveTurn != 10 || s.Comparison.P != 1 || s.Comparison.Diluted.Units != 10 || s.Comparison.Fresh.Units != 10 {
		t.Errorf("all pass: effective %d, comparison %+v", s.EffectiveTurn, s.Comparison)
	}
	if len(s.PerTurn) != 7 || s.PerTurn[4].Arm != "fresh" || s.PerTurn[4].Population != record.PopFresh || s.PerTurn[1].Population != record.PopGatePassed {
		t.Errorf("per-turn rows and populations: %+v", s.PerTurn)
	}

	// The gate's population: a conversation whose baseline failed is not
	// in the diluted arm, and the rates say so.
	r = &record.Run{Conversations: []record.Conversation{conv(1, record.StatusCompleted, P, F, F, F), conv(2, record.StatusBaselineFailed, F)},
		Fresh: []record.Conversation{fresh(1, P, P, P), fresh(2, P, P, P)}}
	s = ComputeStats(r, 0.05, 0.3)
	if s.Comparison.Diluted.Units != 1 || s.Comparison.Testable || s.EffectiveTurn != 1 {
		t.Errorf("one diluted unit: %+v effective %d", s.Comparison, s.EffectiveTurn)
	}
	if len(s.Dropped) != 1 || s.Dropped[0].Count != 1 || s.Dropped[0].Arm != "diluted" {
		t.Errorf("dropped: %+v", s.Dropped)
	}
	if pc := s.Probes[0]; pc.DilutedN != 1 || pc.Decayed != 1 || pc.FreshN != 2 {
		t.Errorf("probe 6: %+v", pc)
	}

	// Errors, judge errors and uncertain probes are dropped and counted,
	// never scored.
	c := conv(1, record.StatusCompleted, P, judge.JudgeError, judge.Uncertain, P)
	r = &record.Run{Conversations: []record.Conversation{c}, Fresh: []record.Conversation{fresh(1, P, "", P)}}
	r.Fresh[0].Abandoned = []record.Turn{{Turn: 8, Kind: "probe", Status: record.TurnError}}
	d, f, dropped := Arms(r, 0)
	want := func(u stats.ProbeUnit, ys ...int8) bool { return slices.Equal(u, stats.ProbeUnit(ys)) }
	if !want(d[0], stats.Missing, stats.Missing, stats.Pass) || !want(f[0], stats.Pass, stats.Missing, stats.Pass) {
		t.Errorf("units %+v %+v", d, f)
	}
	reasons := map[string]int{}
	for _, x := range dropped {
		reasons[x.Arm+": "+x.Reason] += x.Count
	}
	for _, want := range []string{"diluted: judge error", "diluted: uncertain (repeated judgements disagreed)", "fresh: the turn ended in an error"} {
		if reasons[want] != 1 {
			t.Errorf("dropped %q: %d (all: %v)", want, reasons[want], reasons)
		}
	}
}

// The effective turn claims the turns known to hold. Where no
// conversation's baseline passed there is none: not 1 (the gate stopped
// them all), and not 10 (the gate bypassed, every turn failing diluted and
// fresh alike, so no probe fell below 85% of a fresh rate of 0).
func TestEffectiveTurnNeedsAPassedBaseline(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	cases := []struct {
		name string
		run  *record.Run
		want int
	}{
		{"the gate stopped every conversation", &record.Run{
			Conversations: []record.Conversation{conv(1, record.StatusBaselineFailed, F), conv(2, record.StatusBaselineFailed, F)},
			Fresh:         []record.Conversation{fresh(1, F, F, F), fresh(2, F, F, F)}}, 0},
		{"the gate bypassed, a skill that never passed", &record.Run{Config: record.Config{NoBaselineGate: true},
			Conversations: []record.Conversation{conv(1, record.StatusCompleted, F, F, F, F), conv(2, record.StatusCompleted, F, F, F, F)},
			Fresh:         []record.Conversation{fresh(1, F, F, F), fresh(2, F, F, F)}}, 0},
		{"one baseline passed, its first probe fell", &record.Run{
			Conversations: []record.Conversation{conv(1, record.StatusCompleted, P, F, F, F), conv(2, record.StatusBaselineFailed, F)},
			Fresh:         []record.Conversation{fresh(1, P, P, P), fresh(2, P, P, P)}}, 1},
		{"held to the end", &record.Run{
			Conversations: []record.Conversation{conv(1, record.StatusCompleted, P, P, P, P), conv(2, record.StatusCompleted, P, P, P, P)},
			Fresh:         []record.Conversation{fresh(1, P, P, P), fresh(2, P, P, P)}}, 10},
		// Probe 2 failed every diluted conversation and was never judged
		// fresh: the turn is unknown from it on, not stepped over to 10.
		{"a probe with no fresh rate", &record.Run{
			Conversations: []record.Conversation{conv(1, record.StatusCompleted, P, P, F, P), conv(2, record.StatusCompleted, P, P, F, P)},
			Fresh:         []record.Conversation{fresh(1, P, judge.Uncertain, P), fresh(2, P, judge.Uncertain, P)}}, 6},
	}
	for _, tc := range cases {
		if got := ComputeStats(tc.run, 0.05, 0.3).EffectiveTurn; got != tc.want {
			t.Errorf("%s: effective turn %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A control's reading claims a lift only where the test shows one: one
// conversation a side passing against failing (p = 0.5) is chance half
// the time, and a negative lift is not "as well".
func TestControlReadings(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	noSkill := func(idx int, results ...string) record.Conversation {
		c := conv(idx, record.StatusCompleted, results...)
		c.Control = record.ControlNoSkill
		return c
	}
	cases := []struct {
		name         string
		with, contrl []record.Conversation
		want         string
	}{
		{"one a side", []record.Conversation{conv(1, record.StatusCompleted, P, P, P, P)}, []record.Conversation{noSkill(1, F, F, F, F)},
			"a lift of 100 points, not significant at alpha 0.05"},
		{"eight a side", many(8, func(i int) record.Conversation { return conv(i, record.StatusCompleted, P, P, P, P) }),
			many(8, func(i int) record.Conversation { return noSkill(i, F, F, F, F) }), "the skill lifts the pass rate by 100 points"},
		{"the same", []record.Conversation{conv(1, record.StatusCompleted, P, P, P, P)}, []record.Conversation{noSkill(1, P, P, P, P)},
			"no lift: the same pass rate without the skill"},
		{"better without", []record.Conversation{conv(1, record.StatusCompleted, P, F, F, F), conv(2, record.StatusCompleted, P, F, F, F)},
			[]record.Conversation{noSkill(1, P, P, P, P), noSkill(2, P, P, P, P)}, "no lift: the agent passed 100 points more often without the skill"},
	}
	for _, tc := range cases {
		cs := ComputeControls(&record.Run{Conversations: tc.with, Controls: tc.contrl}, 0.05)
		if len(cs) < 2 || !strings.HasPrefix(cs[1].Reading, tc.want) {
			t.Errorf("%s: probe 1's reading %+v, want %q", tc.name, cs, tc.want)
		}
	}
}

// What a summary says of a run must be what its record holds (found by a
// review recomputing every printed number from run.json):
//   - a set-up problem is no result: the per-turn lines counted a fresh
//     one a fail ("fresh 0/1") beside a fresh arm that left it out;
//   - with no first probe judged both diluted and fresh, no effective turn
//     is known: "1" said the first probe fell, which nothing measured;
//   - a median context is the median of an even list too;
//   - the over-call note and the checks' agreement count the fresh
//     sessions' verdicts too (they set the exit code's comparison), where
//     they counted the conversations' alone.
func TestReportedNumbersMatchTheRecord(t *testing.T) {
	P, F := judge.Pass, judge.Fail
	r := withFresh([]record.Conversation{conv(1, record.StatusCompleted, P, P, P, P), conv(2, record.StatusCompleted, P, P, P, P)}, P, P, P)
	setup := &r.Fresh[0].Turns[0]
	setup.Verdict = &judge.Verdict{Result: F, SetupProblem: "the census script failed"}
	over := &r.Fresh[1].Turns[1]
	over.Verdict = &judge.Verdict{Result: P, OverCall: true, Criteria: []judge.CriterionVerdict{{ID: "runs-census", Result: P, Source: "check", JudgeResult: F}}}
	Decide(r)
	for _, ts := range r.Outcome.Stats.PerTurn {
		if ts.Arm == "fresh" && ts.Probe == 1 && (ts.N != 1 || ts.Passes != 1) {
			t.Errorf("fresh probe 1: %d/%d, want 1/1 (the set-up problem left out, as the arm leaves it)", ts.Passes, ts.N)
		}
	}
	if r.Outcome.OverCalls != 1 || !strings.Contains(strings.Join(r.Outcome.Notes, " "), "(0 in the conversations, 1 in fresh sessions)") {
		t.Errorf("over-calls %d, notes %q", r.Outcome.OverCalls, r.Outcome.Notes)
	}
	if st := r.Outcome.Stats; st.CheckTotal != 1 || st.CheckAgreed != 0 {
		t.Errorf("checks: agreed on %d of %d, want 0 of 1 (the fresh session's)", st.CheckAgreed, st.CheckTotal)
	}

	// A size printed as the median is one: the demo's two contexts of a
	// probe, 17,997 and 18,160, printed 18,160 "(median)".
	if m := medianValue([]int64{18160, 17997}); m != 18079 {
		t.Errorf("median of 17,997 and 18,160: %d", m)
	}

	// Every diluted probe errored: nothing is known to hold.
	errored := withFresh([]record.Conversation{conv(1, record.StatusCompleted, P, P, P, P), conv(2, record.StatusCompleted, P, P, P, P)}, P, P, P)
	for i := range errored.Conversations {
		for k := range errored.Conversations[i].Turns {
			if tn := &errored.Conversations[i].Turns[k]; tn.Kind == "probe" {
				tn.Status, tn.Verdict = record.TurnError, nil
			}
		}
	}
	Decide(errored)
	if e := errored.Outcome.Stats.EffectiveTurn; e != 0 {
		t.Errorf("effective turn %d with no diluted probe judged, want none (0)", e)
	}
}
