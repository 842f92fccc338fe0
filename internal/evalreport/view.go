// Package evalreport shows a case-based eval (package eval) to people and
// machines: the terminal summary, the --json object (its JSON Schema is
// schema/eval.schema.json), Markdown, JUnit XML and report.html.
//
// Every output is made from one View of the eval's Result, and every
// number in it comes from package evalstats (the per-measure rates with
// their Wilson intervals, the decisions, the regressions): nothing here
// judges.
//
// # Holdout
//
// The holdout cases are the ones the skill's editor never saw. The
// outputs an editing agent may be shown (the terminal summary, --json,
// Markdown, JUnit) carry the holdout's aggregates only: per-measure rates
// and the decision, never a case id, a message, a grade or a quote. The
// per-case detail of the holdout lives only in the eval folder's holdout/
// part; report.html, which does show the main cases one by one, shows the
// holdout as aggregates too.
package evalreport

import (
	"fmt"
	"math"
	"strings"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/evalstats"
)

// View is an eval as every output shows it.
type View struct {
	Res *eval.Result
	Rec *eval.Record
	// Columns are the runs in table order: the control, the base runs,
	// the candidates.
	Columns []*eval.RunData
	Main    []Row
	Holdout []Row // aggregates; nil without holdout cases
	// Labels maps a measure id to its label ("M1 Right decision").
	Labels map[string]string
}

// Row is one measure's rates, one per column.
type Row struct {
	Measure string // the id, or evalstats.Total
	Label   string
	Rates   []evalstats.Rate
}

// NewView makes the view of an eval's result.
func NewView(res *eval.Result) *View {
	v := &View{Res: res, Rec: res.Record, Labels: map[string]string{evalstats.Total: "Total"}}
	for _, m := range res.Record.Cases.Measures {
		v.Labels[m.ID] = m.Label
	}
	if c := res.Control(); c != nil {
		v.Columns = append(v.Columns, c)
	}
	v.Columns = append(v.Columns, res.Bases()...)
	v.Columns = append(v.Columns, res.Candidates()...)
	var main, hold []evalstats.Run
	for _, c := range v.Columns {
		main = append(main, c.MainRun)
		hold = append(hold, c.HoldoutRun)
	}
	v.Main = v.rows(evalstats.Table(main...))
	if res.HasHoldout() {
		v.Holdout = v.rows(evalstats.Table(hold...))
	}
	return v
}

func (v *View) rows(t []evalstats.Row) []Row {
	out := make([]Row, len(t))
	for i, r := range t {
		out[i] = Row{Measure: r.Measure, Label: v.label(r.Measure), Rates: r.Rates}
	}
	return out
}

// label is a measure's label.
func (v *View) label(id string) string {
	if l, ok := v.Labels[id]; ok {
		return l
	}
	return id
}

// ColumnLabels are the columns' names.
func (v *View) ColumnLabels() []string {
	out := make([]string, len(v.Columns))
	for i, c := range v.Columns {
		out[i] = c.Info.Label
	}
	return out
}

// MeanWords are each column's mean words, main or holdout.
func (v *View) MeanWords(holdout bool) []float64 {
	out := make([]float64, len(v.Columns))
	for i, c := range v.Columns {
		cells := c.Main
		if holdout {
			cells = c.Holdout
		}
		out[i] = eval.MeanWords(cells)
	}
	return out
}

// Costs are each column's costs (main and holdout cells together).
func (v *View) Costs() []eval.Costs {
	out := make([]eval.Costs, len(v.Columns))
	for i, c := range v.Columns {
		out[i] = eval.CostOf(append(append([]*eval.Cell{}, c.Main...), c.Holdout...))
	}
	return out
}

// rate formats a rate with its interval: "0.750 [0.64, 0.84]" (n/a when
// nothing was graded).
func rate(r evalstats.Rate) string {
	if r.Graded == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f [%.2f, %.2f]", r.Rate, r.Lo, r.Hi)
}

// rateShort is a rate alone.
func rateShort(r evalstats.Rate) string {
	if r.Graded == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", r.Rate)
}

// pval formats a p-value: "< 0.0001" below that.
func pval(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p < 0.0001:
		return "< 0.0001"
	}
	return fmt.Sprintf("%.3g", p)
}

// boundCols are a decision's last two columns per measure: the upper
// bound of the drop and the adjusted p-value (the paired rule), or the
// margin and nothing (the seed rule has no p-values).
func boundCols(d evalstats.Decision, m evalstats.Measure) (string, string) {
	if d.Rule == evalstats.RuleSeed {
		return fmt.Sprintf("%.3f", m.Margin), "-"
	}
	if m.Cases < 2 {
		return "-", "-" // no bound from fewer than 2 cases: its 0 is no figure
	}
	if !m.Tested() {
		return fmt.Sprintf("%+.3f", m.Upper), "-"
	}
	return fmt.Sprintf("%+.3f", m.Upper), pval(m.Adjusted)
}

// dropCol is a measure's drop as the tables print it: "-" where the paired
// rule compared no case (a measure that applied to none on both sides),
// whose 0 is no figure.
func dropCol(d evalstats.Decision, m evalstats.Measure) string {
	if d.Rule != evalstats.RuleSeed && m.Cases == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.3f", m.Drop)
}

func boundHeads(d evalstats.Decision) (string, string) {
	if d.Rule == evalstats.RuleSeed {
		return "margin", ""
	}
	return "upper", "p (adjusted)"
}

// Title is the eval's one-line title.
func (v *View) Title() string {
	return TitlePrefix + v.subject()
}

// TitlePrefix begins every eval report's title: vibe-test recognises its
// own Markdown report by it (a second `--markdown` to the same file
// replaces the first), so Markdown writes it unescaped.
const TitlePrefix = "vibe-test eval: "

// subject is the title after TitlePrefix: the skill, and the baseline.
func (v *View) subject() string {
	switch v.Rec.Mode {
	case eval.ModeBaseline:
		return fmt.Sprintf("baseline %s of %s", v.Rec.Config.Baseline, v.Rec.Skill.Name)
	case eval.ModeAgainst:
		return fmt.Sprintf("%s against baseline %s", v.Rec.Skill.Name, v.Rec.Config.Against)
	}
	return v.Rec.Skill.Name
}

// Settings is the eval's settings in one line.
func (v *View) Settings() string {
	c := v.Rec.Config
	effort := ""
	if c.Effort != "" {
		effort = " at " + c.Effort + " effort"
	}
	repeats := "repeats"
	if c.Repeats == 1 {
		repeats = "repeat"
	}
	holdout := "cases"
	if len(v.Rec.Cases.Holdout) == 1 {
		holdout = "case"
	}
	s := fmt.Sprintf("%d main and %d holdout %s, %d %s; generator %s%s (tools %s, skill by %s); reader %s, grader %s",
		len(v.Rec.Cases.Main), len(v.Rec.Cases.Holdout), holdout, c.Repeats, repeats, modelName(c.Model), effort, strings.Join(c.Tools, ","), c.Deliver, modelName(c.ReaderModel), modelName(c.GraderModel))
	if a, j := v.Rec.AgentName(), v.Rec.JudgeAgentName(); a != agents.Claude || j != agents.Claude {
		s = fmt.Sprintf("agent %s, judge agent %s; %s", a, j, s)
	}
	return s
}

// modelName is a recorded model, or what "" stands for: another agent's
// default (claude's models are always recorded resolved).
func modelName(m string) string {
	if m == "" {
		return "(the CLI's default)"
	}
	return m
}

// CostTitle heads the cost table: the costs are estimated when a CLI
// reports tokens, not dollars (codex, gemini).
// ThisEval is what this eval spent: its record's tally, which a rejudge
// keeps to its own reader and grader calls (the cells it copied carry the
// generator's cost of the eval that made them, summed as this one's
// before) and which counts the stored baseline graded again; summed is the
// tally of the columns not stored, for a record without one.
func (v *View) ThisEval(summed eval.Costs) eval.Costs {
	if v.Rec.Costs.Total() > 0 {
		return v.Rec.Costs
	}
	return summed
}

func (v *View) CostTitle() string {
	if v.Rec.CostEstimated {
		return "Cost (USD, estimated from token counts)"
	}
	return "Cost (USD)"
}

// RuleLine names the rule and its settings.
func (v *View) RuleLine() string {
	c := v.Rec.Config
	if c.Rule == evalstats.RuleSeed {
		return "seed 000's margins (--rule seed)"
	}
	return fmt.Sprintf("the paired rule, alpha %.2g, margin %.2g of the total", c.Alpha, c.Margin)
}

func verdictWord(verdict string) string {
	switch verdict {
	case evalstats.Accept:
		return "ACCEPT"
	case evalstats.Reject:
		return "REJECT"
	case evalstats.NotEnuf:
		return "NOT ENOUGH EVIDENCE"
	case evalstats.ToolFail:
		return "ERROR"
	case "instrument-ok":
		return "INSTRUMENT OK"
	case "instrument-doubtful":
		return "INSTRUMENT DOUBTFUL"
	case "measured":
		return "MEASURED"
	case "interrupted":
		return "INTERRUPTED"
	}
	return verdict
}
