package chart

// This file adds to the option what go-echarts has no typed option for:
// the bypass stamp, tooltip settings, the title gap and whole-turn ticks.

import (
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// optionVisitor adds what go-echarts has no typed option for: the stamp
// (echarts' graphic component), tooltip settings for long text, the
// title's gap and ticks on whole turns.
type optionVisitor struct {
	charts.BaseConfigurationVisitor
	stamp    bool
	lastTurn int
	extra    []any // series appended after go-echarts' own
	// valueAxis: the x axis is not turns (the context chart's), left as
	// go-echarts writes it.
	valueAxis bool
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
	if v.valueAxis {
		// The context chart's subtitle is its note, several lines long:
		// without a line height the SVG renderer draws them over each
		// other.
		type lines struct {
			LineHeight int    `json:"lineHeight"`
			Color      string `json:"color"`
		}
		return struct {
			opts.Title
			ItemGap      int   `json:"itemGap"`
			SubtextStyle lines `json:"subtextStyle"`
		}{title, 12, lines{16, "#495057"}}
	}
	return struct {
		opts.Title
		ItemGap int `json:"itemGap"`
	}{title, 16}
}

// VisitXAxis puts the ticks and labels on whole turns, with echarts'
// customValues (5.5.1+), which go-echarts has no field for. Left to
// itself, echarts counts ticks from the axis minimum, 0.5. A long
// conversation gets a tick on every turn but a label on turn 1 and every
// 2nd, 5th or 10th… turn, so that the labels do not run into each other.
func (v optionVisitor) VisitXAxis(axes []opts.XAxis) any {
	if v.valueAxis {
		return axes
	}
	turns := make([]int, v.lastTurn)
	for i := range turns {
		turns[i] = i + 1
	}
	labels := turns
	if step := labelStep(v.lastTurn); step > 1 {
		labels = []int{1}
		for t := step; t <= v.lastTurn; t += step {
			labels = append(labels, t)
		}
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
		out[i] = turnAxis{a, onTurns{true, labels}, onTurns{true, turns}}
	}
	return out
}

// maxTurnLabels is how many turn numbers fit along the turn axis.
const maxTurnLabels = 25

// labelStep is the gap between labelled turns on an axis of last turns:
// 1, 2, 5, 10, 20, 50…, the smallest that keeps to maxTurnLabels.
func labelStep(last int) int {
	for step := 1; ; step *= 10 {
		for _, s := range []int{step, 2 * step, 5 * step} {
			if last/s <= maxTurnLabels {
				return s
			}
		}
	}
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
