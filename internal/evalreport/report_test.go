package evalreport

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/evalstats"
	"github.com/vibe-test/vibe-test/internal/junit"
	"github.com/vibe-test/vibe-test/internal/testenv"
	"github.com/vibe-test/vibe-test/schema"
)

// Text that only a holdout cell holds: no output an editing agent may
// read can carry it.
const (
	holdoutID      = "secret-h1"
	holdoutMessage = "HOLDOUT-SECRET-MESSAGE"
	holdoutQuote   = "HOLDOUT-SECRET-QUOTE"
	hostile        = `</pre><script>alert(1)</script><img src="https://example.com/x.png">` + "\x1b]0;T\x07\x1b[31m\u009b31m"
)

// writeEval makes an eval folder on disk: an --against eval of six main
// cases and three holdout cases, two repeats, with a stored control and
// two stored base runs, and returns it decided. The candidate fails M1 on
// cases b to e in every repeat (regressions), and case c's message is
// hostile HTML.
func writeEval(t *testing.T) *eval.Result {
	t.Helper()
	dir := t.TempDir()
	rec := &eval.Record{
		SchemaVersion: eval.SchemaVersion, Kind: eval.Kind, Status: eval.StatusCompleted, Mode: eval.ModeAgainst,
		Skill: eval.SkillInfo{Name: "reorder-ruling", Path: "/s/SKILL.md", Hash: "abc123", Lines: 30, Words: 200},
		Cases: eval.SetInfo{Dir: "/c", Goal: "I rule without asking back.", Main: []string{"a", "b", "c", "d", "e", "f"}, Holdout: []string{holdoutID, "secret-h2", "secret-h3"},
			Measures: []eval.MeasureInfo{{ID: "M1", Name: "Right decision", Label: "M1 Right decision"}, {ID: "M2", Name: "True facts", Label: "M2 True facts"}}},
		Config: eval.Config{Repeats: 2, Model: "claude-sonnet-5-5", Effort: "medium", ReaderModel: "claude-sonnet-5-5", GraderModel: "claude-sonnet-5-5",
			Tools: []string{"Read", "Grep", "Glob"}, Deliver: "system-prompt", Against: "v1", Rule: "paired", Alpha: 0.05, Margin: 0.1},
		Runs: []eval.RunInfo{
			{Label: "control", Dir: "baseline/control", Arm: eval.ArmControl, Stored: true},
			{Label: "base 1", Dir: "baseline/base-1", Arm: eval.ArmBase, Stored: true},
			{Label: "base 2", Dir: "baseline/base-2", Arm: eval.ArmBase, Stored: true},
			{Label: "candidate", Dir: "candidate", Arm: eval.ArmCandidate},
		},
	}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, eval.RecordFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	put := func(run eval.RunInfo, id string, holdout bool, rep int, m1, m2 string, msg string) {
		c := eval.Cell{SchemaVersion: 1, Run: run.Label, Case: id, Repeat: rep, Holdout: holdout, Status: eval.CellOK,
			Message: msg, Words: len(strings.Fields(msg)), Reader: &eval.Notes{Decision: "d", FollowUps: []string{}},
			Grades: []eval.Grade{{Measure: "M1", Result: m1, Quote: "q1"}, {Measure: "M2", Result: m2, Quote: "q2"}},
			Costs:  eval.Costs{Generator: 0.01, Reader: 0.002, Grader: 0.003}}
		if holdout {
			c.Grades[0].Quote = holdoutQuote
		}
		if id == "d" {
			c.Grades[1].Quote = longToken
		}
		p := filepath.Join(dir, run.Dir, id, strconv.Itoa(rep)+".json")
		if holdout {
			p = filepath.Join(dir, "holdout", run.Dir, id, strconv.Itoa(rep)+".json")
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(c)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range rec.Runs {
		for rep := 1; rep <= 2; rep++ {
			for _, id := range rec.Cases.Main {
				m1, m2 := "pass", "pass"
				switch {
				case run.Arm == eval.ArmControl:
					m1, m2 = "fail", "fail"
				case run.Arm == eval.ArmCandidate && id >= "b" && id <= "e":
					m1 = "fail"
				}
				msg := "REORDER widgets. data/stock.csv lists 12. Shall I order 20?"
				switch id {
				case "c":
					msg = hostile
				case "d":
					msg = longToken
				}
				put(run, id, false, rep, m1, m2, msg)
			}
			for _, id := range rec.Cases.Holdout {
				put(run, id, true, rep, "pass", "n/a", holdoutMessage)
			}
		}
	}
	res, err := eval.Evaluate(dir, rec)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// outputs renders every output of the eval.
func outputs(t *testing.T, v *View) map[string]string {
	t.Helper()
	out := map[string]string{}
	var b bytes.Buffer
	Summary(&b, v, false)
	out["summary"] = b.String()
	for name, write := range map[string]func(*bytes.Buffer) error{
		"json": func(w *bytes.Buffer) error { return JSON(w, v) }, "markdown": func(w *bytes.Buffer) error { return Markdown(w, v) },
		"junit": func(w *bytes.Buffer) error { return JUnit(w, v) }, "html": func(w *bytes.Buffer) error { return HTML(w, v) },
	} {
		var w bytes.Buffer
		if err := write(&w); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = w.String()
	}
	return out
}

func TestHoldoutStaysAggregate(t *testing.T) {
	v := NewView(writeEval(t))
	for name, text := range outputs(t, v) {
		for _, secret := range []string{holdoutID, "secret-h2", holdoutMessage, holdoutQuote} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %q, a holdout case's own detail", name, secret)
			}
		}
	}
	// The aggregates are there: the holdout's M1 passed in every run.
	if len(v.Holdout) != 3 || v.Holdout[1].Rates[3].Passed != 6 {
		t.Errorf("holdout rows %+v", v.Holdout)
	}
}

func TestSummaryTable(t *testing.T) {
	v := NewView(writeEval(t))
	var b bytes.Buffer
	Summary(&b, v, false)
	s := b.String()
	for _, want := range []string{
		"Main cases (6)", "control", "base 1", "base 2", "candidate",
		"Holdout cases (3, aggregates only)",
		"regressed (passed at least 2/3 of the baseline repeats, failed every candidate repeat): b M1",
		"candidate (stored", // no: the candidate is not stored
	} {
		if want == "candidate (stored" {
			if strings.Contains(s, want) {
				t.Errorf("the candidate is shown as stored:\n%s", s)
			}
			continue
		}
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	// Seed 000's table: a rate and its Wilson interval per run, in order.
	row := regexp.MustCompile(`M1 Right decision +0\.000 \[0\.00, 0\.24\] +1\.000 \[0\.76, 1\.00\] +1\.000 \[0\.76, 1\.00\] +0\.333 \[0\.14, 0\.61\]`)
	if !row.MatchString(s) {
		t.Errorf("no M1 row of control, base 1, base 2 and candidate with intervals:\n%s", s)
	}
	// The intervals say what they are, as report.html does: unlabelled,
	// they read as the decision's own.
	if !strings.Contains(s, "[lo, hi]: the Wilson 95% interval") {
		t.Errorf("the intervals are not named:\n%s", s)
	}
}

func TestJSONValidates(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.EvalSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const id = "https://github.com/vibe-test/vibe-test/schema/eval.schema.json"
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	validate := func(b []byte) error {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return err
		}
		return sch.Validate(inst)
	}
	var b bytes.Buffer
	if err := JSON(&b, NewView(writeEval(t))); err != nil {
		t.Fatal(err)
	}
	if err := validate(b.Bytes()); err != nil {
		t.Fatalf("--json does not validate against eval.schema.json: %v\n%s", err, b.String())
	}
	// --baseline's object, with the instrument, validates too.
	res := writeEval(t)
	res.Record.Mode, res.Record.Config.Against, res.Record.Config.Baseline = eval.ModeBaseline, "", "v1"
	res.Record.Runs = res.Record.Runs[:3]
	res, err = eval.Evaluate(res.Dir, res.Record)
	if err != nil {
		t.Fatal(err)
	}
	var bb bytes.Buffer
	if err := JSON(&bb, NewView(res)); err != nil {
		t.Fatal(err)
	}
	if err := validate(bb.Bytes()); err != nil || res.Instrument == nil || !strings.Contains(bb.String(), `"instrument":{"second"`) {
		t.Fatalf("--baseline's JSON: %v\n%s", err, bb.String())
	}
	// A codex eval judged by gemini: the agents named, the costs estimated.
	res.Record.Agent, res.Record.JudgeAgent, res.Record.CostEstimated = "codex", "gemini", true
	var cb bytes.Buffer
	if err := JSON(&cb, NewView(res)); err != nil {
		t.Fatal(err)
	}
	if err := validate(cb.Bytes()); err != nil || !strings.Contains(cb.String(), `"agent":"codex","judge_agent":"gemini","cost_estimated":true`) {
		t.Fatalf("a codex eval's JSON: %v\n%s", err, cb.String())
	}
	if validate(bytes.Replace(cb.Bytes(), []byte(`"agent":"codex"`), []byte(`"agent":"aider"`), 1)) == nil {
		t.Errorf("an agent vibe-test does not drive validates")
	}
	// The check can fail: an extra field, and a verdict no rule gives.
	for _, broken := range [][]byte{
		bytes.Replace(b.Bytes(), []byte(`"kind":"eval"`), []byte(`"kind":"eval","extra":1`), 1),
		bytes.Replace(b.Bytes(), []byte(`"schema_version":1,`), []byte(`"schema_version":2,`), 1),
	} {
		if bytes.Equal(broken, b.Bytes()) {
			t.Fatal("nothing to break")
		}
		if validate(broken) == nil {
			t.Errorf("a broken document validates: the schema check cannot fail")
		}
	}
}

// On a --grid each point's cases have a name of their own: every point's
// were eval.main / Total, one test to a CI server.
func TestJUnitGridPointsApart(t *testing.T) {
	res := writeEval(t)
	second := *res.Comparisons[0]
	cand := *second.Candidate
	cand.Info.Label = "candidate effort=high"
	second.Candidate = &cand
	res.Comparisons = append(res.Comparisons, &second)
	var b bytes.Buffer
	if err := JUnit(&b, NewView(res)); err != nil {
		t.Fatal(err)
	}
	var doc junit.Suites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if key := c.Classname + " / " + c.Name; seen[key] {
				t.Errorf("test case %q in two grid points", key)
			} else {
				seen[key] = true
			}
		}
	}
}

// On a --grid the grid's cells are coloured by the last point: a cell
// is "regressed" only when that point regressed there, and its title names
// every point that did. The points' regressions were merged, so a cell
// whose last point passed every repeat was coloured regressed.
func TestHTMLGridColoursByTheLastPoint(t *testing.T) {
	res := writeEval(t)
	if len(res.Comparisons) != 1 || len(res.Comparisons[0].Regressions) == 0 {
		t.Fatalf("the fixture's candidate has no regression to test with")
	}
	// A second point that passes as the first base run did, last.
	passing := *res.Bases()[0]
	passing.Info.Label, passing.Info.Arm, passing.Info.Stored = "candidate effort=high", eval.ArmCandidate, false
	res.Runs = append(res.Runs, &passing)
	second := *res.Comparisons[0]
	second.Candidate, second.Regressions = &passing, nil
	res.Comparisons = append(res.Comparisons, &second)
	r := res.Comparisons[0].Regressions[0]
	gridRows, _ := grid(NewView(res))
	for _, row := range gridRows {
		if row.Case != r.Case {
			continue
		}
		for i, m := range res.Record.Cases.Measures {
			if m.ID != r.Measure {
				continue
			}
			c := row.Cells[i]
			if c.Class == "g-regressed" || !strings.Contains(c.Title, "regressed: candidate") {
				t.Errorf("case %s %s: class %s, title %q; want the last point's colour and the first point's regression named", r.Case, m.ID, c.Class, c.Title)
			}
		}
	}
}

func TestJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := JUnit(&b, NewView(writeEval(t))); err != nil {
		t.Fatal(err)
	}
	var doc junit.Suites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 2 {
		t.Fatalf("%d suites, expected the candidate's main and holdout:\n%s", len(doc.Suites), b.String())
	}
	var names []string
	for _, c := range doc.Suites[0].Cases {
		names = append(names, fmt.Sprintf("%s:%v", c.Name, c.Failure != nil))
	}
	got := strings.Join(names, ", ")
	if !strings.Contains(got, "Total:") || !strings.Contains(got, "M1 Right decision:") || !strings.Contains(got, "b M1 Right decision regressed:true") {
		t.Errorf("main suite cases: %s", got)
	}
	if n := len(doc.Suites[1].Cases); n != 3 {
		t.Errorf("holdout suite: %d cases, expected one per measure and the total", n)
	}
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		testenv.Missing(t, "xmllint is not installed (apt-get install -y libxml2-utils)")
	}
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("..", "junit", "testdata", "junit.xsd"), path).CombinedOutput(); err != nil {
		t.Fatalf("the JUnit report does not validate: %v\n%s", err, out)
	}
}

// longToken is a message with a word wider than any page: a URL, a
// base64 blob.
var longToken = "See https://example.com/" + strings.Repeat("a", 3000) + " for the ledger."

// report.html stays as wide as its window with every case opened, though a
// message and a quote hold a 3,000-character word: the page was 25,480
// pixels wide.
func TestHTMLWrapsLongWords(t *testing.T) {
	if _, err := os.Stat(testenv.ChromiumPath); err != nil {
		testenv.Missing(t, fmt.Sprintf("%s is missing (apt-get install -y chromium)", testenv.ChromiumPath))
	}
	page := filepath.Join(t.TempDir(), "report.html")
	var b bytes.Buffer
	if err := HTML(&b, NewView(writeEval(t))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	browser := testenv.StartBrowser(t, t.TempDir())
	tab := browser.Load(t, "file://"+page, 1280, 800)
	defer tab.Close()
	// The page's width, and the narrowest header of a case's grades table
	// (whose quote is the long word): wrapping every cell anywhere had
	// squeezed "measure" and "grade" to two characters a line.
	tab.Run(t, `document.querySelectorAll("details").forEach(d => d.open = true);
const heads = [...document.querySelectorAll("th")].filter(th => th.textContent === "measure" || th.textContent === "grade");
document.documentElement.setAttribute("data-width", document.documentElement.scrollWidth);
document.documentElement.setAttribute("data-head", Math.min(...heads.map(th => th.offsetWidth)))`)
	dom := tab.DOM(t)
	m := regexp.MustCompile(`data-width="(\d+)"`).FindStringSubmatch(dom)
	h := regexp.MustCompile(`data-head="(\d+)"`).FindStringSubmatch(dom)
	if m == nil || h == nil {
		t.Fatal("the page was not measured")
	}
	if w, _ := strconv.Atoi(m[1]); w > 1280 {
		t.Errorf("report.html is %d pixels wide in a 1280-pixel window", w)
	}
	if w, _ := strconv.Atoi(h[1]); w < 40 {
		t.Errorf("a grades table's header is squeezed to %d pixels", w)
	}
}

func TestHTMLOfflineAndEscaped(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, NewView(writeEval(t))); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(strings.ToLower(s), "<script") || strings.Contains(s, `src="http`) || strings.Contains(s, "<img") {
		t.Errorf("report.html runs or loads something (a message must be escaped)")
	}
	if !strings.Contains(s, "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the hostile message is not shown escaped")
	}
	// Its control characters are dropped, as on the terminal and in
	// chart.html: escaped for HTML, they went through.
	if strings.ContainsAny(s, "\x1b\x07\u009b") {
		t.Errorf("report.html keeps control characters")
	}
	for _, want := range []string{`<a href="#case-a">a</a>`, `<a href="#case-b">b</a>`, "g-regressed", "M1 Right decision"} {
		if !strings.Contains(s, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// The Markdown report's first line begins "## vibe-test eval: ", by which
// vibe-test knows the file for its own (app's ownOutput): escaped, it read
// "## vibe\\-test eval\\: ", and `vibe-test eval ./skill --markdown
// skill/eval.md` run twice refused the second time (exit 3).
func TestMarkdownTitleUnescaped(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, NewView(writeEval(t))); err != nil {
		t.Fatal(err)
	}
	if line, _, _ := strings.Cut(b.String(), "\n"); !strings.HasPrefix(line, "## vibe-test eval: ") {
		t.Errorf("first line %q", line)
	}
}

func TestMarkdownEscapes(t *testing.T) {
	if got := md("a|b <i>*x*</i>"); got != `a\|b &lt;i&gt;\*x\*&lt;/i&gt;` {
		t.Errorf("md = %q", got)
	}
	// A URL in a case set's goal is no autolink (the run summary's
	// escaping, mdtext.Escape).
	if got := md("see https://evil.example"); got != `see https\://evil\.example` {
		t.Errorf("md = %q", got)
	}
}

// Under the seed rule the decision shows each measure's margin (it has no
// p-values) and its measured false-reject rate in the sentence.
func TestSeedRuleShowsMargins(t *testing.T) {
	res := writeEval(t)
	res.Record.Config.Rule = "seed"
	res, err := eval.Evaluate(res.Dir, res.Record)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	Summary(&b, NewView(res), false)
	s := b.String()
	if !strings.Contains(s, "by seed 000's margins (--rule seed)") || !regexp.MustCompile(`main: \S+ +base +candidate +drop +margin`).MatchString(s) || strings.Contains(s, "p (adjusted)") {
		t.Errorf("seed rule summary:\n%s", s)
	}
	if res.Comparisons[0].Main.Rule != "seed" {
		t.Errorf("rule %q", res.Comparisons[0].Main.Rule)
	}
	// Its JSON has no bound and no p-values (the rule's fields hold 0,
	// which would read as p = 0): null, as the schema allows.
	var j bytes.Buffer
	if err := JSON(&j, NewView(res)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"upper":null,"p":null,"adjusted":null`) || strings.Contains(j.String(), `"p":0,`) {
		t.Errorf("the seed rule's JSON shows a bound or p-values:\n%s", j.String())
	}
}

// A measure compared on fewer than 3 cases is not tested: its p of 1 is
// the rule's, shown as "-", not as a test's result.
func TestUntestedMeasureShowsNoP(t *testing.T) {
	d := evalstats.Decision{Rule: evalstats.RulePaired}
	for _, tc := range []struct {
		cases int
		want  string
	}{{2, "-"}, {3, "1"}} {
		m := evalstats.Measure{Cases: tc.cases, Upper: 0.394, P: 1, Adjusted: 1}
		if _, p := boundCols(d, m); p != tc.want {
			t.Errorf("%d cases: p column %q, want %q", tc.cases, p, tc.want)
		}
	}
}

// A measure the paired rule compared on no case has no drop, and on fewer
// than 2 no bound: "-" and null, not the zeros the rule left in them (an
// upper bound of +0.000 under a drop of +1.000 for a measure of one case).
func TestUncomparedMeasureShowsNoFigure(t *testing.T) {
	d := evalstats.Decision{Rule: evalstats.RulePaired, Measures: []evalstats.Measure{
		{Name: "M2", Cases: 1, Drop: 1, P: 1, Adjusted: 1},
		{Name: "M3", Cases: 0, P: 1, Adjusted: 1},
		{Name: "M4", Cases: 2, Drop: 0.1, Upper: 0.394, P: 1, Adjusted: 1},
	}}
	want := []struct{ drop, upper string }{{"+1.000", "-"}, {"-", "-"}, {"+0.100", "+0.394"}}
	for i, m := range d.Measures {
		if got, up := dropCol(d, m), first(boundCols(d, m)); got != want[i].drop || up != want[i].upper {
			t.Errorf("%s: drop %q upper %q, want %q %q", m.Name, got, up, want[i].drop, want[i].upper)
		}
	}
	doc := docDecision(&View{}, d)
	b, err := json.Marshal(doc.Measures)
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{`"measure":"M2","label":"M2"`, `"drop":1,"upper":null`, `"measure":"M3"`, `"drop":null,"upper":null`, `"drop":0.1,"upper":0.394`} {
		if !strings.Contains(string(b), frag) {
			t.Errorf("JSON lacks %s:\n%s", frag, b)
		}
	}
}

func first(a, _ string) string { return a }

// A measure the paired rule could not have found worse (fewer than 3
// cases graded on both sides) is "untested" in the terminal's and the
// Markdown's last column, not "ok": a holdout of two cases whose M1 went
// from 1.000 to 0.000 read "ok".
func TestUntestedMeasureIsNotOK(t *testing.T) {
	d := evalstats.Decision{Rule: evalstats.RulePaired, Measures: []evalstats.Measure{
		{Name: "M1", Cases: 2, Drop: 1, Upper: 1, P: 1, Adjusted: 1},
		{Name: "M2", Cases: 3, P: 1, Adjusted: 1},
		{Name: "M3", Cases: 8, Drop: 0.5, Reject: true},
	}}
	for _, tc := range []struct{ worse, m1, m2, m3 string }{{"WORSE", "untested", "ok", "WORSE"}, {"**worse**", "untested", "ok", "**worse**"}} {
		got := []string{measureStatus(d, d.Measures[0], tc.worse), measureStatus(d, d.Measures[1], tc.worse), measureStatus(d, d.Measures[2], tc.worse)}
		if want := []string{tc.m1, tc.m2, tc.m3}; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("statuses %q, want %q", got, want)
		}
	}
	var b strings.Builder
	measures(&b, &View{}, "holdout", d)
	if !strings.Contains(b.String(), "untested") {
		t.Errorf("the table does not say M1 went untested:\n%s", b.String())
	}
}

// Where cases have different numbers of graded measures, the total's
// pooled base and candidate do not subtract to the drop (the mean of the
// per-case drops): the table says which is which, and only then.
func TestPooledRatesAgainstThePairedDrop(t *testing.T) {
	v := &View{}
	rate := func(p, g int) evalstats.Rate {
		return evalstats.Rate{Passed: p, Graded: g, Rate: float64(p) / float64(g)}
	}
	for _, c := range []struct {
		drop float64
		note bool
	}{{0.417, true}, {0.4, false}} {
		d := evalstats.Decision{Rule: evalstats.RulePaired, Verdict: evalstats.Reject, Measures: []evalstats.Measure{
			{Name: "total", Cases: 6, Base: rate(15, 15), Candidate: rate(9, 15), Drop: c.drop},
		}}
		var b strings.Builder
		measures(&b, v, "main", d)
		if got := strings.Contains(b.String(), "pooled over the cases"); got != c.note {
			t.Errorf("drop %.3f against 1.000 - 0.600: note %v, want %v\n%s", c.drop, got, c.note, b.String())
		}
		// JUnit's failure says which figure is which: "0.600 against
		// 1.000" read as a drop of 0.4 beside the system-out's 0.417.
		d.Measures[0].Reject = true
		s := compareSuite(v, &eval.Comparison{Main: d, Candidate: &eval.RunData{Info: eval.RunInfo{Label: "candidate"}}}, false, false)
		want := fmt.Sprintf("total: the candidate does worse (0.600 against 1.000 pooled; mean per-case drop %+.3f)", c.drop)
		if f := s.Cases[0].Failure; f == nil || f.Message != want {
			t.Errorf("JUnit failure %+v, want %q", f, want)
		}
		// And Markdown's table, as the terminal's does.
		res := writeEval(t)
		res.Comparisons = []*eval.Comparison{{Main: d, Candidate: &eval.RunData{Info: eval.RunInfo{Label: "candidate"}}, Verdict: d.Verdict}}
		var m bytes.Buffer
		if err := Markdown(&m, NewView(res)); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(m.String(), md("Base and candidate: graded measures passed, pooled over the cases; drop: the mean of the per-case drops over the cases")); got != c.note {
			t.Errorf("drop %.3f: Markdown note %v, want %v\n%s", c.drop, got, c.note, m.String())
		}
	}
}
