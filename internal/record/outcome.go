package record

import "github.com/vibe-test/vibe-test/internal/stats"

// The outcome of a run as run.json stores it: what package verdict
// concluded from the record, kept beside the record so a reader needs no
// code to see it. package verdict computes every field here.

// BypassBanner is the first line of every artifact of a run whose baseline
// gate was bypassed (the outcome's first note, the summary, --json, JUnit and
// the chart's stamp): its one home, so the words cannot drift apart.
const BypassBanner = "BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve."

// Outcome is what the run concludes.
type Outcome struct {
	Exit     int    `json:"exit_code"`
	Verdict  string `json:"verdict"` // see the Verdict constants
	Sentence string `json:"sentence"`
	// Rule is what set the exit code (RuleDilutedVsFresh or
	// RuleAnyProbeFailed).
	Rule string `json:"rule"`
	// AnyFailureChance: under RuleAnyProbeFailed, the chance the rule fires
	// on a skill that never decays, at the pass rate measured fresh.
	AnyFailureChance float64 `json:"any_failure_chance,omitempty"`
	Shape            string  `json:"shape,omitempty"`
	// Counts over judged diluted probe turns of conversations whose
	// baseline passed.
	ProbesJudged int      `json:"probes_judged"`
	ProbesFailed int      `json:"probes_failed"`
	JudgeErrors  int      `json:"judge_errors"`
	Uncertain    int      `json:"uncertain"`
	OverCalls    int      `json:"judge_over_calls"`
	Escapes      int      `json:"escape_hatches"`
	Notes        []string `json:"notes,omitempty"`
	Stats        Stats    `json:"stats"`
	// Controls compare the run with its --control conversations.
	Controls []ControlStat `json:"controls,omitempty"`
	// StoppedConsulting lists "conv N turn T" where the agent made (almost)
	// no tool calls at a probe after a baseline that made many: visible in
	// the raw trace, true whatever one thinks of the judge.
	StoppedConsulting []string `json:"stopped_consulting,omitempty"`
}

// Shapes of a conversation's judged results, named for what they are: a
// flat line is never called a curve.
const (
	ShapeHeld           = "held"
	ShapeDecayed        = "decayed"
	ShapeNeverWorked    = "never worked"
	ShapeUnstable       = "unstable"
	ShapeBaselineFailed = "baseline failed"
)

// Verdicts: the word for what a run concluded, beside its exit code.
const (
	VerdictDecay          = "decay"               // exit 1: shown at alpha (or, by RuleAnyProbeFailed, a probe failed)
	VerdictHeld           = "held"                // exit 0: not shown, and the run could have caught the effect
	VerdictNotEnough      = "not-enough-evidence" // exit 0: not shown, and the run was too small to tell
	VerdictNoProbeFailed  = "no-probe-failed"     // exit 0 under RuleAnyProbeFailed
	VerdictBaselineFailed = "baseline-failed"     // exit 2: the skill does not work fresh
	VerdictError          = "error"               // exit 3
	VerdictSetup          = "setup-problem"       // exit 3: a required step failed in the sandbox
	VerdictBudget         = "budget-exhausted"    // exit 3
	VerdictInterrupted    = "interrupted"         // exit 130
)

// Rules: what sets the exit code.
const (
	// RuleDilutedVsFresh (the default): exit 1 only when the probes pass
	// significantly less often in the diluted conversations than the same
	// probes asked fresh (stats.CompareProbes at Alpha). Its false-alarm rate
	// is measured by the calibrate package.
	RuleDilutedVsFresh = "diluted-vs-fresh"
	// RuleAnyProbeFailed is seed 002's rule: exit 1 when, in a
	// conversation whose baseline passed, any probe failed. It is not a
	// test: on a skill that passes each probe with probability q it fires
	// with probability 1 - q^(probes), which the summary prints beside it.
	RuleAnyProbeFailed = "any-probe-failed"
)

// DefaultEffect is the drop in probe pass share (fresh minus diluted) a run
// aims to detect with 80% power: a run that could have caught it and did
// not says "held", one that could not says "not enough evidence".
const DefaultEffect = 0.3

// Population names, printed with every rate.
const (
	PopAll        = "all conversations"
	PopGatePassed = "conversations whose baseline passed"
	PopFresh      = "fresh sessions"
)

// TurnStat is one judged turn's pass rate over a stated population, with
// its Wilson 95% interval.
type TurnStat struct {
	// Turn is the turn number, for a probe the median of the turns it was
	// asked at (a diluted-to schedule asks it wherever its level is
	// reached); Probe its number (0: the baseline).
	Turn       int     `json:"turn"`
	Probe      int     `json:"probe,omitempty"`
	Arm        string  `json:"arm"` // diluted or fresh
	Population string  `json:"population"`
	Passes     int     `json:"passes"`
	N          int     `json:"n"`
	Rate       float64 `json:"rate"`
	Lo         float64 `json:"wilson_lo"`
	Hi         float64 `json:"wilson_hi"`
	// ContextTokens is the median context of the counted turns' last call:
	// how much the model had in front of it when it answered.
	ContextTokens int64 `json:"context_tokens,omitempty"`
	// AfterCompaction counts the turns asked on a compacted session.
	AfterCompaction int `json:"after_compaction,omitempty"`
}

// ProbeComparison is one probe asked diluted (at its turn) and fresh (as
// the first message of a new session): a view for the report, not the
// exit code. P is the one-sided Fisher exact test of "the diluted rate is
// lower", treating each asking as independent, which is right for the
// fresh sessions and for one probe turn across conversations.
type ProbeComparison struct {
	Turn        int     `json:"turn"` // the median turn it was asked at, diluted
	Probe       int     `json:"probe,omitempty"`
	DilutedPass int     `json:"diluted_passes"`
	DilutedN    int     `json:"diluted_n"`
	FreshPass   int     `json:"fresh_passes"`
	FreshN      int     `json:"fresh_n"`
	Drop        float64 `json:"drop"` // fresh rate minus diluted rate
	P           float64 `json:"p"`
	// Decayed: conversations where the probe failed diluted while the same
	// probe passed in its fresh triple; NeverHandled: failed both ways.
	Decayed      int `json:"decayed"`
	NeverHandled int `json:"never_handled"`
	// ContextTokens is the median context the probe was answered in,
	// diluted; Level the context level a diluted-to schedule asked it at.
	ContextTokens int64 `json:"context_tokens,omitempty"`
	Level         int64 `json:"level,omitempty"`
	// AfterCompaction counts the diluted askings on a compacted session.
	AfterCompaction int `json:"after_compaction,omitempty"`
}

// Dropped says how many units or probes were left out of the comparison,
// and why. Nothing left out is counted as a pass or a fail.
type Dropped struct {
	Arm    string `json:"arm"`
	What   string `json:"what"` // conversations, fresh triples, probes
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// Stats is what the numbers may claim.
type Stats struct {
	PerTurn []TurnStat        `json:"per_turn"`
	Probes  []ProbeComparison `json:"probes,omitempty"`
	// Comparison is the test behind the exit code (RuleDilutedVsFresh):
	// per-unit probe pass shares, diluted conversations vs fresh triples.
	Comparison stats.TwoArm `json:"comparison"`
	// DilutedPopulation names which conversations the diluted arm holds.
	DilutedPopulation string    `json:"diluted_population"`
	Dropped           []Dropped `json:"dropped,omitempty"`
	Alpha             float64   `json:"alpha"`
	Effect            float64   `json:"effect"`
	// MinDetectableDrop is the smallest drop the rule catches in 80% of
	// simulated runs like this one (0 when none is caught that often, or
	// the verdict did not need it); UnitsForEffect
	// how many units per arm would catch Effect.
	MinDetectableDrop float64 `json:"min_detectable_drop"`
	UnitsForEffect    int     `json:"units_for_effect"`
	// EffectiveTurn is the last probe turn whose diluted pass rate is still
	// at least 85% of the same probe's fresh rate (1 when the first probe
	// already falls below; 0 when nothing can be compared or no
	// conversation's baseline passed: no turn is known to hold).
	EffectiveTurn int `json:"effective_turn"`
	// EffectiveContext is the median context of that probe (0 with
	// EffectiveTurn 1 or 0).
	EffectiveContext int64 `json:"effective_context,omitempty"`
	// NonDiscriminating criteria passed at every judged turn of every
	// conversation: they cannot tell a decayed agent from a steady one.
	NonDiscriminating []string `json:"non_discriminating,omitempty"`
	// CheckAgreement: for criteria with deterministic checks, how often the
	// model judge agreed with the check.
	CheckAgreed int `json:"check_agreed"`
	CheckTotal  int `json:"check_total"`
}

// ControlStat compares a judged turn of the measured conversations with the
// same turn of the no-skill control, as unpaired samples: Fisher's exact
// test. The measured probes are over the conversations whose baseline
// passed (all of them with the gate bypassed); the control has no gate.
type ControlStat struct {
	Control     string  `json:"control"` // no-skill
	Turn        int     `json:"turn"`
	Probe       int     `json:"probe,omitempty"`
	Passes      int     `json:"passes"`
	N           int     `json:"n"`
	ControlPass int     `json:"control_passes"`
	ControlN    int     `json:"control_n"`
	Lift        float64 `json:"lift"` // measured rate minus the control's
	P           float64 `json:"p"`    // one-sided Fisher (see Reading)
	Reading     string  `json:"reading"`
}

// Sequential is the record of --until-decided: conversations are added a
// batch at a time (each with its fresh triple) and the two-arm comparison
// is looked at after every batch, until it shows decay, shows the skill
// held, or the cap is reached.
//
// The false-alarm guarantee holds by construction, whatever the baselines,
// errors and stopping do: a look before the cap tests at InterimLevel, the
// look at the cap at FinalLevel, and the levels of all the looks the plan
// allows add up to Alpha (a union bound, so it needs no assumption about
// how the looks depend on each other). Stopping early for "held" only
// removes chances to say "decay". The calibrate package measures the
// resulting rates.
type Sequential struct {
	Alpha    float64 `json:"alpha"`
	Max      int     `json:"max_conversations"`
	Batch    int     `json:"batch"`
	Effect   float64 `json:"effect"`
	Looks    []Look  `json:"looks"`
	Decision string  `json:"decision"` // decay, held, not-enough-evidence, continue
	Reason   string  `json:"reason,omitempty"`
}

// Look is one interim look, after a batch.
type Look struct {
	Conversations int     `json:"conversations"` // run so far
	DilutedUnits  int     `json:"diluted_units"`
	FreshUnits    int     `json:"fresh_units"`
	Drop          float64 `json:"drop"`
	P             float64 `json:"p"`
	Level         float64 `json:"level"` // the p-value at or below which this look says decay
	// MinDetectableDrop is the smallest drop the rule catches in 80% of
	// simulated runs like this one at this size, set at the look that
	// decided (0: not simulated, or no drop is caught that often).
	MinDetectableDrop float64 `json:"min_detectable_drop"`
	// Power is the share of simulated runs like this one at this size in
	// which the rule catches the effect: set where a "held" depended on it
	// (the drop confidently below the effect, or the cap reached).
	Power    float64 `json:"power,omitempty"`
	Decision string  `json:"decision"`
}

// Sequential decisions.
const (
	SeqContinue = "continue"
	SeqDecay    = "decay"
	SeqHeld     = "held"
	SeqNotEnuf  = "not-enough-evidence"
)
