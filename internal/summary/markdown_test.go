package summary

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/russross/blackfriday/v2"
	"github.com/vibe-test/vibe-test/internal/jail"
)

func markdown(t *testing.T, entries ...MarkdownEntry) string {
	t.Helper()
	var b bytes.Buffer
	if err := Markdown(&b, entries); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// suiteEntries are what a suite of four skills would pass: a decayed run
// in a jail, a bypassed one without, one stopped at the gate, and a skill
// with no record.
func suiteEntries() []MarkdownEntry {
	decay := decayRun()
	decay.Jail = jail.Bubblewrap
	bypass := bypassRun()
	bypass.Jail, bypass.JailNote = jail.None, "--isolation none"
	return []MarkdownEntry{
		{Dir: "vibe-runs/20261130T101500Z-stock-ledger", Run: decay},
		{Name: "bypassed-skill", Dir: "vibe-runs/20261130T101500Z-bypassed", Run: bypass},
		{Name: "gated-skill", Dir: "vibe-runs/20261130T101500Z-gated", Run: gateRun()},
		{Name: "never-started", Dir: "vibe-runs/20261130T101500Z-never-started"},
	}
}

func TestMarkdownGolden(t *testing.T) {
	golden(t, "markdown-suite.golden.md", []byte(markdown(t, suiteEntries()...)))
	golden(t, "markdown-bypass.golden.md", []byte(markdown(t, MarkdownEntry{Dir: "vibe-runs/x", Run: bypassRun()})))
}

// The verdict and its sentence are the run's Outcome, word for word once
// the escapes are read back; the bypass banner is there, loud, when and
// only when the gate was bypassed.
func TestMarkdownSaysTheOutcome(t *testing.T) {
	for _, e := range suiteEntries()[:3] {
		out := markdown(t, e)
		text := rendered(t, out)
		o := e.Run.Outcome
		if !strings.Contains(text, o.Sentence) {
			t.Errorf("%s: the rendered summary lacks the outcome's sentence %q:\n%s", e.Name, o.Sentence, text)
		}
		if !strings.Contains(text, o.Verdict+" (exit ") {
			t.Errorf("%s: the rendered table lacks the verdict %q", e.Name, o.Verdict)
		}
		if got := strings.Contains(text, BypassBanner); got != e.Run.GateBypassed {
			t.Errorf("%s: bypass banner shown %v, gate bypassed %v", e.Name, got, e.Run.GateBypassed)
		}
	}
}

// A codex or gemini run's cost is priced from token counts: its table cell
// says so, as the bullet below the table does (the cell read as the CLI's
// own figure).
func TestMarkdownTableMarksAnEstimatedCost(t *testing.T) {
	r := decayRun()
	if row := markdownRow(MarkdownEntry{Run: r}); strings.Contains(row, "estimated") {
		t.Errorf("claude's cost marked estimated: %s", row)
	}
	r.Config.CostEstimated = true
	if row := markdownRow(MarkdownEntry{Run: r}); !strings.Contains(row, usd(r.Costs.Total)+" (estimated) |") {
		t.Errorf("an estimated cost unmarked: %s", row)
	}
}

// A skill name is user text and a sentence can quote tool output: neither
// may add HTML, a link, a heading or a table cell, and both must render
// as written (control characters aside).
func TestMarkdownEscapes(t *testing.T) {
	hostile := "a|b <script>alert(1)</script> [x](http://e.example) *em* _u_ `c` # h \\ $x$ @team &amp;\n| injected | row |\x1b]0;title\x07"
	r := decayRun()
	r.Outcome.Sentence = "Set-up broke: " + hostile
	r.Outcome.Notes = append(r.Outcome.Notes, hostile)
	out := markdown(t, MarkdownEntry{Name: hostile, Dir: "runs/" + hostile, Run: r}, MarkdownEntry{Name: "plain", Run: decayRun()})

	if strings.ContainsAny(out, "\x1b\x07") {
		t.Error("a control character reached the Markdown")
	}
	page := render(out)
	for _, bad := range []string{"<script", "<a ", "<em>", "<code>", "<h1", "injected</td>"} {
		if strings.Contains(page, bad) {
			t.Errorf("hostile text made %q in the rendered page:\n%s", bad, page)
		}
	}
	// Every row of the table keeps its nine cells.
	rows := regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(page, -1)
	if len(rows) != 3 {
		t.Fatalf("table has %d rows, want a header and 2:\n%s", len(rows), page)
	}
	for _, row := range rows[1:] {
		if n := strings.Count(row[1], "<td>"); n != 9 {
			t.Errorf("a row has %d cells, want 9: %s", n, row[1])
		}
	}
	clean := strings.NewReplacer("\n", " ", "\x1b", "", "\x07", "").Replace(hostile)
	if !strings.Contains(rendered(t, out), clean) {
		t.Errorf("the name does not render as written: want %q in\n%s", clean, rendered(t, out))
	}
}

var tag = regexp.MustCompile(`<[^>]*>`)

// rendered is the text a reader sees: the Markdown rendered, tags dropped,
// entities read back.
func rendered(t *testing.T, md string) string {
	t.Helper()
	text := html.UnescapeString(tag.ReplaceAllString(render(md), ""))
	// blackfriday predates CommonMark's rule that every ASCII punctuation
	// character may be escaped, and leaves these two backslashes in; GitHub
	// (cmark-gfm) reads them as CommonMark does.
	return strings.NewReplacer(`\$`, "$", `\@`, "@").Replace(text)
}

// render is the Markdown as HTML: GitHub's extensions (tables, autolinks,
// strikethrough), no typographic quotes or fractions.
func render(md string) string {
	r := blackfriday.NewHTMLRenderer(blackfriday.HTMLRendererParameters{Flags: blackfriday.UseXHTML})
	return string(blackfriday.Run([]byte(md), blackfriday.WithRenderer(r)))
}

// A run with no record still gets its row, so a suite's table lists every
// skill.
func TestMarkdownNilRun(t *testing.T) {
	out := markdown(t, MarkdownEntry{Name: "gone", Dir: "d"})
	if !strings.Contains(out, "| gone | no run record |") {
		t.Errorf("no row for a skill without a record:\n%s", out)
	}
}
