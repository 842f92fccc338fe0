package verdict

import (
	"slices"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// probeCount is how many probes a conversation asks.
const probeCount = len(plan.ProbeTurns)

// judgedAt is a conversation's judged turn number k: 0 the baseline, else
// probe k.
func judgedAt(c *record.Conversation, k int) *record.Turn {
	if k == 0 {
		return c.TurnAt(1)
	}
	return c.ProbeAt(k)
}

// judgedResult is the pass/fail of judged turn k (0: the baseline, else
// probe k), with ok false when it has neither.
func judgedResult(c *record.Conversation, k int) (pass, ok bool) {
	return resultOf(judgedAt(c, k))
}

// resultOf is a judged turn's pass/fail, with ok false when it has
// neither (or is nil). A set-up problem (the skill's required step was
// tried and failed: the sandbox, not the agent) is neither, as the arms
// leave it out: the per-turn lines counted it a fail ("fresh 0/1") beside
// a fresh arm that had left it out.
func resultOf(t *record.Turn) (pass, ok bool) {
	if t == nil || t.Verdict != nil && t.Verdict.SetupProblem != "" {
		return false, false
	}
	switch t.Result() {
	case judge.Pass:
		return true, true
	case judge.Fail:
		return false, true
	}
	return false, false
}

// judgedTurns are a conversation's judged turns, found in one pass over
// its turns (what a decision reads, many times over): at[0] is TurnAt(1),
// at[k] is ProbeAt(k), shown[k-1] is ShownProbe(k).
type judgedTurns struct {
	at    [probeCount + 1]*record.Turn
	shown [probeCount]*record.Turn
}

func judgedOf(c *record.Conversation) judgedTurns {
	var j judgedTurns
	for i := range c.Turns {
		t := &c.Turns[i]
		if t.Turn == 1 && j.at[0] == nil {
			j.at[0] = t
		}
		if k := t.ProbeNumber(); k >= 1 && k <= probeCount && j.at[k] == nil {
			j.at[k] = t
		}
	}
	copy(j.shown[:], j.at[1:])
	for i := len(c.Abandoned) - 1; i >= 0; i-- {
		t := &c.Abandoned[i]
		if k := t.ProbeNumber(); k >= 1 && k <= probeCount && j.shown[k-1] == nil {
			j.shown[k-1] = t
		}
	}
	return j
}

// result is judgedResult of judged turn k.
func (j *judgedTurns) result(k int) (pass, ok bool) { return resultOf(j.at[k]) }

// inArm reports whether the conversation's probes count in the diluted
// arm: always when the gate was bypassed, else only when its baseline
// passed (the gate stopped the others before any probe).
func (j *judgedTurns) inArm(bypass bool) bool {
	if bypass {
		return true
	}
	base, ok := j.result(0)
	return ok && base
}

// runIndex is a run's judged turns, per conversation and per fresh triple
// (in record order). It reads the record as it is when made.
type runIndex struct {
	convs, fresh []judgedTurns
}

func indexRun(r *record.Run) *runIndex {
	ix := &runIndex{}
	all := make([]judgedTurns, len(r.Conversations)+len(r.Fresh))
	ix.convs, ix.fresh = all[:len(r.Conversations)], all[len(r.Conversations):]
	for i := range r.Conversations {
		ix.convs[i] = judgedOf(&r.Conversations[i])
	}
	for i := range r.Fresh {
		ix.fresh[i] = judgedOf(&r.Fresh[i])
	}
	return ix
}

// median of a list (0 when empty), the upper middle of an even one: a
// turn that was asked. It sorts xs in place.
func median(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	if !slices.IsSorted(xs) {
		slices.Sort(xs)
	}
	return xs[len(xs)/2]
}

// medianValue is a list's median as printed beside a size ("context:
// 18,079 tokens (median)"): the mean of the two middle values of an even
// one, rounded; the upper middle alone was labelled the median.
func medianValue(xs []int64) int64 {
	m := median(xs)
	if n := len(xs); n > 0 && n%2 == 0 {
		m = (xs[n/2-1] + xs[n/2] + 1) / 2
	}
	return m
}

// Why a probe is left out of the comparison, in the order Arms lists them.
var dropReasons = [...]string{"not run", "the turn ended in an error", whySetup, "judge error", "uncertain (repeated judgements disagreed)", "not judged"}

// Arms builds the units of the two-arm comparison from the record,
// counting conversations (diluted) and fresh triples with Index <= upTo
// (0: all). Dropped says what was left out and why.
func Arms(r *record.Run, upTo int) (diluted, fresh []stats.ProbeUnit, dropped []record.Dropped) {
	return arms(r, indexRun(r), upTo)
}

func arms(r *record.Run, ix *runIndex, upTo int) (diluted, fresh []stats.ProbeUnit, dropped []record.Dropped) {
	bypass := r.Config.NoBaselineGate
	var gateStopped, baseUncertain, baseUnjudged, noDilutedProbe, noFreshProbe int
	// Per arm (0 diluted, 1 fresh), the probes left out by reason.
	var probeDrops [2][len(dropReasons)]int
	// One array holds every unit's probes: a decision makes them by the
	// million in a calibration grid.
	room := make([]int8, (len(r.Conversations)+len(r.Fresh))*probeCount)
	diluted = make([]stats.ProbeUnit, 0, len(r.Conversations))
	fresh = make([]stats.ProbeUnit, 0, len(r.Fresh))
	unit := func(arm int, j *judgedTurns) (stats.ProbeUnit, int) {
		u := stats.ProbeUnit(room[:probeCount:probeCount])
		room = room[probeCount:]
		judged := 0
		for k := 1; k <= probeCount; k++ {
			t := j.shown[k-1]
			u[k-1] = stats.Missing
			switch {
			case t == nil:
				probeDrops[arm][0]++
			case t.Status != record.TurnOK:
				probeDrops[arm][1]++
			case t.Verdict != nil && t.Verdict.SetupProblem != "":
				probeDrops[arm][2]++
			case t.Result() == judge.Pass:
				u[k-1] = stats.Pass
				judged++
			case t.Result() == judge.Fail:
				u[k-1] = stats.Fail
				judged++
			case t.Result() == judge.JudgeError:
				probeDrops[arm][3]++
			case t.Result() == judge.Uncertain:
				probeDrops[arm][4]++
			default:
				probeDrops[arm][5]++
			}
		}
		return u, judged
	}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		if upTo > 0 && c.Index > upTo {
			continue
		}
		j := &ix.convs[i]
		if !j.inArm(bypass) {
			// Not "stopped by the gate" unless its baseline failed: the
			// gate lets a baseline whose repeats disagreed run on (its
			// probes were asked), and a conversation stopped before its
			// baseline was judged (an interrupt, an error, the budget)
			// was never ruled on.
			res := ""
			if j.at[0] != nil {
				res = j.at[0].Result()
			}
			switch {
			case res != judge.Fail && res != judge.Uncertain:
				baseUnjudged++
			case res == judge.Uncertain:
				baseUncertain++
			default:
				gateStopped++
			}
			continue
		}
		u, judged := unit(0, j)
		if judged == 0 {
			noDilutedProbe++
			continue
		}
		diluted = append(diluted, u)
	}
	for i := range r.Fresh {
		c := &r.Fresh[i]
		if upTo > 0 && c.Index > upTo {
			continue
		}
		u, judged := unit(1, &ix.fresh[i])
		if judged == 0 {
			noFreshProbe++
			continue
		}
		fresh = append(fresh, u)
	}
	add := func(arm, what string, n int, why string) {
		if n > 0 {
			dropped = append(dropped, record.Dropped{Arm: arm, What: what, Count: n, Reason: why})
		}
	}
	add("diluted", "conversations", gateStopped, "the baseline did not pass, so the gate stopped "+pronoun(gateStopped)+" before any probe")
	add("diluted", "conversations", baseUncertain, "the baseline was uncertain (repeated judgements disagreed), so its probes cannot count as after a passed baseline")
	add("diluted", "conversations", baseUnjudged, "stopped before its baseline was judged pass or fail")
	add("diluted", "conversations", noDilutedProbe, "no probe was judged pass or fail")
	add("fresh", "fresh triples", noFreshProbe, "no probe was judged pass or fail")
	for a, arm := range []string{"diluted", "fresh"} {
		for w, why := range dropReasons {
			add(arm, "probes", probeDrops[a][w], why)
		}
	}
	return diluted, fresh, dropped
}

// whySetup is why a probe whose required step failed in the sandbox is
// left out: that measures the sandbox, not the skill.
const whySetup = "set-up problem (a required step's call failed in the sandbox)"

// ComputeStats derives the statistics from the record alone, but for the
// simulated power figures (MinDetectableDrop, UnitsForEffect), which
// Decide adds where its sentence needs them (power.go).
func ComputeStats(r *record.Run, alpha, effect float64) record.Stats {
	return computeStats(r, indexRun(r), alpha, effect, true)
}

// computeStats is ComputeStats; without report, it leaves out the
// per-probe exact tests, which only the report reads (Options.ExitOnly).
func computeStats(r *record.Run, ix *runIndex, alpha, effect float64, report bool) record.Stats {
	s := record.Stats{Alpha: alpha, Effect: effect}
	bypass := r.Config.NoBaselineGate
	s.DilutedPopulation = record.PopGatePassed
	if bypass {
		s.DilutedPopulation = record.PopAll
	}
	inArm := make([]bool, len(r.Conversations))
	for i := range inArm {
		inArm[i] = ix.convs[i].inArm(bypass)
	}
	// The medians' lists, one pair of arrays reused for every turn.
	turns := make([]int64, 0, max(len(r.Conversations), len(r.Fresh)))
	contexts := make([]int64, 0, max(len(r.Conversations), len(r.Fresh)))
	s.PerTurn = make([]record.TurnStat, 0, 2*probeCount+1)
	for k := 0; k <= probeCount; k++ {
		ts := record.TurnStat{Probe: k, Arm: "diluted", Population: s.DilutedPopulation}
		if k == 0 {
			ts.Population = record.PopAll
		}
		turns, contexts = turns[:0], contexts[:0]
		for i := range r.Conversations {
			if k != 0 && !inArm[i] {
				continue
			}
			t := ix.convs[i].at[k]
			if pass, ok := resultOf(t); ok {
				ts.N++
				if pass {
					ts.Passes++
				}
				turns = append(turns, int64(t.Turn))
				contexts = append(contexts, t.ContextTokens)
				if t.AfterCompaction {
					ts.AfterCompaction++
				}
			}
		}
		ts.Turn, ts.ContextTokens = int(median(turns)), medianValue(contexts)
		if ts.Turn == 0 {
			ts.Turn = 1
			if k > 0 {
				ts.Turn = plan.ProbeTurns[k-1]
			}
		}
		s.PerTurn = append(s.PerTurn, finishRate(ts))
	}
	// Fresh triple i nearly always has Index i+1: then conversation c's
	// triple is found at once rather than by a scan.
	inOrder := true
	for i := range r.Fresh {
		inOrder = inOrder && r.Fresh[i].Index == i+1
	}
	for k := 1; k <= probeCount; k++ {
		ts := record.TurnStat{Turn: plan.ProbeTurns[k-1], Probe: k, Arm: "fresh", Population: record.PopFresh}
		dil := s.PerTurn[k]
		pc := record.ProbeComparison{Turn: dil.Turn, Probe: k, ContextTokens: dil.ContextTokens, AfterCompaction: dil.AfterCompaction}
		if r.Plan != nil {
			pc.Level = r.Plan.Schedule.Level(k)
		}
		contexts = contexts[:0]
		for i := range r.Fresh {
			t := ix.fresh[i].at[k]
			if pass, ok := resultOf(t); ok {
				ts.N++
				if pass {
					ts.Passes++
				}
				contexts = append(contexts, t.ContextTokens)
			}
		}
		if ts.N == 0 {
			continue
		}
		ts.ContextTokens = medianValue(contexts)
		s.PerTurn = append(s.PerTurn, finishRate(ts))
		for i := range r.Conversations {
			c := &r.Conversations[i]
			if !inArm[i] {
				continue
			}
			d, ok := ix.convs[i].result(k)
			if !ok {
				continue
			}
			pc.DilutedN++
			if d {
				pc.DilutedPass++
				continue
			}
			count := func(f int) {
				if fp, ok := ix.fresh[f].result(k); ok {
					if fp {
						pc.Decayed++
					} else {
						pc.NeverHandled++
					}
				}
			}
			if inOrder {
				if f := c.Index - 1; f >= 0 && f < len(r.Fresh) {
					count(f)
				}
				continue
			}
			for f := range r.Fresh {
				if r.Fresh[f].Index == c.Index {
					count(f)
				}
			}
		}
		pc.FreshPass, pc.FreshN = ts.Passes, ts.N
		if pc.DilutedN > 0 {
			pc.Drop = float64(pc.FreshPass)/float64(pc.FreshN) - float64(pc.DilutedPass)/float64(pc.DilutedN)
		}
		if pc.DilutedN > 0 && report {
			pc.P = stats.FisherLess(pc.DilutedPass, pc.DilutedN-pc.DilutedPass, pc.FreshPass, pc.FreshN-pc.FreshPass)
		}
		if s.Probes == nil {
			s.Probes = make([]record.ProbeComparison, 0, probeCount)
		}
		s.Probes = append(s.Probes, pc)
	}
	// Effective turn: like with like, each probe diluted against itself
	// fresh. It starts at the baseline only where some conversation's
	// baseline passed: where none did (the gate stopped them all, or their
	// judge failed), no turn is known to hold, and "1" would say it did.
	if len(s.Probes) > 0 && s.PerTurn[0].Passes > 0 {
		for i, pc := range s.Probes {
			// A probe no fresh session judged has no entry: the turn is
			// unknown from it on, not stepped over (a probe that failed
			// every diluted conversation was skipped to the next). When
			// that is the first probe, no turn is known to hold or fall:
			// "1" said the first probe fell, which nothing measured.
			if pc.Probe != i+1 || pc.DilutedN == 0 || pc.FreshN == 0 {
				break
			}
			if i == 0 {
				s.EffectiveTurn = 1
			}
			fr := float64(pc.FreshPass) / float64(pc.FreshN)
			dr := float64(pc.DilutedPass) / float64(pc.DilutedN)
			if fr > 0 && dr < stats.EffectiveFraction*fr-1e-12 {
				break
			}
			s.EffectiveTurn, s.EffectiveContext = pc.Turn, pc.ContextTokens
		}
	}

	d, f, dropped := arms(r, ix, 0)
	s.Dropped = dropped
	s.Comparison = stats.CompareProbes(d, f)

	// Only a run where some judged turn failed could have told criteria
	// apart; in an all-pass run every criterion "always passes".
	anyFail := false
	for _, ts := range s.PerTurn {
		anyFail = anyFail || ts.Passes < ts.N
	}
	// With a no-skill control, a criterion that passes everywhere there
	// too is one an agent meets without the skill.
	hasControl := false
	for _, c := range r.Controls {
		hasControl = hasControl || c.Control == record.ControlNoSkill
	}
	if r.Rubric != nil && (anyFail || hasControl) {
		s.NonDiscriminating = nonDiscriminating(r, r.Rubric)
	}
	// Every judged turn's, the fresh sessions' too: they set the exit
	// code's comparison as much as the conversations do (the count left
	// them out, and did not say so).
	for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh} {
		for i := range arm {
			for _, t := range arm[i].Turns {
				if t.Verdict == nil {
					continue
				}
				for _, cv := range t.Verdict.Criteria {
					if cv.Source != "check" {
						continue
					}
					s.CheckTotal++
					if cv.JudgeResult == "" {
						s.CheckAgreed++
					}
				}
			}
		}
	}
	return s
}

func finishRate(ts record.TurnStat) record.TurnStat {
	if ts.N > 0 {
		ts.Rate = float64(ts.Passes) / float64(ts.N)
	}
	ts.Lo, ts.Hi = stats.Wilson(ts.Passes, ts.N, stats.Z95)
	return ts
}

func nonDiscriminating(r *record.Run, rb *rubric.Rubric) []string {
	var out []string
	convs := append(append([]record.Conversation{}, r.Conversations...), r.Fresh...)
	for _, c := range r.Controls {
		if c.Control == record.ControlNoSkill {
			convs = append(convs, c)
		}
	}
	for _, crit := range rb.Criteria {
		seen, always := 0, true
		for i := range convs {
			for _, t := range convs[i].Turns {
				if t.Verdict == nil || t.Verdict.Result == judge.JudgeError {
					continue
				}
				for _, cv := range t.Verdict.Criteria {
					if cv.ID == crit.ID {
						seen++
						always = always && cv.Result == judge.Pass
					}
				}
			}
		}
		if seen > 1 && always {
			out = append(out, crit.ID)
		}
	}
	return out
}
