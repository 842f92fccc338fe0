package evalstats

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// DefaultSeedSims is how many unchanged-skill runs RuleSeed simulates for
// its printed false-reject rate.
const DefaultSeedSims = 2000

// seedResult is seed 000's arithmetic on two sides.
type seedResult struct {
	sd       float64 // sample SD of the base's repeat totals
	n1, n2   int     // repeat totals of the candidate and of the base
	measures []Measure
	reject   bool
}

// repeatTotals is, per run and repeat, the share of that repeat's graded
// grades that passed over the whole case set (seed 000's "repeat scores").
func repeatTotals(runs []scoredRun) []float64 {
	var out []float64
	for _, r := range runs {
		for _, a := range r.repeats {
			if a.m > 0 {
				out = append(out, a.mean())
			}
		}
	}
	return out
}

// seedMargins applies seed 000's rule: the total must stay above the base
// total minus 2·sd·√(1/n₁ + 1/n₂), sd the sample SD of the base's repeat
// totals, n₁ and n₂ the candidate's and the base's repeats; each measure
// above the base rate p minus 2·√(p(1−p)/n), n the base's graded cells of
// it. ok is false when the base has fewer than 2 repeat totals (no sd) or
// the candidate none.
func seedMargins(l *scored, bs, cs []scoredRun) (r seedResult, ok bool) {
	bt, ct := repeatTotals(bs), repeatTotals(cs)
	r.n1, r.n2 = len(ct), len(bt)
	if r.n2 < 2 || r.n1 < 1 {
		return r, false
	}
	r.sd = stats.SD(bt)
	for i, name := range l.names() {
		j := l.index(i)
		m := Measure{Name: name}
		m.Base, m.Candidate = sideRate(bs, j), sideRate(cs, j)
		if m.Base.Graded > 0 && m.Candidate.Graded > 0 {
			m.Drop = m.Base.Rate - m.Candidate.Rate
			if i == 0 {
				m.Margin = 2 * r.sd * math.Sqrt(1/float64(r.n1)+1/float64(r.n2))
			} else {
				p := m.Base.Rate
				m.Margin = 2 * math.Sqrt(p*(1-p)/float64(m.Base.Graded))
			}
			m.Reject = m.Candidate.Rate < m.Base.Rate-m.Margin
			r.reject = r.reject || m.Reject
		}
		r.measures = append(r.measures, m)
	}
	return r, true
}

func decideSeed(d Decision, l *scored, bs, cs []scoredRun, drift float64, opts Options) Decision {
	r, ok := seedMargins(l, bs, cs)
	if !ok {
		d.Verdict, d.Exit = ToolFail, exit.Tool
		d.Sentence = fmt.Sprintf("Cannot decide: seed 000's margins need at least 2 baseline repeats and 1 candidate repeat (have %d and %d).", r.n2, r.n1)
		return d
	}
	// Cases each measure was compared on, as the paired rule counts them.
	for i := range r.measures {
		r.measures[i].Cases = paired(l, bs, cs, l.index(i), opts.Alpha, 0, false).n
	}
	d.Measures = r.measures
	var below []string
	for _, m := range r.measures {
		if m.Reject {
			below = append(below, fmt.Sprintf("%s %.3f below %.3f − %.3f", label(m.Name), m.Candidate.Rate, m.Base.Rate, m.Margin))
		}
	}
	t := r.measures[0]
	if len(below) > 0 {
		d.Verdict, d.Exit = Reject, exit.Decay
		d.Sentence = fmt.Sprintf("Seed 000's margins reject: %s.", join(below))
	} else {
		d.Verdict, d.Exit = Accept, exit.OK
		d.Sentence = fmt.Sprintf("Seed 000's margins accept: the total %.3f stays above %.3f − %.3f (2 × sd %.3f × √(1/%d + 1/%d)) and every measure above its base rate minus two binomial standard errors.",
			t.Candidate.Rate, t.Base.Rate, t.Margin, r.sd, r.n1, r.n2)
	}
	sims := opts.SeedSims
	if sims == 0 {
		sims = DefaultSeedSims
	}
	if sims > 0 {
		d.SeedFalseReject = seedFalseReject(l, bs, cs, drift, sims)
		d.Sentence += fmt.Sprintf(" On an unchanged skill at this size and noise these margins reject about %.0f%% of the time (%d simulated runs); the paired rule, the default, holds it at alpha %.3g.",
			100*d.SeedFalseReject, sims, opts.Alpha)
	}
	if len(bs) == 1 {
		d.Sentence += " " + oneRun
	}
	return d
}

// seedFalseReject simulates unchanged-skill comparisons at the size and
// noise of this one and returns the share seed 000's margins reject. The
// world is fitted to the base runs: each case's rate on each measure is
// its base pass share (with half a pass and half a fail added, so a case
// that always passed is not taken to never fail), n/a as often as the
// base had it there, errors as often as both sides had them, every run
// shifted by the run-to-run drift the base runs show on the total; the
// base runs and the candidate keep their repeats per case. Deterministic:
// a fixed seed.
func seedFalseReject(l *scored, bs, cs []scoredRun, drift float64, sims int) float64 {
	type cellModel struct{ p, na float64 }
	m := len(l.measures)
	model := make([][]cellModel, len(l.cases))
	for c := range l.cases {
		model[c] = make([]cellModel, m)
		cells := 0
		for _, r := range bs {
			cells += r.cellsOf(c)
		}
		for j := range m {
			a := sideCase(bs, c, j)
			cm := cellModel{p: (a.s + 0.5) / (float64(a.m) + 1)}
			if cells > 0 {
				na := 0
				for _, r := range bs {
					na += r.na[c*m+j]
				}
				cm.na = float64(na) / float64(cells)
			}
			model[c][j] = cm
		}
	}
	errRate := (errorShare(bs) + errorShare(cs)) / 2
	shape := func(runs []scoredRun) [][]int { // cells per run per case
		out := make([][]int, len(runs))
		for r := range runs {
			out[r] = make([]int, len(l.cases))
			for c := range l.cases {
				out[r][c] = runs[r].cellsOf(c)
			}
		}
		return out
	}
	baseShape, candShape := shape(bs), shape(cs)
	rng := rand.New(rand.NewPCG(0x5eed000, 0xe7a1))
	gen := func(reps [][]int, into []scoredRun) []scoredRun {
		into = into[:0]
		for _, per := range reps {
			shift := drift * rng.NormFloat64()
			sr := scoredRun{counts: make([]acc, m+1)}
			for c := range l.cases {
				for k := range per[c] {
					if k >= len(sr.repeats) {
						sr.repeats = append(sr.repeats, acc{})
					}
					for j, cm := range model[c] {
						switch {
						case rng.Float64() < cm.na:
						case rng.Float64() < errRate:
						case rng.Float64() < cm.p+shift:
							sr.counts[j].add(1)
							sr.repeats[k].add(1)
						default:
							sr.counts[j].add(0)
							sr.repeats[k].add(0)
						}
					}
				}
			}
			for j := range m {
				sr.counts[m] = sr.counts[m].plus(sr.counts[j])
			}
			into = append(into, sr)
		}
		return into
	}
	rejects := 0
	var b, c []scoredRun
	for range sims {
		b, c = gen(baseShape, b), gen(candShape, c)
		if r, ok := seedMargins(l, b, c); ok && r.reject {
			rejects++
		}
	}
	return float64(rejects) / float64(sims)
}
