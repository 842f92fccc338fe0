package verdict

import (
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// Each rule on its own: the facts it reads, whether it applies, and what it
// concludes. Decide's order of the rules is tested through Decide itself
// (TestDecideExitCodes); these say what each rule means.

// testable is a comparison both arms of which have two units.
func testable(p float64) stats.TwoArm {
	return stats.TwoArm{Testable: true, P: p, Drop: 0.4, SE: 0.1, DF: 6,
		Diluted: stats.ArmSummary{Units: 4, Probes: 12, Passed: 6, Mean: 0.5},
		Fresh:   stats.ArmSummary{Units: 4, Probes: 12, Passed: 11, Mean: 0.9}}
}

// base are facts of a finished run of n conversations whose baselines all
// passed, under the default rule.
func base(n int) facts {
	return facts{r: &record.Run{}, rule: record.RuleDilutedVsFresh, alpha: 0.05, effect: 0.3,
		n: n, fresh: n, baseJudged: n, basePassed: n, exitOnly: true,
		stats: record.Stats{Comparison: testable(0.5), DilutedPopulation: record.PopGatePassed}}
}

type ruleCase struct {
	name    string
	edit    func(f *facts)
	applies bool
	exit    int
	verdict string
	says    string // in the sentence
}

func checkRule(t *testing.T, name string, r func(*facts) (decision, bool), cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(name+"/"+c.name, func(t *testing.T) {
			f := base(4)
			if c.edit != nil {
				c.edit(&f)
			}
			d, ok := r(&f)
			if ok != c.applies {
				t.Fatalf("applies %v, want %v (%+v)", ok, c.applies, d)
			}
			if !ok {
				return
			}
			if d.exit != c.exit || d.verdict != c.verdict || !strings.Contains(d.sentence, c.says) {
				t.Errorf("exit %d verdict %q sentence %q; want %d %q with %q", d.exit, d.verdict, d.sentence, c.exit, c.verdict, c.says)
			}
		})
	}
}

func TestRuleBudgetExhausted(t *testing.T) {
	checkRule(t, "budget", budgetExhausted, []ruleCase{
		{"none stopped", nil, false, 0, "", ""},
		{"one stopped", func(f *facts) { f.budgetStops = 1 }, true, exit.Tool, record.VerdictBudget, "1 of 8 conversations and fresh triples"},
		// A control decides no exit code, but a run the budget stopped did
		// not finish what it was asked: it said completed, exit 0.
		{"a control stopped", func(f *facts) { f.controlsBudget = 1 }, true, exit.Tool, record.VerdictBudget, "0 of 8 conversations and fresh triples finished (and 1 control)"},
	})
}

func TestRuleInterrupted(t *testing.T) {
	checkRule(t, "interrupted", interrupted, []ruleCase{
		{"none", nil, false, 0, "", ""},
		{"two", func(f *facts) { f.interrupted = 2 }, true, exit.Interrupted, record.VerdictInterrupted, "can be resumed"},
		// An interrupted control: the process exits 130, and run.json
		// said completed, exit 0.
		{"a control", func(f *facts) { f.controlsInterrupted = 1 }, true, exit.Interrupted, record.VerdictInterrupted, "(and 1 control)"},
		{"after a budget stop", func(f *facts) { f.interrupted, f.budgetStops = 1, 2 }, true, exit.Interrupted, record.VerdictInterrupted, "(the budget had stopped 2 others)"},
	})
}

func TestRuleNoConversation(t *testing.T) {
	checkRule(t, "no conversation", noConversation, []ruleCase{
		{"some ran", nil, false, 0, "", ""},
		{"none ran", func(f *facts) { f.n = 0 }, true, exit.Tool, record.VerdictError, "no conversation ran"},
	})
}

func TestRuleSetupProblem(t *testing.T) {
	checkRule(t, "setup", setupProblem, []ruleCase{
		{"none", nil, false, 0, "", ""},
		{"a required step failed", func(f *facts) { f.setup = []string{"conversation 1 turn 1: census.sh missing"} }, true, exit.Tool, record.VerdictSetup, "first: conversation 1 turn 1"},
	})
}

func TestRuleBaselineDoesNotWork(t *testing.T) {
	checkRule(t, "baseline", baselineDoesNotWork, []ruleCase{
		{"all passed", nil, false, 0, "", ""},
		{"half passed: it works, noisily", func(f *facts) { f.basePassed = 2 }, false, 0, "", ""},
		{"one in four", func(f *facts) { f.basePassed = 1 }, true, exit.Indeterminate, record.VerdictBaselineFailed, "passed in 1 of 4 conversations"},
		{"none judged is another rule's", func(f *facts) { f.baseJudged, f.basePassed = 0, 0 }, false, 0, "", ""},
	})
}

func TestRuleNoBaselineJudged(t *testing.T) {
	checkRule(t, "no baseline", noBaselineJudged, []ruleCase{
		{"judged", nil, false, 0, "", ""},
		{"none judged", func(f *facts) { f.baseJudged, f.basePassed = 0, 0 }, true, exit.Indeterminate, record.VerdictBaselineFailed, "No baseline was judged"},
		{"none judged for errors", func(f *facts) { f.baseJudged, f.basePassed, f.errored = 0, 0, 1 }, false, 0, "", ""},
		{"none judged for judge errors", func(f *facts) { f.baseJudged, f.basePassed, f.judgeErrors = 0, 0, 1 }, false, 0, "", ""},
		// Repeats that disagreed on every baseline measured nothing: no
		// verdict, not "the skill does not work" (exit 2, as before).
		{"none judged, uncertain", func(f *facts) { f.baseJudged, f.basePassed, f.baseUncertain = 0, 0, 4 }, true, exit.Tool, record.VerdictError, "4 baselines were uncertain"},
	})
}

func TestRuleAProbeFailed(t *testing.T) {
	seed := func(f *facts) { f.rule = record.RuleAnyProbeFailed }
	checkRule(t, "seed rule", aProbeFailed, []ruleCase{
		{"default rule", func(f *facts) { f.decayed = 1 }, false, 0, "", ""},
		{"nothing failed", seed, false, 0, "", ""},
		{"a probe failed", func(f *facts) { seed(f); f.decayed, f.probesJudged, f.probesFailed = 1, 12, 1 }, true, exit.Decay, record.VerdictDecay, "which is not a test"},
	})
}

func TestRuleDecayShown(t *testing.T) {
	seqRun := func(decision string, decided bool) func(f *facts) {
		return func(f *facts) {
			f.r.Sequential = &record.Sequential{Reason: "after 4 conversations"}
			f.seq = &seqResult{look: record.Look{Decision: decision}, decided: decided}
		}
	}
	checkRule(t, "decay", decayShown, []ruleCase{
		{"p above alpha", nil, false, 0, "", ""},
		{"p at alpha", func(f *facts) { f.stats.Comparison = testable(0.05) }, true, exit.Decay, record.VerdictDecay, "each probe against itself"},
		{"not testable", func(f *facts) { c := testable(0.001); c.Testable = false; f.stats.Comparison = c }, false, 0, "", ""},
		{"seed rule", func(f *facts) { f.rule = record.RuleAnyProbeFailed; f.stats.Comparison = testable(0.001) }, false, 0, "", ""},
		{"a sequential look decided decay", seqRun(record.SeqDecay, true), true, exit.Decay, record.VerdictDecay, "decided sequentially"},
		{"sequential: the fixed-size p does not count", func(f *facts) {
			seqRun(record.SeqContinue, false)(f)
			f.stats.Comparison = testable(0.001)
		}, false, 0, "", ""},
	})
}

func TestRuleNoProbeJudged(t *testing.T) {
	noDiluted := func(f *facts) {
		c := testable(0.5)
		c.Testable, c.Diluted = false, stats.ArmSummary{}
		f.stats.Comparison, f.uncertain = c, 12
	}
	noFresh := func(f *facts) {
		c := testable(0.5)
		c.Testable, c.Fresh = false, stats.ArmSummary{}
		f.stats.Comparison, f.uncertain = c, 12
	}
	checkRule(t, "no probe judged", noProbeJudged, []ruleCase{
		{"both arms judged", func(f *facts) { f.uncertain = 3 }, false, 0, "", ""},
		{"no diluted probe, all uncertain", noDiluted, true, exit.Tool, record.VerdictError, "no diluted probe was judged pass or fail; 12 judged turns were uncertain"},
		{"no fresh probe, all uncertain", noFresh, true, exit.Tool, record.VerdictError, "no fresh probe was judged"},
		{"neither arm", func(f *facts) {
			f.stats.Comparison, f.uncertain = stats.TwoArm{}, 1
		}, true, exit.Tool, record.VerdictError, "no diluted or fresh probe was judged pass or fail; 1 judged turn was uncertain"},
		{"nothing judged without an uncertain verdict is another rule's", func(f *facts) { noDiluted(f); f.uncertain = 0 }, false, 0, "", ""},
		{"seed rule: its diluted probes judged", func(f *facts) { noFresh(f); f.rule, f.probesJudged = record.RuleAnyProbeFailed, 8 }, false, 0, "", ""},
		{"seed rule: none judged", func(f *facts) { noFresh(f); f.rule, f.probesJudged = record.RuleAnyProbeFailed, 0 }, true, exit.Tool, record.VerdictError, "no diluted probe"},
	})
}

func TestRuleErrorsLeft(t *testing.T) {
	checkRule(t, "errors", errorsLeft, []ruleCase{
		{"none", nil, false, 0, "", ""},
		{"an errored conversation", func(f *facts) { f.errored = 1 }, true, exit.Tool, record.VerdictError, "No verdict: 1 conversation or fresh triple stopped on an error; what"},
		{"a judge error", func(f *facts) { f.judgeErrors = 2 }, true, exit.Tool, record.VerdictError, "2 judged turns ended in judge errors"},
		{"a conversation short of its last probe", func(f *facts) { f.incomplete = 1 }, true, exit.Tool, record.VerdictError, "No verdict: 1 conversation ended before the last probe; what"},
		{"all three", func(f *facts) { f.errored, f.judgeErrors, f.incomplete = 2, 3, 1 }, true, exit.Tool, record.VerdictError,
			"No verdict: 2 conversations or fresh triples stopped on an error, 3 judged turns ended in judge errors, 1 conversation ended before the last probe; what"},
		// Every judge call failed: nothing was measured, and the sentence
		// said "what was measured did not show decay".
		{"judge errors on every probe", func(f *facts) { f.judgeErrors, f.stats.Comparison = 24, stats.TwoArm{} }, true, exit.Tool, record.VerdictError,
			"No verdict: 24 judged turns ended in judge errors; no diluted or fresh probe was judged pass or fail, so nothing was measured;"},
	})
}

func TestRuleNoProbeFailed(t *testing.T) {
	checkRule(t, "no probe failed", noProbeFailed, []ruleCase{
		{"default rule", nil, false, 0, "", ""},
		{"seed rule", func(f *facts) { f.rule = record.RuleAnyProbeFailed; f.probesJudged = 12 }, true, exit.OK, record.VerdictNoProbeFailed, "12 judged probes in 4 conversations"},
	})
}

func TestRuleHeld(t *testing.T) {
	powered := func(mdd float64) func(f *facts) {
		return func(f *facts) { f.exitOnly, f.powered, f.stats.MinDetectableDrop = false, true, mdd }
	}
	checkRule(t, "held", held, []ruleCase{
		// The power figures are simulated only where a sentence needs them:
		// without them, held is never said.
		{"power not simulated", nil, false, 0, "", ""},
		{"catches 20 points", powered(0.2), true, exit.OK, record.VerdictHeld, "catches a drop of 20 points or more in 80% of runs"},
		{"catches the effect exactly", powered(0.3), true, exit.OK, record.VerdictHeld, "30 points"},
		{"catches only 40 points", powered(0.4), false, 0, "", ""},
		{"catches nothing", powered(0), false, 0, "", ""},
		{"a sequential look held", func(f *facts) {
			powered(0.25)(f)
			f.seq = &seqResult{look: record.Look{Decision: record.SeqHeld, Level: 0.001}, decided: true}
		}, true, exit.OK, record.VerdictHeld, "0.001"},
		{"a sequential look did not hold", func(f *facts) {
			powered(0.25)(f)
			f.seq = &seqResult{look: record.Look{Decision: record.SeqNotEnuf}}
		}, false, 0, "", ""},
	})
}

func TestRuleNotEnoughEvidence(t *testing.T) {
	checkRule(t, "not enough", notEnoughEvidence, []ruleCase{
		{"always applies; without simulated figures it says no more", nil, true, exit.OK, record.VerdictNotEnough, "no decay shown (diluted 6/12"},
		{"with the figures", func(f *facts) {
			f.exitOnly, f.powered = false, true
			f.stats.MinDetectableDrop, f.stats.UnitsForEffect = 0.45, 12
		}, true, exit.OK, record.VerdictNotEnough, "About 12 conversations in all (8 more"},
		{"too small for any drop", func(f *facts) {
			f.exitOnly, f.powered = false, true
		}, true, exit.OK, record.VerdictNotEnough, "too small to catch any drop reliably"},
		// No size found for the effect: said so, with why, where the run
		// said nothing more of how many would do.
		{"no size would do", func(f *facts) {
			f.exitOnly, f.powered = false, true
		}, true, exit.OK, record.VerdictNotEnough, "No number of conversations up to 200 is sure to catch a drop of 30 points in 80% of runs like this one (simulated)."},
		// The baselines' reason only when it is theirs: it was given for
		// 30 conversations whose baselines all passed and probes all failed.
		{"no size would do, from a few baselines", func(f *facts) {
			f.exitOnly, f.powered, f.baselineUnsure = false, true, true
		}, true, exit.OK, record.VerdictNotEnough, "(simulated): 4 conversations are too few to rule out a skill whose baseline fails more often than not"},
		// How many more conversations: the simulation behind it lets the
		// gate stop some as this run's baselines say, and none when bypassed.
		{"the gate stopped some here", func(f *facts) {
			f.exitOnly, f.powered, f.stats.UnitsForEffect, f.gateStops = false, true, 12, 1
		}, true, exit.OK, record.VerdictNotEnough, "(8 more, each with its fresh triple, the gate stopping some as it did here)"},
		{"the gate stopped none here", func(f *facts) {
			f.exitOnly, f.powered, f.stats.UnitsForEffect = false, true, 12
		}, true, exit.OK, record.VerdictNotEnough, "(8 more, each with its fresh triple, the gate stopping any whose baseline fails)"},
		{"the gate bypassed", func(f *facts) {
			f.exitOnly, f.powered, f.stats.UnitsForEffect, f.gateStops = false, true, 12, 1
			f.r.Config.NoBaselineGate = true
		}, true, exit.OK, record.VerdictNotEnough, "(8 more, each with its fresh triple) would catch"},
	})
}

// The rule list ends in one that always applies, so decide never runs out.
func TestRulesEndInACatchAll(t *testing.T) {
	last := rules[len(rules)-1]
	f := base(0)
	f.n, f.baseJudged, f.basePassed = 0, 0, 0
	if _, ok := last.decide(&f); !ok {
		t.Fatalf("the last rule %q does not always apply", last.name)
	}
	seen := map[string]bool{}
	for _, r := range rules {
		if seen[r.name] {
			t.Errorf("two rules named %q", r.name)
		}
		seen[r.name] = true
	}
}
