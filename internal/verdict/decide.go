package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// ShapeOf names a conversation's sequence of pass/fail over its judged turns
// (judge errors and turns not run are left out).
func ShapeOf(c *record.Conversation) string {
	var room [plan.Turns]bool // a conversation's turns, without an allocation
	seq := room[:0]
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

// facts are what the rules read, counted once from the record.
type facts struct {
	r      *record.Run
	rule   string // the run's --rule
	alpha  float64
	effect float64
	// n counts conversations, fresh the fresh triples.
	n, fresh int
	// Per conversation or fresh triple, by status.
	errored, interrupted, gateStops, budgetStops int
	// controlsStopped counts controls an interrupt or the budget stopped:
	// they decide no exit code, but the run did not finish what it was
	// asked (an interrupted control left a run "completed", exit 0, while
	// the process exited 130).
	controlsInterrupted, controlsBudget int
	// incomplete counts completed conversations that never reached their
	// last probe.
	incomplete int
	// Baselines judged pass or fail, and of those passed.
	baseJudged, basePassed int
	// baseUncertain counts baselines whose repeated judgements disagreed
	// (--judge-repeats): neither passed nor failed.
	baseUncertain int
	// decayed counts conversations whose baseline passed and some probe
	// failed; probesJudged and probesFailed count those conversations'
	// judged probes.
	decayed, probesJudged, probesFailed        int
	judgeErrors, uncertain, overCalls, escapes int
	freshOverCalls                             int // of overCalls
	// setup lists "conversation N turn T: output" of set-up problems.
	setup []string
	// shapes counts the conversations of each shape, in shapeOrder.
	shapes            [len(shapeOrder)]int
	stoppedConsulting []string
	stats             record.Stats
	// ix is the record's judged turns.
	ix *runIndex
	// seq is the replayed --until-decided looks, when the run has them.
	seq *seqResult
	// exitOnly skips the simulated power figures (Options.ExitOnly);
	// powered says they are in stats.
	exitOnly, powered bool
	// baselineUnsure: no number of conversations was found because the
	// baseline rate is drawn from its posterior's lower quarter (a skill
	// whose baseline fails more often than not, exit 2 at any size, is not
	// ruled out): drawn from the whole, one was.
	baselineUnsure bool
}

// power fills in the simulated power figures the first time a rule needs
// them: the smallest drop the rule would have caught with PowerTarget
// power at this run's size, and how many conversations would catch the
// effect. It says false when they were skipped (Options.ExitOnly) or the
// run has nothing to simulate from.
func (f *facts) power() bool {
	// A run too small to test still tells the rates to simulate from.
	if c := f.cmp(); f.exitOnly || c.Fresh.Probes == 0 || c.Diluted.Probes == 0 {
		return false
	}
	if !f.powered {
		f.powered = true
		w := worldOf(f.r, f.ix, 0, f.alpha)
		if f.cmp().Testable {
			// A sequential run's figure is its last look's test, at that
			// look's own level (a small share of alpha before the cap):
			// the test that decided, not a fixed-size test at alpha, which
			// caught half the drop for the same conversations.
			at, n := w, f.n
			if f.seq != nil && f.seq.look.Conversations > 0 {
				n = f.seq.look.Conversations
				at = worldOf(f.r, f.ix, n, f.seq.look.Level)
			}
			if mdd := at.minDetectableDrop(n); !math.IsInf(mdd, 1) {
				f.stats.MinDetectableDrop = mdd
			}
		}
		if f.stats.MinDetectableDrop == 0 || f.stats.MinDetectableDrop > f.effect {
			// A sequential run's figure is a cap for its plan: each size
			// tested at the level the look at that cap would have (a
			// fixed-size test at the whole alpha claimed 80% where a
			// plan capped there reached 0.75 with batches of one).
			search := w
			if f.seq != nil {
				search.seqBatch = max(1, f.r.Sequential.Batch)
			}
			f.stats.UnitsForEffect = search.conversationsFor(f.effect, f.n+1)
			if f.stats.UnitsForEffect == 0 {
				// Found no size: the baselines' doing only if one is found
				// with their rate drawn from its whole posterior.
				whole := search
				whole.baseCap = 1
				f.baselineUnsure = whole.conversationsFor(f.effect, f.n+1) > 0
			}
		}
	}
	return true
}

// Options change what Decide computes, never the exit code it sets.
type Options struct {
	// ExitOnly skips what only words or reports the verdict: the simulated
	// power figures of an exit-0 verdict, the per-probe exact tests and
	// the controls'. Without the power figures a fixed-size run that would
	// be held says not enough evidence instead: exit 0 both. Never the
	// power a sequential look's decision needs (an early "held" stops a
	// run). The calibrate package, which counts exit codes over hundreds
	// of thousands of runs, sets it (its TestDumpOutcomes checks the exit
	// codes are those of Decide).
	ExitOnly bool
}

// seqResult is what the replayed looks reached.
type seqResult struct {
	look    record.Look
	decided bool // a look before the last decided (or the last did)
}

// cmp is the test behind the default rule.
func (f *facts) cmp() stats.TwoArm { return f.stats.Comparison }

// freshRate is the share of judged fresh probes that passed.
func (f *facts) freshRate() float64 {
	c := f.cmp()
	if c.Fresh.Probes == 0 {
		return 0
	}
	return float64(c.Fresh.Passed) / float64(c.Fresh.Probes)
}

// Decide is the one pre-declared decision function: it fills in each
// conversation's shape and the run's outcome and status. The outcome comes
// from the first of the rules (rules.go) that applies, so the exit code and
// the sentence come from one place and never disagree. It reads only the
// record, so `report` can redo it on saved runs, and the calibrate package
// pushes simulated runs through it to measure its false-alarm rate.
func Decide(r *record.Run) { DecideWith(r, Options{}) }

// DecideWith is Decide with options.
func DecideWith(r *record.Run, opts Options) {
	f := gather(r, opts)
	r.Status = runStatus(f)
	d := decide(f)
	o := record.Outcome{
		Exit: d.exit, Verdict: d.verdict, Sentence: d.sentence, Rule: f.rule,
		Shape: shapeWords(f.shapes), ProbesJudged: f.probesJudged, ProbesFailed: f.probesFailed,
		JudgeErrors: f.judgeErrors, Uncertain: f.uncertain, OverCalls: f.overCalls, Escapes: f.escapes,
		Stats: f.stats, StoppedConsulting: f.stoppedConsulting,
	}
	if !f.exitOnly {
		o.Controls = ComputeControls(r, f.alpha)
	}
	if f.rule == record.RuleAnyProbeFailed && len(r.Fresh) > 0 && f.cmp().Fresh.Probes > 0 {
		o.AnyFailureChance = anyFailureChance(f)
	}
	o.Notes = notes(f, o.Verdict)
	r.Outcome = o
}

// StoppedOnError gives a run that stopped on an error (run.Error, set when
// a fatal cause ended it) the outcome of no verdict, exit 3, as the run
// itself exited, keeping the statistics of what was judged: Decide alone,
// on conversations that had all finished, said held or decay (exit 0 or
// 1) in run.json and in every `report` of it, while the run exited 3.
func StoppedOnError(r *record.Run) {
	if r.Error == "" {
		return
	}
	r.Status = record.StatusError
	r.Outcome.Exit, r.Outcome.Verdict = exit.Tool, record.VerdictError
	r.Outcome.Sentence = "No verdict: the run stopped on an error: " + r.Error
}

// gather counts the facts of a record, and sets each conversation's shape.
func gather(r *record.Run, opts Options) *facts {
	f := &facts{r: r, rule: r.Config.Rule, alpha: r.Config.Alpha, effect: r.Config.Effect,
		n: len(r.Conversations), fresh: len(r.Fresh), exitOnly: opts.ExitOnly, ix: indexRun(r)}
	if f.rule == "" {
		f.rule = record.RuleDilutedVsFresh
	}
	if f.alpha <= 0 {
		f.alpha = 0.05
	}
	if f.effect <= 0 {
		f.effect = record.DefaultEffect
	}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		c.Shape = ShapeOf(c)
		if c.Shape != "" {
			f.shapes[shapeIndex(c.Shape)]++
		}
		f.countStatus(c.Status)
		base := f.ix.convs[i].at[0]
		baseResult := ""
		if base != nil {
			baseResult = base.Result()
		}
		switch baseResult {
		case judge.Pass:
			f.baseJudged++
			f.basePassed++
		case judge.Fail:
			f.baseJudged++
		case judge.Uncertain:
			f.baseUncertain++
		}
		convDecayed := false
		for k := range c.Turns {
			t := &c.Turns[k]
			f.countVerdict("conversation", c.Index, t)
			if t.Kind != plan.KindProbe {
				continue
			}
			if base != nil && base.ToolCallCount >= 3 && t.Status == record.TurnOK && t.ToolCallCount*5 <= base.ToolCallCount {
				f.stoppedConsulting = append(f.stoppedConsulting, fmt.Sprintf("conversation %d turn %d: %d tool calls after %d at the baseline", c.Index, t.Turn, t.ToolCallCount, base.ToolCallCount))
			}
			if baseResult != judge.Pass {
				continue
			}
			switch t.Result() {
			case judge.Pass:
				f.probesJudged++
			case judge.Fail:
				f.probesJudged++
				f.probesFailed++
				convDecayed = true
			}
		}
		if convDecayed {
			f.decayed++
		}
		if c.Status == record.StatusCompleted && f.ix.convs[i].at[probeCount] == nil {
			f.incomplete++
		}
	}
	for i := range r.Fresh {
		c := &r.Fresh[i]
		if c.Status != record.StatusBaselineFailed { // a fresh triple has no gate
			f.countStatus(c.Status)
		}
		for k := range c.Turns {
			f.countVerdict(freshUnit, c.Index, &c.Turns[k])
		}
	}
	for i := range r.Controls {
		switch r.Controls[i].Status {
		case record.StatusInterrupted, record.StatusRunning, record.StatusPending:
			f.controlsInterrupted++
		case record.StatusBudgetExhausted:
			f.controlsBudget++
		}
	}
	f.stats = computeStats(r, f.ix, f.alpha, f.effect, !f.exitOnly)
	if f.rule == record.RuleDilutedVsFresh && r.Sequential != nil && len(r.Sequential.Looks) > 0 {
		look, decided := replay(r.Sequential, r, f.ix, !f.exitOnly)
		f.seq = &seqResult{look: look, decided: decided}
	}
	return f
}

// countStatus counts a conversation's or fresh triple's status.
func (f *facts) countStatus(status string) {
	switch status {
	case record.StatusError:
		f.errored++
	case record.StatusInterrupted, record.StatusRunning, record.StatusPending:
		f.interrupted++
	case record.StatusBaselineFailed:
		f.gateStops++
	case record.StatusBudgetExhausted:
		f.budgetStops++
	}
}

// freshUnit names a fresh triple in countVerdict's messages.
const freshUnit = "fresh triple"

// countVerdict counts a turn's judge errors, uncertain verdicts, set-up
// problems, over-calls and escape-hatch flags.
func (f *facts) countVerdict(unit string, index int, t *record.Turn) {
	if t.Verdict == nil {
		return
	}
	if t.Verdict.SetupProblem != "" {
		f.setup = append(f.setup, fmt.Sprintf("%s %d turn %d: %s", unit, index, t.Turn, t.Verdict.SetupProblem))
	}
	switch t.Verdict.Result {
	case judge.JudgeError:
		f.judgeErrors++
	case judge.Uncertain:
		f.uncertain++
	}
	// Both arms' verdicts are downgraded and flagged alike: counted in the
	// conversations only, the note hid that every fresh pass of a run
	// could be a downgraded over-call.
	if t.Verdict.OverCall {
		f.overCalls++
		if unit == freshUnit {
			f.freshOverCalls++
		}
	}
	if t.Verdict.EscapeHatch {
		f.escapes++
	}
}

// runStatus is the run's status from its units' statuses.
func runStatus(f *facts) string {
	switch {
	case f.interrupted > 0 || f.controlsInterrupted > 0:
		return record.StatusInterrupted
	case f.budgetStops > 0 || f.controlsBudget > 0:
		return record.StatusBudgetExhausted
	case f.n > 0 && f.gateStops == f.n:
		return record.StatusBaselineFailed
	case f.errored > 0:
		return record.StatusError
	}
	return record.StatusCompleted
}

// shapeOrder is every shape ShapeOf names, in the order a mix lists them.
var shapeOrder = [...]string{record.ShapeHeld, record.ShapeDecayed, record.ShapeNeverWorked, record.ShapeUnstable, record.ShapeBaselineFailed}

// shapeIndex is a shape's place in shapeOrder.
func shapeIndex(shape string) int {
	i := slices.Index(shapeOrder[:], shape)
	if i < 0 {
		panic("verdict: unknown shape " + shape)
	}
	return i
}

// shapeWords names the run's shape: the one shape every conversation has,
// or the mix.
func shapeWords(shapes [len(shapeOrder)]int) string {
	kinds, one := 0, ""
	for i, n := range shapes {
		if n > 0 {
			kinds, one = kinds+1, shapeOrder[i]
		}
	}
	switch kinds {
	case 0:
		return ""
	case 1:
		return one
	}
	var parts []string
	for i, s := range shapeOrder {
		if shapes[i] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", shapes[i], s))
		}
	}
	return "mixed: " + strings.Join(parts, ", ")
}

// anyFailureChance is how often seed 002's rule fires on a skill that
// never decays, at the pass rate measured fresh, over the probes it judged.
func anyFailureChance(f *facts) float64 {
	return 1 - math.Pow(f.freshRate(), float64(f.probesJudged))
}

// pronoun is "it" for one conversation, "them" for more.
func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// plural is "1 probe" or "2 probes".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
