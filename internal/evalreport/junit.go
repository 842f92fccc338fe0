package evalreport

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/evalstats"
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

type jsuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []jsuite `xml:"testsuite"`
}

type jsuite struct {
	Name       string  `xml:"name,attr"`
	Tests      int     `xml:"tests,attr"`
	Failures   int     `xml:"failures,attr"`
	Errors     int     `xml:"errors,attr"`
	Skipped    int     `xml:"skipped,attr"`
	Time       string  `xml:"time,attr"`
	Properties *jprops `xml:"properties,omitempty"`
	Cases      []jcase `xml:"testcase"`
	SystemOut  string  `xml:"system-out,omitempty"`
}

type jprops struct {
	Property []jprop `xml:"property"`
}

type jprop struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type jcase struct {
	Name      string    `xml:"name,attr"`
	Classname string    `xml:"classname,attr"`
	Time      string    `xml:"time,attr"`
	Failure   *jproblem `xml:"failure,omitempty"`
	Error     *jproblem `xml:"error,omitempty"`
	Skipped   *jskip    `xml:"skipped,omitempty"`
	SystemOut string    `xml:"system-out,omitempty"`
}

type jproblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type jskip struct {
	Message string `xml:"message,attr"`
}

// JUnit writes the eval as JUnit XML: for each candidate, a suite of its
// main cases holding a test case per measure (a failure when the rule
// finds the candidate worse on it) and one per regressed case (passed at
// least 2/3 of its baseline repeats, failed every candidate repeat), and a
// suite of the holdout holding a test case per measure only (no case of
// the holdout is named). --baseline writes the instrument's two checks; a
// run without a baseline writes each measure's rates, passing.
func JUnit(w io.Writer, v *View) error {
	doc := jsuites{Name: "vibe-test eval " + term.Line(v.Rec.Skill.Name), Time: "0"}
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
	if res.CellErrors > candidates && len(doc.Suites) > 0 {
		s := &doc.Suites[0]
		s.Cases = append(s.Cases, jcase{Name: "every cell made", Classname: junitClassEval, Time: "0",
			Error: &jproblem{Message: term.Line(res.Sentence), Type: TypeToolError}})
	}
	for i := range doc.Suites {
		count(&doc.Suites[i])
		doc.Tests += doc.Suites[i].Tests
		doc.Failures += doc.Suites[i].Failures
		doc.Errors += doc.Suites[i].Errors
	}
	var b strings.Builder
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encoding JUnit XML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("encoding JUnit XML: %w", err)
	}
	b.WriteString("\n")
	// C1 controls and bidirectional overrides are valid XML: dropped, as
	// in the run's JUnit (junit.encode).
	_, err := io.WriteString(w, term.Clean(b.String()))
	return err
}

func count(s *jsuite) {
	s.Tests, s.Failures, s.Errors, s.Skipped = len(s.Cases), 0, 0, 0
	for _, c := range s.Cases {
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	s.Time = "0"
}

// compareSuite is one candidate's main cases, or its holdout (aggregates).
// On a --grid (several candidates) the classnames name the candidate too:
// every point's cases were eval.main / Total, one test to a CI server,
// which then tracked the points' results as one history.
func compareSuite(v *View, c *eval.Comparison, holdout, grid bool) jsuite {
	d, part := c.Main, "main"
	if holdout {
		d, part = *c.Holdout, "holdout"
	}
	s := jsuite{Name: term.Line(c.Candidate.Info.Label) + " " + part, Properties: &jprops{Property: []jprop{
		{"verdict", d.Verdict}, {"rule", d.Rule}, {"sentence", term.Line(d.Sentence)},
	}}}
	class := junitClassEval + "." + part
	if grid {
		class = junitClassEval + "." + term.Line(c.Candidate.Info.Label) + "." + part
	}
	if len(d.Measures) == 0 {
		// No measure could be compared (too few cases, too many errors):
		// the suite says so rather than pass empty.
		jc := jcase{Name: "decided", Classname: class, Time: "0"}
		switch d.Verdict {
		case evalstats.NotEnuf:
			jc.Skipped = &jskip{Message: term.Line(d.Sentence)}
		default:
			jc.Error = &jproblem{Message: term.Line(d.Sentence), Type: TypeToolError}
		}
		s.Cases = append(s.Cases, jc)
	}
	for _, m := range d.Measures {
		jc := jcase{Name: term.Line(v.label(m.Name)), Classname: class, Time: "0",
			SystemOut: fmt.Sprintf("base %s, candidate %s, drop %s", rate(m.Base), rate(m.Candidate), dropCol(d, m))}
		switch {
		case m.Reject:
			jc.Failure = &jproblem{Message: fmt.Sprintf("%s: the candidate does worse (%s against %s)", term.Line(v.label(m.Name)), rateShort(m.Candidate), rateShort(m.Base)),
				Type: TypeWorse, Text: term.Line(d.Sentence)}
		case m.Name == evalstats.Total && d.Verdict == evalstats.NotEnuf:
			jc.Skipped = &jskip{Message: term.Line(d.Sentence)}
		case m.Name == evalstats.Total && d.Verdict == evalstats.ToolFail:
			jc.Error = &jproblem{Message: term.Line(d.Sentence), Type: TypeToolError}
		}
		s.Cases = append(s.Cases, jc)
	}
	if n := eval.FailedCells(c.Candidate); !holdout && n > 0 {
		s.Cases = append(s.Cases, jcase{Name: "every cell made", Classname: class, Time: "0",
			Error: &jproblem{Message: fmt.Sprintf("%d of its cells failed (the generator or the reader gave no usable answer): no verdict", n), Type: TypeToolError}})
	}
	if !holdout {
		for _, r := range c.Regressions {
			s.Cases = append(s.Cases, jcase{Name: term.Line(r.Case + " " + v.label(r.Measure) + " regressed"), Classname: class + ".case", Time: "0",
				Failure: &jproblem{Message: fmt.Sprintf("case %s: %s passed at least 2/3 of the baseline repeats and failed every candidate repeat", term.Line(r.Case), term.Line(v.label(r.Measure))), Type: TypeRegressed}})
		}
	}
	return s
}

func instrumentSuite(v *View, in *evalstats.Instrument) jsuite {
	s := jsuite{Name: "instrument of baseline " + term.Line(v.Rec.Config.Baseline)}
	second := jcase{Name: "base run 2 is accepted against base run 1", Classname: junitClassCheck, Time: "0", SystemOut: term.Line(in.Second.Sentence)}
	if !in.SecondAccepted {
		second.Failure = &jproblem{Message: term.Line(in.Second.Sentence), Type: TypeInstrument}
	}
	control := jcase{Name: "the empty-skill control is rejected", Classname: junitClassCheck, Time: "0", SystemOut: term.Line(in.Control.Sentence)}
	if !in.ControlRejected {
		control.Failure = &jproblem{Message: term.Line(in.Control.Sentence), Type: TypeInstrument}
	}
	s.Cases = append(s.Cases, second, control)
	return s
}

func measuredSuite(v *View) jsuite {
	s := jsuite{Name: "measured " + term.Line(v.Rec.Skill.Name)}
	labels := v.ColumnLabels()
	for _, r := range v.Main {
		var parts []string
		for i, x := range r.Rates {
			parts = append(parts, labels[i]+" "+rate(x))
		}
		s.Cases = append(s.Cases, jcase{Name: term.Line(r.Label), Classname: junitClassEval + ".main", Time: "0", SystemOut: term.Line(strings.Join(parts, "; "))})
	}
	return s
}
