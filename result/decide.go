package result

import (
	"fmt"
	"strings"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/judge"
)

// Outcome is what the run concludes.
type Outcome struct {
	Exit     int    `json:"exit_code"`
	Verdict  string `json:"verdict"` // decay, no-decay, baseline-failed, error, interrupted, budget-exhausted
	Sentence string `json:"sentence"`
	Shape    string `json:"shape,omitempty"`
	// Counts over judged probe turns of conversations whose baseline passed.
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

// ShapeOf names a conversation's sequence of pass/fail over its judged turns
// (judge errors and turns not run are left out).
func ShapeOf(c *Conversation) string {
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
		return ShapeBaselineFailed
	}
	allPass, allFail := true, true
	for _, p := range seq {
		allPass = allPass && p
		allFail = allFail && !p
	}
	switch {
	case allPass:
		return ShapeHeld
	case allFail:
		return ShapeNeverWorked
	}
	// Mixed: decayed when it starts passing and, once failed, never passes.
	if seq[0] {
		failed := false
		for _, p := range seq {
			if !p {
				failed = true
			} else if failed {
				return ShapeUnstable
			}
		}
		return ShapeDecayed
	}
	return ShapeUnstable
}

// Decide fills in each conversation's shape and the run's outcome and
// status. It reads only the record, so `report` can redo it on old runs.
func Decide(r *Run) {
	o := Outcome{}
	decayed, baselineFailed, errored, interrupted, incomplete := 0, 0, 0, 0, 0
	gateStops, budgetStops := 0, 0
	shapes := map[string]int{}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		c.Shape = ShapeOf(c)
		if c.Shape != "" {
			shapes[c.Shape]++
		}
		switch c.Status {
		case StatusError:
			errored++
		case StatusInterrupted, StatusRunning, StatusPending:
			interrupted++
		case StatusBaselineFailed:
			gateStops++
		case StatusBudgetExhausted:
			budgetStops++
		}
		base := c.TurnAt(1)
		baseResult := ""
		if base != nil {
			baseResult = base.Result()
		}
		if baseResult == judge.Fail {
			baselineFailed++
		}
		convDecayed := false
		for k := range c.Turns {
			t := &c.Turns[k]
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
			if t.Kind != "probe" {
				continue
			}
			if base != nil && base.ToolCallCount >= 3 && t.Status == TurnOK && t.ToolCallCount*5 <= base.ToolCallCount {
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
		if c.Status == StatusCompleted && len(c.Turns) < 10 {
			incomplete++
		}
	}
	n := len(r.Conversations)
	switch {
	case interrupted > 0:
		r.Status = StatusInterrupted
	case budgetStops > 0:
		r.Status = StatusBudgetExhausted
	case n > 0 && gateStops == n:
		r.Status = StatusBaselineFailed
	case errored > 0:
		r.Status = StatusError
	default:
		r.Status = StatusCompleted
	}
	if len(shapes) == 1 {
		for s := range shapes {
			o.Shape = s
		}
	} else if len(shapes) > 1 {
		var parts []string
		for _, s := range []string{ShapeHeld, ShapeDecayed, ShapeNeverWorked, ShapeUnstable, ShapeBaselineFailed} {
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
	o.Stats = ComputeStats(r, alpha)
	o.Controls = ComputeControls(r)
	pooled := o.Stats.Paired[len(o.Stats.Paired)-1]
	significant := r.Config.Gate == GateSignificant
	switch {
	case budgetStops > 0:
		o.Exit, o.Verdict = exit.Tool, "budget-exhausted"
		o.Sentence = fmt.Sprintf("No verdict: the budget ran out before %d of %d conversations finished; what was judged so far is reported (%d of %d judged probes failed).", budgetStops, n, o.ProbesFailed, o.ProbesJudged)
	case r.Sequential != nil && r.Sequential.Decision == "decay":
		o.Exit, o.Verdict = exit.Decay, "decay"
		o.Sentence = fmt.Sprintf("Decay, decided sequentially after %d conversations: %s.", n, r.Sequential.Reason)
	case r.Sequential != nil && r.Sequential.Decision == "no-decay" && baselineFailed == 0 && errored == 0 && o.JudgeErrors == 0:
		o.Exit, o.Verdict = exit.OK, "no-decay"
		o.Sentence = fmt.Sprintf("No decay, decided sequentially after %d conversations: %s.", n, r.Sequential.Reason)
	case r.Sequential != nil && r.Sequential.Decision == "cap" && interrupted == 0 && errored == 0:
		o.Exit, o.Verdict = exit.Indeterminate, "undecided"
		o.Sentence = fmt.Sprintf("Undecided: %s.", r.Sequential.Reason)
	case decayed > 0 && significant && pooled.P > alpha:
		o.Exit, o.Verdict = exit.Indeterminate, "decay-not-significant"
		o.Sentence = fmt.Sprintf("Decay seen but not significant: %d of %d conversations decayed, paired sign test p = %.3g > alpha %.2g (--gate significant).", decayed, n, pooled.P, alpha)
	case decayed > 0 && significant:
		o.Exit, o.Verdict = exit.Decay, "decay"
		o.Sentence = fmt.Sprintf("Significant decay: %d of %d conversations passed at turn 1 and failed later, paired sign test p = %.3g <= alpha %.2g.", decayed, n, pooled.P, alpha)
	case decayed > 0:
		o.Exit, o.Verdict = exit.Decay, "decay"
		o.Sentence = fmt.Sprintf("Decay: in %d of %d conversations the baseline passed and a later probe failed (%d of %d judged probes failed).",
			decayed, n, o.ProbesFailed, o.ProbesJudged)
	case baselineFailed > 0:
		o.Exit, o.Verdict = exit.Indeterminate, "baseline-failed"
		o.Sentence = fmt.Sprintf("Indeterminate: the baseline (turn 1, before dilution) failed in %d of %d conversations, so no decay can be measured there; fix the skill or the base task first.", baselineFailed, n)
	case interrupted > 0:
		o.Exit, o.Verdict = exit.Interrupted, "interrupted"
		o.Sentence = fmt.Sprintf("Interrupted before %d of %d conversations finished; the run folder can be resumed or reported.", interrupted, n)
	case o.Uncertain > 0 && errored == 0:
		o.Exit, o.Verdict = exit.Indeterminate, "uncertain"
		o.Sentence = fmt.Sprintf("Indeterminate: no decay among the turns the judge agreed on, but %d judged turns are uncertain (the repeated judgements disagreed).", o.Uncertain)
	case errored > 0 || o.JudgeErrors > 0 || incomplete > 0:
		o.Exit, o.Verdict = exit.Tool, "error"
		o.Sentence = fmt.Sprintf("No verdict: %d conversations stopped on an error and %d judged turns ended in judge errors, which count as neither pass nor fail.", errored, o.JudgeErrors)
	case n == 0:
		o.Exit, o.Verdict = exit.Tool, "error"
		o.Sentence = "No verdict: no conversation ran."
	default:
		o.Exit, o.Verdict = exit.OK, "no-decay"
		o.Sentence = fmt.Sprintf("No decay seen: every baseline and all %d judged probes passed in %d conversations.", o.ProbesJudged, n)
	}
	if o.JudgeErrors > 0 && o.Verdict != "error" {
		o.Notes = append(o.Notes, fmt.Sprintf("%d judged turns ended in judge errors; they count as neither pass nor fail (`vibe-test rejudge` can redo them).", o.JudgeErrors))
	}
	if r.Sequential == nil && o.Stats.Underpowered && (o.Verdict == "no-decay" || o.Verdict == "decay" || o.Verdict == "decay-not-significant") {
		// The paired sign test needs NeededMin discordant conversations, all
		// one way, to reach alpha (5 for 0.05: 0.5^5 = 0.031).
		o.Notes = append(o.Notes, fmt.Sprintf("Underpowered: with %d conversations no drop can reach p <= %.2g (the paired sign test needs at least %d conversations that pass at turn 1 and fail later); about %d conversations detect a decay that strikes 40%% of them with 80%% power.",
			n, alpha, o.Stats.NeededMin, o.Stats.NeededPower))
	}
	if r.Sequential == nil && !o.Stats.Underpowered && o.Verdict == "no-decay" {
		o.Notes = append(o.Notes, fmt.Sprintf("Not underpowered, but a held run proves little: with %d conversations, a decay that struck 40%% of them would have shown as significant with probability %.0f%% (power); about %d conversations reach 80%%.",
			n, 100*o.Stats.Power40, o.Stats.NeededPower))
	}
	if o.OverCalls > 0 {
		o.Notes = append(o.Notes, fmt.Sprintf("%d escape-hatch flags from the judge were downgraded to partial compliance: a must-criterion's deterministic check passed (judge over-calls).", o.OverCalls))
	}
	if r.GateBypassed {
		o.Notes = append([]string{"BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve."}, o.Notes...)
	}
	r.Outcome = o
}
