package evalstats

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// Defaults of Options.
const (
	DefaultAlpha  = 0.05
	DefaultMargin = 0.1
	// MaxErrorShare is the share of a side's grades (n/a aside) that may be
	// errors before no decision is made: past it the grader or generator is
	// broken, and whatever was graded is what happened to survive.
	MaxErrorShare = 0.5
)

func (o Options) withDefaults() Options {
	if o.Rule == "" {
		o.Rule = RulePaired
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = DefaultAlpha
	}
	if o.RejectAlpha <= 0 || o.RejectAlpha > o.Alpha {
		o.RejectAlpha = o.Alpha
	}
	if o.Margin <= 0 {
		o.Margin = DefaultMargin
	}
	return o
}

// Decide says whether the candidate run does worse than the base runs,
// under opts.Rule (RulePaired unless it says RuleSeed). DecideGrid, which
// sets `vibe-test eval --against`'s exit code, calls it. It never
// fails: a decision it cannot make is Verdict ToolFail, exit 3, with the
// sentence saying why. That happens when there is no base run, a run is
// malformed (a cell whose grades do not match its measures, a case twice),
// the two sides share no measure, more than MaxErrorShare of either side's
// grades are errors, fewer than 2 cases are graded on both sides on the
// total (a paired comparison needs a spread), or grade errors that lean to
// one side could change the decision.
func Decide(base []Run, cand Run, opts Options) Decision {
	d := decide(base, cand, opts)
	if d.GradeErrors == 0 || d.Verdict == ToolFail {
		return d
	}
	errs, are := fmt.Sprintf("%d cells with grade errors", d.GradeErrors), "are"
	if d.GradeErrors == 1 {
		errs, are = "1 cell with a grade error", "is"
	}
	if d.Verdict == NotEnuf {
		if !opts.ExitOnly {
			d.Sentence += fmt.Sprintf(" The %s %s left out.", errs, are)
		}
		return d
	}
	// An error is neither a pass nor a fail, and errors need not fall at
	// random: a grader that cannot quote a failing message errs exactly
	// where the candidate got worse, and with those grades left out a
	// candidate that got half the cases wrong was accepted (exit 0). An
	// accept stands only while the candidate does not err significantly
	// more often than the baseline on any measure, a reject only while the
	// baseline does not err more often than the candidate (errors hiding
	// its fails raise its rates): the side the errors could favour. Read
	// as chance otherwise. No corner case (every error a fail, or a pass)
	// settles it alone: neither rule moves one way as a grade changes
	// (an outlier raises the spread).
	favoured, other := "the candidate", "the baseline"
	candAs, baseAs, what := Fail, Pass, "counted as fails for the candidate and passes for the baseline"
	if d.Verdict == Reject {
		favoured, other = other, favoured
		candAs, baseAs, what = Pass, Fail, "counted as passes for the candidate and fails for the baseline"
	}
	// The decision's own rejection level: a holdout's parts and a grid's
	// points split it, so that the exit code withholds a decision at most
	// alpha of the time where errors fall at random.
	lean := errorsLean(base, cand, d.Verdict == Accept, opts.withDefaults().RejectAlpha)
	if lean == "" {
		if !opts.ExitOnly {
			d.Sentence += fmt.Sprintf(" The %s %s left out; %s does not err significantly more often than %s on any measure (Fisher's exact test, one-sided), so they are read as chance.", errs, are, favoured, other)
		}
		return d
	}
	verdict := d.Verdict
	d.Verdict, d.Exit = ToolFail, exit.Tool
	if opts.ExitOnly {
		return d
	}
	stake := ""
	resolvedBase := make([]Run, len(base))
	for i, r := range base {
		resolvedBase[i] = withErrorsAs(r, baseAs)
	}
	if alt := decide(resolvedBase, withErrorsAs(cand, candAs), opts); alt.Verdict != verdict {
		stake = fmt.Sprintf(" (%s, the %s would make it %s)", what, errs, alt.Verdict)
	}
	d.Sentence = fmt.Sprintf("Cannot decide: %s: errors that lean to one side can hide where that side fails, and with them left out the decision (%s) rests on how they fell%s. `vibe-test rejudge` on the eval's folder grades them again.",
		lean, verdict, stake)
	return d
}

// errorsLean names the first measure on which one side's grades are
// errors significantly more often than the other's (Fisher's exact test,
// one-sided, Bonferroni over the measures at alpha): the candidate's
// when onCandidate, else the baseline's. "" when none is.
func errorsLean(base []Run, cand Run, onCandidate bool, alpha float64) string {
	l := score(append(append([]Run{}, base...), cand))
	bs, cs := l.runs[:len(base)], l.runs[len(base):]
	sum := func(runs []scoredRun, j int) (errs, graded int) {
		for r := range runs {
			errs += runs[r].measureErrors[j]
			graded += runs[r].counts[j].m
		}
		return errs, graded
	}
	for j, name := range l.measures {
		be, bg := sum(bs, j)
		ce, cg := sum(cs, j)
		side, e, g, oe, og := "the candidate", ce, cg, be, bg
		if !onCandidate {
			side, e, g, oe, og = "the baseline", be, bg, ce, cg
		}
		if e == 0 {
			continue
		}
		if p := stats.FisherGreater(e, g, oe, og) * float64(len(l.measures)); p <= alpha {
			other := map[bool]string{true: "the baseline's", false: "the candidate's"}[onCandidate]
			return fmt.Sprintf("%s's grades on %s are errors %d of %d times against %s %d of %d (Fisher's exact p %.3g, %d measures)",
				side, name, e, e+g, other, oe, oe+og, p/float64(len(l.measures)), len(l.measures))
		}
	}
	return ""
}

// withErrorsAs is r with every error grade read as g.
func withErrorsAs(r Run, g Grade) Run {
	out := r
	out.Cases = make([]Case, len(r.Cases))
	for i, c := range r.Cases {
		out.Cases[i] = Case{ID: c.ID, Cells: make([]Cell, len(c.Cells))}
		for k, cell := range c.Cells {
			grades := make([]Grade, len(cell.Grades))
			for j, x := range cell.Grades {
				if x == Error {
					x = g
				}
				grades[j] = x
			}
			out.Cases[i].Cells[k] = Cell{Grades: grades, Words: cell.Words}
		}
	}
	return out
}

// decide is Decide with the grade errors left out.
func decide(base []Run, cand Run, opts Options) Decision {
	opts = opts.withDefaults()
	d := Decision{Rule: opts.Rule}
	fail := func(format string, args ...any) Decision {
		// A whole sentence: the holdout's sentence quotes it before others.
		d.Verdict, d.Exit, d.Sentence = ToolFail, exit.Tool, "Cannot decide: "+strings.TrimSuffix(fmt.Sprintf(format, args...), ".")+"."
		return d
	}
	if opts.Rule != RulePaired && opts.Rule != RuleSeed {
		return fail("unknown rule %q, expected %q or %q", opts.Rule, RulePaired, RuleSeed)
	}
	if len(base) == 0 {
		return fail("no baseline run to compare the candidate with")
	}
	for _, r := range append(append([]Run{}, base...), cand) {
		if msg := checkRun(r); msg != "" {
			return fail("%s", msg)
		}
	}
	all := append(append([]Run{}, base...), cand)
	l := score(all)
	if len(l.measures) == 0 {
		return fail("the candidate and the baseline runs share no measure")
	}
	bs, cs := l.runs[:len(base)], l.runs[len(base):]
	for r := range l.runs {
		d.GradeErrors += l.runs[r].errorCells
	}
	if be, ce := errorShare(bs), errorShare(cs); be > MaxErrorShare || ce > MaxErrorShare {
		return fail("%.1f%% of the baseline's grades and %.1f%% of the candidate's are errors (at most %.0f%% can be decided on)", 100*be, 100*ce, 100*MaxErrorShare)
	}
	// And measure by measure: errors on one measure drop it from the
	// comparison and from the candidate's totals while the baseline's keep
	// it, and a grader that errs where a message fails (a quote it cannot
	// find) hides exactly the drop the rule looks for. A candidate whose
	// every M1 grade was an error was accepted (exit 0).
	for j, name := range l.measures {
		if be, ce := measureErrorShare(bs, j), measureErrorShare(cs, j); be > MaxErrorShare || ce > MaxErrorShare {
			return fail("%.1f%% of the baseline's grades on %s and %.1f%% of the candidate's are errors (at most %.0f%% can be decided on)", 100*be, name, 100*ce, 100*MaxErrorShare)
		}
	}
	total := paired(l, bs, cs, l.total(), opts.Alpha, 0, true)
	d.Drift = total.sigmaA
	if total.n < 2 {
		return fail("only %d case(s) have a graded total on both sides; a paired comparison needs at least 2", total.n)
	}
	if opts.Rule == RuleSeed {
		return decideSeed(d, l, bs, cs, math.Sqrt(total.driftEstimate()), opts)
	}
	return decidePaired(d, l, bs, cs, total, opts)
}

func decidePaired(d Decision, l *scored, bs, cs []scoredRun, total pairedStat, opts Options) Decision {
	names := l.names()
	ps := make([]pairedStat, len(names))
	p := make([]float64, len(names))
	for i := range names {
		if i == 0 {
			ps[i] = total
		} else {
			ps[i] = paired(l, bs, cs, l.index(i), opts.Alpha, total.driftEstimate(), !opts.ExitOnly)
		}
		p[i] = -1
		if ps[i].n >= 2 {
			p[i] = ps[i].p
		}
	}
	adj := holm(p)
	d.Measures = make([]Measure, 0, len(names))
	tested, rejects := 0, 0
	var rejected []string
	for i, name := range names {
		j := l.index(i)
		m := Measure{Name: name, Cases: ps[i].n, P: 1, Adjusted: 1}
		if !opts.ExitOnly {
			m.Base, m.Candidate = sideRate(bs, j), sideRate(cs, j)
		}
		m.Drop = ps[i].d
		if ps[i].n >= 2 {
			tested++
			m.P, m.Adjusted, m.Upper = ps[i].p, adj[i], ps[i].upper
			m.Reject = adj[i] <= opts.RejectAlpha
		}
		if i == 0 {
			m.Margin = opts.Margin
		}
		if m.Reject {
			rejects++
			if !opts.ExitOnly {
				rejected = append(rejected, fmt.Sprintf("%s (drop %.3f, adjusted p %s)", label(name), m.Drop, pString(m.Adjusted)))
			}
		}
		d.Measures = append(d.Measures, m)
	}
	if opts.ExitOnly {
		// The switch below, without its words.
		switch {
		case rejects > 0:
			d.Verdict, d.Exit = Reject, exit.Decay
		case d.Measures[0].Upper < opts.Margin:
			d.Verdict, d.Exit = Accept, exit.OK
		default:
			d.Verdict, d.Exit = NotEnuf, exit.Indeterminate
		}
		return d
	}
	how := fmt.Sprintf("paired over %d cases with a run-to-run drift of %.3f counted, Holm over the total and %d measures at alpha %.3g", total.n, total.sigmaA, tested-1, opts.RejectAlpha)
	t := d.Measures[0]
	switch {
	case len(rejected) > 0:
		d.Verdict, d.Exit = Reject, exit.Decay
		d.Sentence = fmt.Sprintf("Reject: the candidate does worse on %s; %s.", join(rejected), how)
	case t.Upper < opts.Margin:
		d.Verdict, d.Exit = Accept, exit.OK
		d.Sentence = fmt.Sprintf("Accept: no measure dropped significantly, and the total's drop is at most %s (%.0f%% upper bound, margin %.3g); %s.",
			below(math.Max(0, t.Upper), opts.Margin), 100*(1-opts.Alpha), opts.Margin, how)
	default:
		d.Verdict, d.Exit = NotEnuf, exit.Indeterminate
		d.Need = total.need(opts.Margin, opts.Alpha, opts.RejectAlpha/float64(tested))
		d.Sentence = fmt.Sprintf("Not enough evidence: no measure dropped significantly, but the total may have dropped by up to %.3f (%.0f%% upper bound), not below the margin %.3g; %s. %s",
			t.Upper, 100*(1-opts.Alpha), opts.Margin, how, needSentence(total, d.Need, opts.Margin))
		if total.n < minRejectCases {
			d.Sentence += fmt.Sprintf(" %d cases cannot show a drop: the rule finds a score worse on %d cases or more.", total.n, minRejectCases)
		}
	}
	if len(bs) == 1 {
		d.Sentence += " " + oneRun
	}
	return d
}

// below prints a bound that lies below margin with three decimals, or as
// many more as show it below: 0.099602 as "0.100" beside a margin of 0.1
// read as a bound that reached it.
func below(bound, margin float64) string {
	for digits := 3; digits < 8; digits++ {
		if s := strconv.FormatFloat(bound, 'f', digits, 64); mustParse(s) < margin {
			return s
		}
	}
	return strconv.FormatFloat(bound, 'g', -1, 64)
}

func mustParse(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// oneRun is the caveat of a decision against a single base run.
var oneRun = fmt.Sprintf("With one base run the run-to-run drift cannot be seen: the rule counts the %.2f it assumes at least, and a larger drift could pass for a drop (seed 000: with one stored run as the baseline, the 192-line skill failed against itself); a second base run shows it.", DriftFloor)

func needSentence(total pairedStat, need int, margin float64) string {
	switch {
	case need > 0 && total.d < margin:
		return fmt.Sprintf("About %d cases with the same drop, spread and repeats would put the bound below the margin (arithmetic on this run's figures, not the chance that a new run accepts).", need)
	case need > 0:
		// Not "would show whether the drop is real": at the number that
		// makes the observed drop just significant, a real drop of that
		// size is found only about half the time.
		return fmt.Sprintf("The total dropped %.3f, at least the margin: on about %d cases the same drop, spread and repeats would be significant (arithmetic on this run's figures, not the chance that a new run shows it).", total.d, need)
	default:
		return fmt.Sprintf("No number of cases up to %d would decide: the run-to-run drift counted (%.3f) alone keeps the bound up.", maxNeed, total.sigmaA)
	}
}

// pString prints a p-value to three significant digits, and a tiny one
// as a bound rather than as 0.
func pString(p float64) string {
	if p < 1e-4 {
		return "< 0.0001"
	}
	return fmt.Sprintf("%.3g", p)
}

func label(name string) string {
	if name == Total {
		return "the total"
	}
	return name
}

// join lists phrases as "a", "a and b", "a, b and c".
func join(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
