package verdict

import (
	"fmt"
	"strings"

	"github.com/vibe-test/vibe-test/internal/record"
)

// notes are the outcome's lines beside the verdict: what was left out and
// why, judge over-calls, model changes, and the bypass banner first.
func notes(f *facts, verdict string) []string {
	r := f.r
	var out []string
	if f.judgeErrors > 0 && verdict != record.VerdictError {
		// resume, not rejudge: rejudge writes verdicts-N.json beside
		// run.json, and neither report nor compare reads it.
		what := fmt.Sprintf("%d judged turns ended in judge errors; they count", f.judgeErrors)
		if f.judgeErrors == 1 {
			what = "1 judged turn ended in a judge error; it counts"
		}
		out = append(out, what+" as neither pass nor fail (`vibe-test resume` judges again from the saved transcripts).")
	}
	if f.uncertain > 0 {
		out = append(out, fmt.Sprintf("%s uncertain (the repeated judgements disagreed): left out of the comparison.", plural(f.uncertain, "judged turn is", "judged turns are")))
	}
	if f.gateStops > 0 && !r.Config.NoBaselineGate && verdict != record.VerdictBaselineFailed {
		out = append(out, fmt.Sprintf("The baseline failed in %d of %s; the gate stopped %s, so the diluted arm holds only %s.", f.gateStops, plural(f.n, "conversation", "conversations"), pronoun(f.gateStops), record.PopGatePassed))
	}
	for _, d := range f.stats.Dropped {
		if d.Arm == "diluted" && d.What == "conversations" && d.Reason != "" && !r.Config.NoBaselineGate && f.gateStops > 0 && strings.HasPrefix(d.Reason, "the baseline") {
			continue // said above
		}
		out = append(out, fmt.Sprintf("Left out of the %s arm: %s (%s).", d.Arm, plural(d.Count, strings.TrimSuffix(d.What, "s"), d.What), d.Reason))
	}
	if f.overCalls > 0 {
		out = append(out, fmt.Sprintf("%d escape-hatch flags from the judge (%d in the conversations, %d in fresh sessions) were downgraded to partial compliance: a must-criterion's deterministic check passed (judge over-calls).", f.overCalls, f.overCalls-f.freshOverCalls, f.freshOverCalls))
	}
	var changes []string
	for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh} {
		for i := range arm {
			if mc := arm[i].ModelChange; mc != "" {
				unit := "conversation"
				if arm[i].Control == record.ArmFresh {
					unit = "fresh triple"
				}
				changes = append(changes, fmt.Sprintf("MODEL CHANGED in %s %d: %s. A drop here may be the model, not dilution.", unit, arm[i].Index, mc))
			}
		}
	}
	out = append(changes, out...)
	if r.GateBypassed {
		out = append([]string{record.BypassBanner}, out...)
	}
	return out
}
