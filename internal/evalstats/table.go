package evalstats

import "slices"

// Table is the per-measure table of the runs given, in the caller's order
// (control, base 1, base 2, candidate): the total first, then every
// measure any run grades (the first run's order, then the others' new
// ones). Each entry is the run's pooled pass rate over its graded grades
// (pass or fail; n/a and errors count as neither) with its Wilson 95%
// interval; the total pools every measure's grades, which is how seed
// 000's tables count it. A run that does not grade a measure has an empty
// Rate (0 of 0, interval [0, 1]).
func Table(runs ...Run) []Row {
	var measures []string
	for _, r := range runs {
		for _, m := range r.Measures {
			if !slices.Contains(measures, m) {
				measures = append(measures, m)
			}
		}
	}
	rows := make([]Row, 0, len(measures)+1)
	for _, name := range append([]string{Total}, measures...) {
		row := Row{Measure: name}
		for _, r := range runs {
			row.Rates = append(row.Rates, rate(runCounts(r, name)))
		}
		rows = append(rows, row)
	}
	return rows
}

// runCounts is a run's passes and graded grades on one measure, or on all
// of them for Total. Cells whose grades do not match the run's measures
// are skipped (Decide names them).
func runCounts(r Run, name string) (passed, graded int) {
	j := -1
	if name != Total {
		j = slices.Index(r.Measures, name)
		if j < 0 {
			return 0, 0
		}
	}
	for _, c := range r.Cases {
		for _, cell := range c.Cells {
			if len(cell.Grades) != len(r.Measures) {
				continue
			}
			for i, g := range cell.Grades {
				if j >= 0 && i != j {
					continue
				}
				switch g {
				case Pass:
					passed++
					graded++
				case Fail:
					graded++
				}
			}
		}
	}
	return passed, graded
}

// Gain is the candidate's total minus the base's (every base run pooled),
// each the share of its graded grades that passed, over the measures the
// two share: positive when the candidate does better. Gain(main) −
// Gain(holdout) is the overfit gap. 0 when either side has nothing graded
// or a run is malformed.
func Gain(base []Run, cand Run) float64 {
	if len(base) == 0 {
		return 0
	}
	all := append(append([]Run{}, base...), cand)
	for _, r := range all {
		if checkRun(r) != "" {
			return 0
		}
	}
	l := score(all)
	b, c := sideRate(l.runs[:len(base)], l.total()), sideRate(l.runs[len(base):], l.total())
	if len(l.measures) == 0 || b.Graded == 0 || c.Graded == 0 {
		return 0
	}
	return c.Rate - b.Rate
}

// Regressions are the case × measure pairs that regressed, for JUnit: the
// base (every base run's repeats pooled) passed at least 2/3 of the
// repeats it graded there, and every candidate repeat was graded and
// failed. n/a and errors on the base side are not repeats of the measure
// and are left out of the 2/3; on the candidate side a repeat with n/a
// (the measure did not apply) or an error (no grade) did not fail, so the
// pair is not claimed. Cases are in the candidate's order, measures in
// the first base run's. Malformed runs give none (Decide names them).
func Regressions(base []Run, cand Run) []Regression {
	if len(base) == 0 {
		return nil
	}
	all := append(append([]Run{}, base...), cand)
	for _, r := range all {
		if checkRun(r) != "" {
			return nil
		}
	}
	measures := commonMeasures(all)
	var out []Regression
	for _, c := range cand.Cases {
		if len(c.Cells) == 0 {
			continue
		}
		for _, m := range measures {
			j := slices.Index(cand.Measures, m)
			allFailed := true
			for _, cell := range c.Cells {
				allFailed = allFailed && cell.Grades[j] == Fail
			}
			if !allFailed {
				continue
			}
			pass, graded := 0, 0
			for _, r := range base {
				bj := slices.Index(r.Measures, m)
				for _, bc := range r.Cases {
					if bc.ID != c.ID {
						continue
					}
					for _, cell := range bc.Cells {
						switch cell.Grades[bj] {
						case Pass:
							pass++
							graded++
						case Fail:
							graded++
						}
					}
				}
			}
			if graded > 0 && 3*pass >= 2*graded {
				out = append(out, Regression{Case: c.ID, Measure: m})
			}
		}
	}
	return out
}
