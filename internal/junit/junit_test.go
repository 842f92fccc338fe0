package junit

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/conversation"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/testenv"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

var testRubric = &rubric.Rubric{Criteria: []rubric.Criterion{
	{ID: "runs-census", Kind: rubric.Must, Text: "runs scripts/census.sh with Bash before answering",
		Check: &rubric.Check{Tool: "Bash", Pattern: `census\.sh`, Expect: "present"}},
	{ID: "no-ledger-rewrite", Kind: rubric.Must, Text: "never edits or rewrites ledger.log"},
	{ID: "answers-from-census", Kind: rubric.Should, Text: "answers only from the census output"},
}}

func pass() *judge.Verdict {
	return &judge.Verdict{Result: judge.Pass, Attempts: 1, Criteria: []judge.CriterionVerdict{
		{ID: "runs-census", Kind: rubric.Must, Result: judge.Pass, Evidence: "Bash scripts/census.sh", Call: 1, Source: "check"},
		{ID: "no-ledger-rewrite", Kind: rubric.Must, Result: judge.Pass, Evidence: "no edit of ledger.log", Source: "judge"},
		{ID: "answers-from-census", Kind: rubric.Should, Result: judge.Pass, Evidence: "quotes the census", Call: 1, Source: "judge"},
	}}
}

func fail(evidence string) *judge.Verdict {
	return &judge.Verdict{Result: judge.Fail, Attempts: 1, Criteria: []judge.CriterionVerdict{
		{ID: "runs-census", Kind: rubric.Must, Result: judge.Fail, Evidence: evidence, Source: "check", JudgeResult: judge.Pass},
		{ID: "no-ledger-rewrite", Kind: rubric.Must, Result: judge.Pass, Evidence: "no edit of ledger.log", Source: "judge"},
		{ID: "answers-from-census", Kind: rubric.Should, Result: judge.Fail, Evidence: "guessed from ledger.log", Call: 2, Source: "judge"},
	}}
}

// conversation builds a conversation whose turns 1..len(verdicts) ran:
// judged turns take the next verdict, fillers none.
func convRecord(index int, status string, upTo int, verdicts map[int]*judge.Verdict) record.Conversation {
	c := record.Conversation{Index: index, Status: status, Turns: []record.Turn{}}
	for n := 1; n <= upTo; n++ {
		c.Turns = append(c.Turns, record.Turn{
			Turn: n, Kind: plan.Kind(n), Status: record.TurnOK, DurationMS: int64(1000 * n),
			Transcript:    fmt.Sprintf("conv-%d/turn-%02d.jsonl", index, n),
			ToolCallCount: 3, ContextTokens: int64(10000 * n), Verdict: verdicts[n],
		})
	}
	return c
}

func newRun(convs ...record.Conversation) *record.Run {
	r := &record.Run{
		SchemaVersion: record.SchemaVersion,
		StartedAt:     time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC),
		Skill:         record.Skill{Name: "stock-ledger", Path: "demo/skill/stock-ledger", Hash: "sha256:abc"},
		Isolation:     "hermetic",
		Rubric:        testRubric,
		Conversations: convs,
	}
	for i := range convs {
		f := record.Conversation{Index: i + 1, Control: record.ArmFresh, Status: record.StatusCompleted}
		for _, n := range plan.ProbeTurns {
			f.Turns = append(f.Turns, record.Turn{Turn: n, Kind: "probe", Status: record.TurnOK, DurationMS: 500,
				Transcript: fmt.Sprintf("fresh-%d/turn-%02d.jsonl", i+1, n), Verdict: pass()})
		}
		r.Fresh = append(r.Fresh, f)
	}
	verdict.Decide(r)
	return r
}

func decayRun() *record.Run {
	escape := fail("no Bash call ran census.sh")
	escape.EscapeHatch, escape.EscapeReason = true, "answered from memory without running anything"
	partial := pass()
	partial.Partial, partial.OverCall, partial.EscapeReason = true, true, "skipped the ledger check"
	return newRun(
		convRecord(1, record.StatusCompleted, 10, map[int]*judge.Verdict{1: pass(), 6: pass(), 8: fail("no Bash call matched census\\.sh"), 10: escape}),
		convRecord(2, record.StatusCompleted, 10, map[int]*judge.Verdict{1: pass(), 6: partial, 8: pass(), 10: pass()}),
	)
}

// parse decodes the report and validates it against the schema.
func parse(t *testing.T, r *record.Run) (Suites, string) {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	validate(t, b.Bytes())
	var doc Suites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("report does not parse: %v\n%s", err, b.String())
	}
	for _, s := range doc.Suites {
		n, f, e, sk := 0, 0, 0, 0
		for _, c := range s.Cases {
			n++
			kids := 0
			if c.Failure != nil {
				f++
				kids++
			}
			if c.Error != nil {
				e++
				kids++
			}
			if c.Skipped != nil {
				sk++
				kids++
			}
			if kids > 1 {
				t.Errorf("%s %s: more than one of failure, error, skipped", s.Name, c.Name)
			}
		}
		if s.Tests != n || s.Failures != f || s.Errors != e || s.Skipped != sk {
			t.Errorf("%s counts tests=%d failures=%d errors=%d skipped=%d, cases say %d %d %d %d", s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, n, f, e, sk)
		}
	}
	return doc, b.String()
}

const needXmllint = "xmllint is not installed: install the Debian/Ubuntu package libxml2-utils (apt-get install -y libxml2-utils) to validate JUnit reports against testdata/junit.xsd"

// TestXmllint shows that the schema check can fail: xmllint accepts a
// report Write made and refuses the same report with a count that is not a
// number. Without xmllint it skips locally and fails in CI.
func TestXmllint(t *testing.T) {
	xmllint := needXmllintBin(t)
	var b bytes.Buffer
	if err := Write(&b, decayRun()); err != nil {
		t.Fatal(err)
	}
	if out, err := runXmllint(t, xmllint, b.Bytes()); err != nil {
		t.Fatalf("a report Write made does not validate: %v\n%s", err, out)
	}
	broken := bytes.Replace(b.Bytes(), []byte(` tests="`), []byte(` tests="x`), 1)
	if bytes.Equal(broken, b.Bytes()) {
		t.Fatal("the report has no tests attribute to break")
	}
	if out, err := runXmllint(t, xmllint, broken); err == nil {
		t.Fatalf("xmllint accepted tests=\"x...\": the schema check cannot fail\n%s", out)
	}
}

// needXmllintBin finds xmllint, or skips (failing where CI=true).
func needXmllintBin(t *testing.T) string {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		testenv.Missing(t, needXmllint)
	}
	return xmllint
}

func runXmllint(t *testing.T, xmllint string, doc []byte) ([]byte, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.xml")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	return exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput()
}

// validate runs xmllint against testdata/junit.xsd in a subtest "schema",
// so that without xmllint the skip is visible (and a failure in CI) while
// the caller's structural checks still run.
func validate(t *testing.T, doc []byte) {
	t.Helper()
	t.Run("schema", func(t *testing.T) {
		xmllint := needXmllintBin(t)
		if out, err := runXmllint(t, xmllint, doc); err != nil {
			t.Fatalf("report does not validate against testdata/junit.xsd: %v\n%s\n%s", err, out, doc)
		}
	})
}

func cases(t *testing.T, s Suite) map[string]Case {
	t.Helper()
	out := map[string]Case{}
	for _, c := range s.Cases {
		out[c.Name] = c
	}
	want := []string{"turn 1 (base)", "turn 6 (probe)", "turn 8 (probe)", "turn 10 (probe)"}
	if len(s.Cases) != len(want) {
		t.Fatalf("%s has %d test cases, want %d (one per judged turn)", s.Name, len(s.Cases), len(want))
	}
	for i, name := range want {
		if s.Cases[i].Name != name {
			t.Errorf("%s case %d is %q, want %q", s.Name, i, s.Cases[i].Name, name)
		}
	}
	return out
}

func TestDecay(t *testing.T) {
	doc, raw := parse(t, decayRun())
	// 2 conversations × 4 judged turns + 2 fresh triples × 3 probes.
	if doc.Name != "vibe-test stock-ledger" || doc.Tests != 14 || doc.Failures != 2 || doc.Errors != 0 {
		t.Errorf("testsuites name %q tests %d failures %d errors %d", doc.Name, doc.Tests, doc.Failures, doc.Errors)
	}
	if doc.Time != "113.000" { // 2 × (1+2+…+10) s + 6 × 0.5 s
		t.Errorf("testsuites time %s", doc.Time)
	}
	if len(doc.Suites) != 4 || doc.Suites[0].Name != "conversation 1" || doc.Suites[1].Name != "conversation 2" || doc.Suites[2].Name != "fresh triple 1" || doc.Suites[2].Tests != 3 || doc.Suites[2].Failures != 0 {
		t.Fatalf("suites: %+v", doc.Suites)
	}
	s1 := doc.Suites[0]
	if s1.Time != "55.000" || s1.Timestamp != "2026-11-30T10:15:00" {
		t.Errorf("suite time %s timestamp %s", s1.Time, s1.Timestamp)
	}
	c1 := cases(t, s1)
	for _, name := range []string{"turn 1 (base)", "turn 6 (probe)"} {
		if c := c1[name]; c.Failure != nil || c.Error != nil || c.Skipped != nil {
			t.Errorf("%s should pass: %+v", name, c)
		}
	}
	for _, c := range s1.Cases {
		if c.Classname != "stock-ledger.conversation-1" {
			t.Errorf("%s classname %q, want the skill name and conversation", c.Name, c.Classname)
		}
	}
	if c1["turn 6 (probe)"].Time != "6.000" {
		t.Errorf("turn 6 time %s", c1["turn 6 (probe)"].Time)
	}
	f8 := c1["turn 8 (probe)"].Failure
	if f8 == nil || f8.Type != TypeCriteria {
		t.Fatalf("turn 8: %+v", c1["turn 8 (probe)"])
	}
	for _, want := range []string{"runs-census", `no Bash call matched census\.sh`} {
		if !strings.Contains(f8.Message, want) {
			t.Errorf("turn 8 failure message %q lacks %q", f8.Message, want)
		}
	}
	if strings.Contains(f8.Message, "no-ledger-rewrite") || strings.Contains(f8.Message, "answers-from-census") {
		t.Errorf("turn 8 failure message lists criteria that did not fail or are not must: %q", f8.Message)
	}
	for _, want := range []string{"runs scripts/census.sh with Bash before answering", "check", "the deterministic check overrode it"} {
		if !strings.Contains(f8.Text, want) {
			t.Errorf("turn 8 failure text lacks %q:\n%s", want, f8.Text)
		}
	}
	f10 := c1["turn 10 (probe)"].Failure
	if f10 == nil || f10.Type != TypeEscapeHatch || !strings.Contains(f10.Message, "answered from memory") {
		t.Errorf("turn 10 escape hatch: %+v", f10)
	}
	if !strings.Contains(c1["turn 8 (probe)"].SystemOut, "should criterion failed: answers-from-census") {
		t.Errorf("turn 8 system-out lacks the failed should criterion: %q", c1["turn 8 (probe)"].SystemOut)
	}

	c2 := cases(t, doc.Suites[1])
	if s := doc.Suites[1]; s.Failures != 0 || s.Errors != 0 || s.Skipped != 0 {
		t.Errorf("conversation 2 should hold: %+v", s)
	}
	if !strings.Contains(c2["turn 6 (probe)"].SystemOut, "PASS*") {
		t.Errorf("partial pass not noted: %q", c2["turn 6 (probe)"].SystemOut)
	}
	if strings.Contains(raw, "BASELINE GATE BYPASSED") {
		t.Error("bypass banner on a run whose gate was not bypassed")
	}
	props := map[string]string{}
	for _, p := range s1.Properties.Property {
		props[p.Name] = p.Value
	}
	if props["vibe-test.verdict"] != record.VerdictNotEnough || props["vibe-test.exit_code"] != "0" || props["vibe-test.shape"] != record.ShapeDecayed {
		t.Errorf("properties: %v", props)
	}
}

func TestGateStop(t *testing.T) {
	c := convRecord(1, record.StatusBaselineFailed, 1, map[int]*judge.Verdict{1: fail("no Bash call at all")})
	c.Error = conversation.GateMessage
	doc, _ := parse(t, newRun(c))
	s := doc.Suites[0]
	cs := cases(t, s)
	if s.Tests != 4 || s.Failures != 1 || s.Skipped != 3 || s.Errors != 0 {
		t.Errorf("counts: %+v", s)
	}
	if f := cs["turn 1 (base)"].Failure; f == nil || !strings.Contains(f.Text, "baseline") {
		t.Errorf("turn 1: %+v", cs["turn 1 (base)"])
	}
	for _, name := range []string{"turn 6 (probe)", "turn 8 (probe)", "turn 10 (probe)"} {
		sk := cs[name].Skipped
		if sk == nil || sk.Message != "stopped at the baseline gate: "+conversation.GateMessage {
			t.Errorf("%s: %+v", name, cs[name])
		}
	}
	if s.SystemErr != conversation.GateMessage {
		t.Errorf("system-err %q", s.SystemErr)
	}
}

func TestJudgeError(t *testing.T) {
	je := &judge.Verdict{Result: judge.JudgeError, Error: "judge answer cites call 9, but the trace has 3 calls", Attempts: 2}
	doc, _ := parse(t, newRun(convRecord(1, record.StatusCompleted, 10, map[int]*judge.Verdict{1: pass(), 6: je, 8: pass(), 10: pass()})))
	s := doc.Suites[0]
	cs := cases(t, s)
	e := cs["turn 6 (probe)"].Error
	if e == nil || e.Type != TypeJudgeError || !strings.Contains(e.Message, "cites call 9") {
		t.Fatalf("turn 6: %+v", cs["turn 6 (probe)"])
	}
	// The turn's error, and the run's own (a judge error leaves it no
	// verdict: exit 3).
	if s.Errors != 1 || s.Failures != 0 || doc.Errors != 2 {
		t.Errorf("counts: suite %+v, testsuites errors %d", s, doc.Errors)
	}
}

// A run that gave no verdict (exit 3) says so in a case of its own, even
// when no judged turn's case can: an error on a filler turn has no case,
// and the probes it stopped are skipped, so the report read 0 failures and
// 0 errors beside exit 3.
func TestRunErrorIsACase(t *testing.T) {
	c := convRecord(1, record.StatusError, 3, map[int]*judge.Verdict{1: pass()})
	c.Turns[2].Status, c.Turns[2].Error = record.TurnError, "API error 529"
	c.Error = "turn 3: API error 529"
	r := newRun(c)
	if r.Outcome.Exit != 3 {
		t.Fatalf("outcome %+v: the test needs a run that gave no verdict", r.Outcome)
	}
	doc, _ := parse(t, r)
	if doc.Errors == 0 {
		t.Fatalf("a run that exits 3 reports 0 errors: %+v", doc)
	}
	last := doc.Suites[len(doc.Suites)-1]
	if last.Name != "run" || len(last.Cases) != 1 || last.Cases[0].Error == nil || last.Cases[0].Error.Type != TypeRunError {
		t.Errorf("no run case with the run's error: %+v", last)
	}
}

func TestBypass(t *testing.T) {
	f := func() *judge.Verdict { return fail("no Bash call at all") }
	r := newRun(convRecord(1, record.StatusCompleted, 10, map[int]*judge.Verdict{1: f(), 6: f(), 8: f(), 10: f()}))
	r.GateBypassed, r.Config.NoBaselineGate = true, true
	verdict.Decide(r)
	doc, raw := parse(t, r)
	if !strings.HasPrefix(raw, xml.Header+"<!-- "+BypassBanner+" -->\n") {
		t.Errorf("banner comment is not right after the XML declaration:\n%s", raw)
	}
	s := doc.Suites[0]
	if s.Failures != 4 {
		t.Errorf("failures %d, want 4", s.Failures)
	}
	if s.Properties == nil || s.Properties.Property[0] != (Property{"vibe-test.warning", BypassBanner}) {
		t.Errorf("first property is not the banner: %+v", s.Properties)
	}
	if !strings.HasPrefix(s.SystemOut, BypassBanner) {
		t.Errorf("suite system-out does not start with the banner: %q", s.SystemOut)
	}
	for _, c := range s.Cases {
		if !strings.HasPrefix(c.SystemOut, BypassBanner) {
			t.Errorf("%s system-out does not start with the banner: %q", c.Name, c.SystemOut)
		}
	}
}

func TestNotRun(t *testing.T) {
	// Turn 8 timed out: the driver keeps it in Abandoned and stops.
	timedOut := convRecord(1, record.StatusError, 7, map[int]*judge.Verdict{1: pass(), 6: pass()})
	timedOut.Abandoned = []record.Turn{{Turn: 8, Kind: "probe", Status: record.TurnTimedOut, Error: "timed out after 10m0s", DurationMS: 600000, Transcript: "conv-1/turn-08.jsonl"}}
	timedOut.Error = "turn 8: timed out after 10m0s"

	// Interrupted during turn 6: not the turn's fault.
	interrupted := convRecord(2, record.StatusInterrupted, 5, map[int]*judge.Verdict{1: pass()})
	interrupted.Abandoned = []record.Turn{{Turn: 6, Kind: "probe", Status: record.TurnError, Error: "stopped before the turn ended"}}
	interrupted.Error = "interrupted"

	budget := convRecord(3, record.StatusBudgetExhausted, 9, map[int]*judge.Verdict{1: pass(), 6: pass(), 8: pass()})
	budget.Error = "budget of $1.00 spent before turn 10"

	// A filler errored: the judged turns after it never ran.
	fillerErr := convRecord(4, record.StatusError, 2, map[int]*judge.Verdict{1: pass()})
	fillerErr.Abandoned = []record.Turn{{Turn: 3, Kind: "filler", Status: record.TurnError, Error: "claude exited 1"}}
	fillerErr.Error = "turn 3: claude exited 1"

	// A probe ran, but the run ended before its verdict arrived.
	unjudged := convRecord(5, record.StatusInterrupted, 6, map[int]*judge.Verdict{1: pass()})
	unjudged.Error = "interrupted"

	doc, _ := parse(t, newRun(timedOut, interrupted, budget, fillerErr, unjudged))

	cs := cases(t, doc.Suites[0])
	if e := cs["turn 8 (probe)"].Error; e == nil || e.Type != record.TurnTimedOut || !strings.Contains(e.Message, "timed out after 10m0s") || cs["turn 8 (probe)"].Time != "600.000" {
		t.Errorf("timed-out turn 8: %+v", cs["turn 8 (probe)"])
	}
	if sk := cs["turn 10 (probe)"].Skipped; sk == nil || !strings.Contains(sk.Message, "stopped on an error (turn 8: timed out") {
		t.Errorf("turn 10 after the timeout: %+v", cs["turn 10 (probe)"])
	}

	cs = cases(t, doc.Suites[1])
	for _, name := range []string{"turn 6 (probe)", "turn 8 (probe)", "turn 10 (probe)"} {
		if sk := cs[name].Skipped; sk == nil || !strings.Contains(sk.Message, "interrupted") {
			t.Errorf("interrupted %s: %+v", name, cs[name])
		}
	}

	cs = cases(t, doc.Suites[2])
	if sk := cs["turn 10 (probe)"].Skipped; sk == nil || !strings.Contains(sk.Message, "budget of $1.00 spent before turn 10") {
		t.Errorf("budget: %+v", cs["turn 10 (probe)"])
	}
	if doc.Suites[2].Skipped != 1 || doc.Suites[2].Failures+doc.Suites[2].Errors != 0 {
		t.Errorf("budget counts: %+v", doc.Suites[2])
	}

	s := doc.Suites[3]
	if s.Skipped != 3 || s.Errors != 0 || !strings.Contains(s.Cases[1].Skipped.Message, "turn 3: claude exited 1") || s.SystemErr != "turn 3: claude exited 1" {
		t.Errorf("filler error: %+v", s)
	}

	cs = cases(t, doc.Suites[4])
	if sk := cs["turn 6 (probe)"].Skipped; sk == nil || !strings.HasPrefix(sk.Message, "ran but was not judged") {
		t.Errorf("unjudged turn 6: %+v", cs["turn 6 (probe)"])
	}
}

// Evidence is quoted from tool output: markup and control bytes must come
// out as well-formed XML.
func TestEscaping(t *testing.T) {
	v := fail(`cat <ledger.log> && echo "x" & ']]> ` + "\x1b[31mred\x1b[0m \x00")
	v.EscapeHatch, v.EscapeReason = true, "said <done> & stopped\nthen left"
	r := newRun(convRecord(1, record.StatusCompleted, 10, map[int]*judge.Verdict{1: pass(), 6: v, 8: pass(), 10: pass()}))
	r.Skill.Name = `a&b<"c">`
	doc, _ := parse(t, r)
	f := doc.Suites[0].Cases[1].Failure
	if f == nil || !strings.Contains(f.Message, `cat <ledger.log> && echo "x" & ']]>`) || !strings.Contains(f.Message, "said <done> & stopped\nthen left") {
		t.Errorf("failure message did not round-trip: %+v", f)
	}
	if doc.Suites[0].Cases[0].Classname != `a&b<"c">.conversation-1` {
		t.Errorf("classname %q", doc.Suites[0].Cases[0].Classname)
	}
	// C1 controls (U+009B is a CSI to some terminals a CI log reaches) and
	// bidirectional overrides (U+202E reverses what follows it) are dropped,
	// as the Markdown summary drops them; they went through whole before.
	v = fail("evidence 31m and ‮liaf")
	r = newRun(convRecord(1, record.StatusCompleted, 10, map[int]*judge.Verdict{1: pass(), 6: v, 8: pass(), 10: pass()}))
	var b strings.Builder
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.ContainsAny(out, "‮") || !strings.Contains(out, "evidence 31m and liaf") {
		t.Errorf("control characters kept, or the text lost:\n%s", out)
	}
}

// An empty run still makes a valid report.
// No conversation: nothing but the run's own error (no verdict, exit 3).
func TestNoConversations(t *testing.T) {
	doc, _ := parse(t, newRun())
	if len(doc.Suites) != 1 || doc.Suites[0].Name != "run" || doc.Tests != 1 || doc.Errors != 1 {
		t.Errorf("%+v", doc)
	}
}

// The schema is strict enough to catch a report that drifts: a case
// without a name, or a suite without counts, is rejected.
func TestSchemaRejects(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		testenv.Missing(t, needXmllint)
		return
	}
	bad := map[string]string{
		"case without name":        `<testsuites><testsuite name="s" tests="1" failures="0" errors="0" time="0"><testcase classname="c" time="0"/></testsuite></testsuites>`,
		"suite without failures":   `<testsuites><testsuite name="s" tests="0" errors="0" time="0"/></testsuites>`,
		"two outcomes in one case": `<testsuites><testsuite name="s" tests="1" failures="1" errors="1" time="0"><testcase name="n" classname="c" time="0"><failure/><error/></testcase></testsuite></testsuites>`,
		"non-numeric time":         `<testsuites><testsuite name="s" tests="0" failures="0" errors="0" time="1s"/></testsuites>`,
		"properties on testsuites": `<testsuites><properties><property name="a" value="b"/></properties></testsuites>`,
	}
	for name, doc := range bad {
		path := filepath.Join(t.TempDir(), "bad.xml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput(); err == nil {
			t.Errorf("%s: accepted by the schema\n%s", name, out)
		}
	}
}

// Write reads only the record: a run.json round trip gives the same report.
func TestFromSavedRecord(t *testing.T) {
	r := decayRun()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back record.Run
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var x, y bytes.Buffer
	if err := Write(&x, r); err != nil {
		t.Fatal(err)
	}
	if err := Write(&y, &back); err != nil {
		t.Fatal(err)
	}
	if x.String() != y.String() {
		t.Errorf("report differs after a run.json round trip:\n%s\n---\n%s", x.String(), y.String())
	}
}

// A suite's report: a <testsuite> per skill, holding every judged turn of
// its conversations and fresh triples, valid against the schema.
func TestWriteSuite(t *testing.T) {
	decay := decayRun()
	held := newRun(convRecord(1, record.StatusCompleted, 10, map[int]*judge.Verdict{1: pass(), 6: pass(), 8: pass(), 10: pass()}))
	held.Skill.Name = "other-skill"
	var b bytes.Buffer
	if err := WriteSuite(&b, []string{"stock-ledger", "other-skill"}, []*record.Run{decay, held}); err != nil {
		t.Fatal(err)
	}
	validate(t, b.Bytes())
	var doc Suites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 2 || doc.Suites[0].Name != "stock-ledger" || doc.Suites[1].Name != "other-skill" {
		t.Fatalf("suites %+v, want one per skill", doc.Suites)
	}
	// stock-ledger: 2 conversations x 4 judged turns + 2 fresh triples x 3 probes.
	if s := doc.Suites[0]; s.Tests != 14 || s.Failures != 2 {
		t.Errorf("stock-ledger: tests=%d failures=%d, want 14 and 2", s.Tests, s.Failures)
	}
	if s := doc.Suites[1]; s.Tests != 7 || s.Failures != 0 {
		t.Errorf("other-skill: tests=%d failures=%d, want 7 and 0", s.Tests, s.Failures)
	}
	if doc.Tests != 21 || doc.Failures != 2 {
		t.Errorf("in all tests=%d failures=%d, want 21 and 2", doc.Tests, doc.Failures)
	}
	if !strings.Contains(b.String(), `name="vibe-test.verdict" value="`+decay.Outcome.Verdict+`"`) {
		t.Errorf("the skill's verdict is not a property:\n%s", b.String())
	}
}

// Two skills of one name in a suite are two suites of JUnit: the second
// is the suite's "-2", its suite and its cases' classnames too. Both took
// the SKILL.md's name, and CI history merged them.
func TestWriteSuiteSkillsOfOneName(t *testing.T) {
	a, b := decayRun(), decayRun()
	var out bytes.Buffer
	if err := WriteSuite(&out, []string{"stock-ledger", "stock-ledger-2"}, []*record.Run{a, b}); err != nil {
		t.Fatal(err)
	}
	validate(t, out.Bytes())
	var doc Suites
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			key := c.Classname + " / " + c.Name
			if seen[key] {
				t.Fatalf("test case %q twice", key)
			}
			seen[key] = true
		}
	}
	if doc.Suites[1].Name != "stock-ledger-2" {
		t.Errorf("second suite %q, want stock-ledger-2", doc.Suites[1].Name)
	}
}

// A retried turn's duration_ms is its last try's: its test case and its
// conversation's suite count every try.
func TestRetriedTurnTimeCountsEveryTry(t *testing.T) {
	c := convRecord(1, record.StatusCompleted, 10, map[int]*judge.Verdict{1: pass(), 6: pass(), 8: pass(), 10: pass()})
	c.Turns[5].Attempts = []record.Attempt{{Transcript: "conv-1/turn-06.jsonl.attempt-1", Status: record.TurnError, DurationMS: 4000}}
	doc, _ := parse(t, newRun(c))
	s := doc.Suites[0]
	if s.Time != "59.000" {
		t.Errorf("suite time %s, want 59.000 (55 s of last tries and the 4 s try before turn 6's)", s.Time)
	}
	if tc := cases(t, s)["turn 6 (probe)"]; tc.Time != "10.000" {
		t.Errorf("turn 6 time %s, want 10.000 (6 s and the 4 s try)", tc.Time)
	}
}

// A codex run's properties name codex: its model was "claude.model" and
// its version was nowhere; claude, which took no part, is not named.
func TestAgentRunNamesItsCLI(t *testing.T) {
	r := decayRun()
	r.Config.Agent, r.Config.JudgeAgent, r.Config.Model = "codex", "codex", "gpt-5.5"
	r.Versions = record.Versions{VibeTest: "0.1.0", Agent: "0.150.0", AgentVerified: "0.171.0"}
	doc, _ := parse(t, r)
	props := map[string]string{}
	for _, p := range doc.Suites[0].Properties.Property {
		props[p.Name] = p.Value
	}
	if props["codex.model"] != "gpt-5.5" || props["codex.version"] != "0.150.0" {
		t.Errorf("codex's properties: %v", props)
	}
	for name := range props {
		if strings.HasPrefix(name, "claude.") {
			t.Errorf("a codex run has property %s", name)
		}
	}
}
