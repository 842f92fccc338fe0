package result

import (
	"fmt"
	"math"

	"github.com/vibe-test/vibe-test/judge"
	"github.com/vibe-test/vibe-test/rubric"
	"github.com/vibe-test/vibe-test/stats"
)

// Gates: how the exit code treats decay.
const (
	GateAny         = "any"         // any conversation that decays → exit 1 (seed 002's rule)
	GateSignificant = "significant" // exit 1 only when the paired sign test says so
)

// TurnStat is one judged turn's pass rate over the conversations that
// reached it, with its Wilson 95% interval.
type TurnStat struct {
	Turn   int     `json:"turn"`
	Passes int     `json:"passes"`
	N      int     `json:"n"`
	Rate   float64 `json:"rate"`
	Lo     float64 `json:"wilson_lo"`
	Hi     float64 `json:"wilson_hi"`
}

// PairedTest compares turn 1 with a probe (or with the probes pooled)
// inside each conversation: the exact one-sided sign test (McNemar) on the
// discordant conversations.
type PairedTest struct {
	Probe string `json:"probe"` // "6", "8", "10" or "pooled"
	// Down: passed at turn 1 and failed at the probe; Up: the reverse.
	Down int     `json:"down"`
	Up   int     `json:"up"`
	P    float64 `json:"p"`
}

// Stats is what the numbers may claim.
type Stats struct {
	PerTurn []TurnStat   `json:"per_turn"`
	Paired  []PairedTest `json:"paired"`
	// EffectiveTurn is the last judged turn whose pass rate is still at
	// least 85% of the baseline's (0 when the baseline never passed).
	EffectiveTurn int `json:"effective_turn"`
	// Underpowered: even if every conversation decayed, the sign test could
	// not reach Alpha; Needed says how many conversations could.
	Underpowered bool    `json:"underpowered"`
	Alpha        float64 `json:"alpha"`
	NeededMin    int     `json:"needed_min"`
	NeededPower  int     `json:"needed_for_power"`
	// Power40 is the chance this many conversations would have shown a
	// significant drop if decay struck 40% of them.
	Power40 float64 `json:"power_at_40pct"`
	// NonDiscriminating criteria passed at every judged turn of every
	// conversation: they cannot tell a decayed agent from a steady one.
	NonDiscriminating []string `json:"non_discriminating,omitempty"`
	// CheckAgreement: for criteria with deterministic checks, how often the
	// model judge agreed with the check.
	CheckAgreed int `json:"check_agreed"`
	CheckTotal  int `json:"check_total"`
}

var judgedTurns = []int{1, 6, 8, 10}

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

// ComputeStats derives the statistics from the record alone.
func ComputeStats(r *Run, alpha float64) Stats {
	s := Stats{Alpha: alpha}
	for _, n := range judgedTurns {
		ts := TurnStat{Turn: n}
		for i := range r.Conversations {
			if pass, ok := judgedResult(&r.Conversations[i], n); ok {
				ts.N++
				if pass {
					ts.Passes++
				}
			}
		}
		if ts.N > 0 {
			ts.Rate = float64(ts.Passes) / float64(ts.N)
		}
		ts.Lo, ts.Hi = stats.Wilson(ts.Passes, ts.N, stats.Z95)
		s.PerTurn = append(s.PerTurn, ts)
	}
	var turns []int
	var rates []float64
	for _, ts := range s.PerTurn {
		if ts.N > 0 {
			turns, rates = append(turns, ts.Turn), append(rates, ts.Rate)
		}
	}
	if len(turns) > 0 && turns[0] == 1 {
		s.EffectiveTurn = stats.EffectiveTurn(turns, rates)
	}

	pairs := 0
	pooled := PairedTest{Probe: "pooled"}
	for _, probe := range judgedTurns[1:] {
		pt := PairedTest{Probe: fmt.Sprint(probe)}
		for i := range r.Conversations {
			c := &r.Conversations[i]
			b, okB := judgedResult(c, 1)
			p, okP := judgedResult(c, probe)
			if okB && okP && b != p {
				if b {
					pt.Down++
				} else {
					pt.Up++
				}
			}
		}
		pt.P = stats.SignTest(pt.Down, pt.Up)
		s.Paired = append(s.Paired, pt)
	}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		b, okB := judgedResult(c, 1)
		if !okB {
			continue
		}
		allPass, any := true, false
		for _, probe := range judgedTurns[1:] {
			if p, ok := judgedResult(c, probe); ok {
				any = true
				allPass = allPass && p
			}
		}
		if !any {
			continue
		}
		pairs++
		switch {
		case b && !allPass:
			pooled.Down++
		case !b && allPass:
			pooled.Up++
		}
	}
	pooled.P = stats.SignTest(pooled.Down, pooled.Up)
	s.Paired = append(s.Paired, pooled)

	s.NeededMin = stats.MinDiscordantForSignificance(alpha)
	s.Underpowered = stats.SignTest(len(r.Conversations), 0) > alpha || pairs < s.NeededMin
	s.NeededPower = neededForPower(0.4, alpha, 0.8)
	if pairs >= s.NeededMin {
		s.Power40 = binomUpper(pairs, s.NeededMin, 0.4)
	}

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

// neededForPower is the number of conversations for which the sign test
// detects, with the given power, a decay that strikes a fraction d of the
// conversations (none recovering): P(Binomial(n, d) >= MinDiscordant) >= power.
func neededForPower(d, alpha, power float64) int {
	k := stats.MinDiscordantForSignificance(alpha)
	for n := k; n <= 1000; n++ {
		if binomUpper(n, k, d) >= power {
			return n
		}
	}
	return 0
}

func binomUpper(n, k int, p float64) float64 {
	sum := 0.0
	for i := k; i <= n; i++ {
		lg, _ := math.Lgamma(float64(n + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lg - li - lni + float64(i)*math.Log(p) + float64(n-i)*math.Log(1-p))
	}
	return sum
}

func nonDiscriminating(r *Run, rb *rubric.Rubric) []string {
	var out []string
	convs := append([]Conversation{}, r.Conversations...)
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
