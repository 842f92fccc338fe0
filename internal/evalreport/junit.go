package evalreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/evalstats"
	"github.com/vibe-test/vibe-test/internal/junit"
	"github.com/vibe-test/vibe-test/internal/term"
)

// JUnit failure and error types.
const (
	TypeWorse       = "measure-worse"       // the rule found the candidate worse on the measure
	TypeRegressed   = "case-regressed"      // a case passed the baseline and failed every candidate repeat
	TypeNotEnough   = "not-enough-evidence" // the rule could not decide
	TypeToolError   = "eval-error"          // no verdict: cells or grades failed
	TypeInstrument  = "instrument"          // --baseline's check failed
	junitClassEval  = "eval"
	junitClassCheck = "instrument"
)

// JUnit writes the eval as JUnit XML: for each candidate, a suite of its
// main cases holding a test case per measure (a failure when the rule
// finds the candidate worse on it) and one per regressed case (passed at
// least 2/3 of its baseline repeats, failed every candidate repeat), and a
// suite of the holdout holding a test case per measure only (no case of
// the holdout is named). --baseline writes the instrument's two checks; a
// run without a baseline writes each measure's rates, passing.
func JUnit(w io.Writer, v *View) error {
	doc := junit.Suites{Name: "vibe-test eval " + term.Line(v.Rec.Skill.Name), Time: "0"}
	res := v.Res
	switch {
	case res.Instrument != nil:
		doc.Suites = append(doc.Suites, instrumentSuite(v, res.Instrument))
	case len(res.Comparisons) > 0:
		grid := len(res.Comparisons) > 1
		for _, c := range res.Comparisons {
			doc.Suites = append(doc.Suites, compareSuite(v, c, false, grid))
			if c.Holdout != nil {
				doc.Suites = append(doc.Suites, compareSuite(v, c, true, grid))
			}
		}
	default:
		doc.Suites = append(doc.Suites, measuredSuite(v))
	}
	// A candidate's failed cells are an error in its own suite (each grid
	// point's: compareSuite); any other run's (a baseline's, a measured
	// run's, a control this eval made) here.
	candidates := 0
	for _, c := range res.Comparisons {
		candidates += eval.FailedCells(c.Candidate)
	}
	// An eval that did not complete decides nothing (its comparisons are
	// dropped): without this case its report was the rates alone, all
	// passing, beside exit 130.
	if v.Rec.Status != eval.StatusCompleted && len(doc.Suites) > 0 {
		s := &doc.Suites[0]
		s.Cases = append(s.Cases, junit.Case{Name: "the eval completed", Classname: junitClassEval, Time: "0",
			Error: &junit.Problem{Message: term.Line(res.Sentence), Type: TypeToolError}})
	}
	if res.CellErrors > candidates && len(doc.Suites) > 0 {
		s := &doc.Suites[0]
		s.Cases = append(s.Cases, junit.Case{Name: "every cell made", Classname: junitClassEval, Time: "0",
			Error: &junit.Problem{Message: term.Line(res.Sentence), Type: TypeToolError}})
	}
	for i := range doc.Suites {
		doc.Suites[i].Count()
		doc.Suites[i].Time = "0"
		doc.Tests += doc.Suites[i].Tests
		doc.Failures += doc.Suites[i].Failures
		doc.Errors += doc.Suites[i].Errors
	}
	// C0 controls become U+FFFD, C1 controls and bidirectional overrides
	// are dropped, as in the run's JUnit.
	return junit.Encode(w, doc, false)
}

// compareSuite is one candidate's main cases, or its holdout (aggregates).
// On a --grid (several candidates) the classnames name the candidate too:
// every point's cases were eval.main / Total, one test to a CI server,
// which then tracked the points' results as one history.
func compareSuite(v *View, c *eval.Comparison, holdout, grid bool) junit.Suite {
	d, part := c.Main, "main"
	if holdout {
		d, part = *c.Holdout, "holdout"
	}
	s := junit.Suite{Name: term.Line(c.Candidate.Info.Label) + " " + part, Properties: &junit.Properties{Property: []junit.Property{
		{Name: "verdict", Value: d.Verdict}, {Name: "rule", Value: d.Rule}, {Name: "sentence", Value: term.Line(d.Sentence)},
	}}}
	class := junitClassEval + "." + part
	if grid {
		class = junitClassEval + "." + term.Line(c.Candidate.Info.Label) + "." + part
	}
	if len(d.Measures) == 0 {
		// No measure could be compared (too few cases, too many errors):
		// the suite says so rather than pass empty.
		jc := junit.Case{Name: "decided", Classname: class, Time: "0"}
		switch d.Verdict {
		case evalstats.NotEnuf:
			jc.Skipped = &junit.Skip{Message: term.Line(d.Sentence)}
		default:
			jc.Error = &junit.Problem{Message: term.Line(d.Sentence), Type: TypeToolError}
		}
		s.Cases = append(s.Cases, jc)
	}
	for _, m := range d.Measures {
		jc := junit.Case{Name: term.Line(v.label(m.Name)), Classname: class, Time: "0",
			SystemOut: fmt.Sprintf("base %s, candidate %s, drop %s", rate(m.Base), rate(m.Candidate), dropCol(d, m))}
		switch {
		case m.Reject:
			// The drop is the paired rule's (the mean of the per-case
			// drops), which the pooled rates beside it need not give:
			// "0.600 against 1.000" read as a drop of 0.4 beside 0.429.
			rates := fmt.Sprintf("%s against %s", rateShort(m.Candidate), rateShort(m.Base))
			if d.Rule != evalstats.RuleSeed {
				rates += fmt.Sprintf(" pooled; mean per-case drop %s", dropCol(d, m))
			}
			jc.Failure = &junit.Problem{Message: fmt.Sprintf("%s: the candidate does worse (%s)", term.Line(v.label(m.Name)), rates),
				Type: TypeWorse, Text: term.Line(d.Sentence)}
		case m.Name == evalstats.Total && d.Verdict == evalstats.NotEnuf:
			jc.Skipped = &junit.Skip{Message: term.Line(d.Sentence)}
		case m.Name == evalstats.Total && d.Verdict == evalstats.ToolFail:
			jc.Error = &junit.Problem{Message: term.Line(d.Sentence), Type: TypeToolError}
		}
		s.Cases = append(s.Cases, jc)
	}
	if n := eval.FailedCells(c.Candidate); !holdout && n > 0 {
		s.Cases = append(s.Cases, junit.Case{Name: "every cell made", Classname: class, Time: "0",
			Error: &junit.Problem{Message: fmt.Sprintf("%d of its cells failed (the generator or the reader gave no usable answer): no verdict", n), Type: TypeToolError}})
	}
	if !holdout {
		for _, r := range c.Regressions {
			s.Cases = append(s.Cases, junit.Case{Name: term.Line(r.Case + " " + v.label(r.Measure) + " regressed"), Classname: class + ".case", Time: "0",
				Failure: &junit.Problem{Message: fmt.Sprintf("case %s: %s passed at least 2/3 of the baseline repeats and failed every candidate repeat", term.Line(r.Case), term.Line(v.label(r.Measure))), Type: TypeRegressed}})
		}
	}
	return s
}

func instrumentSuite(v *View, in *evalstats.Instrument) junit.Suite {
	s := junit.Suite{Name: "instrument of baseline " + term.Line(v.Rec.Config.Baseline)}
	second := junit.Case{Name: "base run 2 is accepted against base run 1", Classname: junitClassCheck, Time: "0", SystemOut: term.Line(in.Second.Sentence)}
	if !in.SecondAccepted {
		second.Failure = &junit.Problem{Message: term.Line(in.Second.Sentence), Type: TypeInstrument}
	}
	control := junit.Case{Name: "the empty-skill control is rejected", Classname: junitClassCheck, Time: "0", SystemOut: term.Line(in.Control.Sentence)}
	if !in.ControlRejected {
		control.Failure = &junit.Problem{Message: term.Line(in.Control.Sentence), Type: TypeInstrument}
	}
	s.Cases = append(s.Cases, second, control)
	return s
}

func measuredSuite(v *View) junit.Suite {
	s := junit.Suite{Name: "measured " + term.Line(v.Rec.Skill.Name)}
	labels := v.ColumnLabels()
	for _, r := range v.Main {
		var parts []string
		for i, x := range r.Rates {
			parts = append(parts, labels[i]+" "+rate(x))
		}
		s.Cases = append(s.Cases, junit.Case{Name: term.Line(r.Label), Classname: junitClassEval + ".main", Time: "0", SystemOut: term.Line(strings.Join(parts, "; "))})
	}
	return s
}
