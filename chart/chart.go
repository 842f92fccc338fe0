// Package chart draws chart.html, the decay chart of a vibe-test run.
//
// The x axis is the turn (1..10). For each conversation one line joins its
// judged turns, the turn-1 baseline and the probes, at 1 for pass and 0 for
// fail; a second, dashed line per conversation shows the context size in
// tokens on a second y axis. Fillers are not judged and are not plotted on
// the result line. Escape hatches get an "escape" pin; a turn whose judge
// call failed gets a grey "judge error" mark instead of a point, because it
// is neither a pass nor a fail. Hovering a judged turn shows its result,
// failed criteria, tool calls, context tokens and escape reason.
//
// When the baseline gate was bypassed (turn 1 already failed and the run
// went on with --no-baseline-gate), a red stamp across the top says the
// chart is not a decay curve: a flat line of failures is easy to misread as
// decay, and a status field nobody opens does not stop that.
//
// # Offline
//
// chart.html must open with no network, so the echarts script is inlined
// into the page from a copy embedded in the binary (see assets/README.md and
// scripts/fetch-echarts.sh), and go-echarts' preset CDN assets are cleared.
// A binary built without the script makes Render return ErrNoScript rather
// than write a chart that cannot draw.
//
// # Untrusted text
//
// Titles, conversation labels, criteria and escape reasons come from skills,
// transcripts and the judge, so they are treated as hostile. go-echarts
// writes its option JSON into a <script> element with HTML escaping turned
// off (JSONNotEscaped: SetEscapeHTML(false), then safeJS), and then deletes
// every "__f__" in the page to unquote JavaScript functions. A criterion
// reading "</script><script>…" would end the script element, and one holding
// "__f__" would cut a JSON string open. So this package marshals the option
// itself with encoding/json's HTML escaping, neutralises "__f__", never puts
// such text into go-echarts' customized headers, and HTML-escapes it before
// it goes into a tooltip, which echarts renders as HTML.
package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/render"
)

// Data is everything one chart shows.
type Data struct {
	Title         string // e.g. "skill-name — decay over 10 turns"
	Subtitle      string // e.g. "2 conversations · model claude-sonnet-5-5"
	GateBypassed  bool   // turn 1 failed and the run went on anyway: draw the red stamp
	Conversations []Conversation
}

// Conversation is one 10-turn conversation of a run.
type Conversation struct {
	Label string // e.g. "conv 1"
	Turns []Point
}

// Point is one turn of a conversation.
type Point struct {
	Turn           int    // 1-based
	Kind           string // "base", "filler", "probe"
	Result         string // "pass", "fail", "judge-error", "" (filler or not run)
	Escape         bool   // the judge flagged an escape hatch
	EscapeReason   string
	ContextTokens  int64 // 0 = unknown/not run
	ToolCalls      int
	FailedCriteria []string // "id: text"
}

// ErrNoScript is returned by Render when this binary was built without the
// echarts script, which chart.html inlines so that it opens offline.
var ErrNoScript = errors.New(`chart.html needs the echarts script built into vibe-test: run "make build" (it fetches echarts@5.6.0 from npm and embeds it)`)

// HasScript reports whether the echarts script is built into this binary,
// that is whether Render can succeed.
func HasScript() bool { return len(echartsScript) > 0 }

// OptionJSON returns the echarts option that Render puts into the page,
// indented. It is the part of the page worth reviewing and golden-testing:
// the rest is a fixed template and the echarts script.
func OptionJSON(d Data) ([]byte, error) {
	line, err := build(d)
	if err != nil {
		return nil, err
	}
	return optionJSON(line)
}

// Render writes chart.html for d to w. It writes nothing and returns
// ErrNoScript when the echarts script is not built into the binary.
func Render(w io.Writer, d Data) error {
	if !HasScript() {
		return ErrNoScript
	}
	if err := checkInlineable(echartsScript); err != nil {
		return err
	}
	line, err := build(d)
	if err != nil {
		return err
	}
	option, err := optionJSON(line)
	if err != nil {
		return err
	}
	// The script is ours and checked; it is the only thing that ever goes
	// into the customized headers, which go-echarts does not escape.
	line.AddCustomizedHeaders("<script>" + string(echartsScript) + "</script>")

	page, err := renderPage(safePage{Line: line, option: option})
	if err != nil {
		return err
	}
	_, err = w.Write(page)
	return err
}

// safePage is what go-echarts' page template is executed on. Its
// JSONNotEscaped shadows the one of the embedded chart, whose output the
// template writes into a <script> verbatim without HTML escaping.
type safePage struct {
	*charts.Line
	option []byte
}

// JSONNotEscaped returns the option as marshalled by optionJSON, where
// < > & are \u003c \u003e \u0026, so it cannot end the script element.
func (p safePage) JSONNotEscaped() template.HTML { return template.HTML(p.option) }

// renderPage runs go-echarts' page template into memory, so that a failure
// leaves w untouched. go-echarts panics when its template fails; that would
// be a bug in the template or here, but it should not take the rest of a
// paid run's artifacts down with it, so it becomes an error.
func renderPage(p safePage) (page []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rendering chart.html: %v", r)
		}
	}()
	var buf bytes.Buffer
	if err := render.NewChartRender(p).Render(&buf); err != nil {
		return nil, fmt.Errorf("rendering chart.html: %w", err)
	}
	return buf.Bytes(), nil
}

// optionJSON marshals the chart's option the safe way: encoding/json escapes
// < > & U+2028 U+2029, and "__f__", which go-echarts strips from the page,
// is spelled with a JSON escape so that nothing matches it.
func optionJSON(line *charts.Line) ([]byte, error) {
	b, err := json.MarshalIndent(line.JSON(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding chart option: %w", err)
	}
	// "__f__" can only occur inside JSON strings, where "\u005f" is "_".
	// Loop because "__f__f__" still holds one after a pass; each pass
	// removes underscores, so it ends.
	for bytes.Contains(b, []byte("__f__")) {
		b = bytes.ReplaceAll(b, []byte("__f__"), []byte(`\u005f_f__`))
	}
	return b, nil
}
