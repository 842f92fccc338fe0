package evalstats

import (
	"fmt"
	"math/rand/v2"
)

// Resplits is how many re-splits of the baseline's repeats CheckInstrument
// decides.
const Resplits = 200

// CheckInstrument checks the instrument both ways, as seed 000 did: base
// run 2 must be accepted against base run 1 (one base run: the drift
// caveat applies), the control (nil: none was run) must be rejected
// against the base runs; and, at no model cost, each case's baseline
// cells (every base run's repeats pooled) are split at random into two
// halves, the same cases on both sides, Resplits times with a fixed seed,
// and one half decided against the other: the share accepted is what an
// unchanged skill gets from this rule at half the repeats. With one base
// run, Second is the zero Decision but for its Sentence; with one cell per
// case there is nothing to re-split (Resplits 0).
func CheckInstrument(base []Run, control *Run, opts Options) Instrument {
	var in Instrument
	var problems, fine []string
	if len(base) >= 2 {
		in.Second = Decide(base[:1], base[1], opts)
		in.SecondAccepted = in.Second.Verdict == Accept
		if in.SecondAccepted {
			fine = append(fine, fmt.Sprintf("%s was accepted against %s", runName(base[1], "base run 2"), runName(base[0], "base run 1")))
		} else {
			problems = append(problems, fmt.Sprintf("%s was not accepted against %s (%s)", runName(base[1], "base run 2"), runName(base[0], "base run 1"), in.Second.Verdict))
		}
	} else {
		in.Second.Sentence = "One base run: there is no second run to check against the first."
		problems = append(problems, "there is one base run, so no second run to check against the first")
	}
	if control != nil && len(base) > 0 {
		in.Control = Decide(base, *control, opts)
		in.ControlRejected = in.Control.Verdict == Reject
		if in.ControlRejected {
			fine = append(fine, "the control was rejected")
		} else {
			problems = append(problems, fmt.Sprintf("the control was not rejected (%s): the measures may not see what the skill does", in.Control.Verdict))
		}
	}
	in.ResplitAccept, in.Resplits = resplit(base, opts)
	if in.Resplits > 0 {
		fine = append(fine, fmt.Sprintf("re-splits of the baseline's repeats were accepted %.0f%% of the time (%d re-splits)", 100*in.ResplitAccept, in.Resplits))
	}
	switch {
	case len(problems) == 0:
		in.Sentence = "The instrument works: " + join(fine) + "."
	case len(fine) == 0:
		in.Sentence = "Check the instrument: " + join(problems) + "."
	default:
		in.Sentence = "Check the instrument: " + join(problems) + "; " + join(fine) + "."
	}
	return in
}

func runName(r Run, fallback string) string {
	if r.Label != "" {
		return r.Label
	}
	return fallback
}

// resplit is the A/A check: the share of random halvings of the baseline
// cells that the rule accepts.
func resplit(base []Run, opts Options) (float64, int) {
	if len(base) == 0 {
		return 0, 0
	}
	measures := commonMeasures(base)
	type pooled struct {
		id    string
		cells []Cell
	}
	var cases []pooled
	seen := map[string]int{}
	for _, r := range base {
		idx := make([]int, len(measures))
		for i, m := range measures {
			for j, n := range r.Measures {
				if n == m {
					idx[i] = j
					break
				}
			}
		}
		for _, c := range r.Cases {
			k, ok := seen[c.ID]
			if !ok {
				k = len(cases)
				seen[c.ID] = k
				cases = append(cases, pooled{id: c.ID})
			}
			for _, cell := range c.Cells {
				if len(cell.Grades) != len(r.Measures) {
					continue // Decide names the malformed run
				}
				g := make([]Grade, len(idx))
				for i, j := range idx {
					g[i] = cell.Grades[j]
				}
				cases[k].cells = append(cases[k].cells, Cell{Grades: g, Words: cell.Words})
			}
		}
	}
	splittable := 0
	for _, c := range cases {
		if len(c.cells) >= 2 {
			splittable++
		}
	}
	if splittable < 2 {
		return 0, 0
	}
	opts.SeedSims = -1 // the seed rule's own simulation, 200 times over, says nothing here
	rng := rand.New(rand.NewPCG(0xa1a1, 0x5b117))
	accepted := 0
	for range Resplits {
		a := Run{Label: "half 1", Measures: measures}
		b := Run{Label: "half 2", Measures: measures}
		for _, c := range cases {
			if len(c.cells) < 2 {
				continue
			}
			cells := append([]Cell{}, c.cells...)
			rng.Shuffle(len(cells), func(i, j int) { cells[i], cells[j] = cells[j], cells[i] })
			h := len(cells) / 2
			a.Cases = append(a.Cases, Case{ID: c.id, Cells: cells[:h]})
			b.Cases = append(b.Cases, Case{ID: c.id, Cells: cells[h:]})
		}
		if Decide([]Run{a}, b, opts).Verdict == Accept {
			accepted++
		}
	}
	return float64(accepted) / float64(Resplits), Resplits
}
