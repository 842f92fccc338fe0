package chart

// This file draws the pass rates across conversations, diluted and fresh,
// with their Wilson intervals, and the shading of the filler turns.

import (
	"fmt"
	"html"
	"strings"

	"github.com/vibe-test/vibe-test/plan"
)

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
			if p.Kind == plan.KindFiller {
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
