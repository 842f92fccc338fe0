package chart

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/record"
)

// SuitePageName is the suite page's file name in a suite folder.
const SuitePageName = "index.html"

// RenderSuite writes a suite folder's index.html: one row per skill (its
// verdict, diluted vs fresh pass rates, cost) linking the skill's own
// chart.html. It is plain HTML with the report's style sheet: no script,
// nothing loaded, so it opens offline and without JavaScript; every text
// from the suite (skill names and paths are user text) is escaped by
// html/template.
func RenderSuite(w io.Writer, s *record.Suite) error {
	var buf bytes.Buffer
	v := newSuiteView(s)
	// Control and bidi characters go, as from chart.html: a skill's error
	// may quote a CLI's stderr, whose escape sequences retitled the
	// terminal that printed the page and whose U+202E turned its cell
	// around.
	// The links are paths, not text: a run folder's name may hold a bidi
	// mark (engine.FolderPart keeps them), which cleaned away pointed the
	// link at a folder that does not exist. html/template escapes them
	// as URLs.
	links := make([]string, len(v.Rows))
	for i, r := range v.Rows {
		links[i] = r.Chart
	}
	cleanStrings(reflect.ValueOf(&v).Elem())
	for i := range v.Rows {
		v.Rows[i].Chart = links[i]
	}
	if err := suiteTemplate.Execute(&buf, v); err != nil {
		return fmt.Errorf("rendering %s: %w", SuitePageName, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type suiteView struct {
	Title    string
	Sub      string
	Bypassed bool
	Banner   string
	// NoJail names the skills whose agent ran without the jail.
	NoJail []string
	Exit   string
	Rows   []suiteRow
	// CostWord heads the cost column: "cost (estimated)" when another
	// agent's costs were estimated from token counts, as the table says.
	CostWord string
}

type suiteRow struct {
	Name, Chart, Verdict, VerdictClass string
	Exit                               int
	Diluted, Fresh, Drop, Cost, Effect string
	Error                              string
	Bypassed                           bool
}

func newSuiteView(s *record.Suite) suiteView {
	v := suiteView{Title: fmt.Sprintf("vibe-test suite: %d skills", len(s.Skills)), Banner: record.BypassBanner, CostWord: "cost"}
	var sub []string
	sub = append(sub, "status "+s.Status, fmt.Sprintf("filler seed %d", s.Seed))
	if s.Shard != nil {
		sub = append(sub, fmt.Sprintf("shard %d of %d (%d units)", s.Shard.Index, s.Shard.Count, len(s.Shard.Units)))
	}
	if len(s.Merged) > 0 {
		sub = append(sub, fmt.Sprintf("merged from %d shard folders", len(s.Merged)))
	}
	if !s.StartedAt.IsZero() {
		sub = append(sub, "started "+s.StartedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	v.Sub = strings.Join(sub, " · ")
	v.Exit = fmt.Sprintf("exit code %d: the worst of the skills' codes (130 interrupted, then 3 tool error, 1 decay, 2 does not work fresh, 0).", s.ExitCode)
	if s.Shard != nil {
		v.Exit = fmt.Sprintf("shard exit code %d: a shard holds part of each skill's conversations, so its verdicts are partial; `vibe-test merge` decides.", s.ExitCode)
	}
	for _, e := range s.Skills {
		row := suiteRow{
			Name: e.Name, Verdict: e.Verdict, Exit: e.ExitCode, Error: e.Error, Bypassed: e.GateBypassed,
			Diluted: rateText(e.Diluted), Fresh: rateText(e.Fresh), Cost: USD(e.CostUSD),
		}
		if e.CostEstimated {
			v.CostWord = "cost (estimated)"
		}
		if row.Verdict == "" {
			row.Verdict = e.Status
		}
		switch e.ExitCode {
		case 0:
			row.VerdictClass = "r-pass"
		case 1:
			row.VerdictClass = "r-fail"
		default:
			row.VerdictClass = "r-uncertain"
		}
		if e.Diluted.Probes > 0 && e.Fresh.Probes > 0 {
			row.Drop = fmt.Sprintf("%.0f pts", 100*(e.Fresh.Share()-e.Diluted.Share()))
		}
		if e.EffectiveTurn > 0 {
			row.Effect = fmt.Sprintf("%d", e.EffectiveTurn)
		}
		if e.RunDir != "" {
			// A relative link into the skill's run folder, with "/" on every
			// system; html/template escapes it as a URL.
			row.Chart = path.Join(filepath.ToSlash(e.RunDir), "chart.html")
		}
		v.Bypassed = v.Bypassed || e.GateBypassed
		if e.Jail == jail.None {
			v.NoJail = append(v.NoJail, e.Name)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// rateText is the rate as the suite's table shows it, with a typographic
// dash for none.
func rateText(r record.Rate) string {
	if r.Probes == 0 {
		return "–"
	}
	return r.String()
}

var suiteTemplate = template.Must(template.New("suite").Funcs(template.FuncMap{"join": strings.Join}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
` + pageStyle + `
</head>
<body>
<div class="report" id="suite">
<h1>{{.Title}}</h1>
<p class="sub">{{.Sub}}</p>
{{- if .Bypassed}}
<p class="banner" id="bypass-banner" role="alert">{{.Banner}}</p>
{{- end}}
{{- if .NoJail}}
<p class="banner" id="nojail-banner" role="alert">NO JAIL: the agent of {{join .NoJail ", "}} ran with your user's view of this machine</p>
{{- end}}
<p class="verdict">{{.Exit}}</p>
<table class="suite">
<thead><tr><th>skill</th><th>verdict</th><th class="num">exit</th><th class="num">diluted passed</th><th class="num">fresh passed</th><th class="num">drop</th><th class="num">effective turn</th><th class="num">{{.CostWord}}</th><th>chart</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr><td>{{.Name}}{{if .Bypassed}} <span class="warn">(gate bypassed)</span>{{end}}</td><td class="{{.VerdictClass}}">{{.Verdict}}</td><td class="num">{{.Exit}}</td><td class="num">{{.Diluted}}</td><td class="num">{{.Fresh}}</td><td class="num">{{.Drop}}</td><td class="num">{{.Effect}}</td><td class="num">{{.Cost}}</td><td>{{if .Chart}}<a href="{{.Chart}}">chart</a>{{else}}<span class="muted">none</span>{{end}}</td></tr>
{{- if .Error}}
<tr><td></td><td colspan="8" class="r-error">{{.Error}}</td></tr>
{{- end}}
{{- end}}
</tbody>
</table>
<p class="muted">Diluted: the probes asked after the fillers; fresh: the same probes as the first message of a new session. Each skill's chart.html has its curve, rubric and transcripts.</p>
</div>
</body>
</html>
`))
