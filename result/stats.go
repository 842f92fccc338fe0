package result

import (
	"math"

	"github.com/vibe-test/vibe-test/judge"
	"github.com/vibe-test/vibe-test/plan"
	"github.com/vibe-test/vibe-test/rubric"
	"github.com/vibe-test/vibe-test/stats"
)

// Rules: what sets the exit code.
const (
	// RuleDilutedVsFresh (the default): exit 1 only when the probes pass
	// significantly less often in the diluted conversations than the same
	// probes asked fresh (stats.CompareArms at Alpha). Its false-alarm rate
	// is measured by the calibrate package.
	RuleDilutedVsFresh = "diluted-vs-fresh"
	// RuleAnyProbeFailed is seed 002's rule: exit 1 when, in a
	// conversation whose baseline passed, any probe failed. It is not a
	// test: on a skill that passes each probe with probability q it fires
	// with probability 1 - q^(probes), which the summary prints beside it.
	RuleAnyProbeFailed = "any-probe-failed"
)

// Gate values of runs made before the two-arm design (run.json schema 1),
// read only to redraw them.
const (
	GateAny         = "any"
	GateSignificant = "significant"
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
	Turn       int     `json:"turn"`
	Arm        string  `json:"arm"` // diluted or fresh
	Population string  `json:"population"`
	Passes     int     `json:"passes"`
	N          int     `json:"n"`
	Rate       float64 `json:"rate"`
	Lo         float64 `json:"wilson_lo"`
	Hi         float64 `json:"wilson_hi"`
}

// ProbeComparison is one probe asked diluted (at its turn) and fresh (as
// the first message of a new session): a view for the report, not the
// exit code. P is the one-sided Fisher exact test of "the diluted rate is
// lower", treating each asking as independent, which is right for the
// fresh sessions and for one probe turn across conversations.
type ProbeComparison struct {
	Turn        int     `json:"turn"`
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
	// MinDetectableDrop is the drop this run would have caught with 80%
	// power (+Inf, saved as 0, when it could catch none); UnitsForEffect
	// how many units per arm would catch Effect.
	MinDetectableDrop float64 `json:"min_detectable_drop"`
	UnitsForEffect    int     `json:"units_for_effect"`
	// EffectiveTurn is the last probe turn whose diluted pass rate is still
	// at least 85% of the same probe's fresh rate (1 when the first probe
	// already falls below; 0 when nothing can be compared).
	EffectiveTurn int `json:"effective_turn"`
	// NonDiscriminating criteria passed at every judged turn of every
	// conversation: they cannot tell a decayed agent from a steady one.
	NonDiscriminating []string `json:"non_discriminating,omitempty"`
	// CheckAgreement: for criteria with deterministic checks, how often the
	// model judge agreed with the check.
	CheckAgreed int `json:"check_agreed"`
	CheckTotal  int `json:"check_total"`
}

// judgedTurns are the baseline and the probes, in schedule order.
var judgedTurns = append([]int{1}, probeTurns...)

// judgedResult is a turn's pass/fail, with ok false when it has neither.
func judgedResult(c *Conversation, n int) (pass, ok bool) {
	t := c.TurnAt(n)
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

// inDilutedArm reports whether a conversation's probes count in the
// diluted arm: always when the gate was bypassed, else only when its
// baseline passed (the gate stopped the others before any probe).
func inDilutedArm(c *Conversation, bypass bool) bool {
	if bypass {
		return true
	}
	base, ok := judgedResult(c, 1)
	return ok && base
}

// Arms builds the units of the two-arm comparison from the record,
// counting conversations (diluted) and fresh triples with Index <= upTo
// (0: all). Dropped says what was left out and why.
func Arms(r *Run, upTo int) (diluted, fresh []stats.Unit, dropped []Dropped) {
	bypass := r.Config.NoBaselineGate
	var gateStopped, noDilutedProbe, noFreshProbe int
	probeDrops := map[string]map[string]int{"diluted": {}, "fresh": {}}
	unit := func(arm string, c *Conversation) stats.Unit {
		u := stats.Unit{}
		for _, n := range probeTurns {
			t := c.Shown(n)
			switch {
			case t == nil:
				probeDrops[arm]["not run"]++
			case t.Status != TurnOK:
				probeDrops[arm]["the turn ended in an error"]++
			case t.Verdict != nil && t.Verdict.SetupProblem != "":
				probeDrops[arm][whySetup]++
			case t.Result() == judge.Pass:
				u.Judged++
				u.Passed++
			case t.Result() == judge.Fail:
				u.Judged++
			case t.Result() == judge.JudgeError:
				probeDrops[arm]["judge error"]++
			case t.Result() == judge.Uncertain:
				probeDrops[arm]["uncertain (repeated judgements disagreed)"]++
			default:
				probeDrops[arm]["not judged"]++
			}
		}
		return u
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
		u := unit("diluted", c)
		if u.Judged == 0 {
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
		u := unit("fresh", c)
		if u.Judged == 0 {
			noFreshProbe++
			continue
		}
		fresh = append(fresh, u)
	}
	add := func(arm, what string, n int, why string) {
		if n > 0 {
			dropped = append(dropped, Dropped{Arm: arm, What: what, Count: n, Reason: why})
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

// probeTurns are the probe turns of the schedule.
var probeTurns = plan.ProbeTurns[:]

// ComputeStats derives the statistics from the record alone.
func ComputeStats(r *Run, alpha, effect float64) Stats {
	s := Stats{Alpha: alpha, Effect: effect}
	bypass := r.Config.NoBaselineGate
	s.DilutedPopulation = PopGatePassed
	if bypass {
		s.DilutedPopulation = PopAll
	}
	for _, n := range judgedTurns {
		ts := TurnStat{Turn: n, Arm: "diluted", Population: s.DilutedPopulation}
		if n == 1 {
			ts.Population = PopAll
		}
		for i := range r.Conversations {
			c := &r.Conversations[i]
			if n != 1 && !inDilutedArm(c, bypass) {
				continue
			}
			if pass, ok := judgedResult(c, n); ok {
				ts.N++
				if pass {
					ts.Passes++
				}
			}
		}
		s.PerTurn = append(s.PerTurn, finishRate(ts))
	}
	for _, n := range probeTurns {
		ts := TurnStat{Turn: n, Arm: "fresh", Population: PopFresh}
		pc := ProbeComparison{Turn: n}
		for i := range r.Fresh {
			if pass, ok := judgedResult(&r.Fresh[i], n); ok {
				ts.N++
				if pass {
					ts.Passes++
				}
			}
		}
		if ts.N == 0 {
			continue
		}
		s.PerTurn = append(s.PerTurn, finishRate(ts))
		for i := range r.Conversations {
			c := &r.Conversations[i]
			if !inDilutedArm(c, bypass) {
				continue
			}
			d, ok := judgedResult(c, n)
			if !ok {
				continue
			}
			pc.DilutedN++
			if d {
				pc.DilutedPass++
				continue
			}
			for k := range r.Fresh {
				if f := &r.Fresh[k]; f.Index == c.Index {
					if fp, ok := judgedResult(f, n); ok {
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
			s.EffectiveTurn = pc.Turn
		}
	}

	d, f, dropped := Arms(r, 0)
	s.Dropped = dropped
	s.Comparison = stats.CompareArms(d, f)
	if mdd := stats.MinDetectableDrop(s.Comparison, alpha, 0.8); !math.IsInf(mdd, 1) {
		s.MinDetectableDrop = mdd
	}
	s.UnitsForEffect = stats.UnitsForDrop(s.Comparison, effect, alpha, 0.8)

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
		hasControl = hasControl || c.Control == ControlNoSkill
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

func finishRate(ts TurnStat) TurnStat {
	if ts.N > 0 {
		ts.Rate = float64(ts.Passes) / float64(ts.N)
	}
	ts.Lo, ts.Hi = stats.Wilson(ts.Passes, ts.N, stats.Z95)
	return ts
}

func nonDiscriminating(r *Run, rb *rubric.Rubric) []string {
	var out []string
	convs := append(append([]Conversation{}, r.Conversations...), r.Fresh...)
	for _, c := range r.Controls {
		if c.Control == ControlNoSkill {
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
