package chart

// This file draws the pass rates across conversations, diluted and fresh,
// with their Wilson intervals, and the shading of the filler turns.

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/vibe-test/vibe-test/internal/plan"
)

// errorCap is half the width of an error bar's caps, in turns, on a
// ten-turn axis.
const errorCap = 0.06

// The rate series' legend names, the same on both charts.
const (
	dilutedName = "diluted pass rate"
	freshName   = "fresh pass rate (same probe, new session)"
)

// rateSpec says how to draw one arm's pass rates.
type rateSpec struct {
	name, color, symbol string
	// x places a rate on the x axis; false leaves it out (its context
	// is unknown).
	x       func(TurnRate) (float64, bool)
	halfCap float64 // half the width of the error bars' caps, in x units
	noLine  bool    // points and intervals only
	fresh   bool    // the fresh arm: its context is a new session's
	// beside: the x is the diluted rate's context, not the fresh
	// session's own, and the tooltip says so.
	beside bool
	label  bool    // name each point ("baseline", "probe 2") on the chart
	near   float64 // names of points closer than this on x would collide
	// asked is the range of turns each probe was asked at, by probe
	// number, for the tooltip.
	asked map[int][2]int
}

// freshDodge sets the diluted and fresh rates apart at a probe turn, on a
// ten-turn axis.
const freshDodge = 0.12

// rateSeries is the pass rate across conversations with its Wilson 95%
// interval as error bars, at the turns that more than one conversation
// reached: at a turn with one, the rate is that conversation's own point
// and its interval says nothing. Nil when no turn has more than one.
func rateSeries(rates []TurnRate, spec rateSpec) *lineSeries {
	s := &lineSeries{
		Name: spec.name, Type: "line", Color: spec.color,
		Symbol: spec.symbol, SymbolSize: 14, ShowSymbol: true, ConnectNulls: true,
		// Over the conversations' lines: it is the summary of them.
		Z:         5,
		LineStyle: &lineStyle{Width: 2.5},
		Data:      []item{},
	}
	bars := &markLine{
		Silent: true, Symbol: []string{"none", "none"},
		LineStyle: lineStyle{Color: spec.color, Width: 1.5, Type: "solid"},
		Emphasis:  disabled{true},
		Data:      [][2]markEnd{},
	}
	s.MarkLine = bars
	if spec.noLine {
		s.LineStyle = &lineStyle{Width: 0}
	}
	var named [][3]float64 // x, rate and level of each name drawn
	for _, r := range rates {
		if r.N < 2 {
			continue
		}
		x, ok := spec.x(r)
		if !ok {
			continue
		}
		x, rate, lo, hi := round3(x), round3(r.Rate()), round3(r.Lo), round3(r.Hi)
		p := item{Value: [2]float64{x, rate}, Tooltip: tooltip{Formatter: rateTooltip(r, spec)}}
		if spec.label {
			// A name a line higher than those of the rates close by, so
			// that they do not print over each other.
			level := 0
			for slices.ContainsFunc(named, func(n [3]float64) bool {
				return n[2] == float64(level) && math.Abs(n[0]-x) < spec.near && math.Abs(n[1]-rate) < 0.1
			}) {
				level++
			}
			named = append(named, [3]float64{x, rate, float64(level)})
			p.Label = &markLabel{Show: true, Position: "top", Offset: []int{0, -4 - 14*level}, Formatter: rateName(r), Color: spec.color, FontSize: 12, FontWeight: "bold"}
		}
		s.Data = append(s.Data, p)
		bars.Data = append(bars.Data,
			[2]markEnd{{[2]float64{x, lo}}, {[2]float64{x, hi}}},
			[2]markEnd{{[2]float64{round3(x - spec.halfCap), lo}}, {[2]float64{round3(x + spec.halfCap), lo}}},
			[2]markEnd{{[2]float64{round3(x - spec.halfCap), hi}}, {[2]float64{round3(x + spec.halfCap), hi}}},
		)
	}
	if len(s.Data) == 0 {
		return nil
	}
	return s
}

// rateName names a rate's turn for a label: "baseline", "probe 2", or for
// a run that numbered no probes, "turn 6".
func rateName(r TurnRate) string {
	switch {
	case r.Probe > 0:
		return fmt.Sprintf("probe %d", r.Probe)
	case r.Turn == 1:
		return "baseline"
	}
	return fmt.Sprintf("turn %d", r.Turn)
}

// rateTooltip is the HTML of a pass rate's tooltip. The population is the
// only text that is not ours.
func rateTooltip(r TurnRate, spec rateSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<b>%s · ", html.EscapeString(spec.name))
	if r.Probe > 0 {
		fmt.Fprintf(&b, "probe %d · ", r.Probe)
	}
	if spec.fresh && r.Probe > 0 {
		// Asked as the first message of a new session: the turn the
		// record gives a fresh rate is the seed's, no turn it was at.
		b.WriteString("asked in a new session</b><br/>")
	} else if span, ok := spec.asked[r.Probe]; ok && r.Probe > 0 && span[0] < span[1] {
		fmt.Fprintf(&b, "median turn %d</b> (asked at turns %d–%d)<br/>", r.Turn, span[0], span[1])
	} else {
		fmt.Fprintf(&b, "turn %d</b><br/>", r.Turn)
	}
	who := "conversations"
	if r.Population != "" {
		who = esc(r.Population)
	}
	fmt.Fprintf(&b, "%d of %d passed (%s): %s<br/>", r.Passes, r.N, who, percent(r.Rate()))
	fmt.Fprintf(&b, "Wilson 95%% interval: %s – %s", percent(r.Lo), percent(r.Hi))
	if r.ContextTokens > 0 {
		if spec.fresh {
			fmt.Fprintf(&b, "<br/>context: %s tokens (median; a new session)", thousands(r.ContextTokens))
		} else {
			fmt.Fprintf(&b, "<br/>context: %s tokens (median)", thousands(r.ContextTokens))
		}
	}
	if spec.beside {
		b.WriteString("<br/>drawn beside the probe's diluted rate for comparison, not at its own context")
	}
	if r.AfterCompaction > 0 {
		fmt.Fprintf(&b, "<br/>%d of %d asked after a compaction", r.AfterCompaction, r.N)
	}
	return b.String()
}

// dilutedOf finds the diluted rate of the probe whose fresh rate is f: by
// probe number, or for a run that numbered no probes, by turn.
func dilutedOf(f TurnRate, rates []TurnRate) (TurnRate, bool) {
	for _, r := range rates {
		if f.Probe > 0 && r.Probe == f.Probe || f.Probe == 0 && r.Probe == 0 && r.Turn == f.Turn {
			return r, true
		}
	}
	return TurnRate{}, false
}

// probeTurns is the range of turns each numbered probe was asked at
// across conversations.
func probeTurns(convs []Conversation) map[int][2]int {
	span := map[int][2]int{}
	for _, c := range convs {
		for _, p := range c.Turns {
			if p.Probe == 0 || p.Kind != plan.KindProbe {
				continue
			}
			s, ok := span[p.Probe]
			if !ok {
				s = [2]int{p.Turn, p.Turn}
			}
			span[p.Probe] = [2]int{min(s[0], p.Turn), max(s[1], p.Turn)}
		}
	}
	return span
}

// fillerSeries shades the filler turns (turns of kind "filler" in some
// conversation and judged in none), a run of adjacent ones as one area. A
// schedule that dilutes to context sizes asks its probes at different
// turns in different conversations: a turn that is a probe in one of them
// is not shaded, lest the shading cover the probes. It is a series of its
// own, with no data, so the legend can hide the shading and hiding a
// conversation does not. Nil when there are no fillers.
func fillerSeries(convs []Conversation) *lineSeries {
	fillers, judgedAt := map[int]bool{}, map[int]bool{}
	last := 0
	for _, c := range convs {
		for _, p := range c.Turns {
			switch {
			case p.Kind == plan.KindFiller:
				fillers[p.Turn] = true
				last = max(last, p.Turn)
			case judged(p):
				judgedAt[p.Turn] = true
			}
		}
	}
	for t := range judgedAt {
		delete(fillers, t)
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

// compactionSeries draws, on the turn chart, a dashed vertical line where
// some conversation's session was compacted (between two turns), labelled
// "compacted". It is silent: the turns' own tooltips say what the
// compaction did. Nil when no session was compacted.
func compactionSeries(convs []Conversation) *lineSeries {
	at := map[float64]bool{}
	var xs []float64
	for _, c := range convs {
		for _, k := range compactionsOf(c) {
			if !at[k.X] {
				at[k.X] = true
				xs = append(xs, k.X)
			}
		}
	}
	if len(xs) == 0 {
		return nil
	}
	slices.Sort(xs)
	lines := &verticalLines{
		Silent: true, Symbol: []string{"none", "none"},
		LineStyle: lineStyle{Color: compactionColor, Width: 2, Type: "dashed"},
		Label:     markLabel{Show: true, Position: "end", Formatter: "compacted", Color: compactionColor, FontSize: 11, FontWeight: "bold"},
		Emphasis:  disabled{true},
	}
	for i, x := range xs {
		l := xLine{XAxis: x}
		// Every other label a line higher, so that the labels of
		// compactions a few turns apart do not run into each other.
		if i%2 == 1 {
			label := lines.Label
			label.Offset = []int{0, -14}
			l.Label = &label
		}
		lines.Data = append(lines.Data, l)
	}
	return &lineSeries{
		Name: compactionName, Type: "line", Color: compactionColor,
		Data: []item{}, MarkLine: lines, Tooltip: &seriesShow{false},
	}
}

// compactionName is the compaction marks' legend name on the turn chart.
const compactionName = "compaction"

// compaction is one compaction of a conversation's session, placed for
// both charts.
type compaction struct {
	X     float64 // on the turn axis: half a turn before the first turn asked after it
	Words string  // what it did, from Point.Compaction ("" not recorded)
	// Turn is the first turn asked on the compacted session; Before and
	// After the context of the last turn answered before the compaction
	// and of that turn (0: unknown).
	Turn          int
	Before, After int64
}

// compactionsOf finds the compactions of c. A turn whose Compaction is set
// records one: run before its prompt when the turn was asked after a
// compaction (--compact-before), else during the turn (the CLI compacting
// on its own), so that the next turn is the first on the compacted
// session. A turn asked after a compaction that no turn recorded (the
// session was compacted after the previous turn) marks one too.
func compactionsOf(c Conversation) []compaction {
	var out []compaction
	var before int64 // the last context answered in so far
	var prev Point
	for i, p := range c.Turns {
		recorded := p.Compaction != ""
		unrecorded := !recorded && p.AfterCompaction && !prev.AfterCompaction && prev.Compaction == ""
		switch {
		case recorded && !p.AfterCompaction:
			// During p: the first turn on the compacted session is the
			// next one that ran.
			k := compaction{X: float64(p.Turn) + 0.5, Words: p.Compaction, Turn: p.Turn + 1, Before: p.ContextTokens}
			if k.Before == 0 {
				k.Before = before
			}
			for _, q := range c.Turns[i+1:] {
				if q.ContextTokens > 0 {
					k.Turn, k.After = q.Turn, q.ContextTokens
					break
				}
			}
			out = append(out, k)
		case recorded || unrecorded:
			out = append(out, compaction{X: float64(p.Turn) - 0.5, Words: p.Compaction, Turn: p.Turn, Before: before, After: p.ContextTokens})
		}
		if p.ContextTokens > 0 {
			before = p.ContextTokens
		}
		prev = p
	}
	return out
}
