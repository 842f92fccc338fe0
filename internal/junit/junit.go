// Package junit writes a run record as JUnit XML, the test report format CI
// systems render: one <testsuite> per conversation and one <testcase> per
// judged turn (1, 6, 8 and 10).
//
// A failing verdict is a <failure> naming the failed must criteria and their
// evidence; a judge error or a turn that errored or timed out is an <error>
// (neither pass nor fail); a judged turn that never ran is <skipped> with the
// reason (the baseline gate, an interrupt, an error elsewhere, the budget);
// a run that gave no verdict (exit 3) has a case of its own, an <error>.
// The output keeps to the Jenkins/Ant JUnit schema (junit/testdata/junit.xsd).
package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/term"
)

// BypassBanner marks every report of a run whose baseline gate was bypassed.
const BypassBanner = record.BypassBanner

// Error types, in the type attribute of <failure> and <error>.
const (
	TypeCriteria    = "criteria-failed" // a must criterion failed
	TypeEscapeHatch = "escape-hatch"    // the agent abandoned the procedure
	TypeJudgeError  = "judge-error"     // the judge gave no usable answer
	TypeNoVerdict   = "no-verdict"      // the turn ran but was never judged
	TypeRunError    = "run-error"       // the run gave no verdict (exit 3)
)

// Suites is a JUnit document (<testsuites>): the run's, a suite's, or an
// eval's (evalreport writes its own cases in these types).
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one <testsuite>; Count fills its tallies from its cases.
type Suite struct {
	Name       string      `xml:"name,attr"`
	Tests      int         `xml:"tests,attr"`
	Failures   int         `xml:"failures,attr"`
	Errors     int         `xml:"errors,attr"`
	Skipped    int         `xml:"skipped,attr"`
	Time       string      `xml:"time,attr"`
	Timestamp  string      `xml:"timestamp,attr,omitempty"`
	Properties *Properties `xml:"properties,omitempty"`
	Cases      []Case      `xml:"testcase"`
	SystemOut  string      `xml:"system-out,omitempty"`
	SystemErr  string      `xml:"system-err,omitempty"`
}

// Properties is a suite's <properties>.
type Properties struct {
	Property []Property `xml:"property"`
}

// Property is one name and value of a suite's properties.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Case is one <testcase>: passed, or one of a failure, an error or a skip.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *Problem `xml:"failure,omitempty"`
	Error     *Problem `xml:"error,omitempty"`
	Skipped   *Skip    `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Problem is a case's <failure> or <error>.
type Problem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Skip is a case's <skipped>, with the reason.
type Skip struct {
	Message string `xml:"message,attr"`
}

// Count sets the suite's tests, failures, errors and skips from its cases.
func (s *Suite) Count() {
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
}

// Write writes r as JUnit XML. It reads only the record, so an old run can
// be converted as well as a fresh one.
func Write(w io.Writer, r *record.Run) error {
	doc := Suites{Name: "vibe-test " + r.Skill.Name}
	var totalMS int64
	// A suite per conversation, then one per fresh triple (each probe asked
	// as the first message of a new session): the two arms the verdict
	// compares.
	units := make([]*record.Conversation, 0, len(r.Conversations)+len(r.Fresh))
	for i := range r.Conversations {
		units = append(units, &r.Conversations[i])
	}
	for i := range r.Fresh {
		units = append(units, &r.Fresh[i])
	}
	for _, c := range units {
		s, ms := suite(r.Skill.Name, r, c)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		totalMS += ms
		doc.Suites = append(doc.Suites, s)
	}
	if tc, ok := runError(r.Skill.Name, r); ok {
		doc.Suites = append(doc.Suites, Suite{Name: "run", Tests: 1, Errors: 1, Time: seconds(0), Cases: []Case{tc}})
		doc.Tests++
		doc.Errors++
	}
	doc.Time = seconds(totalMS)
	return Encode(w, doc, r.GateBypassed)
}

// runError is the run's own test case when it gave no verdict (exit 3: a
// turn's error, the budget, a set-up problem): an <error> with the run's
// sentence. The turns' cases alone could show none (an error on a filler
// turn has no case; the probes it stopped are skipped), and a report of 0
// failures and 0 errors read as green beside exit 3.
func runError(name string, r *record.Run) (Case, bool) {
	if r.Outcome.Exit != exit.Tool {
		return Case{}, false
	}
	return Case{Name: "verdict", Classname: name + ".run", Time: seconds(0),
		Error: &Problem{Message: orElse(r.Outcome.Sentence, "no verdict"), Type: TypeRunError, Text: r.Error}}, true
}

// Encode writes the document, with the bypass banner as a comment ahead of
// it when a run's gate was bypassed.
func Encode(w io.Writer, doc Suites, bypassed bool) error {
	var b strings.Builder
	b.WriteString(xml.Header)
	if bypassed {
		// Visible to anyone reading the file; the schema has no place for
		// properties on <testsuites>, so each suite and case carries it too.
		b.WriteString("<!-- " + BypassBanner + " -->\n")
	}
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encoding JUnit XML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("encoding JUnit XML: %w", err)
	}
	b.WriteString("\n")
	// The encoder replaced C0 controls with U+FFFD; C1 controls and
	// bidirectional overrides are valid XML and went through, to the CI
	// page or log that shows the evidence. Dropped as everywhere else.
	_, err := io.WriteString(w, term.Clean(b.String()))
	return err
}

// WriteSuite writes a suite's runs as JUnit XML: one <testsuite> per skill
// holding a <testcase> per judged turn of each of its conversations and
// fresh triples (the classname names the skill and the unit), with the
// skill's verdict and exit code as properties. names are the skills'
// names in the suite (names[i] runs[i]'s): a second skill of one name is
// "-2" there, and its suite and cases took the first one's name, which CI
// history then merged with the first's.
func WriteSuite(w io.Writer, names []string, runs []*record.Run) error {
	doc := Suites{Name: "vibe-test suite"}
	var totalMS int64
	bypassed := false
	for k, r := range runs {
		name := names[k]
		skill := Suite{Name: name}
		if !r.StartedAt.IsZero() {
			skill.Timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
		}
		var ms int64
		var out []string
		for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh} {
			for i := range arm {
				u, t := suite(name, r, &arm[i])
				ms += t
				skill.Tests += u.Tests
				skill.Failures += u.Failures
				skill.Errors += u.Errors
				skill.Skipped += u.Skipped
				skill.Cases = append(skill.Cases, u.Cases...)
				out = append(out, u.SystemOut)
			}
		}
		if tc, ok := runError(name, r); ok {
			skill.Cases = append(skill.Cases, tc)
			skill.Tests++
			skill.Errors++
		}
		skill.Time = seconds(ms)
		skill.SystemOut = strings.Join(out, "\n")
		props := []Property{
			{"vibe-test.skill", r.Skill.Name},
			{"vibe-test.skill_hash", r.Skill.Hash},
			{"vibe-test.run_status", r.Status},
			{"vibe-test.verdict", r.Outcome.Verdict},
			{"vibe-test.exit_code", strconv.Itoa(r.Outcome.Exit)},
			{"vibe-test.sentence", r.Outcome.Sentence},
		}
		if r.GateBypassed {
			bypassed = true
			props = append([]Property{{"vibe-test.warning", BypassBanner}}, props...)
		}
		skill.Properties = &Properties{Property: props}
		doc.Tests += skill.Tests
		doc.Failures += skill.Failures
		doc.Errors += skill.Errors
		totalMS += ms
		doc.Suites = append(doc.Suites, skill)
	}
	doc.Time = seconds(totalMS)
	return Encode(w, doc, bypassed)
}

// suite is one conversation of the skill called name; ms is the time its
// turns took.
func suite(name string, r *record.Run, c *record.Conversation) (Suite, int64) {
	s := Suite{Name: unitName(c)}
	if !r.StartedAt.IsZero() {
		s.Timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	var ms int64
	for _, t := range slices.Concat(c.Turns, c.Abandoned) {
		ms += turnMS(t)
	}
	s.Time = seconds(ms)

	props := []Property{}
	if r.GateBypassed {
		props = append(props, Property{"vibe-test.warning", BypassBanner})
	}
	props = append(props,
		Property{"vibe-test.skill", r.Skill.Name},
		Property{"vibe-test.skill_hash", r.Skill.Hash},
		Property{"vibe-test.conversation_status", c.Status},
		Property{"vibe-test.shape", c.Shape},
		Property{"vibe-test.gate_bypassed", strconv.FormatBool(r.GateBypassed)},
		Property{"vibe-test.run_status", r.Status},
		Property{"vibe-test.verdict", r.Outcome.Verdict},
		Property{"vibe-test.exit_code", strconv.Itoa(r.Outcome.Exit)},
		Property{"vibe-test.sentence", r.Outcome.Sentence},
		Property{"vibe-test.isolation", r.Isolation},
		Property{"vibe-test.jail", r.Jail},
		Property{"vibe-test.version", r.Versions.VibeTest},
	)
	// Each CLI that took part, by its name (a codex run's model was
	// "claude.model", and codex's version was nowhere).
	for _, cli := range r.Versions.CLIs(r.Config) {
		props = append(props, Property{cli.Name + ".version", cli.Version})
	}
	props = append(props,
		Property{record.AgentOf(r.Config) + ".model", r.Config.Model},
		Property{"vibe-test.session_mode", record.SessionModeOf(r.Config)},
	)
	kept := props[:0]
	for _, p := range props {
		if p.Value != "" {
			kept = append(kept, p)
		}
	}
	s.Properties = &Properties{Property: kept}

	var out []string
	if r.GateBypassed {
		out = append(out, BypassBanner)
	}
	line := fmt.Sprintf("%s: %s", unitName(c), c.Status)
	if c.Shape != "" {
		line += ", shape " + c.Shape
	}
	out = append(out, line)
	out = append(out, c.Notes...)
	s.SystemOut = strings.Join(out, "\n")
	if c.Error != "" {
		s.SystemErr = c.Error
	}

	for _, j := range judgedCases(r, c) {
		tc := testCase(name, r, c, j.turn)
		if j.name != "" {
			tc.Name = j.name
		}
		s.Tests++
		switch {
		case tc.Failure != nil:
			s.Failures++
		case tc.Error != nil:
			s.Errors++
		case tc.Skipped != nil:
			s.Skipped++
		}
		s.Cases = append(s.Cases, tc)
	}
	return s, ms
}

// judgedCase is one judged turn to report: its turn number (0: never
// reached) and, off the seed's schedule, its name.
type judgedCase struct {
	turn int
	name string
}

// judgedCases are a conversation's judged turns: on the seed's schedule
// turns 1, 6, 8 and 10 (a fresh triple's probes only), named by turn as
// always; on a diluted-to schedule the baseline and each probe by number,
// with the turn it fell on, since that differs from one conversation to
// the next.
func judgedCases(r *record.Run, c *record.Conversation) []judgedCase {
	var out []judgedCase
	if r.Plan == nil || r.Plan.Schedule.Fixed() {
		for n := 1; n <= plan.Turns; n++ {
			if plan.Kind(n) == plan.KindFiller || (c.Control == record.ArmFresh && plan.Kind(n) != plan.KindProbe) {
				continue
			}
			out = append(out, judgedCase{turn: n})
		}
		return out
	}
	if c.Control != record.ArmFresh {
		out = append(out, judgedCase{turn: 1})
	}
	for k := 1; k <= len(plan.ProbeTurns); k++ {
		t := c.ShownProbe(k)
		switch {
		case t == nil:
			out = append(out, judgedCase{name: fmt.Sprintf("probe %d (not reached)", k)})
		case c.Control == record.ArmFresh:
			out = append(out, judgedCase{turn: t.Turn, name: fmt.Sprintf("probe %d (fresh)", k)})
		default:
			out = append(out, judgedCase{turn: t.Turn, name: fmt.Sprintf("probe %d (turn %d)", k, t.Turn)})
		}
	}
	return out
}

// unitName names a conversation or a fresh triple.
func unitName(c *record.Conversation) string {
	if c.Control == record.ArmFresh {
		return fmt.Sprintf("fresh triple %d", c.Index)
	}
	return fmt.Sprintf("conversation %d", c.Index)
}

// testCase is judged turn n of conversation c of the skill called name.
func testCase(name string, r *record.Run, c *record.Conversation, n int) (tc Case) {
	tc = Case{
		Name: fmt.Sprintf("turn %d (%s)", n, plan.Kind(n)),
		// Per conversation, so CI servers that group cases by class and
		// name keep each conversation's turns apart.
		Classname: fmt.Sprintf("%s.%s", name, strings.ReplaceAll(unitName(c), " ", "-")),
		Time:      seconds(0),
	}
	var out []string
	if r.GateBypassed {
		out = append(out, BypassBanner)
	}
	defer func() { tc.SystemOut = strings.Join(out, "\n") }()

	t := c.TurnAt(n)
	if t == nil {
		if a := abandoned(c, n); a != nil && turnFailed(c, a) {
			tc.Time = seconds(turnMS(*a))
			tc.Error = &Problem{Type: a.Status, Message: fmt.Sprintf("turn %d %s: %s", n, a.Status, orElse(a.Error, "no error recorded"))}
			tc.Error.Text = tc.Error.Message
			if a.Transcript != "" {
				out = append(out, "transcript: "+a.Transcript)
			}
			return tc
		}
		tc.Skipped = &Skip{Message: notRun(c)}
		return tc
	}

	tc.Time = seconds(turnMS(*t))
	out = append(out,
		"transcript: "+t.Transcript,
		fmt.Sprintf("tool calls: %d, context tokens: %d", t.ToolCallCount, t.ContextTokens))
	for _, cp := range t.Compactions {
		out = append(out, fmt.Sprintf("compaction (%s) before or during the turn: context %d -> about %d tokens", cp.Trigger, cp.PreTokens, cp.PostTokens))
	}
	if t.AfterCompaction {
		out = append(out, "asked after the session was compacted")
	}
	switch v := t.Verdict; {
	case t.Status != record.TurnOK:
		tc.Error = &Problem{Type: t.Status, Message: fmt.Sprintf("turn %d %s: %s", n, t.Status, orElse(t.Error, "no error recorded"))}
		tc.Error.Text = tc.Error.Message
	case v == nil:
		if c.Status == record.StatusCompleted {
			tc.Error = &Problem{Type: TypeNoVerdict, Message: fmt.Sprintf("turn %d ran but has no verdict", n)}
			tc.Error.Text = tc.Error.Message
		} else {
			tc.Skipped = &Skip{Message: "ran but was not judged: " + notRun(c)}
		}
	case v.Result == judge.JudgeError:
		tc.Error = &Problem{Type: TypeJudgeError, Message: "judge error (neither pass nor fail): " + orElse(v.Error, "no error recorded")}
		tc.Error.Text = tc.Error.Message
	case v.Result == judge.Fail:
		tc.Failure = failure(r.Rubric, n, v)
	case v.Result == judge.Pass:
		if v.Partial {
			out = append(out, "PASS*: the judge flagged an escape hatch ("+v.EscapeReason+") but a required step's check passed: downgraded to partial compliance")
		}
	default:
		tc.Error = &Problem{Type: TypeJudgeError, Message: fmt.Sprintf("unknown verdict result %q", v.Result)}
		tc.Error.Text = tc.Error.Message
	}
	if t.Verdict != nil {
		for _, cv := range t.Verdict.Criteria {
			if cv.Kind == rubric.Should && cv.Result == judge.Fail {
				out = append(out, fmt.Sprintf("should criterion failed: %s: %s", cv.ID, cv.Evidence))
			}
		}
	}
	return tc
}

// failure describes a failing verdict: the failed must criteria with their
// evidence, and the escape hatch if the judge flagged one.
func failure(rb *rubric.Rubric, n int, v *judge.Verdict) *Problem {
	p := &Problem{Type: TypeCriteria}
	var short, long []string
	if v.EscapeHatch {
		p.Type = TypeEscapeHatch
		short = append(short, "escape hatch: "+v.EscapeReason)
		long = append(long, "escape hatch: the agent abandoned the procedure: "+v.EscapeReason)
	}
	for _, cv := range v.Criteria {
		if cv.Result == judge.Pass || cv.Kind != rubric.Must {
			continue
		}
		if cv.Result == judge.NotApplicable {
			// Not shown by any call, which a must criterion needs.
			cv.Evidence = "judged n/a: " + cv.Evidence
		}
		short = append(short, cv.ID+": "+cv.Evidence)
		text := ""
		if rb != nil {
			if crit, ok := rb.ByID(cv.ID); ok {
				text = ": " + crit.Text
			}
		}
		long = append(long, fmt.Sprintf("must %s%s\n  evidence (%s%s): %s", cv.ID, text, orElse(cv.Source, "judge"), callRef(cv.Call), cv.Evidence))
		if cv.JudgeResult != "" {
			long = append(long, fmt.Sprintf("  the judge answered %q; the deterministic check overrode it", cv.JudgeResult))
		}
	}
	if len(short) == 0 {
		short = append(short, "failed with no failed must criterion recorded")
	}
	p.Message = fmt.Sprintf("turn %d failed: %s", n, strings.Join(short, "; "))
	if n == 1 {
		long = append(long, "this is the baseline (before dilution): no decay can be measured from a failing baseline")
	}
	p.Text = strings.Join(long, "\n")
	return p
}

func callRef(call int) string {
	if call <= 0 {
		return ", no call cited"
	}
	return fmt.Sprintf(", call %d", call)
}

// abandoned is the last record of turn n that did not complete, or nil.
func abandoned(c *record.Conversation, n int) *record.Turn {
	for i := len(c.Abandoned) - 1; i >= 0; i-- {
		if c.Abandoned[i].Turn == n {
			return &c.Abandoned[i]
		}
	}
	return nil
}

// turnFailed says whether an abandoned turn errored on its own account, as
// opposed to being cut short by an interrupt (which resume runs again).
func turnFailed(c *record.Conversation, t *record.Turn) bool {
	switch c.Status {
	case record.StatusInterrupted, record.StatusRunning, "pending":
		return false
	}
	return t.Status != record.TurnOK
}

// notRun is why a conversation's remaining judged turns never ran.
func notRun(c *record.Conversation) string {
	switch c.Status {
	case record.StatusBaselineFailed:
		return "stopped at the baseline gate: " + orElse(c.Error, "turn 1 failed")
	case record.StatusInterrupted:
		return "not run: the run was interrupted (" + orElse(c.Error, "interrupted") + ")"
	case record.StatusBudgetExhausted:
		return "not run: budget exhausted (" + orElse(c.Error, "the --max-budget-usd limit was spent") + ")"
	case record.StatusError:
		return "not run: the conversation stopped on an error (" + orElse(c.Error, "no error recorded") + ")"
	case record.StatusRunning, "pending":
		return "not run yet: the conversation is " + c.Status
	case record.StatusCompleted:
		return "not run: the conversation completed without this turn"
	}
	return "not run: conversation status " + orElse(c.Status, "unknown")
}

func seconds(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
}

func orElse(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// turnMS is the time a turn took, every try of it: its own duration_ms is
// its last try's.
func turnMS(t record.Turn) int64 {
	ms := t.DurationMS
	for _, a := range t.Attempts {
		ms += a.DurationMS
	}
	return ms
}
