package chart

// This file draws the second chart of a run whose probes fell at different
// turns, or after a compaction: pass rate against the context each turn was
// answered in.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"
)

const (
	// contextChartID names the context chart's div and variables.
	contextChartID = "context"
	// contextTitle is the context chart's title.
	contextTitle = "pass rate against context size"
	// compactionArrowName is the compactions' legend name on the context
	// chart.
	compactionArrowName = "compaction (context before → after)"
	// Offsets on the context axis, as shares of its length: the fresh
	// rate beside the diluted one, and half an error bar's cap.
	contextDodge = 0.015
	contextCap   = 0.006
	// contextNameWidth is about the width of a rate's name ("probe 2")
	// on the context axis, as a share of its length.
	contextNameWidth = 0.08
)

// contextAxisLabels formats the context axis's labels as 50k. echarts
// takes a function for that, which the option JSON cannot carry (this
// package spells out go-echarts' function marker, see optionJSON), so the
// chart's script sets it after the option: fixed code, no run text.
const contextAxisLabels = `%MY_ECHARTS%.setOption({xAxis: {axisLabel: {formatter: function (v) { return v >= 1000 ? Math.round(v / 100) / 10 + "k" : String(v); }}}});`

// ContextOptionJSON returns the echarts option of chart.html's second
// chart, pass rate against context size, indented; nil when d.ByContext is
// false and the page has no such chart. Like OptionJSON it needs no echarts
// script. The axis labels' formatter is set by the page's script, not here.
func ContextOptionJSON(d Data) ([]byte, error) {
	line, err := buildContext(d)
	if line == nil || err != nil {
		return nil, err
	}
	return optionJSON(line)
}

// buildContext turns d into the context chart, nil when d.ByContext is
// false.
//
// The x axis is the context in tokens. Each conversation's judged turns
// are points at the context they were answered in, 1 for pass and 0 for
// fail, hollow when asked after a compaction, with no line joining them: a
// compaction moves a conversation back along the axis, and a line would
// draw that as going back in time. Each compaction is an arrow from the
// context before it to the context after. The diluted pass rates (the
// baseline and each probe, at their median context) carry the trend, with
// their Wilson intervals and named on the chart. The fresh rates were
// measured in new sessions, which all have about the same small context:
// drawn there, three probes' intervals would pile up in one place,
// unreadable and far from what they are compared with, so each is drawn
// beside its probe's diluted rate, as on the turn chart, and the chart's
// note, the legend and the tooltip say so.
func buildContext(d Data) (*charts.Line, error) {
	if !d.ByContext {
		return nil, nil
	}
	if _, err := checkConversations(d.Conversations); err != nil {
		return nil, err
	}
	rates, fresh, err := checkRates(d.Stats)
	if err != nil {
		return nil, err
	}

	// The axis ends a little past the largest context drawn, on a round
	// number.
	var most int64
	for _, c := range d.Conversations {
		for _, p := range c.Turns {
			most = max(most, p.ContextTokens)
		}
	}
	for _, r := range rates {
		most = max(most, r.ContextTokens)
	}
	xMax := roundUp(float64(most) * 1.06)
	dodge, halfCap := round3(contextDodge*xMax), round3(contextCap*xMax)

	var series []any
	for i, c := range d.Conversations {
		points, marks := resultSeries(c, i, func(p Point) (float64, bool) {
			return float64(p.ContextTokens), p.ContextTokens > 0
		})
		s := &lineSeries{
			Name: c.Label, Type: "line", Color: palette[i%len(palette)],
			Symbol: "circle", SymbolSize: 10, ShowSymbol: true,
			LineStyle: &lineStyle{Width: 0}, Data: points,
		}
		if len(marks) > 0 {
			s.MarkPoint = &markPoints{Data: marks}
		}
		series = append(series, s)
	}

	atContext := func(r TurnRate) (float64, bool) { return float64(r.ContextTokens), r.ContextTokens > 0 }
	// The line joins the rates in order of context, unless a compaction
	// moved some probe back along the axis: then the order of context is
	// not the order they were asked in.
	compacted := slices.ContainsFunc(rates, func(r TurnRate) bool { return r.AfterCompaction > 0 })
	byContext := slices.Clone(rates)
	slices.SortStableFunc(byContext, func(a, b TurnRate) int { return cmp.Compare(a.ContextTokens, b.ContextTokens) })
	rate := rateSeries(byContext, rateSpec{name: dilutedName, color: rateColor, symbol: "diamond",
		x: atContext, halfCap: halfCap, label: true, near: contextNameWidth * xMax, noLine: compacted, asked: probeTurns(d.Conversations)})
	if rate != nil {
		series = append(series, rate)
	}
	// Each fresh rate beside its probe's diluted context: matched by
	// probe number, or by turn for a run that numbered no probes. Also
	// where the diluted rate is not drawn (one conversation: its own
	// points are the rate).
	dilutedAt := func(f TurnRate) (float64, bool) {
		r, ok := dilutedOf(f, rates)
		return float64(r.ContextTokens) + dodge, ok && r.ContextTokens > 0
	}
	freshRate := rateSeries(fresh, rateSpec{name: freshName, color: freshColor, symbol: "triangle",
		x: dilutedAt, halfCap: halfCap, noLine: true, fresh: true, beside: true})
	if freshRate != nil {
		series = append(series, freshRate)
	}
	arrows := compactionArrows(d.Conversations)
	if arrows != nil {
		series = append(series, arrows)
	}

	note := contextNote(d.Schedule, fresh, rate != nil, freshRate != nil, arrows != nil || compacted)
	gridTop := strconv.Itoa(70 + 17*len(note))
	legendType, legendExtra := legendLayout(len(series), contextLegendPerRow)
	gridBottom := strconv.Itoa(80 + legendExtra)

	line := charts.NewLine()
	line.Colors = palette
	line.ClearPresetAssets()
	line.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{
			ChartID: contextChartID, Width: "1000px", Height: strconv.Itoa(chartHeight+legendExtra) + "px", Renderer: "svg", Theme: "white",
		}),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: contextTitle, Subtitle: strings.Join(note, "\n"), Left: "center", Top: "10"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: legendType, Bottom: "10"}),
		charts.WithGridOpts(opts.Grid{Top: gridTop, Bottom: gridBottom, Left: "80", Right: "90"}),
		charts.WithXAxisOpts(opts.XAxis{
			Type: "value", Name: "context (tokens)", NameLocation: "middle", NameGap: 30,
			// From 0: a fresh session's context is the start of the axis.
			Min: 0, Max: xMax,
			AxisLabel: &opts.AxisLabel{Show: opts.Bool(true), ShowMinLabel: opts.Bool(true)},
		}),
		charts.WithYAxisOpts(opts.YAxis{
			Type: "value", Name: "result (1 = pass, 0 = fail) · pass rate", NameLocation: "middle", NameGap: 40,
			Min: 0, Max: 1, MinInterval: 0.25, MaxInterval: 0.25,
			AxisLabel: &opts.AxisLabel{Show: opts.Bool(true), ShowMinLabel: opts.Bool(true), ShowMaxLabel: opts.Bool(true)},
		}),
	)
	line.AddJSFuncStrs(types.FuncStr(contextAxisLabels))
	line.Accept(optionVisitor{valueAxis: true, extra: series})
	line.Validate()
	return line, nil
}

// contextNote is the context chart's subtitle, line by line: the schedule,
// and how to read what is drawn.
func contextNote(schedule string, fresh []TurnRate, drawsRate, drawsFresh, compaction bool) []string {
	var note []string
	if schedule != "" {
		note = append(note, schedule)
	}
	if drawsRate {
		note = append(note, "Each judged turn at the context it was answered in: 1 = pass, 0 = fail. Black diamonds: the diluted pass rate")
		note = append(note, "of the baseline and each probe at its median context, with its Wilson 95% interval.")
	} else {
		note = append(note, "Each judged turn at the context it was answered in: 1 = pass, 0 = fail.")
	}
	if compaction {
		note = append(note, "Hollow points were asked after the CLI compacted the session; arrows show a compaction shrinking the context.")
	}
	if drawsFresh {
		about := ""
		var sizes []int64
		for _, r := range fresh {
			if r.ContextTokens > 0 {
				sizes = append(sizes, r.ContextTokens)
			}
		}
		if len(sizes) > 0 {
			slices.Sort(sizes)
			about = fmt.Sprintf(", about %s tokens of context", thousands(sizes[len(sizes)/2]))
		}
		note = append(note, fmt.Sprintf("Green triangles: the same probe asked as the first message of a new session%s,", about))
		note = append(note, "drawn beside the probe's diluted rate for comparison, not at their own context.")
	}
	return note
}

// compactionArrows is one series of every compaction on the context chart:
// a point at the context the first turn after it was answered in, whose
// tooltip says what the compaction did, and a silent arrow to it from the
// context of the turn before, at mid-height (no result lives there),
// staggered by conversation. Nil when no session was compacted.
func compactionArrows(convs []Conversation) *lineSeries {
	s := &lineSeries{
		Name: compactionArrowName, Type: "line", Color: compactionColor,
		// Small, so that the arrow's head shows beside it.
		Symbol: "rect", SymbolSize: 6, ShowSymbol: true,
		LineStyle: &lineStyle{Width: 0}, Data: []item{},
	}
	arrows := &arrowLines{
		Silent: true, Symbol: []string{"none", "arrow"}, SymbolSize: 10,
		LineStyle: lineStyle{Color: compactionColor, Width: 2, Type: "dashed"},
		Label:     seriesShow{false}, Emphasis: disabled{true},
		Data: [][2]arrowEnd{},
	}
	for i, c := range convs {
		y := round3(0.5 + 0.05*float64(i%5-2))
		for _, k := range compactionsOf(c) {
			if k.After == 0 {
				continue // no turn was answered on the compacted session
			}
			var b strings.Builder
			fmt.Fprintf(&b, "<b>%s · compaction before turn %d</b><br/>", esc(c.Label), k.Turn)
			if k.Before > 0 {
				fmt.Fprintf(&b, "context: %s → %s tokens (the turns either side)", thousands(k.Before), thousands(k.After))
				arrows.Data = append(arrows.Data, [2]arrowEnd{
					{Coord: [2]float64{float64(k.Before), y}, Symbol: "none"},
					{Coord: [2]float64{float64(k.After), y}, Symbol: "arrow"},
				})
			} else {
				fmt.Fprintf(&b, "context after: %s tokens", thousands(k.After))
			}
			if k.Words != "" {
				fmt.Fprintf(&b, "<br/>%s", esc(k.Words))
			}
			s.Data = append(s.Data, item{Value: [2]float64{float64(k.After), y}, Tooltip: tooltip{Formatter: b.String()}})
		}
	}
	if len(s.Data) == 0 {
		return nil
	}
	s.MarkLine = arrows
	return s
}

// roundUp rounds x up to a round number for an axis's end: a multiple of
// a tenth of its power of ten (163,000 → 170,000). 0 gives 10,000.
func roundUp(x float64) float64 {
	if x <= 0 {
		return 10000
	}
	step := math.Pow(10, math.Floor(math.Log10(x))) / 10
	return math.Ceil(x/step) * step
}
