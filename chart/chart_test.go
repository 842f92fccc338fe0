package chart

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// echartsSHA256 is the pinned checksum of echarts@5.6.0's
// dist/echarts.common.min.js, the same as in scripts/fetch-echarts.sh.
const echartsSHA256 = "55974cf42cc160e6cf9099cd3ed8cdedfaa9779919fcee7e2272c85f6ca30e27"

// fetchHint is what a developer or CI has to run when the asset is missing.
const fetchHint = "run scripts/fetch-echarts.sh (make build runs it) to put echarts@5.6.0 in chart/assets/echarts.min.js"

// hostile is text a skill, a transcript or the judge could produce.
const hostile = `<script>alert("x")</script>`

// run is the shape of a real run: two conversations, the second one with
// fewer recorded turns, an escape hatch, a judge error, fillers without
// results and a probe that did not run.
func run(bypassed bool) Data {
	return Data{
		Title:        "capabilities-health — decay over 10 turns",
		Subtitle:     "2 conversations · model claude-sonnet-5-5",
		GateBypassed: bypassed,
		Conversations: []Conversation{
			{Label: "conv 1", Turns: []Point{
				{Turn: 1, Kind: "base", Result: "pass", ContextTokens: 31012, ToolCalls: 14},
				{Turn: 2, Kind: "filler", ContextTokens: 32650, ToolCalls: 0},
				{Turn: 3, Kind: "filler", ContextTokens: 33900},
				{Turn: 4, Kind: "filler", ContextTokens: 35120},
				{Turn: 5, Kind: "filler", ContextTokens: 36300},
				{Turn: 6, Kind: "probe", Result: "fail", Escape: true, EscapeReason: "answered from memory with zero tool calls",
					ContextTokens: 37050, ToolCalls: 0, FailedCriteria: []string{"c1: runs capabilities-health.py before any analysis", "c4: appends one line to the decision log"}},
				{Turn: 7, Kind: "filler", ContextTokens: 38200},
				{Turn: 8, Kind: "probe", Result: "judge-error", ContextTokens: 39010, ToolCalls: 1},
				{Turn: 9, Kind: "filler", ContextTokens: 39700},
				{Turn: 10, Kind: "probe", Result: "pass", ContextTokens: 40120, ToolCalls: 9},
			}},
			{Label: "conv 2", Turns: []Point{
				{Turn: 1, Kind: "base", Result: "pass", ContextTokens: 38000, ToolCalls: 12},
				{Turn: 6, Kind: "probe", Result: "fail", ContextTokens: 45500, ToolCalls: 3, FailedCriteria: []string{"c4: appends one line to the decision log"}},
				{Turn: 8, Kind: "probe", Result: "fail", ContextTokens: 50100, ToolCalls: 2, FailedCriteria: []string{"c4: appends one line to the decision log"}},
				{Turn: 10, Kind: "probe", Result: ""}, // not run
			}},
		},
	}
}

// plantHostile puts hostile text in every field that takes text.
func plantHostile(d Data) Data {
	d.Title = hostile + " title"
	d.Subtitle = hostile + " subtitle"
	d.Conversations[0].Label = hostile
	p := &d.Conversations[0].Turns[5] // turn 6: fail + escape
	p.FailedCriteria = []string{"c1: " + hostile, "c2: </script><script>alert(1)</script>", "c3: {a} {@x} __f__ & ' \""}
	p.EscapeReason = hostile
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
			golden := filepath.Join("testdata", tt.name+".golden.json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./chart/ -update to create it)", err)
			}
			if !bytes.Equal(append(got, '\n'), want) {
				t.Errorf("OptionJSON differs from %s (run go test ./chart/ -update and review the diff):\n%s", golden, got)
			}
		})
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
	for _, bad := range []string{hostile, "<script>alert", "</script><script>", "__f__"} {
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
		"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",                   // label, escape reason, criterion c1
		"c2: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;",          // criterion c2
		"c3: &#123;a&#125; &#123;@x&#125; __f__ &amp; &#39; &#34;",          // criterion c3
		"escape hatch:</b> &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", // escape reason
	} {
		if !strings.Contains(tip, want) {
			t.Errorf("turn 6 tooltip lacks %q:\n%s", want, tip)
		}
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
		if os.Getenv("CI") == "true" {
			t.Fatalf("chart/assets/echarts.min.js is not embedded: %s", fetchHint)
		}
		t.Skipf("chart/assets/echarts.min.js is absent: %s", fetchHint)
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
	const want = `chart.html needs the echarts script built into vibe-test: run "make build" (it fetches echarts@5.6.0 from npm and embeds it)`
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
		var buf bytes.Buffer
		if err := Render(&buf, run(false)); err == nil || buf.Len() != 0 {
			t.Errorf("script %q: Render = %v after %d bytes, want an error and nothing written", script, err, buf.Len())
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
			YAxisIndex int
			Data       []struct{ Value [2]float64 }
			MarkPoint  struct {
				Data []struct {
					Name  string
					Coord [2]float64
				}
			}
		}
	}
	if err := json.Unmarshal(option, &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Series) != 2 {
		t.Fatalf("got %d series, want a result and a context series", len(o.Series))
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
