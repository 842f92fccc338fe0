package chart

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// echartsSHA256 is the pinned checksum of echarts@5.6.0's
// dist/echarts.common.min.js, the same as in scripts/fetch-echarts.sh.
const echartsSHA256 = "55974cf42cc160e6cf9099cd3ed8cdedfaa9779919fcee7e2272c85f6ca30e27"

// fetchHint is what a developer or CI has to run when the asset is missing.
const fetchHint = "run scripts/fetch-echarts.sh (make build runs it) to put echarts@5.6.0 in chart/assets/echarts.min.js"

// hostile is text a skill, a transcript or the judge could produce.
const hostile = `<script>alert("x")</script>`

// run is the shape of a real run: two conversations, the second one with
// fewer recorded turns, an escape hatch, a judge error, fillers without
// results and a probe that did not run; with the facts, rubric, statistics,
// criteria and tool calls the report below the chart shows.
func run(bypassed bool) Data {
	c1 := CriterionResult{ID: "c1", Kind: "must", Text: "runs capabilities-health.py before any analysis", Result: "pass", Source: "check",
		Evidence: "call 1 (Bash) matches /capabilities-health\\.py/", Call: 1}
	c2 := CriterionResult{ID: "c2", Kind: "must", Text: "reads the whole report before answering", Result: "pass", Source: "judge", Evidence: "call 2 reads report.md", Call: 2}
	c3 := CriterionResult{ID: "c3", Kind: "should", Text: "quotes the numbers it used", Result: "pass", Source: "judge", Evidence: "the answer cites call 1's table", Call: 1}
	c4 := CriterionResult{ID: "c4", Kind: "must", Text: "appends one line to the decision log", Result: "pass", Source: "judge", Evidence: "call 3 appends to decisions.log", Call: 3}
	failed := func(c CriterionResult, evidence string) CriterionResult {
		c.Result, c.Evidence, c.Call = "fail", evidence, 0
		return c
	}
	held := []CriterionResult{c1, c2, c3, c4}
	calls := []ToolCall{
		{Name: "Bash", Input: `{"command":"python3 scripts/capabilities-health.py"}`, Result: "component  status\nauth       ok\nbilling    degraded"},
		{Name: "Read", Input: `{"file_path":"/tmp/repo-x1/report.md"}`, Result: "# Report\n…"},
		{Name: "Bash", Input: `{"command":"echo '2026-11-30 billing degraded' >> decisions.log"}`, Result: "", IsError: false},
	}
	c1overridden := c1
	c1overridden.JudgeResult = "fail"
	return Data{
		Title:        "capabilities-health — decay over 10 turns",
		Subtitle:     "2 conversations · model claude-sonnet-5-5",
		GateBypassed: bypassed,
		Facts: &Facts{
			SkillName: "capabilities-health", SkillPath: "skills/capabilities-health/SKILL.md",
			SkillHash: "4b0e7c2a9d11f00d5e6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a",
			Model:     "claude-sonnet-5-5", VibeTestVersion: "v0.4.0",
			CLIs:      []CLIFact{{Name: "claude", Version: "2.1.330", Verified: "2.1.328", Mismatch: true}},
			Isolation: "hermetic", Conversations: 2, Status: "completed",
			Verdict: "not-enough-evidence", Sentence: "Not enough evidence: no decay shown (diluted 1/4 probes passed in conversations whose baseline passed, fresh 5/6), but this run was too small to reliably catch any drop, even a collapse.", ExitCode: 0,
			Notes:      []string{"Left out of the diluted arm: 2 probes (not run)."},
			Costs:      Costs{Agent: 0.6123, Rubric: 0.0412, Plan: 0.0187, Judge: 0.0265, Total: 0.6987},
			StartedAt:  time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC),
			FinishedAt: time.Date(2026, 11, 30, 10, 31, 12, 0, time.UTC),
		},
		Rubric: []Criterion{
			{ID: "c1", Kind: "must", Text: "runs capabilities-health.py before any analysis", Check: &Check{Tool: "Bash", Pattern: `capabilities-health\.py`, Expect: "present"}},
			{ID: "c2", Kind: "must", Text: "reads the whole report before answering"},
			{ID: "c3", Kind: "should", Text: "quotes the numbers it used"},
			{ID: "c4", Kind: "must", Text: "appends one line to the decision log"},
		},
		Stats: &Stats{
			PerTurn: []TurnRate{
				{Turn: 1, Population: "all conversations", Passes: 2, N: 2, Lo: 0.3424, Hi: 1},
				{Turn: 6, Population: "conversations whose baseline passed", Passes: 0, N: 2, Lo: 0, Hi: 0.6576},
				{Turn: 8, Population: "conversations whose baseline passed", Passes: 0, N: 1, Lo: 0, Hi: 0.7935},
				{Turn: 10, Population: "conversations whose baseline passed", Passes: 1, N: 1, Lo: 0.2065, Hi: 1},
			},
			Fresh: []TurnRate{
				{Turn: 6, Population: "fresh sessions", Passes: 2, N: 2, Lo: 0.3424, Hi: 1},
				{Turn: 8, Population: "fresh sessions", Passes: 2, N: 2, Lo: 0.3424, Hi: 1},
				{Turn: 10, Population: "fresh sessions", Passes: 1, N: 2, Lo: 0.0945, Hi: 0.9055},
			},
			DilutedPopulation: "conversations whose baseline passed", DilutedMean: 0.1667, FreshMean: 0.8333,
			DilutedUnits: 2, FreshUnits: 2, Testable: true, Drop: 0.6667, P: 0.06,
			EffectiveTurn: 1, Alpha: 0.05,
			CheckAgreed: 4, CheckTotal: 5,
		},
		Conversations: []Conversation{
			{Label: "conv 1", Status: "completed", Shape: "decayed", Turns: []Point{
				{Turn: 1, Kind: "base", Result: "pass", ContextTokens: 31012, ToolCalls: 14, Status: "ok",
					Task: "Which components are degraded right now?", Criteria: held, Calls: calls},
				{Turn: 2, Kind: "filler", ContextTokens: 32650, ToolCalls: 0},
				{Turn: 3, Kind: "filler", ContextTokens: 33900},
				{Turn: 4, Kind: "filler", ContextTokens: 35120},
				{Turn: 5, Kind: "filler", ContextTokens: 36300},
				{Turn: 6, Kind: "probe", Result: "fail", Escape: true, EscapeReason: "answered from memory with zero tool calls",
					ContextTokens: 37050, ToolCalls: 0, FailedCriteria: []string{"c1: runs capabilities-health.py before any analysis", "c4: appends one line to the decision log"},
					Status: "ok", Task: "Quick one: is billing still degraded?",
					Criteria: []CriterionResult{failed(c1, "no Bash call matches /capabilities-health\\.py/"), failed(c2, "no Read call"), failed(c3, "no numbers quoted"), failed(c4, "no call appends to decisions.log")}},
				{Turn: 7, Kind: "filler", ContextTokens: 38200},
				{Turn: 8, Kind: "probe", Result: "judge-error", ContextTokens: 39010, ToolCalls: 1, Status: "ok",
					VerdictError: "judge answer cites call 4, but the trace has 1 calls", Calls: calls[:1]},
				{Turn: 9, Kind: "filler", ContextTokens: 39700},
				{Turn: 10, Kind: "probe", Result: "pass", ContextTokens: 40120, ToolCalls: 9, Status: "ok", Criteria: []CriterionResult{c1overridden, c2, c3, c4}, Calls: calls},
			}},
			{Label: "conv 2", Status: "error", Error: "turn 10: timed out after 10m0s", Turns: []Point{
				{Turn: 1, Kind: "base", Result: "pass", ContextTokens: 38000, ToolCalls: 12, Status: "ok", Criteria: held, Calls: calls},
				{Turn: 6, Kind: "probe", Result: "fail", ContextTokens: 45500, ToolCalls: 3, FailedCriteria: []string{"c4: appends one line to the decision log"},
					Status: "ok", Criteria: []CriterionResult{c1, c2, c3, failed(c4, "no call appends to decisions.log")}, Calls: calls[:2]},
				{Turn: 8, Kind: "probe", Result: "fail", ContextTokens: 50100, ToolCalls: 2, FailedCriteria: []string{"c4: appends one line to the decision log"}},
				{Turn: 10, Kind: "probe", Result: ""}, // not run
			}},
		},
	}
}

// payload is the script the brief plants everywhere run text goes.
const payload = "<script>alert(1)</script>"

// plantHostile puts hostile text in every field that takes text.
func plantHostile(d Data) Data {
	d.Title = hostile + " title"
	d.Subtitle = hostile + " subtitle"
	d.Conversations[0].Label = hostile
	d.Conversations[1].Error = "</script>" + hostile
	p := &d.Conversations[0].Turns[5] // turn 6: fail + escape
	p.FailedCriteria = []string{"c1: " + hostile, "c2: </script><script>alert(1)</script>", "c3: {a} {@x} __f__ & ' \""}
	p.EscapeReason = hostile
	p.Task = hostile + " task"
	p.Criteria = []CriterionResult{
		{ID: "c1", Kind: "must", Text: hostile, Result: "fail", Source: "check", Evidence: "no Bash call matches /" + payload + "/"},
		{ID: "c2", Kind: "must", Text: "</script><script>alert(1)</script>", Result: "fail", Source: "judge", Evidence: payload, Call: 1},
		{ID: "c3", Kind: "should", Text: "{a} {@x} __f__ & ' \"", Result: "fail", Source: "judge", Evidence: "</script> ends here"},
		{ID: "c4", Kind: "must", Text: "passes", Result: "pass", Source: "judge", Evidence: payload + " </script>"},
	}
	p.Calls = []ToolCall{
		{Name: "Bash" + payload, Input: `{"command":"echo '` + payload + `' </script>"}`, Result: "</script>" + payload, IsError: true},
	}
	d.Facts.SkillName = payload + "</script>"
	d.Facts.SkillPath = "skills/" + payload + "/SKILL.md"
	d.Facts.Notes = append(d.Facts.Notes, hostile)
	d.Facts.AgentTools = []string{"Bash", "Bash(" + payload + ":*)"}
	d.Rubric[1].Text = "</script>" + payload
	d.Rubric[0].Check.Pattern = payload
	return d
}

// withScript sets the embedded script for the duration of a test. Tests
// that use it must not run in parallel: echartsScript is package state.
func withScript(t *testing.T, script []byte) {
	t.Helper()
	saved := echartsScript
	echartsScript = script
	t.Cleanup(func() { echartsScript = saved })
}

// stubScript stands in for echarts where only the page around it matters.
var stubScript = []byte("/* echarts stub */ var echarts = {init: function () { return {setOption: function () {}} }};")

func renderPageT(t *testing.T, d Data) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, d); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return buf.String()
}

// pageOption extracts the option JSON from a rendered page.
func pageOption(t *testing.T, page string) []byte {
	t.Helper()
	m := regexp.MustCompile(`(?s)let option_decay = (.*?)\n\s*goecharts_decay\.setOption`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no option in page:\n%s", page)
	}
	return []byte(m[1])
}

func TestOptionGolden(t *testing.T) {
	tests := []struct {
		name string
		data Data
	}{
		{"decay", run(false)},
		{"gate-bypassed", run(true)},
		{"one-conversation", Data{Title: "skill — decay over 10 turns", Conversations: run(false).Conversations[:1]}},
		{"empty", Data{}},
		{"long-run", Data{Conversations: []Conversation{{Label: "conv 1", Turns: []Point{
			{Turn: 1, Kind: "base", Result: "pass", ContextTokens: 1000},
			{Turn: 12, Kind: "probe", Result: "fail", ContextTokens: 90000},
		}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := OptionJSON(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got) {
				t.Fatalf("OptionJSON is not valid JSON:\n%s", got)
			}
			checkGolden(t, filepath.Join("testdata", tt.name+".golden.json"), got)
		})
	}
}

// checkGolden compares an option with its golden file, which ends in a
// newline (go test -update writes it).
func checkGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	testenv.Golden(t, golden, append(got, '\n'))
}

// TestReportGolden pins the report below the chart, the HTML a reader reads
// without JavaScript.
func TestReportGolden(t *testing.T) {
	tests := []struct {
		name string
		data Data
	}{
		{"decay", run(false)},
		{"gate-bypassed", run(true)},
		{"empty", Data{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReportHTML(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			testenv.Golden(t, filepath.Join("testdata", tt.name+".report.golden.html"), got)
		})
	}
}

// TestReportSections checks what the report holds for a full run, and that
// the banner is there exactly when the gate was bypassed.
func TestReportSections(t *testing.T) {
	for _, bypassed := range []bool{false, true} {
		b, err := ReportHTML(run(bypassed))
		if err != nil {
			t.Fatal(err)
		}
		report := string(b)
		for _, want := range []string{
			`<table class="facts">`, `<table class="rubric">`, `<table class="per-turn">`, `Diluted against fresh: the exit code's test`,
			`<table class="overview">`, `<table class="criteria">`, `<details class="trace">`,
			`<tr><th>content hash</th><td><code title="4b0e7c2a9d11f00d5e6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a">4b0e7c2a9d11</code></td></tr>`,
			`warning: differs from the version the parser was verified on (2.1.328)`,
			`$0.6987 <span class="muted">(agent $0.6123, rubric $0.0412, plan $0.0187, judge $0.0265)</span>`,
			`<td class="num">2 / 2</td><td class="num">100%</td><td class="num">34% – 100%</td>`,
			`<tr><td class="num">6</td><td>fresh</td><td>fresh sessions</td><td class="num">2 / 2</td>`,
			`diluted: 2 units, pass rate 17%; fresh: 2 units, pass rate 83%`,
			`effective turn: <b>1</b>`,
			`deterministic check <span class="muted">(the model said fail)</span>`,
			`<summary>trace: 3 tool calls</summary>`,
			`Not run: turn 10.`,
		} {
			if !strings.Contains(report, want) {
				t.Errorf("bypassed=%v: the report lacks %q", bypassed, want)
			}
		}
		banner := `<p class="banner" id="bypass-banner" role="alert">BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve.</p>`
		if got := strings.Contains(report, banner); got != bypassed {
			t.Errorf("bypassed=%v: banner shown = %v", bypassed, got)
		}
		if !bypassed && strings.Contains(report, "BYPASSED") {
			t.Error("the report mentions the bypass of a run that did not bypass the gate")
		}
	}
}

// TestNoScript checks what a reader without JavaScript gets: the chart's
// empty box hidden, and a line saying the report does not need it.
func TestNoScript(t *testing.T) {
	withScript(t, stubScript)
	page := renderPageT(t, run(false))
	head := page[:strings.Index(page, "</head>")]
	if !strings.Contains(head, `<noscript><style>.container{display:none !important}</style></noscript>`) {
		t.Error("the head does not hide the chart's box without JavaScript")
	}
	body := page[strings.Index(page, "<body>"):]
	if !strings.Contains(body, `<noscript><p class="muted">The chart needs JavaScript; this report does not.</p></noscript>`) {
		t.Error("the report does not say it works without JavaScript")
	}
	// The report comes after the chart, inside the body.
	chartAt, reportAt, endAt := strings.Index(body, `id="decay"`), strings.Index(body, `<div class="report"`), strings.LastIndex(body, "</body>")
	if !(chartAt >= 0 && chartAt < reportAt && reportAt < endAt) {
		t.Errorf("chart at %d, report at %d, </body> at %d: want them in that order", chartAt, reportAt, endAt)
	}
}

// TestOptionStable guards the golden files' premise: the same data gives
// the same bytes (go-echarts picks a random chart id unless told).
func TestOptionStable(t *testing.T) {
	a, _ := OptionJSON(run(true))
	b, _ := OptionJSON(run(true))
	if !bytes.Equal(a, b) {
		t.Fatal("OptionJSON differs between two calls on the same data")
	}
	withScript(t, stubScript)
	if renderPageT(t, run(true)) != renderPageT(t, run(true)) {
		t.Fatal("Render differs between two calls on the same data")
	}
}

func TestStamp(t *testing.T) {
	withScript(t, stubScript)
	for _, bypassed := range []bool{false, true} {
		option, err := OptionJSON(run(bypassed))
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			Graphic []struct {
				Type  string
				Style struct{ Text, Fill string }
			}
		}
		if err := json.Unmarshal(option, &o); err != nil {
			t.Fatal(err)
		}
		page := renderPageT(t, run(bypassed))
		if !bypassed {
			if len(o.Graphic) != 0 || strings.Contains(string(option), "BYPASSED") || strings.Contains(page, "BYPASSED") {
				t.Errorf("GateBypassed=false: the stamp is drawn; graphic = %+v", o.Graphic)
			}
			continue
		}
		if len(o.Graphic) != 1 {
			t.Fatalf("GateBypassed=true: graphic = %+v, want one stamp", o.Graphic)
		}
		g := o.Graphic[0]
		const want = "BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve."
		if g.Type != "text" || g.Style.Text != want || g.Style.Fill != stampColor {
			t.Errorf("stamp = %+v, want red text %q", g, want)
		}
		if !strings.Contains(page, want) {
			t.Error("the page does not carry the stamp text")
		}
	}
}

func TestEscaping(t *testing.T) {
	withScript(t, stubScript)
	d := plantHostile(run(true))
	page := renderPageT(t, d)

	// The page holds exactly the two script elements it should: echarts and
	// the chart's own. Anything more is text that broke out.
	for _, bad := range []string{hostile, payload, "<script>alert", "</script><script>", "__f__", "</script> ends", "' </script>"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	if n := strings.Count(strings.ToLower(page), "<script"); n != 2 {
		t.Errorf("page has %d <script elements, want 2", n)
	}
	if n := strings.Count(strings.ToLower(page), "</script"); n != 2 {
		t.Errorf("page has %d </script, want 2", n)
	}
	if !strings.Contains(page, "<title>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; title</title>") {
		t.Errorf("page title is not escaped text:\n%s", page[:min(len(page), 400)])
	}

	// The report below the chart shows every planted text as text.
	report := page[strings.Index(page, `<div class="report"`):]
	for what, want := range map[string]string{
		"skill name":         `<tr><th>skill</th><td>&lt;script&gt;alert(1)&lt;/script&gt;&lt;/script&gt;</td></tr>`,
		"skill path":         `<code>skills/&lt;script&gt;alert(1)&lt;/script&gt;/SKILL.md</code>`,
		"rubric text":        `<td>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td>`,
		"rubric check":       `input <code>/&lt;script&gt;alert(1)&lt;/script&gt;/</code>`,
		"evidence":           `<td>no Bash call matches /&lt;script&gt;alert(1)&lt;/script&gt;/</td>`,
		"evidence 2":         `<td>&lt;/script&gt; ends here</td>`,
		"tool name":          `<code>Bash&lt;script&gt;alert(1)&lt;/script&gt;</code>`,
		"tool input":         `<pre>{&#34;command&#34;:&#34;echo &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39; &lt;/script&gt;&#34;}</pre>`,
		"tool result":        `<span class="flag">error</span> <pre>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</pre>`,
		"task":               `task: &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; task`,
		"note":               `<li>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</li>`,
		"label":              `<a href="#conv-1">&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</a>`,
		"braces":             `&#123;a&#125;`,
		"__f__":              `&#95;_f__`,
		"conversation error": `<p class="warn">&lt;/script&gt;&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</p>`,
	} {
		if what == "braces" {
			// The report is not a template: braces stay braces.
			want = `{a} {@x} &#95;_f__ &amp; &#39; &#34;`
		}
		if !strings.Contains(report, want) {
			t.Errorf("the report does not show the %s as text: no %q", what, want)
		}
	}

	// The option in the page is the one OptionJSON returns, intact: the
	// "__f__" in a criterion did not cut a string open.
	inPage := pageOption(t, page)
	option, err := OptionJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(inPage, option) {
		t.Errorf("the option in the page differs from OptionJSON:\npage: %s\nwant: %s", inPage, option)
	}

	var o struct {
		Title  struct{ Text, Subtext string }
		Series []struct {
			Name string
			Data []struct {
				Value   [2]float64
				Tooltip struct{ Formatter string }
			}
			MarkPoint struct {
				Data []struct {
					Name    string
					Tooltip struct{ Formatter string }
				}
			}
		}
	}
	if err := json.Unmarshal(inPage, &o); err != nil {
		t.Fatalf("the option in the page is not JSON: %v\n%s", err, inPage)
	}
	// Titles and series names are drawn as SVG text, not HTML: they keep
	// the original text, and JSON escaping alone keeps them in the script.
	if o.Title.Text != d.Title || o.Title.Subtext != d.Subtitle {
		t.Errorf("title = %+v, want the original text", o.Title)
	}
	if o.Series[0].Name != hostile+" result" {
		t.Errorf("series name = %q", o.Series[0].Name)
	}
	// Tooltips are HTML: the text must arrive escaped, braces included.
	var tip string
	for _, p := range o.Series[0].Data {
		if p.Value[0] == 6+round3(-0.5*dodgeStep) {
			tip = p.Tooltip.Formatter
		}
	}
	for _, want := range []string{
		"<b>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; · turn 6",                         // label
		"escape hatch:</b> &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",                   // escape reason
		"• c1: &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",                               // criterion c1
		"(deterministic check): no Bash call matches /&lt;script&gt;alert(1)&lt;/script&gt;/", // its evidence
		"• c2: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;",                          // criterion c2
		"(model judge, call 1): &lt;script&gt;alert(1)&lt;/script&gt;",                        // its evidence
		"• c3 (should): &#123;a&#125; &#123;@x&#125; __f__ &amp; &#39; &#34;",                 // criterion c3
		"(model judge): &lt;/script&gt; ends here",                                            // its evidence
	} {
		if !strings.Contains(tip, want) {
			t.Errorf("turn 6 tooltip lacks %q:\n%s", want, tip)
		}
	}
	if strings.Contains(tip, "c4") {
		t.Errorf("turn 6 tooltip lists c4, which passed:\n%s", tip)
	}
	for _, m := range o.Series[0].MarkPoint.Data {
		if strings.Contains(m.Tooltip.Formatter, "<script") || strings.Contains(m.Tooltip.Formatter, "{a}") {
			t.Errorf("mark %q tooltip is not escaped: %s", m.Name, m.Tooltip.Formatter)
		}
	}
}

// TestFuncMarker checks the other way go-echarts' page template can be
// broken: it deletes "__f__" everywhere in the page to unquote functions.
func TestFuncMarker(t *testing.T) {
	withScript(t, stubScript)
	for _, label := range []string{"x__f__", "__f__f__", `a"__f__`, `\__f__`, "___f___"} {
		d := run(false)
		d.Conversations[1].Label = label
		page := renderPageT(t, d)
		var o struct{ Series []struct{ Name string } }
		if err := json.Unmarshal(pageOption(t, page), &o); err != nil {
			t.Fatalf("label %q: the option in the page is not JSON: %v", label, err)
		}
		if got := o.Series[2].Name; got != label+" result" {
			t.Errorf("label %q: series name in page = %q", label, got)
		}
	}
	// The page's <title>, which go-echarts' template writes: "stock__f__ledger"
	// was titled "stockledger".
	d := run(false)
	d.Title = `stock__f__ledger <b> — decay over 10 turns`
	if page := renderPageT(t, d); !strings.Contains(page, "<title>stock__f__ledger &lt;b&gt; — decay over 10 turns</title>") {
		t.Errorf("the page's title is not the run's: %s", regexp.MustCompile(`<title>.*</title>`).FindString(page))
	}
}

// remoteRef matches an attribute that would load something from a host.
var remoteRef = regexp.MustCompile(`(?i)\b(src|href)\s*=\s*["']?\s*(https?:)?//`)

func TestNoRemoteURLs(t *testing.T) {
	scripts := map[string][]byte{"stub": stubScript}
	if HasScript() {
		scripts["echarts"] = echartsScript
	}
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			withScript(t, script)
			d := run(true)
			d.Title = `<img src="https://example.com/x.png"> title`
			page := renderPageT(t, d)
			if m := remoteRef.FindString(page); m != "" {
				t.Errorf("page references a remote URL: %q", m)
			}
			if strings.Contains(page, "go-echarts.github.io") || strings.Contains(page, "cdn") {
				t.Error("page mentions go-echarts' assets host")
			}
		})
	}
}

// TestRenderInlinesScript renders with the real embedded echarts. CI must
// have it; a developer who has not run the fetch script gets a skip.
func TestRenderInlinesScript(t *testing.T) {
	if !HasScript() {
		testenv.Missing(t, fmt.Sprintf("chart/assets/echarts.min.js is absent: %s", fetchHint))
	}
	sum := sha256.Sum256(echartsScript)
	if got := hex.EncodeToString(sum[:]); got != echartsSHA256 {
		t.Fatalf("embedded echarts sha256 = %s, want %s: %s", got, echartsSHA256, fetchHint)
	}
	page := renderPageT(t, run(false))
	if !strings.Contains(page, "<script>"+string(echartsScript)+"</script>") {
		t.Error("the page does not inline the echarts script")
	}
	if !strings.Contains(page, `echarts.init(document.getElementById('decay')`) {
		t.Error("the page does not initialise the chart")
	}
}

func TestErrNoScript(t *testing.T) {
	withScript(t, nil)
	if HasScript() {
		t.Fatal("HasScript() = true with no script")
	}
	var buf bytes.Buffer
	err := Render(&buf, run(false))
	if !errors.Is(err, ErrNoScript) {
		t.Fatalf("Render = %v, want ErrNoScript", err)
	}
	if buf.Len() != 0 {
		t.Errorf("Render wrote %d bytes without a script", buf.Len())
	}
	const want = `chart.html needs the echarts script built into vibe-test, which a go install build lacks: download a release archive (https://github.com/vibe-test/vibe-test/releases) or run "make build" in a clone (it fetches echarts@5.6.0 from npm and embeds it)`
	if err.Error() != want {
		t.Errorf("ErrNoScript = %q, want %q", err, want)
	}
	// OptionJSON needs no script: the golden tests run without the asset.
	if _, err := OptionJSON(run(false)); err != nil {
		t.Errorf("OptionJSON without a script: %v", err)
	}
}

func TestScriptNotInlineable(t *testing.T) {
	for _, script := range []string{"var s = '</SCRIPT>';", "x = 1 <!-- 2"} {
		withScript(t, []byte(script))
		// Twice: the check's answer is remembered for the script.
		for range 2 {
			var buf bytes.Buffer
			if err := Render(&buf, run(false)); err == nil || buf.Len() != 0 {
				t.Errorf("script %q: Render = %v after %d bytes, want an error and nothing written", script, err, buf.Len())
			}
		}
		// Another script is checked afresh.
		withScript(t, slices.Clone(stubScript))
		if err := Render(io.Discard, run(false)); err != nil {
			t.Errorf("after %q, a good script: %v", script, err)
		}
	}
}

func TestInvalidData(t *testing.T) {
	tests := []struct {
		name  string
		turns []Point
		want  string
	}{
		{"unknown result", []Point{{Turn: 6, Kind: "probe", Result: "passed"}}, `unknown result "passed"`},
		{"unknown kind", []Point{{Turn: 6, Kind: "judge"}}, `unknown kind "judge"`},
		{"turn zero", []Point{{Turn: 0, Kind: "base"}}, "turn must be 1 or more"},
		{"duplicate turn", []Point{{Turn: 6, Kind: "probe"}, {Turn: 6, Kind: "probe"}}, "has turn 6 twice"},
		{"result of a turn never reached", []Point{{Turn: 40, Result: "fail"}}, "a turn never reached (no kind) has a result"},
		{"numbered filler", []Point{{Turn: 4, Kind: "filler", Probe: 2}}, `probe number 2 on a turn of kind "filler"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OptionJSON(Data{Conversations: []Conversation{{Label: "conv 1", Turns: tt.turns}}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("OptionJSON = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestWhatIsPlotted checks the rules a reader relies on: only judged
// pass/fail turns are points on the result line, judge errors are marks
// and never 0 or 1, escapes are pins at the point, context skips unknowns.
func TestWhatIsPlotted(t *testing.T) {
	option, err := OptionJSON(Data{Conversations: []Conversation{{Label: "conv 1", Turns: []Point{
		{Turn: 1, Kind: "base", Result: "fail", ContextTokens: 100},
		{Turn: 2, Kind: "filler", Result: "pass", ContextTokens: 200}, // fillers are never judged
		{Turn: 3, Kind: "filler"},                                     // tokens unknown
		{Turn: 6, Kind: "probe", Result: "judge-error", Escape: true, ContextTokens: 600},
		{Turn: 8, Kind: "probe", Result: "pass", Escape: true, ContextTokens: 800},
		{Turn: 10, Kind: "probe"}, // not run
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Series []struct {
			Name       string
			YAxisIndex int
			Data       []struct{ Value [2]float64 }
			MarkPoint  struct {
				Data []struct {
					Name  string
					Coord [2]float64
				}
			}
			MarkArea struct {
				Data [][2]struct {
					Name  string
					XAxis float64
				}
			}
		}
	}
	if err := json.Unmarshal(option, &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Series) != 3 {
		t.Fatalf("got %d series, want a result, a context and a filler series", len(o.Series))
	}
	var results [][2]float64
	for _, p := range o.Series[0].Data {
		results = append(results, p.Value)
	}
	if want := [][2]float64{{1, 0}, {8, 1}}; !equalPoints(results, want) {
		t.Errorf("result points = %v, want %v", results, want)
	}
	var marks []string
	for _, m := range o.Series[0].MarkPoint.Data {
		marks = append(marks, fmt.Sprintf("%s@%g,%g", m.Name, m.Coord[0], m.Coord[1]))
	}
	if want := []string{"judge error@6,0.5", "escape@6,0.5", "escape@8,1"}; strings.Join(marks, " ") != strings.Join(want, " ") {
		t.Errorf("marks = %v, want %v", marks, want)
	}
	if o.Series[1].YAxisIndex != 1 {
		t.Errorf("context series on y axis %d, want 1", o.Series[1].YAxisIndex)
	}
	var tokens [][2]float64
	for _, p := range o.Series[1].Data {
		tokens = append(tokens, p.Value)
	}
	if want := [][2]float64{{1, 100}, {2, 200}, {6, 600}, {8, 800}}; !equalPoints(tokens, want) {
		t.Errorf("context points = %v, want %v", tokens, want)
	}
	// Fillers 2 and 3 are one shaded area, from half a turn before to half
	// a turn after; the series has no points of its own.
	f := o.Series[2]
	if f.Name != "filler turns" || len(f.Data) != 0 {
		t.Errorf("third series = %q with %d points, want the filler shading with none", f.Name, len(f.Data))
	}
	var areas []string
	for _, a := range f.MarkArea.Data {
		areas = append(areas, fmt.Sprintf("%s %g-%g", a[0].Name, a[0].XAxis, a[1].XAxis))
	}
	if want := "fillers 1.5-3.5"; strings.Join(areas, ", ") != want {
		t.Errorf("filler areas = %v, want %s", areas, want)
	}
}

// TestFillerShading checks the protocol's schedule: turns 2-5, 7 and 9
// are shaded, each run of fillers as one area.
func TestFillerShading(t *testing.T) {
	option, err := OptionJSON(run(false))
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Series []struct {
			Name     string
			MarkArea struct {
				Silent bool
				Data   [][2]struct{ XAxis float64 }
			}
		}
	}
	if err := json.Unmarshal(option, &o); err != nil {
		t.Fatal(err)
	}
	last := o.Series[len(o.Series)-1]
	if last.Name != "filler turns" || !last.MarkArea.Silent {
		t.Fatalf("last series = %+v, want the silent filler shading", last)
	}
	var got [][2]float64
	for _, a := range last.MarkArea.Data {
		got = append(got, [2]float64{a[0].XAxis, a[1].XAxis})
	}
	if want := [][2]float64{{1.5, 5.5}, {6.5, 7.5}, {8.5, 9.5}}; !equalPoints(got, want) {
		t.Errorf("filler areas = %v, want %v", got, want)
	}
}

// TestPassRate checks the pass rate across conversations: drawn only at
// turns more than one conversation reached, with its Wilson interval as
// error bars, and not at all for a single conversation.
func TestPassRate(t *testing.T) {
	type series struct {
		Name string
		Data []struct {
			Value   [2]float64
			Tooltip struct{ Formatter string }
		}
		MarkLine struct {
			Silent bool
			Data   [][2]struct{ Coord [2]float64 }
		}
	}
	rateOf := func(d Data, name string) *series {
		t.Helper()
		option, err := OptionJSON(d)
		if err != nil {
			t.Fatal(err)
		}
		var o struct{ Series []series }
		if err := json.Unmarshal(option, &o); err != nil {
			t.Fatal(err)
		}
		for i := range o.Series {
			if o.Series[i].Name == name {
				return &o.Series[i]
			}
		}
		return nil
	}

	// Beside the fresh rates, the diluted ones sit just left of the turn.
	if s := rateOf(run(false), "fresh pass rate (same probe, new session)"); s == nil || len(s.Data) != 3 || s.Data[0].Value != [2]float64{6.12, 1} || s.Data[2].Value != [2]float64{10.12, 0.5} {
		t.Errorf("fresh rate series: %+v", s)
	}
	if s := rateOf(run(false), "diluted pass rate"); s == nil || s.Data[1].Value != [2]float64{5.88, 0} {
		t.Errorf("diluted rate series beside the fresh one: %+v", s)
	}
	noFresh := run(false)
	noFresh.Stats.Fresh = nil
	s := rateOf(noFresh, "diluted pass rate")
	if s == nil {
		t.Fatal("no pass rate series for a run of two conversations")
	}
	var points [][2]float64
	for _, p := range s.Data {
		points = append(points, p.Value)
	}
	// Turns 8 and 10 were judged in one conversation only.
	if want := [][2]float64{{1, 1}, {6, 0}}; !equalPoints(points, want) {
		t.Errorf("pass rate points = %v, want %v", points, want)
	}
	if tip := s.Data[0].Tooltip.Formatter; !strings.Contains(tip, "2 of 2 passed (all conversations): 100%") || !strings.Contains(tip, "Wilson 95% interval: 34% – 100%") {
		t.Errorf("turn 1 pass rate tooltip = %q", tip)
	}
	if !s.MarkLine.Silent {
		t.Error("the error bars are not silent")
	}
	var bars []string
	for _, l := range s.MarkLine.Data {
		bars = append(bars, fmt.Sprintf("%g,%g-%g,%g", l[0].Coord[0], l[0].Coord[1], l[1].Coord[0], l[1].Coord[1]))
	}
	want := []string{
		"1,0.342-1,1", "0.94,0.342-1.06,0.342", "0.94,1-1.06,1", // turn 1: bar and caps
		"6,0-6,0.658", "5.94,0-6.06,0", "5.94,0.658-6.06,0.658", // turn 6
	}
	if strings.Join(bars, " ") != strings.Join(want, " ") {
		t.Errorf("error bars = %v, want %v", bars, want)
	}

	// One conversation: its own points are the rate, no series of it.
	single := Data{Conversations: run(false).Conversations[:1], Stats: &Stats{PerTurn: []TurnRate{{Turn: 1, Passes: 1, N: 1, Lo: 0.2065, Hi: 1}}}}
	if s := rateOf(single, "diluted pass rate"); s != nil {
		t.Errorf("a pass rate is drawn for one conversation: %+v", s)
	}
}

func TestInvalidRates(t *testing.T) {
	for _, tt := range []struct {
		rate TurnRate
		want string
	}{
		{TurnRate{Turn: 0, N: 2}, "turn must be 1 or more"},
		{TurnRate{Turn: 6, Passes: 3, N: 2, Hi: 1}, "3 passes of 2"},
		{TurnRate{Turn: 6, Passes: 1, N: 2, Lo: 0.6, Hi: 0.9}, "outside its interval"},
		{TurnRate{Turn: 6, Passes: 1, N: 2, Lo: 0.1, Hi: 1.2}, "not inside [0, 1]"},
	} {
		_, err := OptionJSON(Data{Stats: &Stats{PerTurn: []TurnRate{tt.rate}}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("rate %+v: OptionJSON = %v, want an error containing %q", tt.rate, err, tt.want)
		}
	}
}

func equalPoints(a, b [][2]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 31012: "31,012", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestUncertain: a turn whose repeated judgements disagreed is neither a
// pass nor a fail, so it is a mark, like a judge error, and never a point.
func TestUncertain(t *testing.T) {
	option, err := OptionJSON(Data{Conversations: []Conversation{{Label: "conv 1", Turns: []Point{
		{Turn: 1, Kind: "base", Result: "pass"},
		{Turn: 6, Kind: "probe", Result: "uncertain", VerdictError: "the judge's repeated verdicts disagree"},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Series []struct {
			Data      []struct{ Value [2]float64 }
			MarkPoint struct {
				Data []struct {
					Name    string
					Coord   [2]float64
					Tooltip struct{ Formatter string }
				}
			}
		}
	}
	if err := json.Unmarshal(option, &o); err != nil {
		t.Fatal(err)
	}
	if n := len(o.Series[0].Data); n != 1 {
		t.Errorf("%d result points, want only the pass at turn 1", n)
	}
	marks := o.Series[0].MarkPoint.Data
	if len(marks) != 1 || marks[0].Name != "uncertain" || marks[0].Coord != [2]float64{6, 0.5} || !strings.Contains(marks[0].Tooltip.Formatter, "uncertain</b> (repeated judgements disagree; not scored)") {
		t.Errorf("marks = %+v, want one uncertain mark at turn 6, halfway", marks)
	}
	report, err := ReportHTML(Data{Conversations: []Conversation{{Label: "conv 1", Turns: []Point{
		{Turn: 6, Kind: "probe", Result: "uncertain", Status: "ok", VerdictError: "the judge's repeated verdicts disagree"},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<td class="r-uncertain"><a href="#conv-1-turn-6">UNCERTAIN</a></td>`, `uncertain (neither pass nor fail): the judge&#39;s repeated verdicts disagree`} {
		if !strings.Contains(string(report), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// A part that cost nothing had no call (the config held the tasks, the
// rubric came from the cache): it is left out, not shown as a free call.
func TestCostsBreakdown(t *testing.T) {
	usd := func(x float64) string { return fmt.Sprintf("$%.2f", x) }
	for _, tc := range []struct {
		c    Costs
		want string
	}{
		{Costs{Agent: 1, Rubric: 0.5, Plan: 0.25, Judge: 0.125}, "agent $1.00, rubric $0.50, plan $0.25, judge $0.12"},
		{Costs{Agent: 1, Judge: 0.5}, "agent $1.00, judge $0.50"},
		{Costs{}, "agent $0.00"},
	} {
		if got := tc.c.Breakdown(usd); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

// Control characters from run.json's text (an ESC sequence in a skill's
// name, a criterion, evidence) are dropped from the page, as the terminal
// drops them: the templates escaped the markup and let ESC through.
func TestControlCharactersDropped(t *testing.T) {
	withScript(t, stubScript)
	d := run(true)
	d.Facts.SkillName = "stock\x1b[31mRED\x1b[0m"
	d.Conversations[0].Turns[5].Criteria = []CriterionResult{{ID: "c1", Kind: "must", Text: "text\x1b]0;PWNED\x07", Result: "fail", Source: "judge", Evidence: "ev\u009bidence\u202e"}}
	page := renderPageT(t, d)
	if strings.ContainsAny(page, "\x1b\x07\u009b\u202e") || !strings.Contains(page, "stock[31mRED[0m") || !strings.Contains(page, "evidence") {
		t.Errorf("control characters reached chart.html, or the text was lost")
	}
}

// The plot keeps its height however many conversations the legend lists,
// on the turn chart and on the context chart: fixed at 600 pixels, they
// gave it 110 pixels at 40 conversations and none from about 53, the legend
// over the title. Past maxLegendRows the legend pages instead of growing.
func TestPlotKeepsItsHeight(t *testing.T) {
	plotOf := func(line *charts.Line) (plot, height int) {
		t.Helper()
		height, err := strconv.Atoi(strings.TrimSuffix(line.Initialization.Height, "px"))
		if err != nil {
			t.Fatalf("height %q", line.Initialization.Height)
		}
		opt, err := optionJSON(line)
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			Grid []struct{ Top, Bottom string } `json:"grid"`
		}
		if err := json.Unmarshal(opt, &o); err != nil || len(o.Grid) != 1 {
			t.Fatalf("grid %v (%v)", o.Grid, err)
		}
		top, _ := strconv.Atoi(o.Grid[0].Top)
		bottom, _ := strconv.Atoi(o.Grid[0].Bottom)
		return height - top - bottom, height
	}
	many := func(base Data, n int) Data {
		d := base
		d.Conversations = nil
		for i := range n {
			c := base.Conversations[i%len(base.Conversations)]
			c.Label = fmt.Sprintf("conv %d", i+1)
			d.Conversations = append(d.Conversations, c)
		}
		return d
	}
	for _, n := range []int{1, 10, 23, 40, 60, 200} {
		line, err := build(many(run(false), n))
		if err != nil {
			t.Fatal(err)
		}
		if plot, height := plotOf(line); plot < 400 || height > chartHeight+legendRowHeight*(maxLegendRows-1) {
			t.Errorf("%d conversations: a %d-pixel plot in a %d-pixel turn chart", n, plot, height)
		}
		context, err := buildContext(many(contextRun(), n))
		if err != nil || context == nil {
			t.Fatalf("%d conversations: no context chart (%v)", n, err)
		}
		if plot, height := plotOf(context); plot < 300 || height > chartHeight+legendRowHeight*(maxLegendRows-1) {
			t.Errorf("%d conversations: a %d-pixel plot in a %d-pixel context chart", n, plot, height)
		}
	}
}
