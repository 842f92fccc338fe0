// Package evalstats decides what a case-based eval shows (seed 000's
// method, `vibe-test eval`): whether a candidate version of a skill makes
// its decisions worse than the stored baseline runs, on cases whose
// answers are known. It holds the data a decision reads (runs of graded
// cells), the acceptance rules and the checks of the instrument itself,
// and nothing that calls a model: package calibrate pushes simulated runs
// through the very functions that set the exit code. Everything here is
// deterministic for the same input (simulations have fixed seeds).
//
// # The paired rule (RulePaired, the default), as calibrated
//
// Cases are the units. A cell's score on a measure is 1 (pass) or 0
// (fail); its total is the share of its graded measures that passed; n/a
// and errors are neither. Per case and side, a score is the mean over the
// side's graded cells, every base run's repeats pooled on the base side.
// For the total and each measure, over the cases graded on both sides:
//
//   - d_c = base_c − candidate_c, D = mean d_c, V_e = s²(d_c)/n;
//   - the run-to-run drift σ_a: with k ≥ 2 base runs, from their run ×
//     case layout, (run mean square − interaction mean square)/n clamped
//     at 0 (for two runs, (δ² − s²(run1_c − run2_c)/n)/2), a measure
//     counting at least what the total shows; and never less than
//     DriftFloor (0.03), whatever the runs show, or with one base run;
//   - Var(D) = V_e + σ_a²(1 + 1/k); Welch–Satterthwaite degrees of
//     freedom, the drift part with k − 1 when estimated and none (a
//     known variance) when the floor counts;
//   - the one-sided p-value of "no worse" from Student's t; Holm's
//     adjustment over the total and the measures (valid under any
//     dependence).
//
// Reject (exit 1) when any adjusted p ≤ alpha, naming each such measure
// with its drop and adjusted p. Else accept (exit 0) when the total's
// one-sided (1 − alpha) upper bound of the drop is below Options.Margin
// (0.1). Else not enough evidence (exit 2), with Need: about how many
// cases at the same repeats and spread would decide (0 when the drift
// counted alone keeps the bound up). A decision that cannot be made is a
// tool error (exit 3): see Decide.
//
// Why the floor. Two base runs show the drift once: one degree of
// freedom. The design's first form (the estimate alone, clamped at 0)
// rejected an unchanged skill 11–17% of the time with a drift of 5 to 8
// points at 30–40 cases, because an estimate near zero by chance lets a
// run's shift pass for a drop; no rule can know a larger drift from one
// difference without giving up nearly all its power. The floor states an
// assumption instead: runs drift by at least 3 points. With it the worst
// cell of the grid (drift up to 5 points, cases 8–40, repeats 1–5, grader
// noise, errored and n/a cells, 1 to 3 base runs) is 0.040; beyond it
// the rule degrades slowly (0.064 at 7 points of drift, 40 cases × 5).
// Holm rather than a max-T permutation: the measures' test statistics
// correlate little (0.0–0.05 between measures and 0.4 with the total on
// an unchanged skill), where max-T's per-test level is 0.0078 against
// Bonferroni's 0.0071, and a permutation over cases would not see the
// drift, which is common to all cases. A binomial floor on V_e was tried
// and dropped: the grid held without it, and it cut the power at 8 cases
// × 3 repeats from 0.16 to 0.05 (a 10-point drop on every measure).
//
// What a reject may claim: "on these cases, the candidate's run scores
// lower than the base runs' by more than the noise within a run and a
// run-to-run drift of at least DriftFloor explain". Not that the skill is
// worse everywhere, and not that an accepted candidate is as good: accept
// says the total did not drop by Margin or more, at 1 − alpha.
package evalstats

// Grade is one measure's grade of one generated message.
type Grade int8

const (
	// NA: the measure does not apply to this case (the grader said n/a,
	// or the case's key has none of the fields the measure uses).
	NA Grade = iota
	Pass
	Fail
	// Error: no grade (the grader's answer did not parse, or its quote was
	// not in the message or the reader's notes, twice; the generator or
	// reader failed). Never a pass or a fail.
	Error
)

// Run is one generation pass over a case set: every case asked Repeats
// times, each message read and graded on every measure.
type Run struct {
	// Label names the run in tables ("base 1", "candidate", "control").
	Label string
	// Measures are the graded measures' ids, in the case set's order; a
	// Cell's Grades follow it.
	Measures []string
	Cases    []Case
}

// Case is one case's cells in a run.
type Case struct {
	ID string
	// Cells holds one entry per repeat.
	Cells []Cell
}

// Cell is one repeat of one case: a generated message and its grades.
type Cell struct {
	Grades []Grade // one per Run.Measures
	// Words is the message's word count (seed 000's M6: it never passes or
	// fails; it breaks ties).
	Words int
}

// Rule names what sets the exit code of `vibe-test eval --against`.
const (
	// RulePaired (the default): each case's candidate score against its
	// baseline score, over the total and every measure, with the
	// run-to-run drift the baseline runs show (at least DriftFloor)
	// counted in the noise and the chance of rejecting an unchanged skill
	// held at alpha over all the measures together. Calibrated by package
	// calibrate; the package comment has the rule in full.
	RulePaired = "paired"
	// RuleSeed is seed 000's margins exactly: the total must stay above
	// the baseline total minus 2·sd·√(1/n₁ + 1/n₂) (sd of the baseline's
	// repeat totals), each measure above the baseline rate minus two
	// binomial standard errors. Not calibrated: its measured false-reject
	// rate is printed beside its verdict.
	RuleSeed = "seed"
)

// Verdicts of an acceptance decision, with their exit codes.
const (
	Accept   = "accept"              // exit 0
	Reject   = "reject"              // exit 1: names the measures
	NotEnuf  = "not-enough-evidence" // exit 2: says the size that would decide
	ToolFail = "error"               // exit 3: too many grade errors to decide
)

// Total names the measure "share of a case's applicable measures passed".
const Total = "total"

// Options of a decision.
type Options struct {
	Rule  string  // RulePaired (default) or RuleSeed
	Alpha float64 // the chance of rejecting an unchanged skill (0.05)
	// RejectAlpha is the level one decision's rejections are held at (0:
	// Alpha), the upper bounds staying at 1 − Alpha: DecideWithHoldout
	// and DecideGrid lower it, so that the exit code, which rejects when
	// any part or point does, rejects an unchanged skill at most Alpha of
	// the time over all of them.
	RejectAlpha float64
	// Margin is the drop in the total worth calling a regression: accept
	// needs the drop confidently below it (default 0.1).
	Margin float64
	// SeedSims is how many unchanged-skill runs RuleSeed simulates for
	// Decision.SeedFalseReject: 0 means 2000, negative means none (package
	// calibrate measures the rule itself and needs it fast).
	SeedSims int
	// ExitOnly (RulePaired) skips what only reports a decision: the
	// measures' upper bounds (the total's decides, so it stays) and
	// rates, the rejected measures' words, Need and the sentence. Verdict,
	// Exit, Drift, GradeErrors and each measure's P, Adjusted and Reject
	// are what they are without it: package calibrate, which decides
	// hundreds of thousands of simulated comparisons, sets it, and
	// TestEvalExitOnly checks them over its grids.
	ExitOnly bool
}

// Measure is one measure's comparison of the candidate with the base.
type Measure struct {
	Name string
	// Base and Candidate pass rates over their graded cells, with Wilson
	// 95% intervals and counts.
	Base, Candidate Rate
	// Drop is the base rate minus the candidate's, from the rule's paired
	// estimate (positive: the candidate does worse).
	Drop float64
	// Upper is the rule's one-sided (1 - alpha) upper bound of the drop
	// (RulePaired; 0 under RuleSeed).
	Upper float64
	// Margin is the drop the rule lets pass: RuleSeed's 2·sd·√(1/n₁ +
	// 1/n₂) on the total and two binomial standard errors on a measure;
	// under RulePaired, Options.Margin on the total (0 on the measures,
	// which can only reject).
	Margin float64
	// P is the one-sided p-value of "the candidate is no worse", Adjusted
	// the one compared with alpha after the adjustment for every measure
	// (RulePaired; both 1 when the measure was not tested, 0 under
	// RuleSeed, which has no p-values).
	P, Adjusted float64
	Reject      bool
	// Cases counts the cases the measure was compared on (graded on both
	// sides); under 2 the measure was not tested.
	Cases int
}

// Tested says whether the rule could have found the measure worse: on
// fewer than minRejectCases cases its p-values are 1 by rule (so Holm
// still counts the measure), not a test's result, and are not shown.
func (m Measure) Tested() bool { return m.Cases >= minRejectCases }

// Rate is a pass rate with its Wilson 95% interval.
type Rate struct {
	Passed, Graded int
	Rate, Lo, Hi   float64
}

// Decision is what an acceptance rule concludes.
type Decision struct {
	Rule     string
	Verdict  string // Accept, Reject, NotEnuf, ToolFail
	Exit     int
	Sentence string
	Measures []Measure // the total first
	// Need is, for NotEnuf, about how many cases (at the same repeats)
	// would decide; 0 otherwise.
	Need int
	// Drift is the run-to-run drift of the total the rule counted: the
	// standard deviation of a run's effect as the baseline runs show it,
	// and at least DriftFloor (with one base run, which cannot show it,
	// DriftFloor; the sentence says so).
	Drift float64
	// SeedFalseReject is, under RuleSeed, the simulated chance the seed's
	// margins reject an unchanged skill at this run's size and noise.
	SeedFalseReject float64
	// GradeErrors counts cells of either side with an Error grade; they
	// count as neither pass nor fail.
	GradeErrors int
}

// Instrument is the check of the instrument itself that `--baseline`
// makes and prints: a second baseline run is accepted against the first,
// the empty-skill control is rejected, and the rule's acceptance rate on
// re-splits of the baseline's own repeats (no model call).
type Instrument struct {
	Second          Decision // base run 2 against base run 1
	SecondAccepted  bool
	Control         Decision // the control against the baseline runs
	ControlRejected bool
	// ResplitAccept is the share of re-splits of the baseline repeats (an
	// A/A pair made from one baseline) the rule accepted, over Resplits.
	ResplitAccept float64
	Resplits      int
	// Sentence says in one line whether the instrument works and, if not,
	// which check failed.
	Sentence string
}

// Holdout joins the main set's decision with the holdout set's: accepted
// only when both accept. Gap is the overfit gap: the main set's gain in
// the total minus the holdout set's (an editor who read the main keys can
// fit them; a gap well above zero says it did).
type Holdout struct {
	Main, Holdout Decision
	Verdict       string
	Exit          int
	Sentence      string
	// MainGain and HoldoutGain are each part's Gain (DecideWithHoldout
	// leaves them 0 with Options.ExitOnly); Gap is MainGain − HoldoutGain.
	MainGain, HoldoutGain float64
	Gap                   float64
}

// Row is one line of the per-measure table: a measure's pass rate in each
// run given (control, base 1, base 2, candidate, as the caller orders
// them), with Wilson intervals, as seed 000's tables show them.
type Row struct {
	Measure string
	Rates   []Rate
}

// Regression is a case a measure regressed on: it passed at least 2/3 of
// its baseline repeats and failed every candidate repeat.
type Regression struct {
	Case, Measure string
}
