package chart

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/record"
)

// suiteFixture is three skills: one decayed, one held with a hostile name,
// one whose gate was bypassed and that errored.
func suiteFixture() *record.Suite {
	return &record.Suite{
		SchemaVersion: record.SuiteSchemaVersion, Status: record.StatusCompleted, Seed: 7,
		StartedAt: time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC), ExitCode: 3,
		Merged: []string{"shard-1", "shard-2", "shard-3"},
		Skills: []record.SuiteEntry{
			{Name: "stock-ledger", RunDir: "stock-ledger", Status: record.StatusCompleted, ExitCode: 1, Verdict: "decay",
				Diluted: record.Rate{Passed: 3, Probes: 9}, Fresh: record.Rate{Passed: 9, Probes: 9}, CostUSD: 1.234, EffectiveTurn: 8},
			{Name: `<img src=x onerror="alert(7)">`, RunDir: "odd name/x", Status: record.StatusCompleted, ExitCode: 0, Verdict: "held",
				Diluted: record.Rate{Passed: 9, Probes: 9}, Fresh: record.Rate{Passed: 9, Probes: 9}},
			{Name: "gate", RunDir: "gate", Status: record.StatusError, ExitCode: 3, Error: `</td><script>alert(8)</script>`, GateBypassed: true},
		},
	}
}

func renderSuite(t *testing.T, s *record.Suite) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderSuite(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestSuitePage(t *testing.T) {
	page := renderSuite(t, suiteFixture())
	for _, want := range []string{
		`<title>vibe-test suite: 3 skills</title>`,
		`merged from 3 shard folders`,
		`exit code 3`,
		`<td class="r-fail">decay</td>`,
		`3/9 (33%)`, `9/9 (100%)`, `67 pts`, `$1.23`,
		`<a href="stock-ledger/chart.html">chart</a>`,
		`<a href="odd%20name/x/chart.html">chart</a>`,
		`&lt;img src=x onerror=&#34;alert(7)&#34;&gt;`,
		`&lt;/td&gt;&lt;script&gt;alert(8)&lt;/script&gt;`,
		`<p class="banner" id="bypass-banner" role="alert">` + record.BypassBanner + `</p>`,
		`gate <span class="warn">(gate bypassed)</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the suite page lacks %q:\n%s", want, page)
		}
	}
	// Offline and inert: no script, nothing fetched.
	for _, bad := range []string{"<script", "http://", "https://", `<img src=x`} {
		if strings.Contains(page, bad) {
			t.Errorf("the suite page holds %q", bad)
		}
	}
}

// The terminal's control sequences and bidi overrides in a skill's name
// or error (a CLI's stderr, quoted) are dropped, as chart.html drops them.
func TestSuitePageDropsControlCharacters(t *testing.T) {
	s := suiteFixture()
	s.Skills[0].Name = "stock\x1b]0;retitled\x07-ledger"
	s.Skills[2].Error = "claude said \x1b[31mred\x1b[0m \u202eliaf"
	page := renderSuite(t, s)
	if strings.ContainsAny(page, "\x1b\x07\u202e") {
		t.Errorf("the suite page holds control or bidi characters: %q", page)
	}
	if !strings.Contains(page, "claude said") {
		t.Error("the error's text is gone with its control characters")
	}
	// A link is a folder's path, kept whole: cleaned, it led nowhere.
	s = suiteFixture()
	s.Skills[0].RunDir = "stock\u200fledger"
	if page := renderSuite(t, s); !strings.Contains(page, `<a href="stock%e2%80%8fledger/chart.html">`) {
		t.Errorf("the link to a folder named with a bidi mark is not that folder's:\n%s", page)
	}
}

func TestSuitePageWithoutBypass(t *testing.T) {
	s := suiteFixture()
	s.Skills = s.Skills[:2]
	if page := renderSuite(t, s); strings.Contains(page, "BYPASSED") {
		t.Error("the bypass banner is shown for a suite in which no gate was bypassed")
	}
}

// A skill whose agent ran without the jail is named in a NO JAIL banner,
// as its own chart says (the suite's page said nothing); none, no banner.
func TestSuitePageSaysNoJail(t *testing.T) {
	s := suiteFixture()
	if page := renderSuite(t, s); strings.Contains(page, "NO JAIL") {
		t.Error("a NO JAIL banner on a suite whose skills all ran jailed")
	}
	s.Skills[0].Jail = "none"
	if page := renderSuite(t, s); !strings.Contains(page, `id="nojail-banner"`) || !strings.Contains(page, "NO JAIL: the agent of stock-ledger ran") {
		t.Error("no NO JAIL banner naming the unjailed skill")
	}
}

// Costs another agent's CLI did not report, estimated from token counts,
// are said to be estimates on the pages as in the summary, and the agent
// is named: chart.html said "cost $2.5381" and "claude" for a codex run,
// the suite page a plain "cost" at two decimals.
func TestPagesSayCostsAreEstimated(t *testing.T) {
	d := run(false)
	d.Facts.Agent, d.Facts.JudgeAgent, d.Facts.CostEstimated = "codex 0.171.0", "claude", true
	page := renderPageT(t, d)
	for _, want := range []string{"<th>cost (estimated)</th>", "<th>agent</th><td>codex 0.171.0</td>", "<th>judge</th><td>claude</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("chart.html lacks %q", want)
		}
	}
	s := suiteFixture()
	s.Skills[0].CostEstimated = true
	html := renderSuite(t, s)
	if !strings.Contains(html, `<th class="num">cost (estimated)</th>`) || !strings.Contains(html, "$1.2340") {
		t.Errorf("the suite page does not say its costs are estimated, to four places:\n%s", html)
	}
}
