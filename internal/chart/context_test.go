package chart

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// wilson is the Wilson 95% interval of k passes of n, for fixtures whose
// rates must agree with their intervals.
func wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.959964
	p, nf := float64(k)/float64(n), float64(n)
	centre := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return round3(max(0, centre-half) - 0.0005), round3(min(1, centre+half) + 0.0005)
}

func rateOf(probe, turn int, ctx int64, after, passes, n int, population string) TurnRate {
	lo, hi := wilson(passes, n)
	return TurnRate{Probe: probe, Turn: turn, ContextTokens: ctx, AfterCompaction: after, Population: population, Passes: passes, N: n, Lo: max(0, lo), Hi: min(1, hi)}
}

// contextRun is a run diluted to 50k, 100k and 150k tokens with /compact
// before probe 2 in conversations 2 and 3: the probes fall at different
// turns, the longest conversation runs past 40 turns, and conversation 1
// stopped before its last turns (kind ""). Each conversation's result at
// the baseline and probes 1-3 is given by results.
func contextRun() Data {
	results := [][4]string{
		{"pass", "pass", "pass", "fail"},
		{"pass", "pass", "fail", "fail"},
		{"pass", "fail", "pass", "judge-error"},
	}
	var convs []Conversation
	for i, res := range results {
		growth := int64(4000 + 600*i)
		ctx := int64(6000 + 300*i)
		c := Conversation{Label: fmt.Sprintf("conv %d", i+1), Status: "completed"}
		turn := 1
		c.Turns = append(c.Turns, Point{Turn: 1, Kind: "base", Result: res[0], ContextTokens: ctx, Status: "ok", ToolCalls: 2})
		after := false
		for probe, level := range []int64{50000, 100000, 150000} {
			for ctx+growth < level {
				turn++
				ctx += growth
				c.Turns = append(c.Turns, Point{Turn: turn, Kind: "filler", ContextTokens: ctx, Status: "ok", AfterCompaction: after})
			}
			turn++
			ctx += growth
			p := Point{Turn: turn, Kind: "probe", Probe: probe + 1, Result: res[probe+1], ContextTokens: ctx, Status: "ok", ToolCalls: 1, AfterCompaction: after}
			if probe == 1 && i > 0 {
				before := ctx - growth
				ctx = 18000 + 2000*int64(i)
				p.ContextTokens, p.AfterCompaction, after = ctx, true, true
				p.Compaction = fmt.Sprintf("/compact: %s → %s tokens, summary 3,900 tokens", thousands(before), thousands(ctx))
			}
			if res[probe+1] == "judge-error" {
				p.Escape, p.EscapeReason, p.VerdictError = true, "answered from memory", "the judge's answer was not JSON"
			}
			c.Turns = append(c.Turns, p)
		}
		convs = append(convs, c)
	}
	// Conversation 1 was planned to the longest one's length; it stopped.
	last := 0
	for _, c := range convs {
		last = max(last, c.Turns[len(c.Turns)-1].Turn)
	}
	for t := convs[0].Turns[len(convs[0].Turns)-1].Turn + 1; t <= last && t < convs[0].Turns[len(convs[0].Turns)-1].Turn+4; t++ {
		convs[0].Turns = append(convs[0].Turns, Point{Turn: t})
	}
	medianTurn := func(probe int) (int, int64, int) {
		var turns []int
		var ctxs []int64
		after := 0
		for _, c := range convs {
			for _, p := range c.Turns {
				if p.Probe == probe && p.Kind == "probe" {
					turns, ctxs = append(turns, p.Turn), append(ctxs, p.ContextTokens)
					if p.AfterCompaction {
						after++
					}
				}
			}
		}
		slices.Sort(turns)
		slices.Sort(ctxs)
		return turns[len(turns)/2], ctxs[len(ctxs)/2], after
	}
	const pop = "conversations whose baseline passed"
	t1, c1, a1 := medianTurn(1)
	t2, c2, a2 := medianTurn(2)
	t3, c3, a3 := medianTurn(3)
	return Data{
		Title:     "stock-ledger — decay against context",
		Subtitle:  "3 conversations · model claude-sonnet-5-5",
		Schedule:  "diluted to 50k, 100k, 150k tokens of context; /compact before probe 2",
		ByContext: true,
		Facts:     &Facts{SkillName: "stock-ledger", Isolation: "hermetic", Conversations: 3, Status: "completed"},
		Stats: &Stats{
			PerTurn: []TurnRate{
				rateOf(0, 1, 6300, 0, 3, 3, "all conversations"),
				rateOf(1, t1, c1, a1, 2, 3, pop),
				rateOf(2, t2, c2, a2, 2, 3, pop),
				rateOf(3, t3, c3, a3, 0, 2, pop),
			},
			// As the record has them: at the seed's probe turns, which
			// are not where this schedule asked the probes.
			Fresh: []TurnRate{
				rateOf(1, 6, 4100, 0, 3, 3, "fresh sessions"),
				rateOf(2, 8, 4100, 0, 3, 3, "fresh sessions"),
				rateOf(3, 10, 4200, 0, 2, 3, "fresh sessions"),
			},
			DilutedPopulation: pop, Alpha: 0.05,
		},
		Conversations: convs,
	}
}

// TestContextRunFixture guards the fixture's premises: the probes fall at
// different turns, the run is long, and compactions are in it.
func TestContextRunFixture(t *testing.T) {
	d := contextRun()
	span := probeTurns(d.Conversations)
	if span[1][0] == span[1][1] || span[3][1] < 40 {
		t.Fatalf("probe turns %v: want probe 1 at different turns and probe 3 past turn 40", span)
	}
	if p := d.Conversations[0].Turns[len(d.Conversations[0].Turns)-1]; p.Kind != "" {
		t.Fatalf("conv 1 ends with %+v, want a turn never reached", p)
	}
}

// hostileContext plants hostile text where the context chart puts run
// text: a label, what a compaction did, a population, the schedule.
func hostileContext(d Data) Data {
	d.Conversations[1].Label = hostile
	for i, p := range d.Conversations[1].Turns {
		if p.Compaction != "" {
			d.Conversations[1].Turns[i].Compaction = "</script>" + payload + " {a} __f__"
		}
	}
	d.Stats.PerTurn[2].Population = payload + " {b}"
	d.Schedule = hostile + " schedule"
	return d
}

// contextOption is the part of the context chart's option the tests read.
type contextOption struct {
	Title struct{ Text, Subtext string }
	XAxis []struct {
		Name     string
		Type     string
		Min, Max float64
	}
	Series []struct {
		Name      string
		Symbol    string
		LineStyle struct{ Width float64 }
		Data      []struct {
			Value   [2]float64
			Symbol  string
			Label   struct{ Formatter string }
			Tooltip struct{ Formatter string }
		}
		MarkLine struct {
			Silent bool
			Data   [][2]struct {
				Coord  [2]float64
				Symbol string
			}
		}
	}
}

func readContextOption(t *testing.T, d Data) contextOption {
	t.Helper()
	b, err := ContextOptionJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	var o contextOption
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("ContextOptionJSON is not JSON: %v\n%s", err, b)
	}
	return o
}

// TestContextOptionGolden pins both charts of a run diluted to context
// sizes, with compactions, 50 turns long.
func TestContextOptionGolden(t *testing.T) {
	for name, option := range map[string]func(Data) ([]byte, error){
		"by-context.context": ContextOptionJSON,
		"by-context.turns":   OptionJSON,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := option(contextRun())
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", name+".golden.json"), got)
		})
	}
}

// TestContextChart checks what the context chart plots: every judged
// turn at its own context, hollow after a compaction; the rates at their
// median context, named; the fresh rates beside them; one arrow per
// compaction from the context before it to the context after.
func TestContextChart(t *testing.T) {
	d := contextRun()
	o := readContextOption(t, d)
	if len(o.XAxis) != 1 || o.XAxis[0].Name != "context (tokens)" || o.XAxis[0].Type != "value" || o.XAxis[0].Min != 0 || o.XAxis[0].Max != 170000 {
		t.Errorf("x axis = %+v, want context (tokens) from 0 to 170,000", o.XAxis)
	}
	if !strings.HasPrefix(o.Title.Subtext, d.Schedule+"\n") {
		t.Errorf("the note does not start with the schedule: %q", o.Title.Subtext)
	}
	for _, want := range []string{"Hollow points were asked after the CLI compacted the session", "about 4,100 tokens", "drawn beside the probe's diluted rate for comparison, not at their own context"} {
		if !strings.Contains(o.Title.Subtext, want) {
			t.Errorf("the note lacks %q: %q", want, o.Title.Subtext)
		}
	}
	series := map[string]int{}
	for i, s := range o.Series {
		series[s.Name] = i
	}
	for i, c := range d.Conversations {
		s := o.Series[series[c.Label]]
		if s.LineStyle.Width != 0 {
			t.Errorf("%s: its points are joined by a line", c.Label)
		}
		var want, got []string
		for _, p := range c.Turns {
			if judged(p) && (p.Result == "pass" || p.Result == "fail") {
				symbol := ""
				if p.AfterCompaction {
					symbol = "emptyCircle"
				}
				want = append(want, fmt.Sprintf("%d,%s%s", p.ContextTokens, map[string]string{"pass": "1", "fail": "0"}[p.Result], symbol))
			}
		}
		for _, p := range s.Data {
			got = append(got, fmt.Sprintf("%g,%g%s", p.Value[0], p.Value[1], p.Symbol))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("conversation %d's points = %v, want %v", i+1, got, want)
		}
	}

	rate := o.Series[series[dilutedName]]
	var rates []string
	for _, p := range rate.Data {
		rates = append(rates, fmt.Sprintf("%s@%g", p.Label.Formatter, p.Value[0]))
	}
	var want []string
	byContext := slices.Clone(d.Stats.PerTurn)
	slices.SortFunc(byContext, func(a, b TurnRate) int { return int(a.ContextTokens - b.ContextTokens) })
	for _, r := range byContext {
		want = append(want, fmt.Sprintf("%s@%d", rateName(r), r.ContextTokens))
	}
	if strings.Join(rates, " ") != strings.Join(want, " ") {
		t.Errorf("diluted rates = %v, want %v", rates, want)
	}
	if rate.LineStyle.Width != 0 {
		t.Error("the diluted rates are joined by a line although a compaction moved probe 2 back along the axis")
	}
	if tip := rate.Data[1].Tooltip.Formatter; !strings.Contains(tip, "probe 2 · median turn") || !strings.Contains(tip, "2 of 3 asked after a compaction") {
		t.Errorf("probe 2's rate tooltip = %q", tip)
	}

	fresh := o.Series[series[freshName]]
	dodge := round3(contextDodge * 170000)
	for i, p := range fresh.Data {
		r := d.Stats.PerTurn[i+1]
		if p.Value[0] != float64(r.ContextTokens)+dodge {
			t.Errorf("fresh rate of probe %d at %g, want beside the diluted one at %d", r.Probe, p.Value[0], r.ContextTokens)
		}
		if tip := p.Tooltip.Formatter; !strings.Contains(tip, fmt.Sprintf("probe %d · asked in a new session</b>", r.Probe)) || !strings.Contains(tip, "(median; a new session)") || !strings.Contains(tip, "not at its own context") {
			t.Errorf("fresh rate tooltip = %q", tip)
		}
	}

	arrows := o.Series[series[compactionArrowName]]
	var got []string
	for _, a := range arrows.MarkLine.Data {
		got = append(got, fmt.Sprintf("%g→%g%s", a[0].Coord[0], a[1].Coord[0], a[1].Symbol))
	}
	want = nil
	for _, c := range d.Conversations {
		var before int64
		for _, p := range c.Turns {
			if p.Compaction != "" {
				want = append(want, fmt.Sprintf("%d→%d%s", before, p.ContextTokens, "arrow"))
			}
			if p.ContextTokens > 0 {
				before = p.ContextTokens
			}
		}
	}
	if len(want) != 2 || strings.Join(got, " ") != strings.Join(want, " ") || !arrows.MarkLine.Silent {
		t.Errorf("compaction arrows = %v (silent %v), want %v", got, arrows.MarkLine.Silent, want)
	}
	if len(arrows.Data) != 2 || !strings.Contains(arrows.Data[0].Tooltip.Formatter, "/compact: ") {
		t.Errorf("compaction points = %+v, want two saying what the compaction did", arrows.Data)
	}
}

// TestContextChartEscaping: run text reaches the context chart's tooltips
// escaped, markup and template braces both, and its option keeps to JSON
// that cannot end the script element.
func TestContextChartEscaping(t *testing.T) {
	d := hostileContext(contextRun())
	b, err := ContextOptionJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<", ">", "__f__"} {
		if bytes.Contains(b, []byte(bad)) {
			t.Errorf("the option holds %q as it is", bad)
		}
	}
	o := readContextOption(t, d)
	var tips []string
	for _, s := range o.Series {
		for _, p := range s.Data {
			tips = append(tips, p.Tooltip.Formatter)
		}
	}
	all := strings.Join(tips, "\n")
	for _, want := range []string{
		"<b>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; · compaction before turn",
		"&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &#123;a&#125; __f__",
		"(&lt;script&gt;alert(1)&lt;/script&gt; &#123;b&#125;)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no tooltip holds %q", want)
		}
	}
	for _, tip := range tips {
		if strings.Contains(tip, "<script") || strings.Contains(tip, "{a}") || strings.Contains(tip, "{b}") {
			t.Errorf("a tooltip holds run text unescaped: %s", tip)
		}
	}
	if o.Title.Subtext[:len(d.Schedule)] != d.Schedule {
		t.Errorf("the schedule in the note = %q, want the text as it is (SVG text, not HTML)", o.Title.Subtext)
	}
}

// TestContextChartSmall: a run by context with nothing to draw, or one
// conversation, still gives a chart; a lone conversation's fresh rates
// stand beside its probes' context, and the note leaves out the diluted
// rate that is not drawn.
func TestContextChartSmall(t *testing.T) {
	if o := readContextOption(t, Data{ByContext: true}); len(o.Series) != 0 || o.XAxis[0].Max != 10000 {
		t.Errorf("an empty run by context: %+v", o)
	}
	d := contextRun()
	d.Conversations = d.Conversations[:1]
	for i := range d.Stats.PerTurn {
		r := &d.Stats.PerTurn[i]
		r.N, r.Passes, r.Lo, r.Hi, r.AfterCompaction = 1, 1, 0.2065, 1, 0
	}
	o := readContextOption(t, d)
	var names []string
	for _, s := range o.Series {
		names = append(names, s.Name)
	}
	if want := []string{"conv 1", freshName}; !slices.Equal(names, want) {
		t.Errorf("series %v, want %v", names, want)
	}
	if strings.Contains(o.Title.Subtext, "Black diamonds") || strings.Contains(o.Title.Subtext, "Hollow") {
		t.Errorf("the note describes what is not drawn: %q", o.Title.Subtext)
	}
	// Without the facts' table, the report says the schedule under its
	// title.
	d.Facts = nil
	report, err := ReportHTML(d)
	if err != nil {
		t.Fatal(err)
	}
	if want := `<p class="sub">schedule: diluted to 50k, 100k, 150k tokens of context; /compact before probe 2</p>`; !strings.Contains(string(report), want) {
		t.Errorf("the report lacks %q", want)
	}
}

// TestContextPage renders a run with and without the context chart: with
// it, the page holds its element and one script more, after the turn
// chart and before the report, and the option in it is ContextOptionJSON's.
func TestContextPage(t *testing.T) {
	withScript(t, stubScript)
	if b, err := ContextOptionJSON(run(false)); b != nil || err != nil {
		t.Errorf("ContextOptionJSON of a run on the seed's schedule = %s, %v; want nothing", b, err)
	}
	if page := renderPageT(t, run(false)); strings.Contains(page, `id="context"`) {
		t.Error("a run on the seed's schedule has a context chart")
	}

	d := hostileContext(contextRun())
	page := renderPageT(t, d)
	for _, bad := range []string{hostile, payload, "<script>alert", "</script><script>", "__f__"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	turnAt, contextAt, reportAt := strings.Index(page, `id="decay"`), strings.Index(page, `id="context"`), strings.Index(page, `<div class="report"`)
	if !(turnAt >= 0 && turnAt < contextAt && contextAt < reportAt) {
		t.Errorf("turn chart at %d, context chart at %d, report at %d: want them in that order", turnAt, contextAt, reportAt)
	}
	// echarts, the turn chart's script and the context chart's.
	if n := strings.Count(strings.ToLower(page), "<script"); n != 3 {
		t.Errorf("page has %d <script elements, want 3", n)
	}
	if n := strings.Count(strings.ToLower(page), "</script"); n != 3 {
		t.Errorf("page has %d </script, want 3", n)
	}
	if n := strings.Count(page, string(stubScript)); n != 1 {
		t.Errorf("the echarts script is in the page %d times, want once", n)
	}
	m := regexp.MustCompile(`(?s)let option_context = (.*?)\n\s*goecharts_context\.setOption`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no context option in the page")
	}
	want, err := ContextOptionJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	if m[1] != string(want) {
		t.Errorf("the context option in the page differs from ContextOptionJSON:\npage: %s\nwant: %s", m[1], want)
	}
	if !strings.Contains(page, `goecharts_context.setOption({xAxis: {axisLabel: {formatter: function (v)`) {
		t.Error("the page does not format the context axis's labels")
	}
	report := page[reportAt:]
	for _, want := range []string{
		`<tr><th>schedule</th><td>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; schedule</td></tr>`,
		`<th>asked</th><th class="num">median turn</th><th class="num">median context</th><th class="num">after compaction</th>`,
		`<tr><td class="nw">probe 2</td>`,
		`<tr><td class="nw">probe 3</td><td class="num"><span class="muted">new session</span></td><td class="num">4,200</td>`,
		`compaction: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; {a} &#95;_f__</p>`,
		`<p class="task">asked after a compaction</p>`,
		`· probe 3 · <span class="r-fail">`,
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestLongTurnAxis: a conversation of 50 turns keeps every turn a tick
// but labels every second; rates sit at their probe's median turn; the
// points at each conversation's own probe turns; the shading leaves out
// turns where some conversation asked a probe; compactions are dashed
// lines before the turns they preceded.
func TestLongTurnAxis(t *testing.T) {
	d := contextRun()
	option, err := OptionJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		XAxis []struct {
			Max       float64
			AxisLabel struct{ CustomValues []int }
			AxisTick  struct{ CustomValues []int }
		}
		Series []struct {
			Name string
			Data []struct {
				Value  [2]float64
				Symbol string
			}
			MarkLine json.RawMessage
			MarkArea struct {
				Data [][2]struct{ XAxis float64 }
			}
		}
	}
	if err := json.Unmarshal(option, &o); err != nil {
		t.Fatal(err)
	}
	last := 0
	for _, c := range d.Conversations {
		last = max(last, c.Turns[len(c.Turns)-1].Turn)
	}
	if last < 30 {
		t.Fatalf("the fixture is %d turns long, want 30 or more", last)
	}
	x := o.XAxis[0]
	if x.Max != float64(last)+0.5 || len(x.AxisTick.CustomValues) != last || x.AxisLabel.CustomValues[0] != 1 || x.AxisLabel.CustomValues[1] != 2 || len(x.AxisLabel.CustomValues) > maxTurnLabels+1 {
		t.Errorf("x axis = %+v, want ticks on turns 1..%d, labels on 1 and every 2nd", x, last)
	}

	series := map[string]int{}
	for i, s := range o.Series {
		series[s.Name] = i
	}
	// Conversation 2's points are at its own probes' turns, give or take
	// its dodge; probe 2, after the compaction, hollow.
	c := d.Conversations[1]
	var got, want []string
	for _, p := range o.Series[series[c.Label+" result"]].Data {
		got = append(got, fmt.Sprintf("%.0f%s", p.Value[0], p.Symbol))
	}
	for _, p := range c.Turns {
		if judged(p) {
			want = append(want, fmt.Sprint(p.Turn)+map[bool]string{true: "emptyCircle"}[p.AfterCompaction])
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("conv 2's points at turns %v, want %v", got, want)
	}

	rate := o.Series[series[dilutedName]]
	for i, p := range rate.Data {
		r := d.Stats.PerTurn[i]
		if math.Abs(p.Value[0]-float64(r.Turn)) > 0.5 || p.Value[0] >= float64(r.Turn) {
			t.Errorf("rate %d at x %g, want just left of its median turn %d", i, p.Value[0], r.Turn)
		}
	}
	// Each fresh rate just right of its probe's median turn, not at the
	// seed's turn the record gives it.
	for i, p := range o.Series[series[freshName]].Data {
		r := d.Stats.PerTurn[i+1]
		if math.Abs(p.Value[0]-float64(r.Turn)) > 0.5 || p.Value[0] <= float64(r.Turn) {
			t.Errorf("fresh rate of probe %d at x %g, want just right of turn %d", i+1, p.Value[0], r.Turn)
		}
	}

	asked := map[int]bool{}
	for _, c := range d.Conversations {
		for _, p := range c.Turns {
			if judged(p) {
				asked[p.Turn] = true
			}
		}
	}
	for _, a := range o.Series[series["filler turns"]].MarkArea.Data {
		for t2 := a[0].XAxis + 0.5; t2 < a[1].XAxis; t2++ {
			if asked[int(t2)] {
				t.Errorf("turn %g is shaded as a filler, but a conversation asked a probe there", t2)
			}
		}
	}

	var compactions struct{ Data []struct{ XAxis float64 } }
	if err := json.Unmarshal(o.Series[series[compactionName]].MarkLine, &compactions); err != nil {
		t.Fatal(err)
	}
	var lines []float64
	for _, l := range compactions.Data {
		lines = append(lines, l.XAxis)
	}
	var wantLines []float64
	for _, c := range d.Conversations {
		for _, p := range c.Turns {
			if p.Compaction != "" {
				wantLines = append(wantLines, float64(p.Turn)-0.5)
			}
		}
	}
	slices.Sort(wantLines)
	if !slices.Equal(lines, wantLines) || len(lines) != 2 {
		t.Errorf("compaction lines at %v, want %v", lines, wantLines)
	}
}

func TestLabelStep(t *testing.T) {
	for last, want := range map[int]int{10: 1, 25: 1, 26: 2, 51: 2, 52: 5, 125: 5, 130: 10, 400: 20} {
		if got := labelStep(last); got != want {
			t.Errorf("labelStep(%d) = %d, want %d", last, got, want)
		}
	}
}

// TestCompactionsOf places compactions: a --compact-before one before the
// turn that records it, the CLI's own during the turn that records it (the
// next turn is the first on the compacted session), and one no turn
// recorded before the first turn asked after it; none twice.
func TestCompactionsOf(t *testing.T) {
	c := Conversation{Label: "conv 1", Turns: []Point{
		{Turn: 1, Kind: "base", ContextTokens: 10000},
		{Turn: 2, Kind: "filler", ContextTokens: 90000, Compaction: "the CLI compacted the session on its own"},
		{Turn: 3, Kind: "filler", ContextTokens: 20000, AfterCompaction: true},
		{Turn: 4, Kind: "probe", Probe: 1, ContextTokens: 25000, AfterCompaction: true, Compaction: "the CLI's /compact ran before it"},
		{Turn: 5, Kind: "filler", ContextTokens: 60000, AfterCompaction: true},
		{Turn: 6, Kind: "filler", ContextTokens: 0},
	}}
	got := compactionsOf(c)
	want := []compaction{
		{X: 2.5, Words: "the CLI compacted the session on its own", Turn: 3, Before: 90000, After: 20000},
		{X: 3.5, Words: "the CLI's /compact ran before it", Turn: 4, Before: 20000, After: 25000},
	}
	if !slices.Equal(got, want) {
		t.Errorf("compactions = %+v, want %+v", got, want)
	}
	// The same session with nothing recorded but the turns after it.
	for i := range c.Turns {
		c.Turns[i].Compaction = ""
	}
	c.Turns[3].AfterCompaction = false
	want = []compaction{{X: 2.5, Turn: 3, Before: 90000, After: 20000}, {X: 4.5, Turn: 5, Before: 25000, After: 60000}}
	if got := compactionsOf(c); !slices.Equal(got, want) {
		t.Errorf("unrecorded compactions = %+v, want %+v", got, want)
	}
}
