package verdict

import (
	"fmt"
	"strings"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
)

// decision is what a rule concludes: the exit code, the verdict word and
// the sentence, from one place so they never disagree.
type decision struct {
	exit     int
	verdict  string
	sentence string
}

// rule is one named branch of the decision. The first rule whose decide
// says ok gives the outcome.
type rule struct {
	name   string
	decide func(f *facts) (decision, bool)
}

// rules in order. The order matters only between outcomes that can both
// hold: interrupts and budgets first (no verdict yet; an interrupt before
// a budget stop, since the process exits 130 then and run.json must say
// what the process said), then a broken set-up
// (it measured the sandbox), then a skill that does not work fresh (nothing
// to decay from), then decay shown, then errors (no verdict without the
// missing data), then held or not enough evidence. None of the rules before
// "decay shown" can raise the false-alarm rate: they only take runs away
// from exit 1.
var rules = []rule{
	{"interrupted", interrupted},
	{"budget exhausted", budgetExhausted},
	{"no conversation", noConversation},
	{"set-up problem", setupProblem},
	{"baseline does not work", baselineDoesNotWork},
	{"no baseline judged", noBaselineJudged},
	{"a probe failed (seed 002's rule)", aProbeFailed},
	{"decay shown", decayShown},
	{"errors", errorsLeft},
	{"no probe judged", noProbeJudged},
	{"no probe failed (seed 002's rule)", noProbeFailed},
	{"held", held},
	{"not enough evidence", notEnoughEvidence},
}

// decide applies the rules in order.
func decide(f *facts) decision {
	for _, r := range rules {
		if d, ok := r.decide(f); ok {
			return d
		}
	}
	panic("verdict: no rule decided") // notEnoughEvidence always does
}

func budgetExhausted(f *facts) (decision, bool) {
	if f.budgetStops == 0 && f.controlsBudget == 0 {
		return decision{}, false
	}
	return decision{exit.Tool, record.VerdictBudget, fmt.Sprintf("No verdict: the budget ran out before %d of %d conversations and fresh triples finished%s; what was judged so far is reported.", f.budgetStops, f.n+f.fresh, andControls(f.controlsBudget))}, true
}

func interrupted(f *facts) (decision, bool) {
	if f.interrupted == 0 && f.controlsInterrupted == 0 {
		return decision{}, false
	}
	budget := ""
	if n := f.budgetStops + f.controlsBudget; n > 0 {
		budget = fmt.Sprintf(" (the budget had stopped %d others)", n)
	}
	return decision{exit.Interrupted, record.VerdictInterrupted, fmt.Sprintf("Interrupted before %d of %d conversations and fresh triples finished%s%s; the run folder can be resumed or reported.", f.interrupted, f.n+f.fresh, andControls(f.controlsInterrupted), budget)}, true
}

// andControls adds the controls a stop left unfinished to its sentence.
func andControls(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (and %s)", plural(n, "control", "controls"))
}

func noConversation(f *facts) (decision, bool) {
	if f.n > 0 {
		return decision{}, false
	}
	return decision{exit.Tool, record.VerdictError, "No verdict: no conversation ran."}, true
}

// setupProblem: a required step failed in the sandbox. That measures the
// set-up (a missing script, a fixture without what the skill needs), not
// the skill, in either arm.
func setupProblem(f *facts) (decision, bool) {
	if len(f.setup) == 0 {
		return decision{}, false
	}
	return decision{exit.Tool, record.VerdictSetup, fmt.Sprintf("No verdict: the set-up is broken: a required step's call failed in %s (first: %s); give the sandbox what the skill needs (fixture, files) and run again.", plural(len(f.setup), "judged turn", "judged turns"), f.setup[0])}, true
}

func baselineDoesNotWork(f *facts) (decision, bool) {
	if f.baseJudged == 0 || float64(f.basePassed) >= BaselineWorksShare*float64(f.baseJudged) {
		return decision{}, false
	}
	return decision{exit.Indeterminate, record.VerdictBaselineFailed, fmt.Sprintf("The skill does not work fresh: the baseline (turn 1, before dilution) passed in %d of %d conversations, so there is no decay to measure; fix the skill or the base task first.", f.basePassed, f.baseJudged)}, true
}

// noBaselineJudged: no baseline passed or failed, and nothing errored that
// would explain it (those runs end in "errors"). Baselines the judge's
// repeats disagreed on measured nothing, as a judge error measures
// nothing: no verdict (exit 3), not "the skill does not work" (exit 2),
// which they read as before.
func noBaselineJudged(f *facts) (decision, bool) {
	if f.baseJudged > 0 || f.errored > 0 || f.judgeErrors > 0 {
		return decision{}, false
	}
	if f.baseUncertain > 0 {
		return decision{exit.Tool, record.VerdictError, fmt.Sprintf("No verdict: no baseline was judged pass or fail; %s uncertain (the judge's repeats disagreed), so the diluted arm has no conversation to measure.", plural(f.baseUncertain, "baseline was", "baselines were"))}, true
	}
	return decision{exit.Indeterminate, record.VerdictBaselineFailed, "No baseline was judged pass or fail, so there is no decay to measure."}, true
}

// aProbeFailed is seed 002's rule (--rule any-probe-failed): exit 1 when a
// probe failed after a passed baseline. It is not a test; the sentence
// says how often it fires on a skill that never decays.
func aProbeFailed(f *facts) (decision, bool) {
	if f.rule != record.RuleAnyProbeFailed || f.decayed == 0 {
		return decision{}, false
	}
	return decision{exit.Decay, record.VerdictDecay, fmt.Sprintf("A probe failed after a passed baseline (the any-probe-failed rule, which is not a test): in %d of %d conversations, %d of %d judged probes failed.%s", f.decayed, f.n, f.probesFailed, f.probesJudged, anyChance(f))}, true
}

// decayShown: the default rule's test says the probes pass less often
// diluted than fresh, at a fixed size or at a sequential look.
func decayShown(f *facts) (decision, bool) {
	if f.rule != record.RuleDilutedVsFresh {
		return decision{}, false
	}
	cmp := f.cmp()
	if f.seq != nil {
		if !f.seq.decided || f.seq.look.Decision != record.SeqDecay {
			return decision{}, false
		}
		return decision{exit.Decay, record.VerdictDecay, fmt.Sprintf("Decay, decided sequentially: %s; %s.", f.r.Sequential.Reason, armRates(f))}, true
	}
	if !cmp.Testable || cmp.P > f.alpha {
		return decision{}, false
	}
	return decision{exit.Decay, record.VerdictDecay, fmt.Sprintf("Decay: the probes passed %.0f points less often diluted than fresh (each probe against itself: pass rate %.0f%% vs %.0f%%, Welch one-sided p = %.3g <= alpha %.2g; %s).",
		100*cmp.Drop, 100*cmp.Diluted.Mean, 100*cmp.Fresh.Mean, cmp.P, f.alpha, armRates(f))}, true
}

// errorsLeft: no decay shown, but turns are missing (errors, judge errors,
// conversations that never reached their last probe): no verdict without
// them.
func errorsLeft(f *facts) (decision, bool) {
	if f.errored == 0 && f.judgeErrors == 0 && f.incomplete == 0 {
		return decision{}, false
	}
	// Only the kinds that happened: "0 judged turns ended in judge
	// errors" said nothing, and a conversation short of its last probe
	// was not named at all.
	var what []string
	if f.errored > 0 {
		what = append(what, plural(f.errored, "conversation or fresh triple", "conversations or fresh triples")+" stopped on an error")
	}
	if f.judgeErrors > 0 {
		what = append(what, plural(f.judgeErrors, "judged turn ended in a judge error", "judged turns ended in judge errors"))
	}
	if f.incomplete > 0 {
		what = append(what, plural(f.incomplete, "conversation", "conversations")+" ended before the last probe")
	}
	// "What was measured did not show decay" where an arm had no probe
	// judged pass or fail (every judge call failed) claimed a measurement
	// that never happened.
	measured := "what was measured did not show decay, but the missing turns count as neither pass nor fail"
	if arm := unmeasuredArm(f); arm != "" {
		measured = fmt.Sprintf("no %s probe was judged pass or fail, so nothing was measured; the missing turns count as neither pass nor fail", arm)
	}
	return decision{exit.Tool, record.VerdictError, fmt.Sprintf("No verdict: %s; %s.", strings.Join(what, ", "), measured)}, true
}

// unmeasuredArm names the arm (or "diluted or fresh") with no probe judged
// pass or fail, "" when both have some: under seed 002's rule the diluted
// probes alone.
func unmeasuredArm(f *facts) string {
	cmp := f.cmp()
	diluted := cmp.Diluted.Probes == 0
	fresh := f.fresh > 0 && cmp.Fresh.Probes == 0
	if f.rule == record.RuleAnyProbeFailed {
		diluted, fresh = f.probesJudged == 0, false
	}
	switch {
	case diluted && fresh:
		return "diluted or fresh"
	case diluted:
		return "diluted"
	case fresh:
		return "fresh"
	}
	return ""
}

// noProbeJudged: an arm has no probe judged pass or fail, because the
// judge's repeats disagreed on every one (--judge-repeats): the run
// measured nothing, which "not enough evidence" (exit 0, as a stable
// skill's small run) would pass in CI. Like a judge error, it leaves the
// verdict open.
func noProbeJudged(f *facts) (decision, bool) {
	if f.uncertain == 0 {
		return decision{}, false
	}
	arm := unmeasuredArm(f)
	if arm == "" {
		return decision{}, false
	}
	return decision{exit.Tool, record.VerdictError, fmt.Sprintf("No verdict: no %s probe was judged pass or fail; %s uncertain (the judge's repeats disagreed), so nothing was measured.", arm, plural(f.uncertain, "judged turn was", "judged turns were"))}, true
}

func noProbeFailed(f *facts) (decision, bool) {
	if f.rule != record.RuleAnyProbeFailed {
		return decision{}, false
	}
	return decision{exit.OK, record.VerdictNoProbeFailed, fmt.Sprintf("No probe failed after a passed baseline (the any-probe-failed rule): %s in %s.%s", plural(f.probesJudged, "judged probe", "judged probes"), plural(f.n, "conversation", "conversations"), anyChance(f))}, true
}

// held: no decay shown, and the rule would have caught the effect with
// PowerTarget power at this run's size (simulated).
func held(f *facts) (decision, bool) {
	cmp := f.cmp()
	level := f.alpha
	if f.seq != nil {
		if f.seq.look.Decision != record.SeqHeld {
			return decision{}, false
		}
		if f.seq.decided {
			level = f.seq.look.Level
		}
		f.power()
	} else if !f.power() {
		return decision{}, false
	} else if mdd := f.stats.MinDetectableDrop; mdd <= 0 || mdd > f.effect {
		return decision{}, false
	}
	return decision{exit.OK, record.VerdictHeld, fmt.Sprintf("Held: no decay shown (p = %.3g > %.2g; %s). Simulated on runs like this one, this rule catches a drop of %.0f points or more in %.0f%% of runs.",
		cmp.P, level, armRates(f), 100*f.stats.MinDetectableDrop, 100*PowerTarget)}, true
}

func notEnoughEvidence(f *facts) (decision, bool) {
	if !f.power() {
		return decision{exit.OK, record.VerdictNotEnough, fmt.Sprintf("Not enough evidence: no decay shown (%s).", armRates(f))}, true
	}
	more := ""
	switch need := f.stats.UnitsForEffect; {
	case need > f.n && f.seq != nil:
		more = fmt.Sprintf(" About %d conversations in all (--max-conversations %d: %d more, each with its fresh triple%s) would catch a drop of %.0f points in %.0f%% of runs (simulated, at the level of the look at that cap).", need, need, need-f.n, gateClause(f), 100*f.effect, 100*PowerTarget)
	case need > f.n:
		more = fmt.Sprintf(" About %d conversations in all (%d more, each with its fresh triple%s) would catch a drop of %.0f points in %.0f%% of runs (simulated).", need, need-f.n, gateClause(f), 100*f.effect, 100*PowerTarget)
	case need == 0 && (f.stats.MinDetectableDrop == 0 || f.stats.MinDetectableDrop > f.effect):
		// The search found no size; why, when it is the baselines: from a
		// few, one that fails fresh more often than not (exit 2 at any
		// size) is not ruled out.
		more = fmt.Sprintf(" No number of conversations up to %d is sure to catch a drop of %.0f points in %.0f%% of runs like this one (simulated).", maxConversations, 100*f.effect, 100*PowerTarget)
		if f.baselineUnsure {
			more = strings.TrimSuffix(more, ".") + fmt.Sprintf(": %s too few to rule out a skill whose baseline fails more often than not; run more, and the figure follows.", plural(f.n, "conversation is", "conversations are"))
		}
	}
	mdd := "was too small to catch any drop reliably, even a collapse"
	if f.stats.MinDetectableDrop > 0 {
		mdd = fmt.Sprintf("catches only a drop of %.0f points or more in %.0f%% of runs like it (simulated)", 100*f.stats.MinDetectableDrop, 100*PowerTarget)
	}
	return decision{exit.OK, record.VerdictNotEnough, fmt.Sprintf("Not enough evidence: no decay shown (%s), but this run %s.%s", armRates(f), mdd, more)}, true
}

// gateClause says how the simulation behind "About M conversations" counts
// the gate: it draws each baseline's chance from this run's baselines, so
// a gate that stopped none here may still stop some there; a bypassed gate
// stops none.
func gateClause(f *facts) string {
	switch {
	case f.r.Config.NoBaselineGate:
		return ""
	case f.gateStops > 0:
		return ", the gate stopping some as it did here"
	}
	return ", the gate stopping any whose baseline fails"
}

// armRates says what each arm passed, for the sentences.
func armRates(f *facts) string {
	cmp := f.cmp()
	return fmt.Sprintf("diluted %d/%d probes passed in %s, fresh %d/%d",
		cmp.Diluted.Passed, cmp.Diluted.Probes, f.stats.DilutedPopulation, cmp.Fresh.Passed, cmp.Fresh.Probes)
}

// anyChance is the sentence beside seed 002's rule: the chance it fires on
// a stable skill at the reliability measured fresh.
func anyChance(f *facts) string {
	if f.fresh == 0 || f.cmp().Fresh.Probes == 0 {
		return ""
	}
	return fmt.Sprintf(" On a skill that never decays and passes %.0f%% of probes (the rate measured fresh), this rule fires %.0f%% of the time with %d judged probes.",
		100*f.freshRate(), 100*anyFailureChance(f), f.probesJudged)
}
