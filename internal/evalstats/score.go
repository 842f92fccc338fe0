package evalstats

import (
	"fmt"
	"slices"

	"github.com/vibe-test/vibe-test/internal/stats"
)

// acc accumulates the graded values of one case on one score: their sum,
// the sum of their squares (the paired rule's noise floor) and count.
type acc struct {
	s, q float64
	m    int
}

func (a *acc) add(v float64) { a.s += v; a.q += v * v; a.m++ }

func (a acc) plus(b acc) acc { return acc{a.s + b.s, a.q + b.q, a.m + b.m} }

func (a acc) mean() float64 { return a.s / float64(a.m) }

// scored is a comparison's runs reduced to what the rules read. Scores are
// indexed j = 0 .. len(measures)-1 for the measures and j = len(measures)
// for the total: a cell's total is the share of its graded measures that
// passed, a measure's value 1 or 0 for a pass or a fail; n/a and errors
// are no value.
type scored struct {
	measures []string
	// cases is every case id of the runs, the base runs' order first, then
	// the candidate's new ones.
	cases []string
	runs  []scoredRun
	// buf is driftVar's room.
	buf []float64
}

// scoredRun is one run's scores.
type scoredRun struct {
	label string
	// cells[c][j] accumulates case c's values on score j (zero when the
	// run lacks the case).
	cells [][]acc
	// counts[j] is the run's passes (s) and graded grades (m) on measure j;
	// counts[len(measures)] pools every measure's (seed 000's total).
	counts []acc
	// repeats[i] is the passes (s) and graded grades (m) of every measure
	// of every case's i-th cell: seed 000's repeat totals.
	repeats []acc
	// ncells[c] is how many cells (repeats) case c has; na[c*m+j] how many
	// of them are n/a on measure j.
	ncells, na []int
	// errorCells counts cells with an error grade, errors and grades the
	// error grades and all non-n/a grades.
	errorCells, errors, grades int
	// measureErrors[j] counts measure j's error grades.
	measureErrors []int
}

// cellsOf is how many cells case c has in the run.
func (r *scoredRun) cellsOf(c int) int { return r.ncells[c] }

func (l *scored) total() int { return len(l.measures) }

// names is the score names with the total first, as Decision.Measures
// orders them; index maps a position in it to j.
func (l *scored) names() []string { return append([]string{Total}, l.measures...) }

func (l *scored) index(i int) int {
	if i == 0 {
		return l.total()
	}
	return i - 1
}

// checkRun is the one-line complaint about a malformed run, or "": a
// case listed twice, a cell whose grades do not match the run's measures,
// a grade that is none of the four.
func checkRun(r Run) string {
	// Case ids in increasing order (as runs nearly always list them) have
	// no repeat: then no set of them is needed.
	var seen map[string]struct{}
	for i := 1; i < len(r.Cases); i++ {
		if r.Cases[i].ID <= r.Cases[i-1].ID {
			seen = make(map[string]struct{}, len(r.Cases))
			break
		}
	}
	for _, c := range r.Cases {
		if seen != nil {
			if _, ok := seen[c.ID]; ok {
				return fmt.Sprintf("run %q: case %q appears twice", r.Label, c.ID)
			}
			seen[c.ID] = struct{}{}
		}
		for k, cell := range c.Cells {
			if len(cell.Grades) != len(r.Measures) {
				return fmt.Sprintf("run %q: case %q repeat %d has %d grades for %d measures", r.Label, c.ID, k+1, len(cell.Grades), len(r.Measures))
			}
			for j, g := range cell.Grades {
				if g < NA || g > Error {
					return fmt.Sprintf("run %q: case %q repeat %d measure %s has grade %d, expected n/a, pass, fail or error", r.Label, c.ID, k+1, r.Measures[j], g)
				}
			}
		}
	}
	return ""
}

// commonMeasures is the first run's measures that every run grades.
func commonMeasures(runs []Run) []string {
	var out []string
	for _, m := range runs[0].Measures {
		every := true
		for _, r := range runs[1:] {
			every = every && slices.Contains(r.Measures, m)
		}
		if every && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// score reduces well-formed runs to their scores on the measures they all
// grade.
func score(runs []Run) *scored {
	l := &scored{measures: commonMeasures(runs)}
	m := len(l.measures)
	// Runs nearly always list the same cases in the same order: look a case
	// up by its position first, by its id only when that misses.
	row := map[string]int{}
	rowOf := make([][]int, len(runs))
	for ri, r := range runs {
		rowOf[ri] = make([]int, len(r.Cases))
		for i, c := range r.Cases {
			if ri == 0 { // checkRun: no case twice in a run
				rowOf[ri][i] = i
				l.cases = append(l.cases, c.ID)
				continue
			}
			if i < len(l.cases) && l.cases[i] == c.ID {
				rowOf[ri][i] = i
				continue
			}
			if len(row) < len(l.cases) {
				for k, id := range l.cases {
					row[id] = k
				}
			}
			k, ok := row[c.ID]
			if !ok {
				k = len(l.cases)
				row[c.ID] = k
				l.cases = append(l.cases, c.ID)
			}
			rowOf[ri][i] = k
		}
	}
	// Every run's arrays at once: a calibration grid scores hundreds of
	// thousands of comparisons.
	nc := len(l.cases)
	accs := make([]acc, len(runs)*(nc+1)*(m+1))
	ints := make([]int, len(runs)*(nc+nc*m+2*m))
	rows := make([][]acc, len(runs)*nc)
	l.runs = make([]scoredRun, 0, len(runs))
	// A case's passes and graded grades per measure, counted in integers
	// and added to its values when the case is done: a sum of ones and
	// zeros is the same whole number in floating point.
	counted := make([]int, 2*m)
	passes, judged := counted[:m], counted[m:]
	for ri, r := range runs {
		idx := ints[:m:m]
		ints = ints[m:]
		for i, name := range l.measures {
			idx[i] = slices.Index(r.Measures, name)
		}
		sr := scoredRun{label: r.Label, counts: accs[: m+1 : m+1], ncells: ints[:nc:nc], na: ints[nc : nc+nc*m : nc+nc*m]}
		accs, ints = accs[m+1:], ints[nc+nc*m:]
		sr.measureErrors = ints[:m:m]
		ints = ints[m:]
		sr.cells = rows[:nc:nc]
		rows = rows[nc:]
		flat := accs[:nc*(m+1)]
		accs = accs[nc*(m+1):]
		for c := range sr.cells {
			sr.cells[c] = flat[c*(m+1) : (c+1)*(m+1) : (c+1)*(m+1)]
		}
		for i, c := range r.Cases {
			ci := rowOf[ri][i]
			a := sr.cells[ci]
			na := sr.na[ci*m : (ci+1)*m]
			sr.ncells[ci] = len(c.Cells)
			clear(counted)
			for k, cell := range c.Cells {
				if k >= len(sr.repeats) {
					sr.repeats = append(sr.repeats, acc{})
				}
				// What each grade adds, without branches on the grades
				// (checkRun let only the four through).
				pass, graded, errs := 0, 0, 0
				for i, j := range idx {
					t := &gradeCounts[cell.Grades[j]]
					passes[i] += t.pass
					judged[i] += t.graded
					pass += t.pass
					graded += t.graded
					errs += t.err
					sr.measureErrors[i] += t.err
					na[i] += t.na
				}
				sr.errors += errs
				sr.grades += graded + errs
				if errs > 0 {
					sr.errorCells++
				}
				if graded > 0 {
					a[m].add(float64(pass) / float64(graded))
				}
				sr.repeats[k].s += float64(pass)
				sr.repeats[k].m += graded
			}
			// A pass adds 1 to a measure's sum (and to its squares'), a
			// fail 0.
			for i := range m {
				a[i].s += float64(passes[i])
				a[i].q += float64(passes[i])
				a[i].m += judged[i]
			}
		}
		for c := range sr.cells {
			for j := range m {
				sr.counts[j] = sr.counts[j].plus(sr.cells[c][j])
			}
		}
		for j := range m {
			sr.counts[m].s += sr.counts[j].s
			sr.counts[m].m += sr.counts[j].m
		}
		l.runs = append(l.runs, sr)
	}
	return l
}

// gradeCounts is what a grade counts: a graded value (pass 1, fail 0),
// an error, an n/a.
var gradeCounts = [Error + 1]struct{ pass, graded, err, na int }{
	NA:    {na: 1},
	Pass:  {pass: 1, graded: 1},
	Fail:  {graded: 1},
	Error: {err: 1},
}

// sideCase is case c's values on score j pooled over runs.
func sideCase(runs []scoredRun, c, j int) acc {
	var a acc
	for r := range runs { // by index: a scoredRun is too large to copy
		a = a.plus(runs[r].cells[c][j])
	}
	return a
}

// sideRate is the pooled pass rate of runs on score j, with its interval.
func sideRate(runs []scoredRun, j int) Rate {
	passed, graded := 0, 0
	for r := range runs {
		passed += int(runs[r].counts[j].s + 0.5)
		graded += runs[r].counts[j].m
	}
	return rate(passed, graded)
}

// measureErrorShare is the share of the runs' non-n/a grades on measure j
// that are errors.
func measureErrorShare(runs []scoredRun, j int) float64 {
	errs, all := 0, 0
	for r := range runs {
		errs += runs[r].measureErrors[j]
		all += runs[r].measureErrors[j] + runs[r].counts[j].m
	}
	if all == 0 {
		return 0
	}
	return float64(errs) / float64(all)
}

// errorShare is the share of the runs' non-n/a grades that are errors.
func errorShare(runs []scoredRun) float64 {
	errs, all := 0, 0
	for r := range runs {
		errs += runs[r].errors
		all += runs[r].grades
	}
	if all == 0 {
		return 0
	}
	return float64(errs) / float64(all)
}

// rate makes a Rate with its Wilson 95% interval.
func rate(passed, graded int) Rate {
	r := Rate{Passed: passed, Graded: graded}
	if graded > 0 {
		r.Rate = float64(passed) / float64(graded)
	}
	r.Lo, r.Hi = stats.Wilson(passed, graded, stats.Z95)
	return r
}
