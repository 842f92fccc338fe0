package evalreport

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/evalstats"
	"github.com/vibe-test/vibe-test/internal/term"
)

// HTMLName is the report's file name in an eval folder.
const HTMLName = "report.html"

// HTML writes report.html: the facts, the per-measure tables (the holdout
// as aggregates), the decisions, the grid of main cases × measures (each
// cell the passes of every run, coloured by the last run's share) and,
// per main case, each run's messages, reader notes and graded quotes
// behind a disclosure. Like chart.html it opens offline and without
// JavaScript: plain HTML from html/template, which escapes every text of
// the case set, the skill and the models; its style sheet is inlined and
// nothing is loaded.
func HTML(w io.Writer, v *View) error {
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, newHTMLView(v)); err != nil {
		return fmt.Errorf("rendering %s: %w", HTMLName, err)
	}
	// The text is escaped for HTML by the template, but its control
	// characters went through (an ESC sequence in a message or a quote):
	// dropped, as on the terminal, in chart.html and in JUnit. The page
	// has no script whose text they could belong to.
	_, err := io.WriteString(w, term.Clean(buf.String()))
	return err
}

type htmlView struct {
	Title, Sub, Settings, Goal string
	Verdict, VerdictClass      string
	Exit                       int
	Sentence                   string
	Notes                      []string
	NoJail                     string
	Columns                    []string
	Main, Holdout              []htmlRow
	MainWords, HoldoutWords    []string
	HasHoldout                 bool
	HoldoutCount               int
	Costs                      []htmlCost
	CostTitle                  string
	Instrument                 []string
	Comparisons                []htmlCompare
	Measures                   []string
	Grid                       []htmlGridRow
	Details                    []htmlCase
	Folder                     string
}

type htmlRow struct {
	Label string
	Cells []string
}

type htmlCost struct {
	Label                            string
	Generator, Reader, Grader, Total string
}

type htmlCompare struct {
	Label, Verdict, Class, Sentence string
	Parts                           []htmlPart
	Gap                             string
	Regressions                     []string
}

type htmlPart struct {
	Name, Verdict string
	Head1, Head2  string
	Rows          []htmlMeasure
}

type htmlMeasure struct {
	Label, Base, Candidate, Drop, Upper, P string
	Worse                                  bool
}

type htmlGridRow struct {
	Case  string
	Cells []htmlGridCell
}

type htmlGridCell struct {
	Text, Class, Title string
}

type htmlCase struct {
	ID   string
	Runs []htmlRunCells
}

type htmlRunCells struct {
	Label string
	Cells []htmlCell
}

type htmlCell struct {
	Repeat      int
	Status      string
	Error       string
	Message     string
	Words       int
	Reader      *eval.Notes
	Grades      []eval.Grade
	Diagnostics []eval.DiagResult
}

func newHTMLView(v *View) htmlView {
	rec, res := v.Rec, v.Res
	h := htmlView{CostTitle: v.CostTitle(),
		Title: v.Title(), Settings: v.Settings(), Goal: rec.Cases.Goal, Verdict: verdictWord(res.Verdict),
		VerdictClass: exitClass(res.Exit), Exit: res.Exit, Sentence: res.Sentence, Notes: rec.Notes,
		Columns: v.ColumnLabels(), HasHoldout: v.Holdout != nil, HoldoutCount: len(rec.Cases.Holdout), Folder: res.Dir,
		// The CLIs that took part, each by its name: an eval on codex said
		// "claude " (no version: claude took no part) and never codex's.
		Sub: fmt.Sprintf("skill %s · %d lines · %d words · hash %s · %s · vibe-test %s · started %s",
			rec.Skill.Path, rec.Skill.Lines, rec.Skill.Words, short(rec.Skill.Hash), strings.Join(rec.CLIVersions(), " · "), rec.Versions.VibeTest,
			rec.StartedAt.UTC().Format("2006-01-02 15:04 UTC")),
	}
	if rec.Jail == "none" {
		h.NoJail = rec.JailNote
	}
	rows := func(rs []Row) []htmlRow {
		var out []htmlRow
		for _, r := range rs {
			hr := htmlRow{Label: r.Label}
			for _, x := range r.Rates {
				hr.Cells = append(hr.Cells, rate(x))
			}
			out = append(out, hr)
		}
		return out
	}
	words := func(ws []float64) []string {
		var out []string
		for _, w := range ws {
			out = append(out, fmt.Sprintf("%.0f", w))
		}
		return out
	}
	h.Main, h.MainWords = rows(v.Main), words(v.MeanWords(false))
	if v.Holdout != nil {
		h.Holdout, h.HoldoutWords = rows(v.Holdout), words(v.MeanWords(true))
	}
	for i, c := range v.Costs() {
		label := v.Columns[i].Info.Label
		if v.Columns[i].Info.Stored {
			label += " (stored)"
		}
		h.Costs = append(h.Costs, htmlCost{Label: label, Generator: usd(c.Generator), Reader: usd(c.Reader), Grader: usd(c.Grader), Total: usd(c.Total())})
	}
	if in := res.Instrument; in != nil {
		h.Instrument = []string{
			"base run 2 against base run 1: " + verdictWord(in.Second.Verdict) + ": " + in.Second.Sentence,
			"the control against both base runs: " + verdictWord(in.Control.Verdict) + ": " + in.Control.Sentence,
		}
		if in.Resplits > 0 {
			h.Instrument = append(h.Instrument, fmt.Sprintf("A/A re-splits of the baseline's repeats: %.0f%% of %d accepted", 100*in.ResplitAccept, in.Resplits))
		}
	}
	for _, c := range res.Comparisons {
		hc := htmlCompare{Label: c.Candidate.Info.Label, Verdict: verdictWord(c.Verdict), Class: exitClass(c.Exit), Sentence: c.Sentence}
		parts := []struct {
			name string
			d    *evalstats.Decision
		}{{"main", &c.Main}, {"holdout (aggregates)", c.Holdout}}
		for _, p := range parts {
			if p.d == nil {
				continue
			}
			hp := htmlPart{Name: p.name, Verdict: verdictWord(p.d.Verdict)}
			hp.Head1, hp.Head2 = boundHeads(*p.d)
			for _, m := range p.d.Measures {
				c1, c2 := boundCols(*p.d, m)
				hp.Rows = append(hp.Rows, htmlMeasure{Label: v.label(m.Name), Base: rate(m.Base), Candidate: rate(m.Candidate),
					Drop: dropCol(*p.d, m), Upper: c1, P: c2, Worse: m.Reject})
			}
			hc.Parts = append(hc.Parts, hp)
		}
		if c.Holdout != nil {
			hc.Gap = fmt.Sprintf("overfit gap: main gain %+.3f minus holdout gain %+.3f = %+.3f", c.Gain, c.HoldoutGain, c.Gain-c.HoldoutGain)
		}
		for _, r := range c.Regressions {
			hc.Regressions = append(hc.Regressions, r.Case+": "+v.label(r.Measure))
		}
		h.Comparisons = append(h.Comparisons, hc)
	}
	for _, m := range rec.Cases.Measures {
		h.Measures = append(h.Measures, m.Label)
	}
	h.Grid, h.Details = grid(v)
	return h
}

// grid is the main cases × measures, and each main case's cells.
func grid(v *View) ([]htmlGridRow, []htmlCase) {
	// Which candidates regressed on a case and measure: the cell is
	// coloured by the last column, so only the last candidate's make it
	// "regressed"; every one's are named in its title. On a --grid the
	// points' regressions were merged, and a cell whose last point passed
	// every repeat was coloured regressed.
	regressed := map[string][]string{}
	for _, c := range v.Res.Comparisons {
		for _, r := range c.Regressions {
			k := r.Case + "\x00" + r.Measure
			regressed[k] = append(regressed[k], c.Candidate.Info.Label)
		}
	}
	lastLabel := ""
	if n := len(v.Columns); n > 0 {
		lastLabel = v.Columns[n-1].Info.Label
	}
	var rows []htmlGridRow
	var details []htmlCase
	for _, id := range v.Rec.Cases.Main {
		row := htmlGridRow{Case: id}
		for _, m := range v.Rec.Cases.Measures {
			var parts, titles []string
			last := -1.0
			for _, col := range v.Columns {
				passed, graded := 0, 0
				for _, c := range col.Main {
					if c.Case != id {
						continue
					}
					for _, g := range c.Grades {
						if g.Measure != m.ID {
							continue
						}
						switch g.Result {
						case eval.ResultPass:
							passed++
							graded++
						case eval.ResultFail:
							graded++
						}
						if g.Quote != "" || g.Error != "" {
							titles = append(titles, fmt.Sprintf("%s #%d %s: %s%s", col.Info.Label, c.Repeat, g.Result, g.Quote, g.Error))
						}
					}
				}
				if graded == 0 {
					parts = append(parts, "-")
					last = -1
					continue
				}
				parts = append(parts, fmt.Sprintf("%d/%d", passed, graded))
				last = float64(passed) / float64(graded)
			}
			by := regressed[id+"\x00"+m.ID]
			if len(by) > 0 {
				titles = append([]string{"regressed: " + strings.Join(by, ", ")}, titles...)
			}
			cell := htmlGridCell{Text: strings.Join(parts, " · "), Title: strings.Join(titles, "\n")}
			switch {
			case slices.Contains(by, lastLabel):
				cell.Class = "g-regressed"
			case last < 0:
				cell.Class = "g-na"
			case last >= 0.999:
				cell.Class = "g-pass"
			case last <= 0.001:
				cell.Class = "g-fail"
			default:
				cell.Class = "g-mixed"
			}
			row.Cells = append(row.Cells, cell)
		}
		rows = append(rows, row)
		hc := htmlCase{ID: id}
		for _, col := range v.Columns {
			rc := htmlRunCells{Label: col.Info.Label}
			for _, c := range col.Main {
				if c.Case != id {
					continue
				}
				rc.Cells = append(rc.Cells, htmlCell{Repeat: c.Repeat, Status: c.Status, Error: c.Error, Message: c.Message,
					Words: c.Words, Reader: c.Reader, Grades: c.Grades, Diagnostics: c.Diagnostics})
			}
			hc.Runs = append(hc.Runs, rc)
		}
		details = append(details, hc)
	}
	return rows, details
}

func exitClass(code int) string {
	switch code {
	case 0:
		return "r-pass"
	case 1:
		return "r-fail"
	case 2:
		return "r-open"
	}
	return "r-error"
}

func usd(x float64) string { return fmt.Sprintf("$%.4f", x) }

var htmlTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#1d1d1f}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.sub{color:#666;font-size:12px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
td.q{overflow-wrap:anywhere}
th{background:#f5f5f7}
.verdict{padding:10px 14px;border-radius:6px;margin:14px 0}
.r-pass{background:#e3f5e6}.r-fail{background:#fde2e1}.r-open{background:#fff4d6}.r-error{background:#eee}
.g-pass{background:#d7f0db}.g-fail{background:#f8d0ce}.g-mixed{background:#fbeec4}.g-na{background:#f2f2f2;color:#999}
.g-regressed{background:#e8a09b;font-weight:bold}
.worse{color:#b00020;font-weight:bold}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fafafa;border:1px solid #eee;padding:8px;margin:4px 0}
details{margin:6px 0}summary{cursor:pointer}
.warn{background:#b00020;color:#fff;padding:8px 12px;border-radius:6px}
.small{font-size:12px;color:#555}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<div class="sub">{{.Sub}}</div>
<p>{{.Settings}}<br>Goal: {{.Goal}}</p>
{{if .NoJail}}<p class="warn">NO JAIL: {{.NoJail}}</p>{{end}}
<div class="verdict {{.VerdictClass}}"><strong>{{.Verdict}}</strong> (exit {{.Exit}}): {{.Sentence}}</div>
{{range .Notes}}<p class="small">note: {{.}}</p>{{end}}

<h2>Main cases</h2>
<table><tr><th>measure</th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Main}}<tr><td>{{.Label}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>{{end}}
<tr><td>mean words</td>{{range .MainWords}}<td>{{.}}</td>{{end}}</tr></table>
<p class="small">Each rate is the share of graded cells that passed, with its Wilson 95% interval; n/a and grade errors count as neither. The interval counts the cells as independent, which the cells of one case are not: it describes; the decision below is the rule's, not this interval's.</p>

{{if .HasHoldout}}<h2>Holdout cases ({{.HoldoutCount}}, aggregates only)</h2>
<table><tr><th>measure</th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Holdout}}<tr><td>{{.Label}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>{{end}}
<tr><td>mean words</td>{{range .HoldoutWords}}<td>{{.}}</td>{{end}}</tr></table>
<p class="small">The holdout's cases are shown only as these aggregates: their messages and grades stay in the eval folder's holdout/ part.</p>{{end}}

<h2>{{.CostTitle}}</h2>
<table><tr><th>run</th><th>generator</th><th>reader</th><th>grader</th><th>total</th></tr>
{{range .Costs}}<tr><td>{{.Label}}</td><td>{{.Generator}}</td><td>{{.Reader}}</td><td>{{.Grader}}</td><td>{{.Total}}</td></tr>{{end}}</table>

{{if .Instrument}}<h2>The instrument</h2><ul>{{range .Instrument}}<li>{{.}}</li>{{end}}</ul>{{end}}

{{range .Comparisons}}<h2>{{.Label}} against the base runs</h2>
<div class="verdict {{.Class}}"><strong>{{.Verdict}}</strong>: {{.Sentence}}</div>
{{range .Parts}}<table><tr><th>{{.Name}}: {{.Verdict}}</th><th>base</th><th>candidate</th><th>drop</th><th>{{.Head1}}</th><th>{{.Head2}}</th></tr>
{{range .Rows}}<tr><td{{if .Worse}} class="worse"{{end}}>{{.Label}}{{if .Worse}} (worse){{end}}</td><td>{{.Base}}</td><td>{{.Candidate}}</td><td>{{.Drop}}</td><td>{{.Upper}}</td><td>{{.P}}</td></tr>{{end}}</table>{{end}}
{{if .Gap}}<p>{{.Gap}}</p>{{end}}
{{if .Regressions}}<p>Regressed (passed at least 2/3 of the baseline repeats, failed every candidate repeat):</p><ul>{{range .Regressions}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{end}}

<h2>Main cases × measures</h2>
<p class="small">Each cell: passes out of graded repeats, per run ({{range $i, $c := .Columns}}{{if $i}} · {{end}}{{$c}}{{end}}), coloured by the last; hover for the quotes.</p>
<table><tr><th>case</th>{{range .Measures}}<th>{{.}}</th>{{end}}</tr>
{{range .Grid}}<tr><td><a href="#case-{{.Case}}">{{.Case}}</a></td>{{range .Cells}}<td class="{{.Class}}" title="{{.Title}}">{{.Text}}</td>{{end}}</tr>{{end}}</table>

<h2>Main cases, one by one</h2>
{{range .Details}}<details id="case-{{.ID}}"><summary>{{.ID}}</summary>
{{range .Runs}}<h3>{{.Label}}</h3>{{range .Cells}}<details><summary>repeat {{.Repeat}}: {{.Status}}, {{.Words}} words</summary>
{{if .Error}}<p class="worse">{{.Error}}</p>{{end}}
<pre>{{.Message}}</pre>
{{with .Reader}}<p class="small">reader: decision: {{.Decision}}<br>rebuild: {{.Rebuild}}<br>follow-ups: {{range .FollowUps}}[{{.}}] {{end}}<br>answer to the close: {{.CloseAnswer}}</p>{{end}}
<table><tr><th>measure</th><th>grade</th><th>quote</th></tr>{{range .Grades}}<tr><td>{{.Measure}}</td><td>{{.Result}}</td><td class="q">{{.Quote}}{{if .Error}} <span class="worse">{{.Error}}</span>{{end}}</td></tr>{{end}}</table>
{{if .Diagnostics}}<p class="small">diagnostics (never decide): {{range .Diagnostics}}{{.ID}} {{if .Pass}}holds{{else}}fails{{end}} ({{.Detail}}); {{end}}</p>{{end}}
</details>{{end}}{{end}}
</details>{{end}}
<p class="small">eval folder: {{.Folder}}</p>
</body>
</html>
`))
