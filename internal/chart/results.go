package chart

// This file draws each conversation: its judged results (with marks for
// escape hatches and errors), its context line, and their tooltips.

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vibe-test/vibe-test/internal/plan"
)

// judged reports whether p is a turn the judge scores: the baseline and the
// probes. Fillers are never judged, whatever their Result says.
func judged(p Point) bool { return p.Kind == plan.KindBase || p.Kind == plan.KindProbe }

// item is one point of a series: [turn, value], with its own tooltip so
// that the tooltip text is data, escaped here, and never JavaScript.
type item struct {
	Value     [2]float64 `json:"value"`
	Symbol    string     `json:"symbol,omitempty"` // the series' when ""
	ItemStyle *itemStyle `json:"itemStyle,omitempty"`
	Label     *markLabel `json:"label,omitempty"`
	Tooltip   tooltip    `json:"tooltip"`
}

type itemStyle struct {
	Color string `json:"color"`
}

type tooltip struct {
	Formatter string `json:"formatter"`
}

// mark is a mark point: an escape hatch or a judge error.
type mark struct {
	Name       string     `json:"name"`
	Coord      [2]float64 `json:"coord"`
	Symbol     string     `json:"symbol"`
	SymbolSize any        `json:"symbolSize"`
	// SymbolOffset moves the whole mark, label included.
	SymbolOffset []int     `json:"symbolOffset,omitempty"`
	ItemStyle    itemStyle `json:"itemStyle"`
	Label        markLabel `json:"label"`
	Tooltip      tooltip   `json:"tooltip"`
}

type markLabel struct {
	Show       bool   `json:"show"`
	Position   string `json:"position,omitempty"`
	Offset     []int  `json:"offset,omitempty"`
	Formatter  string `json:"formatter,omitempty"`
	Color      string `json:"color"`
	FontSize   int    `json:"fontSize"`
	FontWeight string `json:"fontWeight,omitempty"`
}

// resultSeries returns a conversation's judged results as points, and the
// marks for its escape hatches and judge errors. Only judged turns with a
// pass or fail become points: a judge error is neither, so it is a mark
// halfway up instead, and the line joins over it. A turn asked after a
// compaction is a hollow point. index is the conversation's place in the
// run: it staggers the marks' text, which conversations that share a turn
// would otherwise print over each other (the dodge separates points, not
// words). at places a turn on the x axis (its turn, or its context), false
// leaving it out.
func resultSeries(c Conversation, index int, at func(Point) (float64, bool)) (points []item, marks []any) {
	points = []item{}
	for _, p := range c.Turns {
		if !judged(p) || p.Result == "" {
			continue
		}
		x, ok := at(p)
		if !ok {
			continue
		}
		tip := tooltip{Formatter: judgedTooltip(c.Label, p)}
		symbol := ""
		if p.AfterCompaction {
			symbol = "emptyCircle"
		}
		y := 0.5 // where a judge error's mark sits: neither pass nor fail
		switch p.Result {
		case "pass":
			y = 1
			points = append(points, item{Value: [2]float64{x, y}, Symbol: symbol, ItemStyle: &itemStyle{Color: passColor}, Tooltip: tip})
		case "fail":
			y = 0
			points = append(points, item{Value: [2]float64{x, y}, Symbol: symbol, ItemStyle: &itemStyle{Color: failColor}, Tooltip: tip})
		case "judge-error":
			marks = append(marks, mark{
				Name: "judge error", Coord: [2]float64{x, y},
				Symbol: "roundRect", SymbolSize: []int{74, 20},
				ItemStyle: itemStyle{Color: judgeErrorColor},
				Label:     markLabel{Show: true, Formatter: "judge error", Color: "#fff", FontSize: 11},
				// Staggered downwards: judge errors sit mid-axis, with
				// room either way.
				SymbolOffset: []int{0, (index % 3) * 22},
				Tooltip:      tip,
			})
		case "uncertain":
			// Like a judge error, neither pass nor fail: the repeated
			// judgements disagreed.
			marks = append(marks, mark{
				Name: "uncertain", Coord: [2]float64{x, y},
				Symbol: "roundRect", SymbolSize: []int{70, 20},
				ItemStyle:    itemStyle{Color: uncertainColor},
				Label:        markLabel{Show: true, Formatter: "uncertain", Color: "#212529", FontSize: 11},
				SymbolOffset: []int{0, (index % 3) * 22},
				Tooltip:      tip,
			})
		}
		if p.Escape {
			marks = append(marks, mark{
				Name: "escape", Coord: [2]float64{x, y},
				Symbol: "pin", SymbolSize: 32,
				ItemStyle: itemStyle{Color: escapeColor},
				// Above the pin, as the word does not fit in its head;
				// staggered upwards.
				Label: markLabel{Show: true, Position: "top", Offset: []int{0, -(index % 3) * 14},
					Formatter: "escape", Color: escapeColor, FontSize: 12, FontWeight: "bold"},
				Tooltip: tip,
			})
		}
	}
	return points, marks
}

// contextSeries returns a conversation's known context sizes, every turn
// with a count, fillers included.
func contextSeries(c Conversation) []item {
	points := []item{}
	for _, p := range c.Turns {
		if p.ContextTokens <= 0 {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<b>%s · turn %d · %s</b><br/>", esc(c.Label), p.Turn, pointName(p))
		fmt.Fprintf(&b, "context tokens: %s<br/>tool calls: %d%s%s", thousands(p.ContextTokens), p.ToolCalls, skillNote(p), compactionNote(p))
		points = append(points, item{Value: [2]float64{float64(p.Turn), float64(p.ContextTokens)}, Tooltip: tooltip{Formatter: b.String()}})
	}
	return points
}

// judgedTooltip is the HTML of a judged turn's tooltip. Every piece of text
// that is not ours goes through esc.
func judgedTooltip(label string, p Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<b>%s · turn %d · %s</b><br/>", esc(label), p.Turn, pointName(p))
	switch p.Result {
	case "pass":
		fmt.Fprintf(&b, `result: <b style="color:%s">PASS</b><br/>`, passColor)
	case "fail":
		fmt.Fprintf(&b, `result: <b style="color:%s">FAIL</b><br/>`, failColor)
	case "judge-error":
		fmt.Fprintf(&b, `result: <b style="color:%s">judge error</b> (not scored)<br/>`, judgeErrorColor)
	case "uncertain":
		fmt.Fprintf(&b, `result: <b style="color:%s">uncertain</b> (repeated judgements disagree; not scored)<br/>`, uncertainColor)
	}
	if p.Escape {
		reason := p.EscapeReason
		if reason == "" {
			reason = "(no reason given)"
		}
		fmt.Fprintf(&b, `<b style="color:%s">escape hatch:</b> %s<br/>`, escapeColor, esc(reason))
	}
	if p.Partial {
		b.WriteString("partial compliance: an escape-hatch flag was downgraded<br/>")
	}
	fmt.Fprintf(&b, "tool calls: %d%s<br/>", p.ToolCalls, skillNote(p))
	tokens := "unknown"
	if p.ContextTokens > 0 {
		tokens = thousands(p.ContextTokens)
	}
	fmt.Fprintf(&b, "context tokens: %s", tokens)
	b.WriteString(compactionNote(p))
	if len(p.Criteria) > 0 {
		// Every failed criterion, must before should, with the evidence
		// that failed it: a reader hovering a red dot wants the why.
		first := true
		for _, kind := range []string{"must", "should", ""} {
			for _, c := range p.Criteria {
				if c.Result != "fail" || !sameKind(c.Kind, kind) {
					continue
				}
				if first {
					b.WriteString("<br/>failed criteria:")
					first = false
				}
				fmt.Fprintf(&b, "<br/>• %s", esc(c.ID))
				if c.Kind != "must" {
					fmt.Fprintf(&b, " (%s)", esc(c.Kind))
				}
				if c.Text != "" {
					fmt.Fprintf(&b, ": %s", esc(c.Text))
				}
				evidence := c.Evidence
				if evidence == "" {
					evidence = "(none given)"
				}
				fmt.Fprintf(&b, `<br/>&nbsp;&nbsp;<span style="color:#495057">evidence (%s`, esc(sourceName(c.Source)))
				if c.Call > 0 {
					fmt.Fprintf(&b, ", call %d", c.Call)
				}
				fmt.Fprintf(&b, "): %s</span>", esc(clip(evidence, tooltipEvidence)))
			}
		}
	} else if len(p.FailedCriteria) > 0 {
		b.WriteString("<br/>failed criteria:")
		for _, c := range p.FailedCriteria {
			fmt.Fprintf(&b, "<br/>• %s", esc(c))
		}
	}
	return b.String()
}

// tooltipEvidence bounds one criterion's evidence in a tooltip; the report
// below the chart has it whole.
const tooltipEvidence = 300

// sameKind groups criteria kinds: "must", "should", and "" for any other.
func sameKind(kind, group string) bool {
	if group == "" {
		return kind != "must" && kind != "should"
	}
	return kind == group
}

// sourceName says who decided a criterion.
func sourceName(source string) string {
	switch source {
	case "check":
		return "deterministic check"
	case "judge":
		return "model judge"
	case "":
		return "unknown source"
	}
	return source
}

// clip shortens s to at most n bytes, on a rune boundary, and says how much
// it cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" …[%d bytes cut]", len(s)-cut)
}

// skillNote is the judge-free signal of whether the Skill tool ran.
func skillNote(p Point) string {
	if p.SkillInvoked {
		return " (Skill tool invoked)"
	}
	return ""
}

// pointName names a turn's kind, a probe with its number: "baseline",
// "filler", "probe 2".
func pointName(p Point) string {
	if p.Kind == plan.KindProbe && p.Probe > 0 {
		return fmt.Sprintf("probe %d", p.Probe)
	}
	return kindName(p.Kind)
}

// compactionNote is a tooltip's line about compaction, "" for a turn of a
// session never compacted. What the compaction did is run text: escaped.
func compactionNote(p Point) string {
	switch {
	case p.Compaction != "" && p.AfterCompaction:
		return fmt.Sprintf(`<br/>asked after a compaction (hollow point)<br/><b style="color:%s">compaction:</b> %s`, compactionColor, esc(p.Compaction))
	case p.Compaction != "":
		return fmt.Sprintf(`<br/><b style="color:%s">compaction:</b> %s`, compactionColor, esc(p.Compaction))
	case p.AfterCompaction:
		return "<br/>asked after a compaction (hollow point)"
	}
	return ""
}
