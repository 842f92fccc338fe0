package verdict

import (
	"fmt"
	"math"
	"strings"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
)

// ShapeOf names a conversation's sequence of pass/fail over its judged turns
// (judge errors and turns not run are left out).
func ShapeOf(c *record.Conversation) string {
	var seq []bool
	for i := range c.Turns {
		switch c.Turns[i].Result() {
		case judge.Pass:
			seq = append(seq, true)
		case judge.Fail:
			seq = append(seq, false)
		}
	}
	if len(seq) == 0 {
		return ""
	}
	if len(seq) == 1 {
		if seq[0] {
			return "" // one passing point is no shape at all
		}
		return record.ShapeBaselineFailed
	}
	allPass, allFail := true, true
	for _, p := range seq {
		allPass = allPass && p
		allFail = allFail && !p
	}
	switch {
	case allPass:
		return record.ShapeHeld
	case allFail:
		return record.ShapeNeverWorked
	}
	// Mixed: decayed when it starts passing and, once failed, never passes.
	if seq[0] {
		failed := false
		for _, p := range seq {
			if !p {
				failed = true
			} else if failed {
				return record.ShapeUnstable
			}
		}
		return record.ShapeDecayed
	}
	return record.ShapeUnstable
}

// BaselineWorksShare: the skill "does not work fresh" (exit 2) when fewer
// than this share of the judged baselines passed. A skill that passes its
// base task 13 times in 16 works, noisily; one that fails most of the time
// has nothing to decay from.
const BaselineWorksShare = 0.5

// Decide is the one pre-declared decision function: it fills in each
// conversation's shape and the run's outcome and status, and the exit code
// and the sentence come from the same branch, so they never disagree. It
// reads only the record, so `report` can redo it on old runs, and the
// calibrate package pushes simulated runs through it to measure its
// false-alarm rate.
func Decide(r *record.Run) {
	o := record.Outcome{Rule: r.Config.Rule}
	if o.Rule == "" {
		o.Rule = record.RuleDilutedVsFresh
	}
	decayed, baseJudged, basePassed, errored, interrupted, incomplete := 0, 0, 0, 0, 0, 0
	var setup []string // "conversation N turn T: output" of set-up problems
	gateStops, budgetStops := 0, 0
	shapes := map[string]int{}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		c.Shape = ShapeOf(c)
		if c.Shape != "" {
			shapes[c.Shape]++
		}
		switch c.Status {
		case record.StatusError:
			errored++
		case record.StatusInterrupted, record.StatusRunning, record.StatusPending:
			interrupted++
		case record.StatusBaselineFailed:
			gateStops++
		case record.StatusBudgetExhausted:
			budgetStops++
		}
		base := c.TurnAt(1)
		baseResult := ""
		if base != nil {
			baseResult = base.Result()
		}
		switch baseResult {
		case judge.Pass:
			baseJudged++
			basePassed++
		case judge.Fail:
			baseJudged++
		}
		convDecayed := false
		for k := range c.Turns {
			t := &c.Turns[k]
			if t.Verdict != nil && t.Verdict.SetupProblem != "" {
				setup = append(setup, fmt.Sprintf("conversation %d turn %d: %s", c.Index, t.Turn, t.Verdict.SetupProblem))
			}
			if t.Verdict != nil {
				if t.Verdict.OverCall {
					o.OverCalls++
				}
				if t.Verdict.EscapeHatch {
					o.Escapes++
				}
				switch t.Verdict.Result {
				case judge.JudgeError:
					o.JudgeErrors++
				case judge.Uncertain:
					o.Uncertain++
				}
			}
			if t.Kind != plan.KindProbe {
				continue
			}
			if base != nil && base.ToolCallCount >= 3 && t.Status == record.TurnOK && t.ToolCallCount*5 <= base.ToolCallCount {
				o.StoppedConsulting = append(o.StoppedConsulting, fmt.Sprintf("conversation %d turn %d: %d tool calls after %d at the baseline", c.Index, t.Turn, t.ToolCallCount, base.ToolCallCount))
			}
			if baseResult != judge.Pass {
				continue
			}
			switch t.Result() {
			case judge.Pass:
				o.ProbesJudged++
			case judge.Fail:
				o.ProbesJudged++
				o.ProbesFailed++
				convDecayed = true
			}
		}
		if convDecayed {
			decayed++
		}
		if c.Status == record.StatusCompleted && c.ProbeAt(probeCount) == nil {
			incomplete++
		}
	}
	for i := range r.Fresh {
		c := &r.Fresh[i]
		switch c.Status {
		case record.StatusError:
			errored++
		case record.StatusInterrupted, record.StatusRunning, record.StatusPending:
			interrupted++
		case record.StatusBudgetExhausted:
			budgetStops++
		}
		for _, t := range c.Turns {
			if t.Verdict != nil && t.Verdict.SetupProblem != "" {
				setup = append(setup, fmt.Sprintf("fresh triple %d turn %d: %s", c.Index, t.Turn, t.Verdict.SetupProblem))
			}
			if t.Verdict != nil {
				switch t.Verdict.Result {
				case judge.JudgeError:
					o.JudgeErrors++
				case judge.Uncertain:
					o.Uncertain++
				}
			}
		}
	}
	n := len(r.Conversations)
	switch {
	case interrupted > 0:
		r.Status = record.StatusInterrupted
	case budgetStops > 0:
		r.Status = record.StatusBudgetExhausted
	case n > 0 && gateStops == n:
		r.Status = record.StatusBaselineFailed
	case errored > 0:
		r.Status = record.StatusError
	default:
		r.Status = record.StatusCompleted
	}
	if len(shapes) == 1 {
		for s := range shapes {
			o.Shape = s
		}
	} else if len(shapes) > 1 {
		var parts []string
		for _, s := range []string{record.ShapeHeld, record.ShapeDecayed, record.ShapeNeverWorked, record.ShapeUnstable, record.ShapeBaselineFailed} {
			if shapes[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", shapes[s], s))
			}
		}
		o.Shape = "mixed: " + strings.Join(parts, ", ")
	}

	alpha := r.Config.Alpha
	if alpha <= 0 {
		alpha = 0.05
	}
	effect := r.Config.Effect
	if effect <= 0 {
		effect = record.DefaultEffect
	}
	o.Stats = ComputeStats(r, alpha, effect)
	o.Controls = ComputeControls(r)
	cmp := o.Stats.Comparison
	freshRate := 0.0
	if cmp.Fresh.Probes > 0 {
		freshRate = float64(cmp.Fresh.Passed) / float64(cmp.Fresh.Probes)
	}
	hasFresh := len(r.Fresh) > 0

	// Seed 002's rule, worded as what it is: how often would it fire on a
	// skill that never decays, at the reliability measured fresh?
	if o.Rule == record.RuleAnyProbeFailed && hasFresh && cmp.Fresh.Probes > 0 {
		o.AnyFailureChance = 1 - math.Pow(freshRate, float64(o.ProbesJudged))
	}

	// The decision. Branch order matters only between outcomes that can
	// both hold: budgets and interrupts first (no verdict yet), then a
	// broken set-up (it measured the sandbox), then a skill that does not
	// work fresh (nothing to decay from), then decay shown, then errors (no
	// verdict without the missing data), then held or not enough evidence.
	// None of the branches before "decay shown" can raise the false-alarm
	// rate: they only take runs away from exit 1.
	sig := false
	var seqLook record.Look
	seqDecided := false
	// A schema-1 SPRT record (P1 set) is shown as it was, never replayed.
	useSeq := r.Sequential != nil && r.Sequential.P1 == 0 && len(r.Sequential.Looks) > 0
	if o.Rule == record.RuleDilutedVsFresh {
		if useSeq {
			seqLook, seqDecided = Replay(r.Sequential, r)
			sig = seqDecided && seqLook.Decision == record.SeqDecay
		} else {
			sig = cmp.Testable && cmp.P <= alpha
		}
	}
	dilutedRate := func() string {
		return fmt.Sprintf("diluted %d/%d probes passed in %s, fresh %d/%d",
			cmp.Diluted.Passed, cmp.Diluted.Probes, o.Stats.DilutedPopulation, cmp.Fresh.Passed, cmp.Fresh.Probes)
	}
	held := o.Stats.MinDetectableDrop > 0 && o.Stats.MinDetectableDrop <= effect
	switch {
	case budgetStops > 0:
		o.Exit, o.Verdict = exit.Tool, record.VerdictBudget
		o.Sentence = fmt.Sprintf("No verdict: the budget ran out before %d of %d conversations and fresh triples finished; what was judged so far is reported.", budgetStops, n+len(r.Fresh))
	case interrupted > 0:
		o.Exit, o.Verdict = exit.Interrupted, record.VerdictInterrupted
		o.Sentence = fmt.Sprintf("Interrupted before %d of %d conversations and fresh triples finished; the run folder can be resumed or reported.", interrupted, n+len(r.Fresh))
	case n == 0:
		o.Exit, o.Verdict = exit.Tool, record.VerdictError
		o.Sentence = "No verdict: no conversation ran."
	case len(setup) > 0:
		// A required step failed in the sandbox: that measures the set-up
		// (a missing script, a fixture without what the skill needs), not
		// the skill, in either arm.
		o.Exit, o.Verdict = exit.Tool, record.VerdictSetup
		o.Sentence = fmt.Sprintf("No verdict: the set-up is broken: a required step's call failed in %d judged turns (first: %s); give the sandbox what the skill needs (fixture, files) and run again.", len(setup), setup[0])
	case baseJudged > 0 && float64(basePassed) < BaselineWorksShare*float64(baseJudged):
		o.Exit, o.Verdict = exit.Indeterminate, record.VerdictBaselineFailed
		o.Sentence = fmt.Sprintf("The skill does not work fresh: the baseline (turn 1, before dilution) passed in %d of %d conversations, so there is no decay to measure; fix the skill or the base task first.", basePassed, baseJudged)
	case baseJudged == 0 && errored == 0 && o.JudgeErrors == 0:
		o.Exit, o.Verdict = exit.Indeterminate, record.VerdictBaselineFailed
		o.Sentence = "No baseline was judged pass or fail, so there is no decay to measure."
	case o.Rule == record.RuleAnyProbeFailed && decayed > 0:
		o.Exit, o.Verdict = exit.Decay, record.VerdictDecay
		o.Sentence = fmt.Sprintf("A probe failed after a passed baseline (the any-probe-failed rule, which is not a test): in %d of %d conversations, %d of %d judged probes failed.%s", decayed, n, o.ProbesFailed, o.ProbesJudged, anyChance(o, hasFresh, freshRate))
	case o.Rule == record.RuleDilutedVsFresh && !hasFresh:
		o.Exit, o.Verdict = exit.Indeterminate, record.VerdictNotComparable
		o.Sentence = "Not comparable: this run has no fresh arm (it was made before vibe-test asked each probe fresh as well), so dilution cannot be told from task difficulty; its results are shown as recorded."
	case sig && seqDecided:
		o.Exit, o.Verdict = exit.Decay, record.VerdictDecay
		o.Sentence = fmt.Sprintf("Decay, decided sequentially: %s; %s.", r.Sequential.Reason, dilutedRate())
	case sig:
		o.Exit, o.Verdict = exit.Decay, record.VerdictDecay
		o.Sentence = fmt.Sprintf("Decay: the probes passed %.0f points less often diluted than fresh (mean share %.0f%% vs %.0f%%, Welch one-sided p = %.3g <= alpha %.2g; %s).",
			100*cmp.Drop, 100*cmp.Diluted.Mean, 100*cmp.Fresh.Mean, cmp.P, alpha, dilutedRate())
	case errored > 0 || o.JudgeErrors > 0 || incomplete > 0:
		o.Exit, o.Verdict = exit.Tool, record.VerdictError
		o.Sentence = fmt.Sprintf("No verdict: %d conversations or fresh triples stopped on an error and %d judged turns ended in judge errors; what was measured did not show decay, but the missing turns count as neither pass nor fail.", errored, o.JudgeErrors)
	case o.Rule == record.RuleAnyProbeFailed:
		o.Exit, o.Verdict = exit.OK, record.VerdictNoProbeFailed
		o.Sentence = fmt.Sprintf("No probe failed after a passed baseline (the any-probe-failed rule): %d judged probes in %d conversations.%s", o.ProbesJudged, n, anyChance(o, hasFresh, freshRate))
	case useSeq && seqLook.Decision == record.SeqHeld, !useSeq && held:
		o.Exit, o.Verdict = exit.OK, record.VerdictHeld
		o.Sentence = fmt.Sprintf("Held: no decay shown (p = %.3g > %.2g; %s). This run would have caught a drop of %.0f points with 80%% power.",
			cmp.P, alphaOrLevel(alpha, seqLook, seqDecided), dilutedRate(), 100*o.Stats.MinDetectableDrop)
	default:
		o.Exit, o.Verdict = exit.OK, record.VerdictNotEnough
		more := ""
		if need := o.Stats.UnitsForEffect; need > n {
			more = fmt.Sprintf(" About %d conversations in all (%d more, each with its fresh triple) would likely detect a drop of %.0f points.", need, need-n, 100*effect)
		}
		mdd := "was too small to reliably catch any drop, even a collapse"
		if o.Stats.MinDetectableDrop > 0 {
			mdd = fmt.Sprintf("could reliably catch only a drop of %.0f points or more", 100*o.Stats.MinDetectableDrop)
		}
		o.Sentence = fmt.Sprintf("Not enough evidence: no decay shown (%s), but this run %s.%s", dilutedRate(), mdd, more)
	}
	if o.JudgeErrors > 0 && o.Verdict != record.VerdictError {
		o.Notes = append(o.Notes, fmt.Sprintf("%d judged turns ended in judge errors; they count as neither pass nor fail (`vibe-test rejudge` can redo them).", o.JudgeErrors))
	}
	if o.Uncertain > 0 {
		o.Notes = append(o.Notes, fmt.Sprintf("%d judged turns are uncertain (the repeated judgements disagreed); they are left out of the comparison.", o.Uncertain))
	}
	if gateStops > 0 && !r.Config.NoBaselineGate && o.Verdict != record.VerdictBaselineFailed {
		o.Notes = append(o.Notes, fmt.Sprintf("The baseline failed in %d of %s; the gate stopped them, so the diluted arm holds only %s.", gateStops, plural(n, "conversation", "conversations"), record.PopGatePassed))
	}
	for _, d := range o.Stats.Dropped {
		if d.Arm == "diluted" && d.What == "conversations" && d.Reason != "" && !r.Config.NoBaselineGate && gateStops > 0 && strings.HasPrefix(d.Reason, "the baseline") {
			continue // said above
		}
		o.Notes = append(o.Notes, fmt.Sprintf("Left out of the %s arm: %s (%s).", d.Arm, plural(d.Count, strings.TrimSuffix(d.What, "s"), d.What), d.Reason))
	}
	if o.OverCalls > 0 {
		o.Notes = append(o.Notes, fmt.Sprintf("%d escape-hatch flags from the judge were downgraded to partial compliance: a must-criterion's deterministic check passed (judge over-calls).", o.OverCalls))
	}
	var changes []string
	for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh} {
		for i := range arm {
			if mc := arm[i].ModelChange; mc != "" {
				changes = append(changes, fmt.Sprintf("MODEL CHANGED in %s %d: %s. A drop here may be the model, not dilution.", map[bool]string{true: "fresh triple", false: "conversation"}[arm[i].Control == record.ArmFresh], arm[i].Index, mc))
			}
		}
	}
	o.Notes = append(changes, o.Notes...)
	if r.GateBypassed {
		o.Notes = append([]string{record.BypassBanner}, o.Notes...)
	}
	r.Outcome = o
}

// plural is "1 probe" or "2 probes".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// anyChance is the sentence beside seed 002's rule: the chance it fires on
// a stable skill at the reliability measured fresh.
func anyChance(o record.Outcome, hasFresh bool, freshRate float64) string {
	if !hasFresh || o.Stats.Comparison.Fresh.Probes == 0 {
		return ""
	}
	return fmt.Sprintf(" On a skill that never decays and passes %.0f%% of probes (the rate measured fresh), this rule fires %.0f%% of the time with %d judged probes.",
		100*freshRate, 100*o.AnyFailureChance, o.ProbesJudged)
}

func alphaOrLevel(alpha float64, l record.Look, seq bool) float64 {
	if seq {
		return l.Level
	}
	return alpha
}
