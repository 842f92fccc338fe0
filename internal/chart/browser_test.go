//go:build linux

package chart

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// reportTables are the report's tables and disclosures, as a DOM dump
// serialises them.
var reportTables = []string{
	`<table class="facts">`, `<table class="rubric">`, `<table class="per-turn">`, `Diluted against fresh: the exit code`,
	`<table class="overview">`, `<table class="criteria">`, `<details class="trace">`,
}

// TestBrowser opens rendered chart.html pages in headless Chromium, with no
// network, and checks what a reader gets: the chart is drawn (SVG in the
// chart's div, with its title, pass rate, filler shading and marks), the
// stamp and the banner show when the gate was bypassed and not otherwise,
// the report's tables are there (with JavaScript too, and without it), a
// tooltip shows hostile text as text, and no planted payload runs. It
// keeps a screenshot, chart.png, in $VIBE_TEST_ARTIFACTS (default: a
// temporary folder) and logs its path.
func TestBrowser(t *testing.T) {
	if _, err := os.Stat(testenv.ChromiumPath); err != nil {
		testenv.Missing(t, fmt.Sprintf("%s is missing (apt-get install -y chromium)", testenv.ChromiumPath))
	}
	if !HasScript() {
		testenv.Missing(t, fmt.Sprintf("chart/assets/echarts.min.js is absent: %s", fetchHint))
	}
	artifacts := os.Getenv("VIBE_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}

	// One Chromium opens every page, each in its own tab; they run side
	// by side. Nothing here changes package state.
	browser := testenv.StartBrowser(t, t.TempDir())
	t.Run("bypassed-hostile", func(t *testing.T) {
		t.Parallel()
		d := plantHostile(run(true))
		// A payload that runs when inserted as HTML; a <script> inserted
		// with innerHTML never runs, so it alone would prove nothing.
		p := &d.Conversations[0].Turns[5]
		p.FailedCriteria = append(p.FailedCriteria, `c9: <img src=x onerror="alert(9)">`)
		p.Criteria = append(p.Criteria, CriterionResult{ID: "c9", Kind: "must", Text: `<img src=x onerror="alert(9)">`, Result: "fail", Source: "judge", Evidence: `<img src=x onerror="alert(10)">`})
		p.Calls[0].Result += `<img src=x onerror="alert(11)">`
		d.Facts.SkillName += `<img src=x onerror="alert(12)">`
		// Conv 1's turn 6 is data index 1 of series 0 (turns 1, 6, 10 are
		// its judged points); its tooltip carries every planted criterion.
		dom := openPage(t, browser, d, artifacts, `{type: "showTip", seriesIndex: 0, dataIndex: 1}`, "chart-bypassed-tooltip.png", "chart-bypassed.png")

		if regexp.MustCompile(`<html[^>]*data-alerted`).MatchString(dom) {
			t.Error("a planted payload ran: alert was called")
		}
		checkDrawn(t, dom)
		for what, want := range map[string]string{
			"title":  `&lt;script&gt;alert("x")&lt;/script&gt; title</text>`,
			"stamp":  ">BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve.</text>",
			"banner": `<p class="banner" id="bypass-banner" role="alert">BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve.</p>`,
		} {
			if !strings.Contains(dom, want) {
				t.Errorf("the %s is not shown: no %q in the DOM", what, want)
			}
		}
		// In a DOM dump, text is serialised with < as &lt;, elements are
		// not: the tooltip and the report must hold the planted markup as
		// text.
		for _, want := range []string{
			`escape hatch:</b> &lt;script&gt;alert("x")&lt;/script&gt;<br>`,
			`• c1: &lt;script&gt;alert("x")&lt;/script&gt;<br>`,
			`evidence (model judge, call 1): &lt;script&gt;alert(1)&lt;/script&gt;</span>`,
			`• c2: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;<br>`,
			`• c3 (should): {a} {@x} __f__ &amp; ' "<br>`,
			`• c9: &lt;img src=x onerror="alert(9)"&gt;`,
			`evidence (model judge): &lt;img src=x onerror="alert(10)"&gt;</span>`,
			`<tr><th>skill</th><td>&lt;script&gt;alert(1)&lt;/script&gt;&lt;/script&gt;&lt;img src=x onerror="alert(12)"&gt;</td></tr>`,
			`<pre>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror="alert(11)"&gt;</pre>`,
			`<td>no Bash call matches /&lt;script&gt;alert(1)&lt;/script&gt;/</td>`,
		} {
			if !strings.Contains(dom, want) {
				t.Errorf("the page does not show %q as text; DOM:\n%s", want, testenv.Tail(dom, 3000))
			}
		}
		// The echarts script itself holds '<img src="'; a planted one as an
		// element would serialise as below.
		if strings.Contains(dom, `<img src="x"`) {
			t.Error("a planted <img> became an element")
		}
	})

	t.Run("not-bypassed", func(t *testing.T) {
		t.Parallel()
		// The tooltip of conv 1's turn 6: failed criteria with their
		// evidence. chart.png is the page as it opens, without it.
		dom := openPage(t, browser, run(false), artifacts, `{type: "showTip", seriesIndex: 0, dataIndex: 1}`, "chart-tooltip.png", "chart.png")
		checkDrawn(t, dom)
		if strings.Contains(dom, "BYPASSED") {
			t.Error("the stamp or the banner is shown for a run that did not bypass the gate")
		}
		if !strings.Contains(dom, `evidence (deterministic check): no Bash call matches /capabilities-health\.py/</span>`) {
			t.Errorf("the tooltip does not show the failed criterion's evidence; DOM:\n%s", testenv.Tail(dom, 3000))
		}
	})

	t.Run("by-context", func(t *testing.T) {
		t.Parallel()
		// A run diluted to context sizes, 50 turns long, with compactions:
		// both charts draw, with no error on the console, and the context
		// chart's compaction tooltip shows hostile text as text.
		d := hostileContext(contextRun())
		for i, p := range d.Conversations[2].Turns {
			if p.Compaction != "" {
				d.Conversations[2].Turns[i].Compaction = `<img src=x onerror="alert(13)">`
			}
		}
		var page bytes.Buffer
		if err := Render(&page, d); err != nil {
			t.Fatal(err)
		}
		// Before anything runs: alerts, errors and console errors leave
		// a mark in the DOM. After the charts: the tooltip of conv 3's
		// compaction, the compaction series' second point.
		html := strings.Replace(page.String(), "<head>", `<head><script>
window.alert = function () { document.documentElement.setAttribute("data-alerted", "yes") };
window.addEventListener("error", function (e) { document.documentElement.setAttribute("data-page-error", String(e.message)) });
console.error = function () { document.documentElement.setAttribute("data-console-error", Array.prototype.join.call(arguments, " ")) };
</script>`, 1) + `<script>
var c = echarts.getInstanceByDom(document.getElementById("context"));
var s = c.getOption().series.findIndex(function (s) { return s.name === "` + compactionArrowName + `" });
c.dispatchAction({type: "showTip", seriesIndex: s, dataIndex: 1});
</script>`
		dir := t.TempDir()
		file := filepath.Join(dir, "chart.html")
		if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		dom := dumpAndShoot(t, browser, file, filepath.Join(artifacts, "chart-by-context.png"), 1100, 1500)

		// The <html> element's start tag, where the marks go.
		root := dom[strings.Index(dom, "<html"):]
		root = root[:strings.Index(root, ">")]
		for _, mark := range []string{"data-alerted", "data-page-error", "data-console-error"} {
			if strings.Contains(root, mark) {
				t.Errorf("the page left %s: %s", mark, root)
			}
		}
		turns, context := testenv.ChartSVG(dom), contextSVG(dom)
		if turns == "" || context == "" {
			t.Fatalf("turn chart drawn: %v, context chart drawn: %v; DOM:\n%s", turns != "", context != "", testenv.Tail(dom, 3000))
		}
		for what, want := range map[string]string{
			"turn 50's label":   ">50</text>",
			"compaction label":  ">compacted</text>",
			"compaction legend": ">" + compactionName + "</text>",
		} {
			if !strings.Contains(turns, want) {
				t.Errorf("the turn chart lacks the %s: no %q", what, want)
			}
		}
		if paths := strings.Count(context, "<path"); paths < 30 {
			t.Errorf("the context chart is nearly empty: %d paths", paths)
		}
		for what, want := range map[string]string{
			"title":             ">" + contextTitle + "</text>",
			"axis name":         ">context (tokens)</text>",
			"axis label":        ">60k</text>",
			"probe name":        ">probe 2</text>",
			"baseline name":     ">baseline</text>",
			"fresh legend":      ">" + freshName + "</text>",
			"compaction legend": ">" + compactionArrowName + "</text>",
			"schedule":          `&lt;script&gt;alert("x")&lt;/script&gt; schedule</text>`,
		} {
			if !strings.Contains(context, want) {
				t.Errorf("the context chart lacks the %s: no %q", what, want)
			}
		}
		for _, want := range []string{
			`<b>conv 3 · compaction before turn`,
			`&lt;img src=x onerror="alert(13)"&gt;`,
		} {
			if !strings.Contains(dom, want) {
				t.Errorf("the compaction's tooltip does not show %q as text; DOM:\n%s", want, testenv.Tail(dom, 3000))
			}
		}
		if strings.Contains(dom, `<img src="x"`) {
			t.Error("a planted <img> became an element")
		}
	})

	t.Run("suite-page", func(t *testing.T) {
		t.Parallel()
		// index.html in its suite folder, beside the skills' run folders:
		// it opens offline, shows every skill with hostile text as text, the
		// bypass banner, and links each skill's chart.html relatively.
		dir := t.TempDir()
		s := suiteFixture()
		for _, e := range s.Skills {
			if err := os.MkdirAll(filepath.Join(dir, e.RunDir), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		page := strings.Replace(renderSuite(t, s), "<head>",
			`<head><script>window.alert = function () { document.documentElement.setAttribute("data-alerted", "yes") }</script>`, 1)
		file := filepath.Join(dir, SuitePageName)
		if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		dom := browser.Open(t, "file://"+file, 0, 0, "")
		if regexp.MustCompile(`<html[^>]*data-alerted`).MatchString(dom) {
			t.Error("a planted payload ran on the suite page")
		}
		for _, want := range []string{
			`<td class="r-fail">decay</td>`,
			`<a href="stock-ledger/chart.html">chart</a>`,
			`&lt;img src=x onerror="alert(7)"&gt;`,
			`&lt;/td&gt;&lt;script&gt;alert(8)&lt;/script&gt;`,
			`<p class="banner" id="bypass-banner" role="alert">BASELINE GATE BYPASSED`,
		} {
			if !strings.Contains(dom, want) {
				t.Errorf("the suite page in the browser lacks %q; DOM:\n%s", want, testenv.Tail(dom, 3000))
			}
		}
		if n := strings.Count(dom, "<tr>"); n < 5 {
			t.Errorf("the suite page's table has %d rows, want a header, three skills and an error row", n)
		}
	})

	t.Run("no-javascript", func(t *testing.T) {
		t.Parallel()
		var page bytes.Buffer
		if err := Render(&page, run(true)); err != nil {
			t.Fatal(err)
		}
		// Headless Chromium dumps and screenshots nothing with scripting
		// turned off (--blink-settings=scriptEnabled=false), so a content
		// security policy forbids every script of the page instead: none
		// runs, and the report must be all there. (Scripting stays on as far
		// as <noscript> is concerned; TestNoScript covers that markup.)
		html := strings.Replace(page.String(), "<head>", `<head><meta http-equiv="Content-Security-Policy" content="script-src 'none'">`, 1)
		dir := t.TempDir()
		file := filepath.Join(dir, "chart.html")
		if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		dom := dumpAndShoot(t, browser, file, filepath.Join(artifacts, "report-no-javascript.png"), 1100, 2400)
		if strings.Contains(dom, "<svg") {
			t.Error("an SVG was drawn with scripts forbidden: the test did not stop them")
		}
		for _, want := range append([]string{
			`<p class="banner" id="bypass-banner" role="alert">BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve.</p>`,
			`<td class="r-escape"><a href="#conv-1-turn-6">ESCAPE</a></td>`,
		}, reportTables...) {
			if !strings.Contains(dom, want) {
				t.Errorf("without JavaScript the page lacks %q", want)
			}
		}
	})
}

// openPage renders d, opens it in the browser with an alert trap, saves
// a screenshot of it as it opens (plainShot in artifacts), then runs the
// given showTip action on the chart and returns the DOM and saves a
// screenshot named shot, with the tooltip, which covers part of the
// chart. One page load for both.
func openPage(t *testing.T, browser *testenv.Browser, d Data, artifacts, showTip, shot, plainShot string) string {
	t.Helper()
	var page bytes.Buffer
	if err := Render(&page, d); err != nil {
		t.Fatal(err)
	}
	// The harness around the page: an alert that leaves a mark in the DOM,
	// before anything else runs.
	html := strings.Replace(page.String(), "<head>",
		`<head><script>window.alert = function () { document.documentElement.setAttribute("data-alerted", "yes") }</script>`, 1)
	file := filepath.Join(t.TempDir(), "chart.html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	tab := browser.Load(t, "file://"+file, 1100, 1300)
	defer tab.Close()
	path := filepath.Join(artifacts, plainShot)
	tab.Screenshot(t, path)
	checkShot(t, path)
	tab.Run(t, `echarts.getInstanceByDom(document.getElementById("decay")).dispatchAction(`+showTip+`)`)
	path = filepath.Join(artifacts, shot)
	tab.Screenshot(t, path)
	checkShot(t, path)
	return tab.DOM(t)
}

// dumpAndShoot opens the page in file once (drawing a chart costs about a
// CPU-second) for both its DOM, which it returns, and a PNG of the given
// window size at path.
func dumpAndShoot(t *testing.T, browser *testenv.Browser, file, path string, width, height int) string {
	t.Helper()
	dom := browser.Open(t, "file://"+file, width, height, path)
	checkShot(t, path)
	return dom
}

func checkShot(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil || info.Size() == 0 {
		t.Fatalf("no screenshot at %s: %v", path, err)
	}
	t.Logf("screenshot: %s", path)
}

// checkDrawn asserts that echarts drew the chart: an SVG in the chart's
// div with shapes and text in it, the pass rate and the filler shading,
// the marks and both axes; and that the report is below it.
func checkDrawn(t *testing.T, dom string) {
	t.Helper()
	svg := testenv.ChartSVG(dom)
	if svg == "" {
		t.Fatalf("no SVG drawn in the chart's div; DOM:\n%s", testenv.Tail(dom, 3000))
	}
	if paths, texts := strings.Count(svg, "<path"), strings.Count(svg, "<text"); paths < 30 || texts < 20 {
		t.Errorf("the SVG is nearly empty: %d paths, %d texts", paths, texts)
	}
	for what, want := range map[string]string{
		"escape mark":       ">escape</text>",
		"judge error mark":  ">judge error</text>",
		"context axis":      ">context tokens</text>",
		"pass rate legend":  ">diluted pass rate</text>",
		"fresh rate legend": ">fresh pass rate (same probe, new session)</text>",
		"pass rate axis":    ">result (1 = pass, 0 = fail) · pass rate</text>",
		"filler shading":    ">fillers</text>",
		"filler legend":     ">filler turns</text>",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the %s is not drawn: no %q in the SVG", what, want)
		}
	}
	// The filler areas are grey rectangles behind the lines.
	if !strings.Contains(svg, `fill="rgb(134,142,150)" fill-opacity="0.13"`) && !strings.Contains(svg, `fill="rgba(134,142,150,0.13)"`) {
		t.Errorf("no filler shading in the SVG")
	}
	for _, want := range reportTables {
		if !strings.Contains(dom, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// contextChartSVG finds the SVG echarts drew in the context chart's div.
var contextChartSVG = regexp.MustCompile(`(?s)id="context"[^>]*>\s*<div[^>]*>\s*(<svg.*?</svg>)`)

// contextSVG returns the SVG of the context chart, "" when it did not draw.
func contextSVG(dom string) string {
	if m := contextChartSVG.FindStringSubmatch(dom); m != nil {
		return m[1]
	}
	return ""
}
