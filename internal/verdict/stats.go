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
var probeCount = len(plan.ProbeTurns)

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
	t := judgedAt(c, k)
	if t == nil {
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

// median of a list (0 when empty), the upper middle of an even one. It
// sorts xs in place.
func median(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// inDilutedArm reports whether a conversation's probes count in the
// diluted arm: always when the gate was bypassed, else only when its
// baseline passed (the gate stopped the others before any probe).
func inDilutedArm(c *record.Conversation, bypass bool) bool {
	if bypass {
		return true
	}
	base, ok := judgedResult(c, 0)
	return ok && base
}

// Arms builds the units of the two-arm comparison from the record,
// counting conversations (diluted) and fresh triples with Index <= upTo
// (0: all). Dropped says what was left out and why.
func Arms(r *record.Run, upTo int) (diluted, fresh []stats.ProbeUnit, dropped []record.Dropped) {
	bypass := r.Config.NoBaselineGate
	var gateStopped, noDilutedProbe, noFreshProbe int
	probeDrops := map[string]map[string]int{"diluted": {}, "fresh": {}}
	unit := func(arm string, c *record.Conversation) (stats.ProbeUnit, int) {
		u := make(stats.ProbeUnit, probeCount)
		judged := 0
		for k := 1; k <= probeCount; k++ {
			t := c.ShownProbe(k)
			u[k-1] = stats.Missing
			switch {
			case t == nil:
				probeDrops[arm]["not run"]++
			case t.Status != record.TurnOK:
				probeDrops[arm]["the turn ended in an error"]++
			case t.Verdict != nil && t.Verdict.SetupProblem != "":
				probeDrops[arm][whySetup]++
			case t.Result() == judge.Pass:
				u[k-1] = stats.Pass
				judged++
			case t.Result() == judge.Fail:
				u[k-1] = stats.Fail
				judged++
			case t.Result() == judge.JudgeError:
				probeDrops[arm]["judge error"]++
			case t.Result() == judge.Uncertain:
				probeDrops[arm]["uncertain (repeated judgements disagreed)"]++
			default:
				probeDrops[arm]["not judged"]++
			}
		}
		return u, judged
	}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		if upTo > 0 && c.Index > upTo {
			continue
		}
		if !inDilutedArm(c, bypass) {
			gateStopped++
			continue
		}
		u, judged := unit("diluted", c)
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
		u, judged := unit("fresh", c)
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
	add("diluted", "conversations", gateStopped, "the baseline did not pass, so the gate stopped them before any probe")
	add("diluted", "conversations", noDilutedProbe, "no probe was judged pass or fail")
	add("fresh", "fresh triples", noFreshProbe, "no probe was judged pass or fail")
	for _, arm := range []string{"diluted", "fresh"} {
		for _, why := range []string{"not run", "the turn ended in an error", whySetup, "judge error", "uncertain (repeated judgements disagreed)", "not judged"} {
			n := probeDrops[arm][why]
			add(arm, "probes", n, why)
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
	return computeStats(r, alpha, effect, true)
}

// computeStats is ComputeStats; without report, it leaves out the
// per-probe exact tests, which only the report reads (Options.ExitOnly).
func computeStats(r *record.Run, alpha, effect float64, report bool) record.Stats {
	s := record.Stats{Alpha: alpha, Effect: effect}
	bypass := r.Config.NoBaselineGate
	s.DilutedPopulation = record.PopGatePassed
	if bypass {
		s.DilutedPopulation = record.PopAll
	}
	for k := 0; k <= probeCount; k++ {
		ts := record.TurnStat{Probe: k, Arm: "diluted", Population: s.DilutedPopulation}
		if k == 0 {
			ts.Population = record.PopAll
		}
		turns, contexts := make([]int64, 0, len(r.Conversations)), make([]int64, 0, len(r.Conversations))
		for i := range r.Conversations {
			c := &r.Conversations[i]
			if k != 0 && !inDilutedArm(c, bypass) {
				continue
			}
			if pass, ok := judgedResult(c, k); ok {
				t := judgedAt(c, k)
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
		ts.Turn, ts.ContextTokens = int(median(turns)), median(contexts)
		if ts.Turn == 0 {
			ts.Turn = 1
			if k > 0 {
				ts.Turn = plan.ProbeTurns[k-1]
			}
		}
		s.PerTurn = append(s.PerTurn, finishRate(ts))
	}
	for k := 1; k <= probeCount; k++ {
		ts := record.TurnStat{Turn: plan.ProbeTurns[k-1], Probe: k, Arm: "fresh", Population: record.PopFresh}
		dil := s.PerTurn[k]
		pc := record.ProbeComparison{Turn: dil.Turn, Probe: k, ContextTokens: dil.ContextTokens, AfterCompaction: dil.AfterCompaction}
		if r.Plan != nil {
			pc.Level = r.Plan.Schedule.Level(k)
		}
		contexts := make([]int64, 0, len(r.Fresh))
		for i := range r.Fresh {
			if pass, ok := judgedResult(&r.Fresh[i], k); ok {
				ts.N++
				if pass {
					ts.Passes++
				}
				contexts = append(contexts, judgedAt(&r.Fresh[i], k).ContextTokens)
			}
		}
		if ts.N == 0 {
			continue
		}
		ts.ContextTokens = median(contexts)
		s.PerTurn = append(s.PerTurn, finishRate(ts))
		for i := range r.Conversations {
			c := &r.Conversations[i]
			if !inDilutedArm(c, bypass) {
				continue
			}
			d, ok := judgedResult(c, k)
			if !ok {
				continue
			}
			pc.DilutedN++
			if d {
				pc.DilutedPass++
				continue
			}
			for f := range r.Fresh {
				if fr := &r.Fresh[f]; fr.Index == c.Index {
					if fp, ok := judgedResult(fr, k); ok {
						if fp {
							pc.Decayed++
						} else {
							pc.NeverHandled++
						}
					}
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
		s.Probes = append(s.Probes, pc)
	}
	// Effective turn: like with like, each probe diluted against itself
	// fresh.
	if len(s.Probes) > 0 {
		s.EffectiveTurn = 1
		for _, pc := range s.Probes {
			if pc.DilutedN == 0 || pc.FreshN == 0 {
				break
			}
			fr := float64(pc.FreshPass) / float64(pc.FreshN)
			dr := float64(pc.DilutedPass) / float64(pc.DilutedN)
			if fr > 0 && dr < stats.EffectiveFraction*fr-1e-12 {
				break
			}
			s.EffectiveTurn, s.EffectiveContext = pc.Turn, pc.ContextTokens
		}
	}

	d, f, dropped := Arms(r, 0)
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
	for i := range r.Conversations {
		for _, t := range r.Conversations[i].Turns {
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
