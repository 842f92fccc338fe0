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
		fine = append(fine, fmt.Sprintf("re-splits of the baseline's repeats were accepted %.0f%% of the time (%s)", 100*in.ResplitAccept, resplitCount(in.Resplits)))
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

// resplitCount says how many re-splits were decided: every one there is,
// or a random Resplits of more.
func resplitCount(n int) string {
	if n < Resplits {
		return fmt.Sprintf("all %d re-splits", n)
	}
	return fmt.Sprintf("%d random re-splits", n)
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
	// A case's cells split into a first half (its smaller one) and the
	// rest; a re-split picks one such halving per case.
	var split []pooled
	distinct := 1 // how many re-splits there are, counted up to Resplits
	for _, c := range cases {
		if len(c.cells) < 2 {
			continue
		}
		split = append(split, c)
		distinct = min(distinct*binomialUpTo(len(c.cells), len(c.cells)/2, Resplits), Resplits)
	}
	if len(split) < 2 {
		return 0, 0
	}
	opts.SeedSims = -1 // the seed rule's own simulation, 200 times over, says nothing here
	// decide decides one re-split: halve(k) is case k's two halves.
	decide := func(halve func(k int, cells []Cell) (first, rest []Cell)) bool {
		a := Run{Label: "half 1", Measures: measures}
		b := Run{Label: "half 2", Measures: measures}
		for k, c := range split {
			first, rest := halve(k, c.cells)
			a.Cases = append(a.Cases, Case{ID: c.id, Cells: first})
			b.Cases = append(b.Cases, Case{ID: c.id, Cells: rest})
		}
		return Decide([]Run{a}, b, opts).Verdict == Accept
	}
	accepted := 0
	if distinct < Resplits {
		// Few enough to decide every one: 2 cells on each of 6 cases (two
		// base runs of one repeat) make 64 re-splits, which 200 random
		// draws would repeat, counting some twice and some not at all.
		halvings := make([][][]int, len(split)) // per case, every choice of its first half
		for k, c := range split {
			halvings[k] = choices(len(c.cells), len(c.cells)/2)
		}
		digit := make([]int, len(split))
		for range distinct {
			if decide(func(k int, cells []Cell) (first, rest []Cell) {
				in := make([]bool, len(cells))
				for _, i := range halvings[k][digit[k]] {
					in[i] = true
				}
				for i, cell := range cells {
					if in[i] {
						first = append(first, cell)
					} else {
						rest = append(rest, cell)
					}
				}
				return first, rest
			}) {
				accepted++
			}
			for k := range digit { // the next combination, odometer-wise
				if digit[k]++; digit[k] < len(halvings[k]) {
					break
				}
				digit[k] = 0
			}
		}
		return float64(accepted) / float64(distinct), distinct
	}
	rng := rand.New(rand.NewPCG(0xa1a1, 0x5b117))
	for range Resplits {
		if decide(func(_ int, cells []Cell) (first, rest []Cell) {
			cells = append([]Cell{}, cells...)
			rng.Shuffle(len(cells), func(i, j int) { cells[i], cells[j] = cells[j], cells[i] })
			h := len(cells) / 2
			return cells[:h], cells[h:]
		}) {
			accepted++
		}
	}
	return float64(accepted) / float64(Resplits), Resplits
}

// binomialUpTo is n choose h, or limit when it is limit or more.
func binomialUpTo(n, h, limit int) int {
	c := 1
	for i := 1; i <= h; i++ {
		c = c * (n - h + i) / i // exact: a product of i consecutive integers over i!
		if c >= limit {
			return limit
		}
	}
	return c
}

// choices lists the ways to choose h of n indices, each in increasing
// order: n choose h of them, so only for small counts.
func choices(n, h int) [][]int {
	var out [][]int
	pick := make([]int, 0, h)
	var walk func(from int)
	walk = func(from int) {
		if len(pick) == h {
			out = append(out, append([]int{}, pick...))
			return
		}
		for i := from; i <= n-(h-len(pick)); i++ {
			pick = append(pick, i)
			walk(i + 1)
			pick = pick[:len(pick)-1]
		}
	}
	walk(0)
	return out
}
