package chart

import (
	"errors"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// stampText is the red stamp's text, shown when the baseline gate was
// bypassed.
const stampText = "BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve."

const (
	// chartID names the chart's div and JavaScript variables. go-echarts
	// generates a random one by default, which would make every page differ.
	chartID = "decay"

	// minTurns is the length of the protocol's conversation; the x axis
	// always shows it, even for a run stopped early.
	minTurns = 10

	// Conversations' points at one turn are drawn side by side, dodgeStep
	// turns apart, or closer so that the first and last are at most
	// maxDodge apart. Results are 0 or 1: without a sideways offset every
	// conversation that failed turn 6 would be one dot with one tooltip.
	dodgeStep = 0.16
	maxDodge  = 0.4

	// The legend fits about this many entries on a row of the 1000px
	// chart ("conv 10 context" is the widest), each row this high.
	legendPerRow    = 6
	legendRowHeight = 24
)

// palette gives conversation i its colour; its result line and its
// context line share it so they read as a pair. No greens, reds or
// oranges: those mean pass, fail and escape.
var palette = []string{"#3b5bdb", "#7048e8", "#1098ad", "#495057", "#ae3ec9", "#0b7285", "#364fc7", "#862e9c"}

// Marks drawn over the lines.
const (
	passColor       = "#2b8a3e"
	failColor       = "#c92a2a"
	escapeColor     = "#d9480f"
	judgeErrorColor = "#868e96"
	uncertainColor  = "#f59f00"
	stampColor      = "#c92a2a"
	// The pass rate across conversations and its error bars: near black,
	// apart from every conversation's colour.
	rateColor = "#212529"
	// freshColor draws the fresh arm: each probe asked in a new session.
	freshColor = "#2b8a3e"
	// Filler turns are shaded light grey: context, not data.
	fillerShade = "rgba(134, 142, 150, 0.13)"
	fillerText  = "#868e96"
)

// build turns d into a go-echarts line chart, validated and ready for
// JSON(). It reports data it cannot draw honestly instead of guessing.
func build(d Data) (*charts.Line, error) {
	lastTurn := minTurns
	for _, c := range d.Conversations {
		seen := map[int]bool{}
		for _, p := range c.Turns {
			if err := checkPoint(p); err != nil {
				return nil, fmt.Errorf("chart: %q turn %d: %w", c.Label, p.Turn, err)
			}
			if seen[p.Turn] {
				return nil, fmt.Errorf("chart: %q has turn %d twice", c.Label, p.Turn)
			}
			seen[p.Turn] = true
			lastTurn = max(lastTurn, p.Turn)
		}
	}
	var rates, fresh []TurnRate
	if d.Stats != nil {
		rates, fresh = d.Stats.PerTurn, d.Stats.Fresh
	}
	for _, set := range [][]TurnRate{rates, fresh} {
		seenRate := map[int]bool{}
		for _, r := range set {
			if err := checkRate(r); err != nil {
				return nil, fmt.Errorf("chart: pass rate at turn %d: %w", r.Turn, err)
			}
			if seenRate[r.Turn] {
				return nil, fmt.Errorf("chart: pass rate at turn %d twice", r.Turn)
			}
			seenRate[r.Turn] = true
			lastTurn = max(lastTurn, r.Turn)
		}
	}
	// Side by side at each probe: diluted just left of the turn, fresh
	// just right, so the two intervals never hide each other.
	rate := rateSeries(rates, rateSpec{name: "diluted pass rate", color: rateColor, symbol: "diamond", dx: 0})
	var freshRate *lineSeries
	if len(fresh) > 0 {
		if rate != nil {
			rate = rateSeries(rates, rateSpec{name: "diluted pass rate", color: rateColor, symbol: "diamond", dx: -freshDodge})
		}
		freshRate = rateSeries(fresh, rateSpec{name: "fresh pass rate (same probe, new session)", color: freshColor, symbol: "triangle", dx: freshDodge, noLine: true})
	}

	yName, yMinInterval, yMaxInterval, yNameGap := "judged result (1 = pass, 0 = fail)", 1.0, 0.0, 30
	if rate != nil {
		// The pass rate lives between 0 and 1: ticks on the quarters help
		// read it (echarts picks 0.3 steps if left to itself), and their
		// labels ("0.75") are wider, so the name moves out.
		yName, yMinInterval, yMaxInterval, yNameGap = "result (1 = pass, 0 = fail) · pass rate", 0.25, 0.25, 40
	}

	// Room at the top for the title, and the stamp under it when there is one.
	gridTop := "90"
	if d.GateBypassed {
		gridTop = "140"
	}
	// Room at the bottom for the axis name and the legend, which wraps
	// onto more rows as conversations add entries (two each).
	fillers := fillerSeries(d.Conversations)
	entries := 2 * len(d.Conversations)
	if rate != nil {
		entries++
	}
	if freshRate != nil {
		entries++
	}
	if fillers != nil {
		entries++
	}
	legendRows := max(1, (entries+legendPerRow-1)/legendPerRow)
	gridBottom := strconv.Itoa(80 + legendRowHeight*(legendRows-1))

	line := charts.NewLine()
	// go-echarts writes its own palette into the option; make it ours.
	line.Colors = palette
	// Clear the preset assets: by default go-echarts adds a <script src> on
	// its remote assets host. Render inlines the script instead.
	line.ClearPresetAssets()
	line.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{
			ChartID:   chartID,
			PageTitle: pageTitle(d.Title),
			Width:     "1000px",
			Height:    "600px",
			// SVG keeps text crisp and selectable, and lets a test see
			// what was drawn in the DOM.
			Renderer: "svg",
			Theme:    "white",
		}),
		// A report is read, not watched; no animation also makes
		// screenshots deterministic.
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: d.Title, Subtitle: d.Subtitle, Left: "center", Top: "10"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Bottom: "10"}),
		charts.WithGridOpts(opts.Grid{Top: gridTop, Bottom: gridBottom, Left: "80", Right: "90"}),
		charts.WithXAxisOpts(opts.XAxis{
			Type:         "value",
			Name:         "turn",
			NameLocation: "middle",
			NameGap:      30,
			// Half a turn of room either side, so that the first and
			// last turns' dodged points and marks are inside the axis:
			// echarts drops marks outside it. Ticks and labels stay on
			// whole turns (set by the visitor).
			Min:       0.5,
			Max:       float64(lastTurn) + 0.5,
			AxisLabel: &opts.AxisLabel{Show: opts.Bool(true)}, // replaced by the visitor
		}),
		charts.WithYAxisOpts(opts.YAxis{
			Type: "value",
			// In the middle, rotated along the axis: at the top the name
			// is wider than the margin and gets cut.
			Name:         yName,
			NameLocation: "middle",
			NameGap:      yNameGap,
			Min:          0,
			Max:          1,
			MinInterval:  yMinInterval,
			MaxInterval:  yMaxInterval,
			AxisLabel:    &opts.AxisLabel{Show: opts.Bool(true), ShowMinLabel: opts.Bool(true), ShowMaxLabel: opts.Bool(true)},
		}),
	)
	line.ExtendYAxis(opts.YAxis{
		Type:         "value",
		Name:         "context tokens",
		NameLocation: "middle",
		NameGap:      60,
		Position:     "right",
		Min:          0,
		SplitLine:    &opts.SplitLine{Show: opts.Bool(false)},
		AxisLabel:    &opts.AxisLabel{Show: opts.Bool(true), ShowMinLabel: opts.Bool(true), ShowMaxLabel: opts.Bool(true)},
	})

	n := len(d.Conversations)
	step := dodgeStep
	if n > 1 {
		step = min(dodgeStep, maxDodge/float64(n-1))
	}
	for i, c := range d.Conversations {
		color := palette[i%len(palette)]
		dodge := round3((float64(i) - float64(n-1)/2) * step)
		results, marks := resultSeries(c, dodge, i)
		line.AddSeries(c.Label+" result", nil, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Data = results
			s.Color = color
			s.Symbol = "circle"
			s.SymbolSize = 12
			s.ShowSymbol = opts.Bool(true)
			// Only judged pass/fail turns are in the data, so the line
			// joins them over fillers and judge errors; connectNulls
			// says so to echarts too.
			s.ConnectNulls = opts.Bool(true)
			s.LineStyle = &opts.LineStyle{Width: 2}
			if len(marks) > 0 {
				s.MarkPoints = &opts.MarkPoints{Data: marks}
			}
		}))
		line.AddSeries(c.Label+" context", nil, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Data = contextSeries(c)
			s.YAxisIndex = 1
			s.Color = color
			s.Symbol = "emptyCircle"
			s.SymbolSize = 6
			s.ShowSymbol = opts.Bool(true)
			s.ConnectNulls = opts.Bool(true)
			// Dashed and faint: context is the backdrop to the results.
			s.LineStyle = &opts.LineStyle{Type: "dashed", Width: 1.5, Opacity: opts.Float(0.6)}
		}))
	}

	// Series go-echarts has no typed options for (a silent markLine and
	// markArea, legend icons) are added by the visitor, after the
	// conversations: the pass rate across them, then the filler shading.
	var extra []any
	if rate != nil {
		extra = append(extra, rate)
	}
	if freshRate != nil {
		extra = append(extra, freshRate)
	}
	if fillers != nil {
		extra = append(extra, fillers)
	}
	line.Accept(optionVisitor{stamp: d.GateBypassed, lastTurn: lastTurn, extra: extra})
	line.Validate()
	return line, nil
}

// checkPoint rejects values the chart has no way to draw. A typo in a
// result would otherwise vanish from the chart without a trace.
func checkPoint(p Point) error {
	if p.Turn < 1 {
		return errors.New("turn must be 1 or more")
	}
	switch p.Kind {
	case "base", "filler", "probe":
	default:
		return fmt.Errorf("unknown kind %q", p.Kind)
	}
	switch p.Result {
	case "pass", "fail", "judge-error", "uncertain", "":
	default:
		return fmt.Errorf("unknown result %q", p.Result)
	}
	return nil
}

// checkRate rejects a pass rate whose numbers contradict each other: an
// interval that misses its own rate would draw a lie.
func checkRate(r TurnRate) error {
	const eps = 1e-9
	switch {
	case r.Turn < 1:
		return errors.New("turn must be 1 or more")
	case r.N < 0 || r.Passes < 0 || r.Passes > r.N:
		return fmt.Errorf("%d passes of %d", r.Passes, r.N)
	case math.IsNaN(r.Lo) || math.IsNaN(r.Hi) || r.Lo < -eps || r.Hi > 1+eps || r.Lo > r.Hi+eps:
		return fmt.Errorf("interval [%g, %g] is not inside [0, 1]", r.Lo, r.Hi)
	case r.N > 0 && (r.Rate() < r.Lo-eps || r.Rate() > r.Hi+eps):
		return fmt.Errorf("rate %g is outside its interval [%g, %g]", r.Rate(), r.Lo, r.Hi)
	}
	return nil
}

func pageTitle(title string) string {
	if title == "" {
		return "vibe-test decay chart"
	}
	return title
}

// judged reports whether p is a turn the judge scores: the baseline and the
// probes. Fillers are never judged, whatever their Result says.
func judged(p Point) bool { return p.Kind == "base" || p.Kind == "probe" }

// item is one point of a series: [turn, value], with its own tooltip so
// that the tooltip text is data, escaped here, and never JavaScript.
type item struct {
	Value     [2]float64 `json:"value"`
	ItemStyle *itemStyle `json:"itemStyle,omitempty"`
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
// halfway up instead, and the line joins over it. index is the
// conversation's place in the run: it staggers the marks' text, which
// conversations that share a turn would otherwise print over each other
// (the dodge separates points, not words).
func resultSeries(c Conversation, dodge float64, index int) (points []item, marks []any) {
	points = []item{}
	for _, p := range c.Turns {
		if !judged(p) || p.Result == "" {
			continue
		}
		x := float64(p.Turn) + dodge
		tip := tooltip{Formatter: judgedTooltip(c.Label, p)}
		y := 0.5 // where a judge error's mark sits: neither pass nor fail
		switch p.Result {
		case "pass":
			y = 1
			points = append(points, item{Value: [2]float64{x, y}, ItemStyle: &itemStyle{Color: passColor}, Tooltip: tip})
		case "fail":
			y = 0
			points = append(points, item{Value: [2]float64{x, y}, ItemStyle: &itemStyle{Color: failColor}, Tooltip: tip})
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
		fmt.Fprintf(&b, "<b>%s · turn %d · %s</b><br/>", esc(c.Label), p.Turn, kindName(p.Kind))
		fmt.Fprintf(&b, "context tokens: %s<br/>tool calls: %d%s", thousands(p.ContextTokens), p.ToolCalls, skillNote(p))
		points = append(points, item{Value: [2]float64{float64(p.Turn), float64(p.ContextTokens)}, Tooltip: tooltip{Formatter: b.String()}})
	}
	return points
}

// judgedTooltip is the HTML of a judged turn's tooltip. Every piece of text
// that is not ours goes through esc.
func judgedTooltip(label string, p Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<b>%s · turn %d · %s</b><br/>", esc(label), p.Turn, kindName(p.Kind))
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

// lineSeries is a line series written by this package rather than
// go-echarts, for options go-echarts has no field for.
type lineSeries struct {
	Name         string      `json:"name"`
	Type         string      `json:"type"`
	Color        string      `json:"color"`
	LegendIcon   string      `json:"legendIcon,omitempty"`
	Symbol       string      `json:"symbol,omitempty"`
	SymbolSize   int         `json:"symbolSize,omitempty"`
	ShowSymbol   bool        `json:"showSymbol"`
	ConnectNulls bool        `json:"connectNulls"`
	Z            int         `json:"z,omitempty"`
	LineStyle    *lineStyle  `json:"lineStyle,omitempty"`
	Data         []item      `json:"data"`
	MarkLine     *markLine   `json:"markLine,omitempty"`
	MarkArea     *markArea   `json:"markArea,omitempty"`
	Animation    bool        `json:"animation"`
	Emphasis     *disabled   `json:"emphasis,omitempty"`
	Tooltip      *seriesShow `json:"tooltip,omitempty"`
}

type lineStyle struct {
	Color string  `json:"color,omitempty"`
	Width float64 `json:"width"`
	Type  string  `json:"type,omitempty"`
}

type disabled struct {
	Disabled bool `json:"disabled"`
}

type seriesShow struct {
	Show bool `json:"show"`
}

// markLine draws the error bars: silent, so that hovering a bar does not
// open a tooltip of bare numbers over the rate's own.
type markLine struct {
	Silent    bool         `json:"silent"`
	Symbol    []string     `json:"symbol"`
	Label     seriesShow   `json:"label"`
	LineStyle lineStyle    `json:"lineStyle"`
	Emphasis  disabled     `json:"emphasis"`
	Data      [][2]markEnd `json:"data"`
}

type markEnd struct {
	Coord [2]float64 `json:"coord"`
}

// markArea shades the filler turns.
type markArea struct {
	Silent    bool         `json:"silent"`
	ItemStyle itemStyle    `json:"itemStyle"`
	Label     markLabel    `json:"label"`
	Emphasis  disabled     `json:"emphasis"`
	Data      [][2]areaEnd `json:"data"`
}

type areaEnd struct {
	Name  string  `json:"name,omitempty"`
	XAxis float64 `json:"xAxis"`
}

// errorCap is half the width of an error bar's caps, in turns.
const errorCap = 0.06

// rateSeries is the pass rate across conversations with its Wilson 95%
// interval as error bars, at the turns that more than one conversation
// reached: at a turn with one, the rate is that conversation's own point
// and its interval says nothing. Nil when no turn has more than one.
// rateSpec says how to draw one arm's pass rates.
type rateSpec struct {
	name, color, symbol string
	dx                  float64 // x offset from the turn
	noLine              bool    // points and intervals only
}

// freshDodge sets the diluted and fresh rates apart at a probe turn.
const freshDodge = 0.12

func rateSeries(rates []TurnRate, spec rateSpec) *lineSeries {
	s := &lineSeries{
		Name: spec.name, Type: "line", Color: spec.color,
		Symbol: spec.symbol, SymbolSize: 14, ShowSymbol: true, ConnectNulls: true,
		// Over the conversations' lines: it is the summary of them.
		Z:         5,
		LineStyle: &lineStyle{Width: 2.5},
		Data:      []item{},
		MarkLine: &markLine{
			Silent: true, Symbol: []string{"none", "none"},
			LineStyle: lineStyle{Color: spec.color, Width: 1.5, Type: "solid"},
			Emphasis:  disabled{true},
			Data:      [][2]markEnd{},
		},
	}
	if spec.noLine {
		s.LineStyle = &lineStyle{Width: 0}
	}
	for _, r := range rates {
		if r.N < 2 {
			continue
		}
		x, rate, lo, hi := round3(float64(r.Turn)+spec.dx), round3(r.Rate()), round3(r.Lo), round3(r.Hi)
		var b strings.Builder
		fmt.Fprintf(&b, "<b>%s · turn %d</b><br/>", html.EscapeString(spec.name), r.Turn)
		who := "conversations"
		if r.Population != "" {
			who = html.EscapeString(r.Population)
		}
		fmt.Fprintf(&b, "%d of %d passed (%s): %s<br/>", r.Passes, r.N, who, percent(r.Rate()))
		fmt.Fprintf(&b, "Wilson 95%% interval: %s – %s", percent(r.Lo), percent(r.Hi))
		s.Data = append(s.Data, item{Value: [2]float64{x, rate}, Tooltip: tooltip{Formatter: b.String()}})
		s.MarkLine.Data = append(s.MarkLine.Data,
			[2]markEnd{{[2]float64{x, lo}}, {[2]float64{x, hi}}},
			[2]markEnd{{[2]float64{round3(x - errorCap), lo}}, {[2]float64{round3(x + errorCap), lo}}},
			[2]markEnd{{[2]float64{round3(x - errorCap), hi}}, {[2]float64{round3(x + errorCap), hi}}},
		)
	}
	if len(s.Data) == 0 {
		return nil
	}
	return s
}

// fillerSeries shades the filler turns (any conversation's turns of kind
// "filler"), a run of adjacent ones as one area. It is a series of its own,
// with no data, so the legend can hide the shading and hiding a
// conversation does not. Nil when there are no fillers.
func fillerSeries(convs []Conversation) *lineSeries {
	fillers := map[int]bool{}
	last := 0
	for _, c := range convs {
		for _, p := range c.Turns {
			if p.Kind == "filler" {
				fillers[p.Turn] = true
				last = max(last, p.Turn)
			}
		}
	}
	if len(fillers) == 0 {
		return nil
	}
	area := &markArea{
		Silent:    true,
		ItemStyle: itemStyle{Color: fillerShade},
		Label:     markLabel{Show: true, Position: "insideTop", Color: fillerText, FontSize: 11},
		Emphasis:  disabled{true},
		Data:      [][2]areaEnd{},
	}
	for t := 1; t <= last; t++ {
		if !fillers[t] || fillers[t-1] {
			continue
		}
		end := t
		for fillers[end+1] {
			end++
		}
		name := "filler"
		if end > t {
			name = "fillers"
		}
		area.Data = append(area.Data, [2]areaEnd{{Name: name, XAxis: float64(t) - 0.5}, {XAxis: float64(end) + 0.5}})
	}
	return &lineSeries{
		Name: "filler turns", Type: "line", Color: "#ced4da", LegendIcon: "rect",
		Data: []item{}, MarkArea: area, Tooltip: &seriesShow{false},
	}
}

// percent formats a 0..1 share as a whole percentage.
func percent(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

func kindName(kind string) string {
	if kind == "base" {
		return "baseline"
	}
	return kind
}

// escBraces stops echarts from expanding {a}, {b}, {@name}… in untrusted
// text: a tooltip formatter string is a template before it is HTML.
var escBraces = strings.NewReplacer("{", "&#123;", "}", "&#125;")

// esc makes untrusted text inert in a tooltip, which echarts sets as HTML:
// markup is escaped, template braces are escaped, newlines are kept.
func esc(s string) string {
	s = escBraces.Replace(html.EscapeString(s))
	return strings.ReplaceAll(s, "\n", "<br/>")
}

// thousands formats n as 31,234.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// optionVisitor adds what go-echarts has no typed option for: the stamp
// (echarts' graphic component), tooltip settings for long text, the
// title's gap and ticks on whole turns.
type optionVisitor struct {
	charts.BaseConfigurationVisitor
	stamp    bool
	lastTurn int
	extra    []any // series appended after go-echarts' own
}

// Visit appends the extra series, and adds the red stamp when the baseline
// gate was bypassed.
func (v optionVisitor) Visit(option map[string]any) {
	// go-echarts writes no series as null; echarts wants a list, and an
	// empty run still gets its axes drawn.
	series := []any{}
	if s, ok := option["series"].(charts.MultiSeries); ok {
		for _, one := range s {
			series = append(series, one)
		}
	}
	option["series"] = append(series, v.extra...)
	if !v.stamp {
		return
	}
	option["graphic"] = []graphicText{{
		Type: "text",
		Left: "center",
		Top:  62,
		Z:    100,
		Style: graphicStyle{
			Text:            stampText,
			Fill:            stampColor,
			Font:            "bold 17px sans-serif",
			BackgroundColor: "rgba(201, 42, 42, 0.08)",
			BorderColor:     stampColor,
			BorderWidth:     3,
			BorderRadius:    4,
			Padding:         []int{8, 14},
		},
	}}
}

// VisitTitleOpt widens the gap between title and subtitle, which go-echarts
// cannot set: with echarts' default (10) the SVG renderer draws the bold
// title touching its subtitle.
func (v optionVisitor) VisitTitleOpt(title opts.Title) any {
	return struct {
		opts.Title
		ItemGap int `json:"itemGap"`
	}{title, 16}
}

// VisitXAxis puts the ticks and labels on whole turns, with echarts'
// customValues (5.5.1+), which go-echarts has no field for. Left to
// itself, echarts counts ticks from the axis minimum, 0.5.
func (v optionVisitor) VisitXAxis(axes []opts.XAxis) any {
	turns := make([]int, v.lastTurn)
	for i := range turns {
		turns[i] = i + 1
	}
	type onTurns struct {
		Show         bool  `json:"show"`
		CustomValues []int `json:"customValues"`
	}
	type turnAxis struct {
		opts.XAxis
		// Shallower than opts.XAxis's fields of the same name, so these
		// are the ones encoding/json writes.
		AxisLabel onTurns `json:"axisLabel"`
		AxisTick  onTurns `json:"axisTick"`
	}
	out := make([]turnAxis, len(axes))
	for i, a := range axes {
		out[i] = turnAxis{a, onTurns{true, turns}, onTurns{true, turns}}
	}
	return out
}

// VisitTooltipOpt replaces go-echarts' tooltip, which lacks confine and
// extraCssText: criteria texts are long, and a tooltip must stay inside the
// chart and wrap.
func (v optionVisitor) VisitTooltipOpt(opts.Tooltip) any {
	return map[string]any{
		"show":         true,
		"trigger":      "item",
		"confine":      true,
		"extraCssText": "max-width: 480px; white-space: normal; overflow-wrap: anywhere;",
	}
}

type graphicText struct {
	Type  string       `json:"type"`
	Left  string       `json:"left"`
	Top   int          `json:"top"`
	Z     int          `json:"z"`
	Style graphicStyle `json:"style"`
}

type graphicStyle struct {
	Text            string `json:"text"`
	Fill            string `json:"fill"`
	Font            string `json:"font"`
	BackgroundColor string `json:"backgroundColor"`
	BorderColor     string `json:"borderColor"`
	BorderWidth     int    `json:"borderWidth"`
	BorderRadius    int    `json:"borderRadius"`
	Padding         []int  `json:"padding"`
}

// skillNote is the judge-free signal of whether the Skill tool ran.
func skillNote(p Point) string {
	if p.SkillInvoked {
		return " (Skill tool invoked)"
	}
	return ""
}
