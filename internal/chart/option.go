package chart

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
)

// stampText is the red stamp's text, shown when the baseline gate was
// bypassed.
const stampText = record.BypassBanner

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
	// The context chart's entries are "conv N" but for its rates: about
	// twelve fit a row, measured in Chromium; ten leaves room.
	contextLegendPerRow = 10
	// chartHeight is the chart's height with a one-row legend; each more
	// row of legend adds its own height, so the plot keeps its size
	// (it was squashed to 22 px at 50 conversations). Past maxLegendRows
	// the legend is one row that pages (echarts' scroll legend): 200
	// conversations would have made it 67 rows.
	chartHeight   = 600
	maxLegendRows = 8
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
	// compactionColor draws where the CLI compacted a session.
	compactionColor = "#5c7cfa"
	// Filler turns are shaded light grey: context, not data.
	fillerShade = "rgba(134, 142, 150, 0.13)"
	fillerText  = "#868e96"
)

// build turns d into a go-echarts line chart, validated and ready for
// JSON(). It reports data it cannot draw honestly instead of guessing.
func build(d Data) (*charts.Line, error) {
	lastTurn, err := checkConversations(d.Conversations)
	if err != nil {
		return nil, err
	}
	rates, fresh, err := checkRates(d.Stats)
	if err != nil {
		return nil, err
	}
	for _, r := range slices.Concat(rates, fresh) {
		lastTurn = max(lastTurn, r.Turn)
	}
	// Marks sized in turns were tuned on ten turns; a longer axis packs
	// more turns into the same width, so they grow with it (capped, so
	// that a dodged mark never reaches the next turn).
	scale := float64(lastTurn) / minTurns
	halfCap, freshDx := min(errorCap*scale, 0.2), min(freshDodge*scale, 0.4)
	asked := probeTurns(d.Conversations)
	atTurn := func(dx float64) func(TurnRate) (float64, bool) {
		return func(r TurnRate) (float64, bool) { return float64(r.Turn) + dx, true }
	}
	// Side by side at each probe: diluted just left of the turn, fresh
	// just right, so the two intervals never hide each other.
	rate := rateSeries(rates, rateSpec{name: dilutedName, color: rateColor, symbol: "diamond", x: atTurn(0), halfCap: halfCap, asked: asked})
	var freshRate *lineSeries
	if len(fresh) > 0 {
		if rate != nil {
			rate = rateSeries(rates, rateSpec{name: dilutedName, color: rateColor, symbol: "diamond", x: atTurn(-freshDx), halfCap: halfCap, asked: asked})
		}
		// Beside the diluted rate of the same probe: on a diluted-to
		// schedule the fresh rate's own turn is the seed's, not the
		// median turn the diluted one is drawn at.
		besideDiluted := func(f TurnRate) (float64, bool) {
			if r, ok := dilutedOf(f, rates); ok {
				return float64(r.Turn) + freshDx, true
			}
			return float64(f.Turn) + freshDx, true
		}
		freshRate = rateSeries(fresh, rateSpec{name: freshName, color: freshColor, symbol: "triangle", x: besideDiluted, halfCap: halfCap, noLine: true, fresh: true})
	}

	yName, yMinInterval, yMaxInterval, yNameGap := "judged result (1 = pass, 0 = fail)", 1.0, 0.0, 30
	if rate != nil {
		// The pass rate lives between 0 and 1: ticks on the quarters help
		// read it (echarts picks 0.3 steps if left to itself), and their
		// labels ("0.75") are wider, so the name moves out.
		yName, yMinInterval, yMaxInterval, yNameGap = "result (1 = pass, 0 = fail) · pass rate", 0.25, 0.25, 40
	}

	// Room at the top for the title, the stamp under it when there is
	// one, and the compactions' labels, in two rows over the grid.
	fillers := fillerSeries(d.Conversations)
	compactions := compactionSeries(d.Conversations)
	top := 90
	if d.GateBypassed {
		top += 50
	}
	if compactions != nil {
		top += 14
	}
	gridTop := strconv.Itoa(top)
	// Room at the bottom for the axis name and the legend, which wraps
	// onto more rows as conversations add entries (two each).
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
	if compactions != nil {
		entries++
	}
	legendType, legendExtra := legendLayout(entries, legendPerRow)
	gridBottom := strconv.Itoa(80 + legendExtra)

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
			Height:    strconv.Itoa(chartHeight+legendExtra) + "px",
			// SVG keeps text crisp and selectable, and lets a test see
			// what was drawn in the DOM.
			Renderer: "svg",
			Theme:    "white",
		}),
		// A report is read, not watched; no animation also makes
		// screenshots deterministic.
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: d.Title, Subtitle: d.Subtitle, Left: "center", Top: "10"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: legendType, Bottom: "10"}),
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
		results, marks := resultSeries(c, i, func(p Point) (float64, bool) { return float64(p.Turn) + dodge, true })
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
	if compactions != nil {
		extra = append(extra, compactions)
	}
	line.Accept(optionVisitor{stamp: d.GateBypassed, lastTurn: lastTurn, extra: extra})
	line.Validate()
	return line, nil
}

// checkConversations checks every point and returns the last turn the
// turn axis shows: the last turn of any conversation, and at least
// minTurns.
func checkConversations(convs []Conversation) (lastTurn int, err error) {
	lastTurn = minTurns
	for _, c := range convs {
		seen := map[int]bool{}
		for _, p := range c.Turns {
			if err := checkPoint(p); err != nil {
				return 0, fmt.Errorf("chart: %q turn %d: %w", c.Label, p.Turn, err)
			}
			if seen[p.Turn] {
				return 0, fmt.Errorf("chart: %q has turn %d twice", c.Label, p.Turn)
			}
			seen[p.Turn] = true
			lastTurn = max(lastTurn, p.Turn)
		}
	}
	return lastTurn, nil
}

// checkPoint rejects values the chart has no way to draw. A typo in a
// result would otherwise vanish from the chart without a trace.
func checkPoint(p Point) error {
	if p.Turn < 1 {
		return errors.New("turn must be 1 or more")
	}
	switch p.Kind {
	case plan.KindBase, plan.KindFiller, plan.KindProbe:
	case "":
		// A turn of the schedule the conversation never reached.
		if p.Result != "" || p.ContextTokens != 0 {
			return errors.New("a turn never reached (no kind) has a result or a context size")
		}
	default:
		return fmt.Errorf("unknown kind %q", p.Kind)
	}
	switch p.Result {
	case "pass", "fail", "judge-error", "uncertain", "":
	default:
		return fmt.Errorf("unknown result %q", p.Result)
	}
	if p.Probe < 0 || (p.Probe > 0 && p.Kind != plan.KindProbe) {
		return fmt.Errorf("probe number %d on a turn of kind %q", p.Probe, p.Kind)
	}
	return nil
}

// checkRates returns the diluted and fresh pass rates of s, after checking
// them: one rate per baseline or probe and arm.
func checkRates(s *Stats) (rates, fresh []TurnRate, err error) {
	if s == nil {
		return nil, nil, nil
	}
	for _, set := range [][]TurnRate{s.PerTurn, s.Fresh} {
		// A probe's median turn may tie with another's; the probe
		// number tells them apart (runs from before it have none).
		seen := map[[2]int]bool{}
		for _, r := range set {
			if err := checkRate(r); err != nil {
				return nil, nil, fmt.Errorf("chart: pass rate at turn %d: %w", r.Turn, err)
			}
			key := [2]int{r.Probe, r.Turn}
			if seen[key] {
				return nil, nil, fmt.Errorf("chart: pass rate at turn %d twice", r.Turn)
			}
			seen[key] = true
		}
	}
	return s.PerTurn, s.Fresh, nil
}

// checkRate rejects a pass rate whose numbers contradict each other: an
// interval that misses its own rate would draw a lie.
func checkRate(r TurnRate) error {
	const eps = 1e-9
	switch {
	case r.Turn < 1:
		return errors.New("turn must be 1 or more")
	case r.Probe < 0 || r.ContextTokens < 0 || r.AfterCompaction < 0 || r.AfterCompaction > r.N:
		return fmt.Errorf("probe %d, context %d, %d of %d after a compaction", r.Probe, r.ContextTokens, r.AfterCompaction, r.N)
	case r.N < 0 || r.Passes < 0 || r.Passes > r.N:
		return fmt.Errorf("%d passes of %d", r.Passes, r.N)
	case math.IsNaN(r.Lo) || math.IsNaN(r.Hi) || r.Lo < -eps || r.Hi > 1+eps || r.Lo > r.Hi+eps:
		return fmt.Errorf("interval [%g, %g] is not inside [0, 1]", r.Lo, r.Hi)
	case r.N > 0 && (r.Rate() < r.Lo-eps || r.Rate() > r.Hi+eps):
		return fmt.Errorf("rate %g is outside its interval [%g, %g]", r.Rate(), r.Lo, r.Hi)
	}
	return nil
}

// legendLayout is how a chart's legend of entries, perRow to a row, lays
// out: the echarts legend type ("" for the plain one that wraps, "scroll"
// past maxLegendRows), and the pixels its rows past the first take, which
// the chart adds to its height so that the plot keeps its own.
func legendLayout(entries, perRow int) (legendType string, extra int) {
	rows := max(1, (entries+perRow-1)/perRow)
	if rows > maxLegendRows {
		return "scroll", 0
	}
	return "", legendRowHeight * (rows - 1)
}

func pageTitle(title string) string {
	if title == "" {
		return "vibe-test decay chart"
	}
	return title
}
