package chart

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/plan"
)

// The report below the chart is plain HTML from html/template, which
// escapes every piece of run text for the context it lands in: skill names,
// tasks, criteria, evidence, tool inputs and results are all hostile. It
// needs no JavaScript, loads nothing, and its style sheet (pageStyle) is
// inlined in the page's head.

// Bounds of the condensed trace in the report: what the judge saw is about
// this much; the transcript on disk has everything.
const (
	reportInput  = 600
	reportResult = 500
)

// pageStyle is the page's style sheet, fixed text. Without JavaScript the
// chart cannot draw, so its empty box is hidden and the report moves up.
const pageStyle = `<style>
body{margin:0;background:#fff;color:#212529;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
.report{max-width:1000px;margin:24px auto 48px;padding:0 16px}
.report h1{font-size:22px;margin:8px 0 2px}
.report h2{font-size:18px;margin:30px 0 8px;padding-bottom:4px;border-bottom:1px solid #dee2e6}
.report h3{font-size:16px;margin:24px 0 6px}
.report h4{font-size:14px;margin:18px 0 4px}
.report .sub{color:#495057;margin:0 0 12px}
.report .banner{color:#c92a2a;background:rgba(201,42,42,.08);border:3px solid #c92a2a;border-radius:4px;padding:8px 14px;font-weight:700;font-size:17px}
.report .verdict{font-size:16px;font-weight:600;padding:8px 12px;border-left:5px solid #868e96;background:#f8f9fa}
.report .verdict.bad{border-left-color:#c92a2a}
.report .verdict.good{border-left-color:#2b8a3e}
.report .verdict.warn{border-left-color:#f59f00}
.report table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
.report th,.report td{border:1px solid #dee2e6;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
.report thead th{background:#f1f3f5}
.report table.facts th{background:#f8f9fa;font-weight:600;white-space:nowrap}
.report .num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.report .nw{white-space:nowrap}
.report table.criteria,.report table.trace{width:100%}
.report code,.report pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.report pre{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
.report .warn{color:#e67700;font-weight:600}
.report .muted{color:#868e96}
.report .r-pass{background:#d3f9d8;color:#2b8a3e;font-weight:600}
.report .r-fail{background:#ffe3e3;color:#c92a2a;font-weight:600}
.report .r-escape{background:#ffe8cc;color:#d9480f;font-weight:700}
.report .r-judge-error{background:#e9ecef;color:#495057}
.report .r-uncertain{background:#fff3bf;color:#7a5b00}
.report .r-error{background:#fff5f5;color:#c92a2a}
.report .r-filler{background:#f8f9fa;color:#868e96}
.report .r-none,.report .r-na{color:#adb5bd}
.report .wide{overflow-x:auto}
.report table.overview td,.report table.overview th{text-align:center;min-width:48px}
.report table.overview td.small{font-size:11px;color:#495057}
.report table.overview a{color:inherit}
.report .bar{position:relative;display:inline-block;width:160px;height:10px;background:#f1f3f5;border-radius:5px;vertical-align:middle}
.report .bar .ci{position:absolute;top:3px;height:4px;background:#868e96;border-radius:2px}
.report .bar .pt{position:absolute;top:0;width:10px;height:10px;margin-left:-5px;background:#212529;border-radius:50%}
.report details{margin:6px 0 14px}
.report summary{cursor:pointer;color:#364fc7}
.report .task{color:#495057;margin:2px 0 6px}
.report .flag{display:inline-block;padding:0 6px;border-radius:3px;background:#ffe3e3;color:#c92a2a;font-size:11px;font-weight:700}
.report ul{margin:6px 0;padding-left:22px}
</style>
<noscript><style>.container{display:none !important}</style></noscript>`

// ReportHTML returns the report that Render puts below the chart: a
// fragment of HTML, with every piece of run text escaped. Like OptionJSON
// it needs no echarts script, so it can be golden-tested anywhere.
func ReportHTML(d Data) ([]byte, error) {
	var buf bytes.Buffer
	if err := reportTemplate.Execute(&buf, newReportView(d)); err != nil {
		return nil, fmt.Errorf("rendering the report: %w", err)
	}
	b := buf.Bytes()
	// go-echarts deletes every "__f__" from the page it renders. The report
	// goes in after that, but a page that never holds the marker cannot be
	// cut open by it; "&#95;" is "_" in the text and attribute values the
	// report puts run text in.
	for bytes.Contains(b, []byte("__f__")) {
		b = bytes.ReplaceAll(b, []byte("__f__"), []byte("&#95;_f__"))
	}
	return b, nil
}

// reportView is Data arranged for the template.
type reportView struct {
	Data
	Banner string
	Notes  []string // Facts.Notes without the banner, which has its own place
	Turns  []int    // the overview's columns
	Convs  []convView
	Rates  []rateView
}

type convView struct {
	Conversation
	Anchor   string
	Cells    []cellView
	Judged   []turnView
	NotRun   []int // judged turns that never ran
	CtxFirst int64
	CtxLast  int64
}

type cellView struct {
	Text, Class string
	Href        string // the judged turn's section, "" for none
	Calls, Ctx  string
}

type turnView struct {
	Point
	Anchor string
	Cell   cellView
	Calls  []callView
}

type callView struct {
	N       int
	Name    string
	Input   string
	Result  string
	IsError bool
}

type rateView struct {
	Arm  string // baseline, diluted or fresh
	Name string // baseline, probe 2…
	TurnRate
	Bar, Dot template.CSS
}

func newReportView(d Data) reportView {
	v := reportView{Data: d}
	if d.GateBypassed {
		v.Banner = stampText
	}
	if d.Facts != nil {
		for _, n := range d.Facts.Notes {
			if n != stampText {
				v.Notes = append(v.Notes, n)
			}
		}
	}
	last := minTurns
	for _, c := range d.Conversations {
		for _, p := range c.Turns {
			last = max(last, p.Turn)
		}
	}
	for t := 1; t <= last; t++ {
		v.Turns = append(v.Turns, t)
	}
	for i, c := range d.Conversations {
		cv := convView{Conversation: c, Anchor: fmt.Sprintf("conv-%d", i+1)}
		byTurn := map[int]Point{}
		for _, p := range c.Turns {
			byTurn[p.Turn] = p
			if p.ContextTokens > 0 {
				if cv.CtxFirst == 0 {
					cv.CtxFirst = p.ContextTokens
				}
				cv.CtxLast = p.ContextTokens
			}
		}
		for _, t := range v.Turns {
			p, ok := byTurn[t]
			if !ok {
				cv.Cells = append(cv.Cells, cellView{Text: "-", Class: "r-none"})
				continue
			}
			cell := cellOf(p)
			ran := p.Status != "" || p.Result != "" || p.ContextTokens > 0
			if ran {
				cell.Calls = fmt.Sprint(p.ToolCalls)
			}
			if p.ContextTokens > 0 {
				cell.Ctx = fmt.Sprintf("%.1fk", float64(p.ContextTokens)/1000)
			}
			if judged(p) {
				if ran {
					anchor := fmt.Sprintf("conv-%d-turn-%d", i+1, p.Turn)
					cell.Href = "#" + anchor
					tv := turnView{Point: p, Anchor: anchor, Cell: cell}
					for k, call := range p.Calls {
						tv.Calls = append(tv.Calls, callView{N: k + 1, Name: call.Name, Input: clip(call.Input, reportInput), Result: clip(call.Result, reportResult), IsError: call.IsError})
					}
					cv.Judged = append(cv.Judged, tv)
				} else {
					cv.NotRun = append(cv.NotRun, p.Turn)
				}
			}
			cv.Cells = append(cv.Cells, cell)
		}
		v.Convs = append(v.Convs, cv)
	}
	if d.Stats != nil {
		for i, r := range append(append([]TurnRate{}, d.Stats.PerTurn...), d.Stats.Fresh...) {
			rv := rateView{TurnRate: r, Arm: "diluted", Name: rateName(r)}
			if r.Turn == 1 {
				rv.Arm = "baseline"
			}
			if i >= len(d.Stats.PerTurn) {
				rv.Arm = "fresh"
			}
			if r.N > 0 {
				rv.Bar = template.CSS(fmt.Sprintf("left:%.1f%%;width:%.1f%%", 100*clamp01(r.Lo), 100*(clamp01(r.Hi)-clamp01(r.Lo))))
				rv.Dot = template.CSS(fmt.Sprintf("left:%.1f%%", 100*clamp01(r.Rate())))
			}
			v.Rates = append(v.Rates, rv)
		}
	}
	return v
}

func clamp01(x float64) float64 { return min(1, max(0, x)) }

// cellOf is what a turn shows in the overview, with the words of the
// terminal summary.
func cellOf(p Point) cellView {
	switch {
	case p.Status == "timed-out":
		return cellView{Text: "TIMEOUT", Class: "r-error"}
	case p.Status != "" && p.Status != "ok":
		return cellView{Text: "ERROR", Class: "r-error"}
	case p.Kind == plan.KindFiller:
		if p.Status == "" && p.ContextTokens == 0 {
			return cellView{Text: "-", Class: "r-none"}
		}
		return cellView{Text: "filler", Class: "r-filler"}
	case p.Escape:
		return cellView{Text: "ESCAPE", Class: "r-escape"}
	case p.Result == "pass" && p.Partial:
		return cellView{Text: "PASS*", Class: "r-pass"}
	case p.Result == "pass":
		return cellView{Text: "PASS", Class: "r-pass"}
	case p.Result == "fail":
		return cellView{Text: "FAIL", Class: "r-fail"}
	case p.Result == "judge-error":
		return cellView{Text: "JUDGE ERROR", Class: "r-judge-error"}
	case p.Result == "uncertain":
		return cellView{Text: "UNCERTAIN", Class: "r-uncertain"}
	case p.Status == "ok" || p.ContextTokens > 0:
		return cellView{Text: "not judged", Class: "r-none"}
	}
	return cellView{Text: "-", Class: "r-none"}
}

// resultClass is a criterion verdict's class; unknown words get none.
func resultClass(result string) string {
	switch result {
	case "pass":
		return "r-pass"
	case "fail":
		return "r-fail"
	case "n/a":
		return "r-na"
	}
	return ""
}

// verdictClass colours the verdict sentence by the run's verdict word.
func verdictClass(verdict string) string {
	switch verdict {
	case "decay":
		return "bad"
	case "no-decay":
		return "good"
	case "":
		return ""
	}
	return "warn"
}

func hashPrefix(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func orDefault(s string) string {
	if s == "" {
		return "the CLI's default"
	}
	return s
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// USD is a cost as every report prints it: dollars to four places.
func USD(x float64) string { return fmt.Sprintf("$%.4f", x) }

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"usd":          USD,
	"costParts":    func(c Costs) string { return c.Breakdown(USD) },
	"pct":          percent,
	"points":       points,
	"pval":         func(p float64) string { return fmt.Sprintf("%.3g", p) },
	"alpha":        func(a float64) string { return fmt.Sprintf("%.2g", a) },
	"thousands":    thousands,
	"hashPrefix":   hashPrefix,
	"orDefault":    orDefault,
	"timestamp":    timestamp,
	"kindName":     kindName,
	"pointName":    pointName,
	"sourceName":   sourceName,
	"resultClass":  resultClass,
	"verdictClass": verdictClass,
	"join":         strings.Join,
}).Parse(reportSource))

// reportSource is the report's template. Every {{…}} of run text is
// escaped by html/template for where it lands; the only unescaped values
// are the rate bars' styles, made of numbers here.
const reportSource = `
<div class="report" id="report">
<h1>{{if .Title}}{{.Title}}{{else}}vibe-test report{{end}}</h1>
{{- if and .Subtitle (not .Facts)}}
<p class="sub">{{.Subtitle}}</p>
{{- end}}
{{- if and .Schedule (not .Facts)}}
<p class="sub">schedule: {{.Schedule}}</p>
{{- end}}
{{- if .Banner}}
<p class="banner" id="bypass-banner" role="alert">{{.Banner}}</p>
{{- end}}
{{- if and .Facts (eq .Facts.Jail "none")}}
<p class="banner" id="no-jail" role="alert">NO JAIL: {{.Facts.JailNote}}</p>
{{- end}}
<noscript><p class="muted">The chart needs JavaScript; this report does not.</p></noscript>
{{- with .Facts}}
<section id="run">
<h2>Run</h2>
{{- if .Sentence}}
<p class="verdict {{verdictClass .Verdict}}">{{.Sentence}} <span class="muted">(exit {{.ExitCode}})</span></p>
{{- end}}
<table class="facts">
<tr><th>skill</th><td>{{.SkillName}}</td></tr>
<tr><th>path</th><td><code>{{.SkillPath}}</code></td></tr>
<tr><th>content hash</th><td><code title="{{.SkillHash}}">{{hashPrefix .SkillHash}}</code></td></tr>
{{- if .Agent}}
<tr><th>agent</th><td>{{.Agent}}</td></tr>
{{- end}}
<tr><th>agent model</th><td>{{orDefault .Model}}</td></tr>
{{- if .AgentTools}}
<tr><th>agent tools</th><td>{{range $i, $t := .AgentTools}}{{if $i}} {{end}}<code>{{$t}}</code>{{end}}</td></tr>
{{- end}}
{{- if .SessionMode}}
<tr><th>session mode</th><td>{{.SessionMode}}</td></tr>
{{- end}}
{{- if .JudgeAgent}}
<tr><th>judge</th><td>{{.JudgeAgent}}</td></tr>
{{- end}}
<tr><th>judge model</th><td>{{orDefault .JudgeModel}} <span class="muted">(rubric, plan and judge)</span></td></tr>
<tr><th>vibe-test</th><td>{{if .VibeTestVersion}}{{.VibeTestVersion}}{{else}}<span class="muted">unknown</span>{{end}}</td></tr>
{{- range .CLIs}}
<tr><th>{{.Name}}</th><td>{{if .Version}}{{.Version}}{{else}}<span class="muted">unknown</span>{{end}}
{{- if .Mismatch}} <span class="warn">warning: differs from the version the parser was verified on ({{.Verified}})</span>{{end}}
{{- if .Warning}} <span class="warn">warning: {{.Warning}}</span>{{end}}</td></tr>
{{- end}}
<tr><th>isolation</th><td>{{.Isolation}}</td></tr>
{{- if eq .Jail "none"}}
<tr><th>jail</th><td class="warn">NO JAIL: {{.JailNote}}</td></tr>
{{- else if .Jail}}
<tr><th>jail</th><td>{{.Jail}} <span class="muted">(each conversation in its own jail)</span></td></tr>
{{- end}}
<tr><th>conversations</th><td>{{.Conversations}}</td></tr>
{{- if $.Schedule}}
<tr><th>schedule</th><td>{{$.Schedule}}</td></tr>
{{- end}}
<tr><th>status</th><td>{{.Status}}{{if .Shape}} <span class="muted">· shape {{.Shape}}</span>{{end}}</td></tr>
{{- if .Verdict}}
<tr><th>verdict</th><td>{{.Verdict}} <span class="muted">(exit {{.ExitCode}})</span></td></tr>
{{- end}}
<tr><th>cost{{if .CostEstimated}} (estimated){{end}}</th><td>{{usd .Costs.Total}} <span class="muted">({{costParts .Costs}}{{if .CostEstimated}}; estimated from token counts at list prices{{end}})</span></td></tr>
{{- if timestamp .StartedAt}}
<tr><th>started</th><td>{{timestamp .StartedAt}}</td></tr>
{{- end}}
{{- if timestamp .FinishedAt}}
<tr><th>finished</th><td>{{timestamp .FinishedAt}}</td></tr>
{{- end}}
{{- if .Error}}
<tr><th>error</th><td class="warn">{{.Error}}</td></tr>
{{- end}}
</table>
{{- if $.Notes}}
<ul class="notes">
{{- range $.Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
</section>
{{- end}}
{{- if .Rubric}}
<section id="rubric">
<h2>Rubric</h2>
<p class="muted">A turn passes when every <b>must</b> criterion passes. Deterministic checks run first and win over the model judge.</p>
<table class="rubric">
<thead><tr><th>id</th><th class="nw">kind</th><th>criterion</th><th>deterministic check</th></tr></thead>
<tbody>
{{- range .Rubric}}
<tr><td><code>{{.ID}}</code></td><td class="nw">{{.Kind}}</td><td>{{.Text}}</td><td>{{with .Check}}tool <code>/{{.Tool}}/</code>, input <code>/{{.Pattern}}/</code>, {{.Expect}}{{else}}<span class="muted">none: the model judge decides</span>{{end}}</td></tr>
{{- end}}
</tbody>
</table>
</section>
{{- end}}
{{- with .Stats}}
<section id="statistics">
<h2>Statistics</h2>
<h3>Pass rate per judged turn</h3>
<table class="per-turn">
<thead><tr>{{if $.ByContext}}<th>asked</th><th class="num">median turn</th><th class="num">median context</th><th class="num">after compaction</th>{{else}}<th>turn</th>{{end}}<th>arm</th><th>over</th><th class="num">passed / n</th><th class="num">rate</th><th class="num">Wilson 95% interval</th><th></th></tr></thead>
<tbody>
{{- range $.Rates}}
<tr>{{if $.ByContext}}<td class="nw">{{.Name}}</td><td class="num">{{if eq .Arm "fresh"}}<span class="muted">new session</span>{{else}}{{.Turn}}{{end}}</td><td class="num">{{if .ContextTokens}}{{thousands .ContextTokens}}{{else}}-{{end}}</td><td class="num">{{if .N}}{{.AfterCompaction}} / {{.N}}{{end}}</td>{{else}}<td class="num">{{.Turn}}</td>{{end}}<td>{{.Arm}}</td><td>{{.Population}}</td>
{{- if .N}}<td class="num">{{.Passes}} / {{.N}}</td><td class="num">{{pct .Rate}}</td><td class="num">{{pct .Lo}} – {{pct .Hi}}</td><td><span class="bar"><span class="ci" style="{{.Bar}}"></span><span class="pt" style="{{.Dot}}"></span></span></td>
{{- else}}<td class="num">0 / 0</td><td class="muted" colspan="3">not judged</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
<h3>Diluted against fresh: the exit code's test</h3>
<p class="muted">Units are conversations (diluted: {{.DilutedPopulation}}) and fresh triples (each probe the first message of its own new session). Each probe is compared with itself: an arm's pass rate is the mean over the probes of that probe's pass rate in the arm; Welch's one-sided test, with each arm's variance no smaller than a binomial's at each probe's pooled rate.</p>
<ul class="stats">
<li>diluted: {{.DilutedUnits}} units, {{if .DilutedUnits}}pass rate {{pct .DilutedMean}}{{else}}no pass rate{{end}}; fresh: {{.FreshUnits}} units, {{if .FreshUnits}}pass rate {{pct .FreshMean}}{{else}}no pass rate{{end}}</li>
<li>{{if .Testable}}drop {{points .Drop}}, p = {{pval .P}} (alpha {{alpha .Alpha}}){{if .MinDetectableDrop}}; simulated on runs like this one, the rule catches a drop of {{points .MinDetectableDrop}} in 80% of them{{end}}{{else}}not testable: each arm needs at least 2 units with a judged probe{{end}}</li>
<li>effective turn: {{if .EffectiveTurn}}<b>{{.EffectiveTurn}}</b> (the last probe whose diluted pass rate is still ≥ 85% of its fresh rate){{else}}none (no turn is known to hold: no baseline passed, or nothing to compare){{end}}</li>
{{- if .CheckTotal}}
<li>the model judge agreed with the deterministic checks on {{.CheckAgreed}} of {{.CheckTotal}} criteria</li>
{{- end}}
{{- if .NonDiscriminating}}
<li>criteria that passed everywhere and cannot tell decay apart: {{join .NonDiscriminating ", "}}</li>
{{- end}}
</ul>
</section>
{{- end}}
{{- if .Convs}}
<section id="conversations">
<h2>Conversations</h2>
<div class="wide">
<table class="overview">
<thead><tr><th>conversation</th><th></th>{{range .Turns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Convs}}
<tr><th rowspan="3"><a href="#{{.Anchor}}">{{.Label}}</a></th><th>result</th>{{range .Cells}}<td class="{{.Class}}">{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
<tr><th>calls</th>{{range .Cells}}<td class="small">{{.Calls}}</td>{{end}}</tr>
<tr><th>context</th>{{range .Cells}}<td class="small">{{.Ctx}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
</div>
<p class="muted">PASS* = passed, with a judge escape-hatch flag downgraded (a required step's check passed). Fillers are not judged.</p>
{{- range .Convs}}
<section class="conversation" id="{{.Anchor}}">
<h3>{{.Label}}{{if .Status}} <span class="muted">· {{.Status}}</span>{{end}}{{if .Shape}} <span class="muted">· shape {{.Shape}}</span>{{end}}</h3>
{{- if .CtxFirst}}
<p class="task">context {{thousands .CtxFirst}} → {{thousands .CtxLast}} tokens</p>
{{- end}}
{{- if .Error}}
<p class="warn">{{.Error}}</p>
{{- end}}
{{- if .Notes}}
<ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
{{- range .Judged}}
<h4 id="{{.Anchor}}">turn {{.Turn}} · {{pointName .Point}} · <span class="{{.Cell.Class}}">&nbsp;{{.Cell.Text}}&nbsp;</span></h4>
{{- if .Task}}
<p class="task">task: {{.Task}}</p>
{{- end}}
{{- if .AfterCompaction}}
<p class="task">asked after a compaction</p>
{{- end}}
{{- if .Compaction}}
<p class="task">compaction: {{.Compaction}}</p>
{{- end}}
{{- if .Error}}
<p class="warn">{{.Error}}</p>
{{- end}}
{{- if .Escape}}
<p><span class="flag">escape hatch</span> {{if .EscapeReason}}{{.EscapeReason}}{{else}}(no reason given){{end}}</p>
{{- end}}
{{- if .Partial}}
<p class="muted">The judge flagged an escape hatch{{if .EscapeReason}} ({{.EscapeReason}}){{end}}, but a required step's check passed: downgraded to partial compliance{{if .OverCall}}, counted as a judge over-call{{end}}.</p>
{{- end}}
{{- if .VerdictError}}
<p class="warn">{{if eq .Result "uncertain"}}uncertain{{else}}judge error{{end}} (neither pass nor fail): {{.VerdictError}}</p>
{{- end}}
{{- if .Criteria}}
<table class="criteria">
<thead><tr><th>criterion</th><th class="nw">kind</th><th class="nw">verdict</th><th>decided by</th><th class="num">call</th><th>evidence</th></tr></thead>
<tbody>
{{- range .Criteria}}
<tr><td><code>{{.ID}}</code>{{if .Text}}<br><span class="muted">{{.Text}}</span>{{end}}</td><td class="nw">{{.Kind}}</td><td class="nw {{resultClass .Result}}">{{.Result}}</td><td>{{sourceName .Source}}{{if .JudgeResult}} <span class="muted">(the model said {{.JudgeResult}})</span>{{end}}</td><td class="num">{{if .Call}}{{.Call}}{{end}}</td><td>{{.Evidence}}</td></tr>
{{- end}}
</tbody>
</table>
{{- else if .Result}}
<p class="muted">No criterion verdicts recorded.</p>
{{- end}}
{{- if .Calls}}
<details class="trace">
<summary>trace: {{len .Calls}} tool call{{if ne (len .Calls) 1}}s{{end}}</summary>
<table class="trace">
<thead><tr><th class="num">#</th><th>tool</th><th>input</th><th>result</th></tr></thead>
<tbody>
{{- range .Calls}}
<tr><td class="num">{{.N}}</td><td class="nw"><code>{{.Name}}</code></td><td><pre>{{.Input}}</pre></td><td>{{if .IsError}}<span class="flag">error</span> {{end}}<pre>{{.Result}}</pre></td></tr>
{{- end}}
</tbody>
</table>
</details>
{{- else if .ToolCalls}}
<p class="muted">{{.ToolCalls}} tool calls, not recorded here.</p>
{{- else}}
<p class="muted">No tool calls: the agent executed nothing.</p>
{{- end}}
{{- end}}
{{- if .NotRun}}
<p class="muted">Not run: turn{{if gt (len .NotRun) 1}}s{{end}} {{range $i, $t := .NotRun}}{{if $i}}, {{end}}{{$t}}{{end}}.</p>
{{- end}}
</section>
{{- end}}
</section>
{{- end}}
</div>
`
