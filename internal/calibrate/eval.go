package calibrate

import (
	"fmt"
	"math"
	"strings"

	"github.com/vibe-test/vibe-test/internal/evalstats"
	"github.com/vibe-test/vibe-test/internal/simrand"
)

// EvalWorld is one cell of the case-based eval's calibration grid: a case
// set of known difficulty, how it is run, and how noisy the instrument is.
// Every run of it draws a fresh case set, the base runs and one candidate
// run, and hands them to evalstats.Decide, the function that sets the exit
// code of `vibe-test eval --against`.
//
// The model of a run:
//   - each case has its own difficulty per measure: its pass probability
//     on measure m is logistic(logit(Rates[m]) + Spread·z), z standard
//     normal, so cases differ and measures have different pass rates;
//   - a measure does not apply to a case (n/a in every cell) with
//     probability NA, and the grader says n/a on an applicable one with
//     probability CellNA;
//   - each message has a quality shared by its measures (Message, on the
//     logit scale), so a good message tends to pass several;
//   - each run shifts every cell's pass probability by the same amount,
//     Drift·z (run-to-run drift: a model update, a different day);
//   - the grader flips a grade with probability Noise; a whole cell has no
//     grade (the generator or reader failed) with probability CellErrors,
//     and a single grade is an error with probability GradeErrors;
//   - the candidate loses Drop of its pass probability on the measures in
//     DropOn (all of them when DropOn is nil); Drop 0 is an unchanged skill,
//     and then every exit 1 is a false reject.
type EvalWorld struct {
	Cases, Repeats int
	// BaseRuns is how many baseline runs the candidate is decided
	// against (2, as --baseline makes them).
	BaseRuns    int
	Rates       []float64
	Spread      float64
	Message     float64
	Drift       float64
	Noise       float64
	CellErrors  float64
	GradeErrors float64
	NA, CellNA  float64
	Drop        float64
	DropOn      []int
	// Points is how many candidates are decided against the same base
	// runs (a --grid of generator settings; 0 means 1), each drawn alike.
	Points int
	Opts   evalstats.Options
}

// SeedWorld is seed 000's configuration as its essay reports it: 30 cases
// (16 main and 14 holdout, decided here as one set and as the main set
// alone), 3 repeats, 2 baseline runs, measures at the seed's rates, with
// drift and spread chosen so the standard deviation of the repeat totals
// is near the seed's 0.052.
func SeedWorld(cases int) EvalWorld {
	return EvalWorld{
		Cases: cases, Repeats: 3, BaseRuns: 2,
		Rates:  []float64{0.86, 0.70, 0.57, 0.82, 0.68, 0.68},
		Spread: 1.5, Message: 0.8, Drift: 0.02, Noise: 0.05, NA: 0.1,
	}
}

func describeEval(w EvalWorld) string {
	on := "all"
	if w.DropOn != nil {
		on = fmt.Sprint(w.DropOn)
	}
	rates := make([]string, len(w.Rates))
	for i, r := range w.Rates {
		rates[i] = fmt.Sprintf("%.2f", r)
	}
	return fmt.Sprintf("cases=%d repeats=%d base=%d drift=%.3f noise=%.2f errors=%.2f/%.2f na=%.2f/%.2f spread=%.1f message=%.1f rates=%s drop=%.2f on %s",
		w.Cases, w.Repeats, w.BaseRuns, w.Drift, w.Noise, w.CellErrors, w.GradeErrors, w.NA, w.CellNA, w.Spread, w.Message, strings.Join(rates, ","), w.Drop, on)
}

// The grade arithmetic below needs Pass right before Fail.
var _ = [1]struct{}{}[evalstats.Fail-evalstats.Pass-1]

// evalMeasures names the simulated measures.
var evalMeasures = []string{"M1", "M2", "M3", "M4", "M5", "M6", "M7", "M8"}

// EvalResult counts the exit codes of simulated eval comparisons.
type EvalResult struct {
	Result
	// SeedFalseReject is the mean of what the seed rule printed it would
	// do on an unchanged skill (RuleSeed with SeedSims > 0 only).
	SeedFalseReject float64
}

// EvalRun simulates runs comparisons in world w (deterministic for a seed)
// and counts what evalstats.DecideGrid, the function that sets the exit
// code, made of each: w.Points candidates (1 unless set) against the base
// runs.
func EvalRun(w EvalWorld, runs int, seed uint64) EvalResult {
	return evalRun(w, nil, runs, seed)
}

// EvalHoldoutRun is EvalRun for a case set with holdout cases: the main
// cases drawn in world main, the holdout's in world hold (their own
// cases, drift and noise: the two parts share nothing, the worst case for
// a rule that rejects when either part does).
func EvalHoldoutRun(main, hold EvalWorld, runs int, seed uint64) EvalResult {
	hold.Points = main.Points
	return evalRun(main, &hold, runs, seed)
}

func evalRun(w EvalWorld, hold *EvalWorld, runs int, seed uint64) EvalResult {
	src := simrand.New(seed, seed^0x2545f4914f6cdd1d)
	res := EvalResult{Result: Result{Runs: runs, Exits: map[int]int{}}}
	sim := newEvalSim(w)
	var hs *evalSim
	if hold != nil {
		hs = newEvalSim(*hold)
	}
	points := make([]evalstats.Point, max(w.Points, 1))
	printed := 0.0
	// The exit code is all a grid counts: what only reports a decision is
	// skipped (TestEvalExitOnly checks it changes no decision).
	opts := w.Opts
	opts.ExitOnly = true
	for range runs {
		base := sim.draw(src)
		var holdBase []evalstats.Run
		for i, c := range sim.candidates() {
			points[i].Main = c
		}
		if hs != nil {
			holdBase = hs.draw(src)
			for i, c := range hs.candidates() {
				points[i].Holdout = c
			}
		}
		g := evalstats.DecideGrid(base, holdBase, points, hs != nil, opts)
		res.Exits[g.Exit]++
		printed += g.Points[0].Main.SeedFalseReject
	}
	res.SeedFalseReject = printed / float64(runs)
	return res
}

// evalSim holds one world's buffers: a grid makes hundreds of thousands
// of comparisons, and Decide keeps nothing it is given.
type evalSim struct {
	w EvalWorld
	// rates is each measure's rate on the logit scale.
	rates []float64
	logit [][]float64 // case × measure
	apply [][]bool
	drops []float64 // per measure, the candidate's loss
	runs  []evalstats.Run
}

func newEvalSim(w EvalWorld) *evalSim {
	s := &evalSim{w: w}
	m := len(w.Rates)
	for _, r := range w.Rates {
		s.rates = append(s.rates, math.Log(r/(1-r)))
	}
	s.drops = make([]float64, m)
	for j := range m {
		if w.DropOn == nil {
			s.drops[j] = w.Drop
		}
	}
	for _, j := range w.DropOn {
		s.drops[j] = w.Drop
	}
	s.logit = make([][]float64, w.Cases)
	s.apply = make([][]bool, w.Cases)
	for c := range w.Cases {
		s.logit[c] = make([]float64, m)
		s.apply[c] = make([]bool, m)
	}
	names := []string{"base 1", "base 2", "base 3", "base 4"}
	for r := range w.BaseRuns + max(w.Points, 1) {
		label := fmt.Sprintf("candidate %d", r-w.BaseRuns+1)
		if r < w.BaseRuns {
			label = names[r%len(names)]
		}
		run := evalstats.Run{Label: label, Measures: evalMeasures[:m], Cases: make([]evalstats.Case, w.Cases)}
		// A run's cells and grades in one array each, in the order they
		// are drawn and read.
		cells := make([]evalstats.Cell, w.Cases*w.Repeats)
		grades := make([]evalstats.Grade, w.Cases*w.Repeats*m)
		for c := range w.Cases {
			run.Cases[c].ID = fmt.Sprintf("case-%02d", c+1)
			run.Cases[c].Cells = cells[c*w.Repeats : (c+1)*w.Repeats : (c+1)*w.Repeats]
			for k := range w.Repeats {
				g := (c*w.Repeats + k) * m
				run.Cases[c].Cells[k].Grades = grades[g : g+m : g+m]
			}
		}
		s.runs = append(s.runs, run)
	}
	return s
}

// logistic is 1/(1+e^-x) from a table with linear interpolation (error
// below 1e-6): a grid draws millions of grades, and math.Exp was a third
// of the time.
func logistic(x float64) float64 {
	const lim, steps = 12.0, 1 << 13
	if x <= -lim {
		return logisticTable[0]
	}
	if x >= lim {
		return logisticTable[steps]
	}
	f := (x + lim) * (steps / (2 * lim))
	i := int(f)
	return logisticTable[i] + (f-float64(i))*(logisticTable[i+1]-logisticTable[i])
}

var logisticTable = func() []float64 {
	const lim, steps = 12.0, 1 << 13
	t := make([]float64, steps+2)
	for i := range t {
		t[i] = 1 / (1 + math.Exp(-(float64(i)*(2*lim/steps) - lim)))
	}
	return t
}()

// draw makes a fresh case set and its runs: the base runs, which it
// returns, then the candidates.
func (s *evalSim) draw(src simrand.Source) []evalstats.Run {
	w := &s.w
	rng := src.Rand
	// The world's figures, read once: the loops below store grades, which
	// the compiler cannot tell apart from the world's fields.
	cellErrors, cellNA, gradeErrors, noise := w.CellErrors, w.CellNA, w.GradeErrors, w.Noise
	for c := range w.Cases {
		logit, apply := s.logit[c], s.apply[c]
		for j, r := range s.rates {
			logit[j] = r + w.Spread*rng.NormFloat64()
			apply[j] = simrand.Unit(src.PCG.Uint64()) >= w.NA
		}
	}
	for r := range s.runs {
		cand := r >= w.BaseRuns
		shift := w.Drift * rng.NormFloat64()
		for c := range w.Cases {
			logit, apply := s.logit[c], s.apply[c]
			for k := range w.Repeats {
				g := s.runs[r].Cases[c].Cells[k].Grades
				quality := w.Message * rng.NormFloat64()
				failed := cellErrors > 0 && simrand.Unit(src.PCG.Uint64()) < cellErrors
				for j := range g {
					switch {
					case !apply[j]:
						g[j] = evalstats.NA
					case failed:
						g[j] = evalstats.Error
					case cellNA > 0 && simrand.Unit(src.PCG.Uint64()) < cellNA:
						g[j] = evalstats.NA
					case gradeErrors > 0 && simrand.Unit(src.PCG.Uint64()) < gradeErrors:
						g[j] = evalstats.Error
					default:
						p := logistic(logit[j]+quality) + shift
						if cand {
							p -= s.drops[j]
						}
						pass := simrand.Unit(src.PCG.Uint64()) < p
						flip := noise > 0 && simrand.Unit(src.PCG.Uint64()) < noise
						// Fail or Pass without a branch on the draw.
						passed := 0
						if pass != flip {
							passed = 1
						}
						g[j] = evalstats.Fail - evalstats.Grade(passed)
					}
				}
			}
		}
	}
	return s.runs[:w.BaseRuns]
}

// candidates are the candidate runs of the last draw.
func (s *evalSim) candidates() []evalstats.Run { return s.runs[s.w.BaseRuns:] }
