package eval

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/vibe-test/vibe-test/internal/evalstats"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/term"
)

// Result is what an eval shows: its record, each run's cells as the
// decision reads them, and the decisions. It is made from the folder alone
// (Evaluate), so report and rejudge redo it exactly.
type Result struct {
	Dir    string
	Record *Record
	// Runs are in table order: the control, the base runs, the candidates.
	Runs []*RunData
	// Comparisons are the candidates decided against the base runs: one,
	// or one per grid point; none for a run without a baseline.
	Comparisons []*Comparison
	// Instrument is --baseline's check of the instrument itself.
	Instrument *evalstats.Instrument
	Exit       int
	Verdict    string
	Sentence   string
	// CellErrors counts cells whose generator or reader failed.
	CellErrors int
	// unmade counts those with no message (the generator's failures).
	unmade int
	// origin is the eval a rejudge (of a rejudge ...) grades the messages
	// of: the one resume makes missing messages in.
	origin string
}

// RunData is one run's cells.
type RunData struct {
	Info          RunInfo
	Main, Holdout []*Cell
	// MainRun and HoldoutRun are the cells as evalstats reads them.
	MainRun, HoldoutRun evalstats.Run
}

// Comparison is one candidate against the base runs.
type Comparison struct {
	Candidate   *RunData
	Main        evalstats.Decision
	Holdout     *evalstats.Decision // nil without holdout cases
	Joined      *evalstats.Holdout
	Gain        float64 // the candidate's total minus the base's, main cases
	HoldoutGain float64
	Regressions []evalstats.Regression // main cases only
	Exit        int
	Verdict     string
	Sentence    string
}

// Options are the decision's options from the record.
func (r *Record) Options() evalstats.Options {
	return evalstats.Options{Rule: r.Config.Rule, Alpha: r.Config.Alpha, Margin: r.Config.Margin}
}

// Evaluate reads every run's cells from the eval folder and decides.
func Evaluate(dir string, rec *Record) (*Result, error) {
	res := &Result{Dir: dir, Record: rec}
	ids := make([]string, len(rec.Cases.Measures))
	for i, m := range rec.Cases.Measures {
		ids[i] = m.ID
	}
	for _, info := range rec.Runs {
		main, hold, err := loadRunCells(dir, info.Dir)
		if err != nil {
			return nil, err
		}
		rd := &RunData{Info: info, Main: main, Holdout: hold,
			MainRun: statsRun(info.Label, ids, rec.Cases.Main, main), HoldoutRun: statsRun(info.Label, ids, rec.Cases.Holdout, hold)}
		for _, c := range append(append([]*Cell{}, main...), hold...) {
			// A stored run's failed cells are not this eval's to mend, but
			// a rejudge's, which graded them again, are: left out, the
			// candidate was decided against a baseline missing them.
			if c.Status != CellOK && (!info.Stored || info.Regraded) {
				res.CellErrors++
				if c.Message == "" {
					res.unmade++
				}
			}
		}
		res.Runs = append(res.Runs, rd)
	}
	if rec.Rejudged {
		res.origin = originOf(dir)
	}
	decide(res)
	return res, nil
}

// originOf is the eval whose messages the rejudge in dir grades: the
// first folder above it that is not a rejudge's (a rejudge may rejudge
// a rejudge, and resume refuses a rejudge's folder).
func originOf(dir string) string {
	d := filepath.Dir(dir)
	for {
		r, err := LoadRecord(d)
		if err != nil || !r.Rejudged || filepath.Dir(d) == d {
			return d
		}
		d = filepath.Dir(d)
	}
}

// TakeStatus gives an eval that did not complete its record's outcome
// (interrupted, an error, or a process that died while it ran) in place of
// the decision its cells so far make: those decide nothing, and the
// summary, --json and report must say what the eval's exit said.
func (r *Result) TakeStatus() {
	rec := r.Record
	if rec == nil || rec.Status == StatusCompleted {
		return
	}
	o := rec.Outcome
	if o.Verdict == "" {
		o = Outcome{Exit: exit.Tool, Verdict: evalstats.ToolFail,
			Sentence: fmt.Sprintf("No verdict: the eval stopped while it ran; `vibe-test resume %s` continues it.", term.Arg(r.Dir))}
	}
	r.Exit, r.Verdict, r.Sentence = o.Exit, o.Verdict, o.Sentence
	// The comparisons and the instrument's check of the cells made so far
	// went on to the summary, --json and report.html: "main: ACCEPT"
	// beside an interrupted eval's exit 130. The runs' rates stay, each
	// over the cells it has.
	r.Comparisons, r.Instrument = nil, nil
}

// statsRun is a run's cells as evalstats reads them: the cases in the
// case set's order, each with its repeats.
func statsRun(label string, measures, caseIDs []string, cells []*Cell) evalstats.Run {
	run := evalstats.Run{Label: label, Measures: measures}
	by := map[string][]*Cell{}
	for _, c := range cells {
		by[c.Case] = append(by[c.Case], c)
	}
	for _, id := range caseIDs {
		if len(by[id]) == 0 {
			continue
		}
		sc := evalstats.Case{ID: id}
		for _, c := range by[id] {
			sc.Cells = append(sc.Cells, evalstats.Cell{Grades: gradesOf(measures, c), Words: c.Words})
		}
		run.Cases = append(run.Cases, sc)
	}
	return run
}

func gradesOf(measures []string, c *Cell) []evalstats.Grade {
	out := make([]evalstats.Grade, len(measures))
	by := map[string]string{}
	for _, g := range c.Grades {
		by[g.Measure] = g.Result
	}
	for i, m := range measures {
		switch res, ok := by[m]; {
		case c.Status != CellOK:
			out[i] = evalstats.Error
		case !ok || res == ResultError:
			out[i] = evalstats.Error
		case res == ResultPass:
			out[i] = evalstats.Pass
		case res == ResultFail:
			out[i] = evalstats.Fail
		default:
			out[i] = evalstats.NA
		}
	}
	return out
}

// byArm splits the runs.
func (res *Result) byArm() (control *RunData, bases, cands []*RunData) {
	for _, r := range res.Runs {
		switch r.Info.Arm {
		case ArmControl:
			control = r
		case ArmBase:
			bases = append(bases, r)
		case ArmCandidate:
			cands = append(cands, r)
		}
	}
	return control, bases, cands
}

// Control, Bases and Candidates are the runs by arm.
func (res *Result) Control() *RunData      { c, _, _ := res.byArm(); return c }
func (res *Result) Bases() []*RunData      { _, b, _ := res.byArm(); return b }
func (res *Result) Candidates() []*RunData { _, _, c := res.byArm(); return c }
func (res *Result) HasHoldout() bool       { return len(res.Record.Cases.Holdout) > 0 }
func mainRuns(rs []*RunData) []evalstats.Run {
	out := make([]evalstats.Run, len(rs))
	for i, r := range rs {
		out[i] = r.MainRun
	}
	return out
}

func holdoutRuns(rs []*RunData) []evalstats.Run {
	out := make([]evalstats.Run, len(rs))
	for i, r := range rs {
		out[i] = r.HoldoutRun
	}
	return out
}

// decide fills the decisions, the exit code and the sentence.
func decide(res *Result) {
	rec := res.Record
	opts := rec.Options()
	control, bases, cands := res.byArm()
	switch rec.Mode {
	case ModeBaseline:
		var ctl *evalstats.Run
		if control != nil {
			ctl = &control.MainRun
		}
		in := evalstats.CheckInstrument(mainRuns(bases), ctl, opts)
		res.Instrument = &in
		res.Exit, res.Verdict, res.Sentence = instrumentVerdict(in)
	case ModeAgainst:
		points := make([]evalstats.Point, len(cands))
		for i, cand := range cands {
			points[i] = evalstats.Point{Main: cand.MainRun, Holdout: cand.HoldoutRun}
		}
		g := evalstats.DecideGrid(mainRuns(bases), holdoutRuns(bases), points, res.HasHoldout(), opts)
		for i, cand := range cands {
			j := &g.Points[i]
			cmp := &Comparison{Candidate: cand, Main: j.Main, Gain: j.MainGain,
				Regressions: evalstats.Regressions(mainRuns(bases), cand.MainRun),
				Exit:        j.Exit, Verdict: j.Verdict, Sentence: j.Sentence}
			if res.HasHoldout() {
				cmp.Holdout, cmp.Joined, cmp.HoldoutGain = &j.Holdout, j, j.HoldoutGain
			}
			// A candidate with failed cells is no verdict, as the eval is:
			// its decision on the cells left (a case dropped whole) read
			// "accept, exit 0" in its table, --json and Markdown.
			if n := FailedCells(cand); n > 0 {
				cmp.Exit, cmp.Verdict = exit.Tool, evalstats.ToolFail
				cmp.Sentence = fmt.Sprintf("No verdict: %d of its cells failed. Without them: %s", n, cmp.Sentence)
			}
			res.Comparisons = append(res.Comparisons, cmp)
		}
		res.Exit = g.Exit
		if len(res.Comparisons) == 1 {
			// The decision's own sentence: the eval's says the failed cells
			// below (the candidate's said them too, and they were said twice).
			res.Verdict, res.Sentence = g.Points[0].Verdict, g.Points[0].Sentence
		} else {
			var parts []string
			for _, c := range res.Comparisons {
				parts = append(parts, fmt.Sprintf("%s: %s", c.Candidate.Info.Label, c.Verdict))
			}
			res.Verdict = verdictOfExit(res.Exit)
			res.Sentence = fmt.Sprintf("Grid of %d generator settings against baseline %s: %s (exit %d: the worst of them).", len(res.Comparisons), rec.Config.Against, strings.Join(parts, "; "), res.Exit)
		}
	default:
		res.Exit, res.Verdict = exit.OK, "measured"
		res.Sentence = "Measured, not decided: no baseline to compare with. Store one with --baseline NAME, then decide a candidate with --against NAME."
	}
	if res.CellErrors > 0 {
		mend := fmt.Sprintf("`vibe-test resume %s` makes them again (a message that came back is read again, not made again)", term.Arg(res.Dir))
		if rec.Rejudged {
			// A rejudge folder is not resumed: a new rejudge grades every
			// message again (the folder is inside the one it rejudged). A
			// message that never came back no rejudge can make: the eval
			// it rejudged is resumed first.
			src := filepath.Dir(res.Dir)
			mend = fmt.Sprintf("`vibe-test rejudge %s` grades them again in a new folder", term.Arg(src))
			if res.unmade > 0 {
				mend = fmt.Sprintf("%d had no message to grade: `vibe-test resume %s` makes them, then `vibe-test rejudge %s` grades them all again", res.unmade, term.Arg(res.origin), term.Arg(res.origin))
			}
		}
		res.Exit, res.Verdict = exit.Tool, evalstats.ToolFail
		res.Sentence = fmt.Sprintf("No verdict: %d %s failed (the generator or the reader gave no usable answer; see the cell files); %s. Without them: %s",
			res.CellErrors, plural(res.CellErrors, "cell", "cells"), mend, res.Sentence)
	}
}

// FailedCells counts a run's cells that did not complete.
func FailedCells(rd *RunData) int {
	n := 0
	for _, c := range append(append([]*Cell{}, rd.Main...), rd.Holdout...) {
		if c.Status != CellOK {
			n++
		}
	}
	return n
}

// instrumentVerdict is what --baseline concludes of the instrument: it
// works when a second run of the same skill is accepted against the first
// and the empty-skill control is rejected (evalstats says which check
// failed); otherwise the eval exits 2, with what to do.
func instrumentVerdict(in evalstats.Instrument) (int, string, string) {
	// A check the rule cannot decide (too many grade errors, fewer than
	// two cases with a graded total) is no verdict, not a doubtful
	// instrument: more cases or repeats would not mend it, and a baseline
	// stored from it could decide nothing against it (every --against
	// exits 3).
	for _, d := range []evalstats.Decision{in.Second, in.Control} {
		if d.Verdict == evalstats.ToolFail {
			return exit.Tool, evalstats.ToolFail, "No verdict: the instrument check cannot be decided: " + strings.TrimPrefix(d.Sentence, "Cannot decide: ") + "; the baseline is not stored."
		}
	}
	switch {
	case in.SecondAccepted && in.ControlRejected:
		return exit.OK, "instrument-ok", in.Sentence
	case !in.SecondAccepted:
		return exit.Indeterminate, "instrument-doubtful", in.Sentence + " The run-to-run noise is larger than the rule allows: add cases or repeats before trusting a verdict."
	default:
		return exit.Indeterminate, "instrument-doubtful", in.Sentence + " These cases cannot tell the skill from no skill: add cases the model fails without it."
	}
}

func verdictOfExit(code int) string {
	switch code {
	case exit.OK:
		return evalstats.Accept
	case exit.Decay:
		return evalstats.Reject
	case exit.Indeterminate:
		return evalstats.NotEnuf
	}
	return evalstats.ToolFail
}

// MeanWords is the mean word count of a run's graded messages.
func MeanWords(cells []*Cell) float64 {
	n, sum := 0, 0
	for _, c := range cells {
		if c.Status == CellOK {
			n++
			sum += c.Words
		}
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// CostOf sums a run's cells' costs.
func CostOf(cells []*Cell) Costs {
	var c Costs
	for _, cell := range cells {
		c.add(cell.Costs)
	}
	return c
}
