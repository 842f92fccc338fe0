package rejudge

import (
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
)

func TestRejudgeVerdictChanges(t *testing.T) {
	t.Parallel()
	old := &judge.Verdict{Result: judge.Pass, Criteria: []judge.CriterionVerdict{
		{ID: "a", Kind: "must", Result: judge.Pass, Source: "check"},
		{ID: "b", Kind: "should", Result: judge.Pass, Source: "judge"},
	}}
	var st changeStats
	got := verdictChanges("conv 2", 6, old, judge.Verdict{Result: judge.Fail, EscapeHatch: true, EscapeReason: "hand-rolled\nit", Criteria: []judge.CriterionVerdict{
		{ID: "a", Kind: "must", Result: judge.Fail, Source: "check"},
		{ID: "b", Kind: "should", Result: judge.Pass, Source: "judge"},
	}}, &st)
	want := []string{"conv 2 turn 6: pass → fail", "conv 2 turn 6 a: pass → fail (check)", "conv 2 turn 6 escape-hatch: no → yes (hand-rolled it)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || st != (changeStats{results: 1, criteria: 1}) {
		t.Errorf("got %q %+v", got, st)
	}
	// A judge error on either side shows no criterion as a pass or a fail.
	st = changeStats{}
	got = verdictChanges("conv 1", 1, &judge.Verdict{Result: judge.JudgeError, Error: "x"}, *old, &st)
	if strings.Join(got, "\n") != "conv 1 turn 1: judge-error → pass" {
		t.Errorf("got %q", got)
	}
	got = verdictChanges("conv 1", 1, old, judge.Verdict{Result: judge.JudgeError, Error: "bad answer"}, &st)
	if strings.Join(got, "\n") != "conv 1 turn 1: pass → judge-error (bad answer)" || st.errors != 1 {
		t.Errorf("got %q %+v", got, st)
	}
}
