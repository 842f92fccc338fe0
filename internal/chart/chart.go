// Package chart draws chart.html, the report of a vibe-test run: the decay
// chart, and below it the report people read.
//
// The x axis is the turn (1..10, or 1..N for a longer schedule, labelled
// every few turns when N is large). For each conversation one line joins its
// judged turns, the turn-1 baseline and the probes, at 1 for pass and 0 for
// fail; a second, dashed line per conversation shows the context size in
// tokens on a second y axis. Fillers are not judged and are not plotted on
// the result line; their turns are shaded light grey (a turn where some
// conversation asked a probe is not). When more than one conversation
// reached a judged turn, a black "pass rate" line shows the share that
// passed there, with its Wilson 95% interval as an error bar (a silent
// markLine: the common echarts build has no custom series), beside the
// fresh rate; a probe asked at different turns in different conversations
// is drawn at its median turn. A turn asked after the CLI compacted the
// session is a hollow point, and a dashed "compacted" line stands between
// the turns each compaction came between.
// Escape hatches get an "escape" pin; a turn whose judge call failed gets
// a grey "judge error" mark instead of a point, and one whose repeated
// judgements disagreed an "uncertain" mark, because neither is a pass or a
// fail. Hovering a judged turn shows its result, failed criteria with
// their evidence, tool calls, context tokens and escape reason.
//
// When the baseline gate was bypassed (turn 1 already failed and the run
// went on with --no-baseline-gate), a red stamp across the top says the
// chart is not a decay curve: a flat line of failures is easy to misread as
// decay, and a status field nobody opens does not stop that. The report
// repeats it as a banner at its top.
//
// # Against context size
//
// When Data.ByContext is set (the probes fell at different turns, or after
// a compaction), a second chart below the first plots the same results
// against the context each turn was answered in, in tokens: each
// conversation's judged turns as points (hollow after a compaction), an
// arrow per compaction from the context before it to the context after,
// the diluted pass rates of the baseline and each probe at their median
// context, named, with their intervals, and each fresh rate beside its
// probe's diluted rate (fresh sessions all have about the same small
// context: drawn there, the three would pile up in one place, far from
// what they are compared with), which the chart's note, the legend and
// the tooltip say. It is a second chart rather than a toggle so
// that a reader, a printout and a screenshot all see both. Its element and
// script go into the page after go-echarts has rendered the first, and
// use the page's one echarts script.
//
// # The report
//
// Below the chart, plain HTML from html/template: the run's facts (skill,
// hash, models, versions, isolation, costs, status, verdict, notes), the
// rubric, the statistics (pass rate per judged turn with its interval, and
// for a run by context each probe's median context and how many of its
// askings came after a compaction,
// paired sign tests, effective turn), an overview of every turn, and per
// conversation and judged turn the criteria with verdict, source and
// evidence, and the condensed trace behind a <details> disclosure. It
// needs no JavaScript: without it the chart's empty box is hidden and the
// report reads on its own. Its style sheet is inlined; nothing is loaded.
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
// Titles, conversation labels, criteria, evidence, tasks, tool inputs and
// results and escape reasons come from skills, transcripts and the judge,
// so they are treated as hostile. go-echarts
// writes its option JSON into a <script> element with HTML escaping turned
// off (JSONNotEscaped: SetEscapeHTML(false), then safeJS), and then deletes
// every "__f__" in the page to unquote JavaScript functions. A criterion
// reading "</script><script>…" would end the script element, and one holding
// "__f__" would cut a JSON string open. So this package marshals the option
// itself with encoding/json's HTML escaping, neutralises "__f__", never puts
// such text into go-echarts' customized headers, and HTML-escapes it before
// it goes into a tooltip, which echarts renders as HTML. The report is
// html/template's, escaped for each context, and goes into the page after
// go-echarts has run, with "__f__" spelled "&#95;_f__".
package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/render"

	"github.com/vibe-test/vibe-test/internal/term"
)

// Data is everything chart.html shows: the chart, and below it the report.
//
// Title, Subtitle, GateBypassed and Conversations' turn results draw the
// chart; Stats adds the pass rate across conversations to it. Facts,
// Rubric, Stats and the turns' criteria and tool calls fill the report
// below the chart, which is plain HTML and reads without JavaScript. A
// section with no data is left out, so a Data with only the chart's fields
// still renders.
type Data struct {
	Title         string // e.g. "skill-name — decay over 10 turns"
	Subtitle      string // e.g. "2 conversations · model claude-sonnet-5-5"
	GateBypassed  bool   // turn 1 failed and the run went on anyway: draw the red stamp
	Conversations []Conversation

	Facts  *Facts      // the run's facts; nil leaves the section out
	Rubric []Criterion // the rubric the turns were judged against
	Stats  *Stats      // pass rates (also drawn on the chart), sign tests, effective turn

	// Schedule says in words how the run diluted the context when it was
	// not the seed's ten turns ("" for those).
	Schedule string
	// ByContext: the probes fell at different turns in different
	// conversations (a diluted-to schedule), or after a compaction, so the
	// turn axis alone misleads: draw pass rate against context tokens too.
	ByContext bool
}

// Conversation is one conversation of a run: ten turns on the seed's
// schedule, as many as its context levels took on a diluted-to one.
type Conversation struct {
	Label string // e.g. "conv 1"
	Turns []Point

	// For the report.
	Status string   // e.g. "completed", "baseline-failed", "error"
	Shape  string   // e.g. "decayed", "held"
	Error  string   // why the conversation stopped, if it did
	Notes  []string // anything else the run recorded about it
}

// Point is one turn of a conversation.
type Point struct {
	Turn int // 1-based
	// Kind is plan.KindBase, plan.KindFiller or plan.KindProbe; "" for a
	// turn of the schedule the conversation never reached.
	Kind string
	// Result is "pass", "fail", "judge-error", "uncertain" (repeated
	// judgements disagreed) or "" (filler, not judged, or not run).
	Result         string
	Escape         bool // the judge flagged an escape hatch
	EscapeReason   string
	ContextTokens  int64 // 0 = unknown/not run
	ToolCalls      int
	SkillInvoked   bool     // the agent called the Skill tool this turn
	FailedCriteria []string // "id: text"; the tooltip uses Criteria instead when there are any

	// For the report, and Criteria for the tooltip's evidence.
	Status   string // the turn's status: "ok", "error", "timed-out", …; "" = not run
	Error    string // why the turn did not complete
	Task     string // the prompt of a judged turn
	Partial  bool   // passed, with an escape-hatch flag downgraded: a required step's check passed
	OverCall bool   // that downgrade counted as a judge over-call
	// VerdictError says why the result is a judge error or uncertain.
	VerdictError string
	Criteria     []CriterionResult // the turn's verdict, criterion by criterion
	Calls        []ToolCall        // the tool calls the agent executed, in order

	// Probe is a probe's number (1-based), 0 for other turns.
	Probe int
	// AfterCompaction: the session had been compacted before the turn was
	// asked; Compaction says what a compaction at this turn did ("" none).
	AfterCompaction bool
	Compaction      string
}

// CriterionResult is one criterion's verdict at one turn.
type CriterionResult struct {
	ID       string
	Kind     string // "must" or "should"
	Text     string // the criterion, from the rubric
	Result   string // "pass", "fail", "n/a"
	Source   string // "check" (a deterministic check decided) or "judge"
	Evidence string
	Call     int // the 1-based tool call cited; 0 for none
	// JudgeResult is the model judge's own answer where a check overrode it.
	JudgeResult string
}

// ToolCall is one tool call of a turn's trace.
type ToolCall struct {
	Name    string
	Input   string // compact JSON; the report clips it
	Result  string // already clipped in run.json; the report clips it again
	IsError bool
}

// Facts are what a reader needs to trust or question a run.
type Facts struct {
	SkillName string
	SkillPath string
	SkillHash string // hex; the report shows a prefix

	Model      string   // the agent's model; "" = the CLI's default
	AgentTools []string // the agent's --allowedTools list; nil = not recorded
	// SessionMode says how the conversations reached the CLI (interactive
	// or resume, with what that means).
	SessionMode string
	JudgeModel  string // rubric, plan and judge model; "" = the CLI's default

	VibeTestVersion string
	// CLIs are the agent CLIs that took part (claude first when it did),
	// each with its version and any warning about it.
	CLIs []CLIFact

	// Agent names another agent's CLI than claude and its version ("" for
	// claude), JudgeAgent the judge's when it is not the agent's;
	// CostEstimated says its costs were estimated from token counts.
	Agent, JudgeAgent string
	CostEstimated     bool

	Isolation     string // "hermetic" or "author-config"
	Jail          string // "bubblewrap", "none", or "" (a run from before the jail)
	JailNote      string // why there was no jail
	Conversations int
	Status        string
	Verdict       string // e.g. "decay", "no-decay", "baseline-failed"
	Sentence      string // the verdict in one sentence
	ExitCode      int
	Shape         string
	Notes         []string
	Error         string
	Costs         Costs
	StartedAt     time.Time
	FinishedAt    time.Time
}

// Costs of a run in USD, apart by purpose.
type Costs struct {
	Agent, Rubric, Plan, Judge, Total float64
}

// Breakdown lists the parts of the total, each in money's format: the
// agent's always, the rubric, plan and judge calls' only when they cost
// something. "plan $0.0000" read as a call that was free where no call
// was made (the config held the tasks; the rubric came from the cache).
func (c Costs) Breakdown(money func(float64) string) string {
	parts := []string{"agent " + money(c.Agent)}
	for _, p := range []struct {
		name string
		usd  float64
	}{{"rubric", c.Rubric}, {"plan", c.Plan}, {"judge", c.Judge}} {
		if p.usd != 0 {
			parts = append(parts, p.name+" "+money(p.usd))
		}
	}
	return strings.Join(parts, ", ")
}

// Criterion is one rubric criterion.
type Criterion struct {
	ID   string
	Kind string // "must" or "should"
	Text string
	// Check is the deterministic check, nil when the model judge decides.
	Check *Check
}

// Check is a deterministic check of a criterion.
type Check struct {
	Tool    string // regular expression over the tool name
	Pattern string // regular expression over the call's input as compact JSON
	Expect  string // "present" or "absent"
}

// Stats is what the numbers may claim.
type Stats struct {
	// PerTurn is each judged turn's pass rate in the diluted conversations
	// (turn 1 over all of them, the probes over the population Population
	// names). The chart draws it, with its interval, at the turns that more
	// than one conversation reached.
	PerTurn []TurnRate
	// Fresh is each probe's pass rate asked fresh (the first message of a
	// new session), drawn beside the diluted rate at the same turn.
	Fresh []TurnRate
	// The comparison behind the exit code: diluted vs fresh, per unit.
	DilutedPopulation string
	DilutedMean       float64
	FreshMean         float64
	DilutedUnits      int
	FreshUnits        int
	Testable          bool
	Drop              float64
	P                 float64
	// MinDetectableDrop is the drop the rule catches in 80% of simulated runs like this one (0:
	// none).
	MinDetectableDrop float64
	// EffectiveTurn is the last probe whose diluted pass rate is still at
	// >= 85% of its fresh rate; 0 when there is none.
	EffectiveTurn int
	Alpha         float64
	CheckAgreed   int // criteria where the model judge agreed with the check…
	CheckTotal    int // …of the criteria that had a check
	// NonDiscriminating criteria passed everywhere: they cannot tell decay apart.
	NonDiscriminating []string
}

// TurnRate is one judged turn's pass rate with its Wilson 95% interval.
type TurnRate struct {
	Turn int // for a probe, the median turn it was asked at
	// Probe is the probe's number (0: the baseline); ContextTokens the
	// median context its askings were answered in; AfterCompaction how many
	// of them came after a compaction.
	Probe           int
	ContextTokens   int64
	AfterCompaction int
	// Population is who the rate is over ("all conversations", "fresh
	// sessions", …).
	Population string
	Passes     int
	N          int
	Lo, Hi     float64 // the Wilson 95% interval, 0..1
}

// Rate is Passes/N, 0 when N is 0.
func (r TurnRate) Rate() float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.Passes) / float64(r.N)
}

// ErrNoScript is returned by Render when this binary was built without the
// echarts script, which chart.html inlines so that it opens offline. A
// `go install`ed binary is such a binary (go install runs no build step),
// so the message names both ways to one that has it: a release archive, or
// make build in a clone.
var ErrNoScript = errors.New(`chart.html needs the echarts script built into vibe-test, which a go install build lacks: download a release archive (https://github.com/vibe-test/vibe-test/releases) or run "make build" in a clone (it fetches echarts@5.6.0 from npm and embeds it)`)

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

// Render writes chart.html for d to w: the chart, and below it the
// report. It writes nothing and returns ErrNoScript when the echarts script
// is not built into the binary.
func Render(w io.Writer, d Data) error {
	if !HasScript() {
		return ErrNoScript
	}
	// Text from run.json (skill name, criteria, evidence, prompts) is
	// escaped for HTML by the templates, but its control characters went
	// through: ESC and the rest are dropped here, as on the terminal.
	cleanStrings(reflect.ValueOf(&d).Elem())
	if err := checkScript(echartsScript); err != nil {
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
	report, err := ReportHTML(d)
	if err != nil {
		return err
	}
	// The context chart, when there is one, is drawn by its own element
	// and script below the turn chart, and uses the one echarts script.
	var second []byte
	if contextLine, err := buildContext(d); err != nil {
		return err
	} else if contextLine != nil {
		contextOption, err := optionJSON(contextLine)
		if err != nil {
			return err
		}
		if second, err = renderSnippet(safePage{Line: contextLine, option: contextOption}); err != nil {
			return err
		}
	}
	// The script and the style sheet are ours, fixed and checked; they are
	// the only things that ever go into the customized headers, which
	// go-echarts does not escape.
	line.AddCustomizedHeaders("<script>"+scriptSlot+"</script>", pageStyle)

	// The title goes in after go-echarts' pass too, which deleted any
	// "__f__" in it (a skill named by its folder may hold one).
	title := line.Initialization.PageTitle
	line.Initialization.PageTitle = titleSlot
	page, err := renderPage(safePage{Line: line, option: option, title: title})
	if err != nil {
		return err
	}
	// Text from a run cannot forge the slot's element: the page escapes
	// "<" in everything else it holds.
	element := []byte("<script>" + scriptSlot + "</script>")
	slot := bytes.Index(page, element)
	if slot < 0 {
		return errors.New("rendering chart.html: the page lost the echarts script's slot")
	}
	page = slices.Concat(page[:slot], []byte("<script>"), echartsScript, page[slot+len(element)-len("</script>"):])
	// The report goes in after go-echarts has run, so that its deleting
	// of "__f__" never touches it (ReportHTML spells that differently
	// anyway), before the page's last </body>: the template's own, as the
	// inlined script, which might hold the string, comes earlier.
	end := bytes.LastIndex(page, []byte("</body>"))
	if end < 0 {
		return errors.New("rendering chart.html: the page template has no </body>")
	}
	out := make([]byte, 0, len(page)+len(second)+len(report))
	out = append(out, page[:end]...)
	out = append(out, second...)
	out = append(out, report...)
	out = append(out, page[end:]...)
	_, err = w.Write(out)
	return err
}

// safePage is what go-echarts' page template is executed on. Its
// JSONNotEscaped shadows the one of the embedded chart, whose output the
// template writes into a <script> verbatim without HTML escaping.
type safePage struct {
	*charts.Line
	option []byte
	// title replaces the page's titleSlot, escaped for HTML; "" for a
	// snippet, which has no <title>.
	title string
}

// titleSlot stands in for the page's <title> while go-echarts renders, as
// optionSlot does for the option.
const titleSlot = "vibe-chart-title-slot"

// JSONNotEscaped returns the slot the option goes into once go-echarts has
// rendered (withOption).
func (p safePage) JSONNotEscaped() template.HTML { return optionSlot }

// optionSlot stands in for a chart's option while go-echarts renders, as
// scriptSlot does for the script: its template pass runs a regular
// expression over all it wrote (three times over a snippet's option), and
// the option of a long run is most of that. The pass deletes "__f__",
// which optionJSON never writes (it spells it with a JSON escape) and
// which cannot span the option's edges ({ and }), so the option put in
// after it is what the pass would have left.
const optionSlot = "/* vibe-chart: the chart's option goes here */"

// withOption puts the option, as marshalled by optionJSON (< > & are
// \u003c \u003e \u0026, so it cannot end the script element), into the
// one slot of rendered.
func withOption(rendered []byte, option []byte) ([]byte, error) {
	if n := bytes.Count(rendered, []byte(optionSlot)); n != 1 {
		return nil, fmt.Errorf("rendering chart.html: %d slots for the chart's option, want 1", n)
	}
	return bytes.Replace(rendered, []byte(optionSlot), option, 1), nil
}

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
	page, err = withOption(buf.Bytes(), p.option)
	if err != nil {
		return nil, err
	}
	if n := bytes.Count(page, []byte(titleSlot)); n != 1 {
		return nil, fmt.Errorf("rendering chart.html: %d slots for the page's title, want 1", n)
	}
	return bytes.Replace(page, []byte(titleSlot), []byte(template.HTMLEscapeString(p.title)), 1), nil
}

// renderSnippet runs go-echarts' templates for a chart's element and script
// alone, to go into a page rendered for another chart. Like renderPage, it
// turns go-echarts' panic into an error.
func renderSnippet(p safePage) (snippet []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rendering chart.html's context chart: %v", r)
		}
	}()
	s := render.NewChartRender(p).RenderSnippet()
	return withOption([]byte("\n"+s.Element+"\n"+s.Script+"\n"), p.option)
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

// cleanStrings applies term.Clean to every string v holds (its fields,
// elements and pointees), in place: v is Render's own copy of the data,
// but slices and pointers in it are shared with the caller's, which
// holds the same text and is built for this page alone.
func cleanStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(term.Clean(v.String()))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() && v.CanSet() {
			cleanStrings(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				cleanStrings(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			cleanStrings(v.Index(i))
		}
	case reflect.Map:
		if !v.CanSet() {
			return // reached through an unexported field: not ours
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			cleanStrings(e)
			v.SetMapIndex(k, e)
		}
	}
}

// CLIFact is one agent CLI of a run: its version, and whether it differs
// from the one its parser was verified on.
type CLIFact struct {
	Name, Version, Verified string
	Mismatch                bool
	Warning                 string // any other warning about it
}
