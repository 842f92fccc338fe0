package evalreport

import (
	"encoding/json"
	"io"
	"math"

	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/evalstats"
)

// JSONVersion is the --json object's schema_version (schema/eval.schema.json).
const JSONVersion = 1

// Doc is the --json object. It holds the holdout as aggregates only.
type Doc struct {
	SchemaVersion int            `json:"schema_version"`
	Kind          string         `json:"kind"`
	Mode          string         `json:"mode"`
	Status        string         `json:"status"`
	Folder        string         `json:"folder"`
	Skill         eval.SkillInfo `json:"skill"`
	Cases         DocCases       `json:"cases"`
	Config        DocConfig      `json:"config"`
	Runs          []DocRun       `json:"runs"`
	Table         []DocRow       `json:"table"`
	HoldoutTable  []DocRow       `json:"holdout_table"`
	Comparisons   []DocCompare   `json:"comparisons"`
	Instrument    *DocInstrument `json:"instrument"`
	Costs         DocCosts       `json:"costs"`
	Exit          int            `json:"exit"`
	Verdict       string         `json:"verdict"`
	Sentence      string         `json:"sentence"`
	CellErrors    int            `json:"cell_errors"`
	Notes         []string       `json:"notes"`
	// Agent and JudgeAgent are the CLIs that generated and judged;
	// CostEstimated says some costs are estimated from token counts.
	Agent         string `json:"agent,omitempty"`
	JudgeAgent    string `json:"judge_agent,omitempty"`
	CostEstimated bool   `json:"cost_estimated,omitempty"`
}

// DocCases is the case set, by count (holdout ids stay out).
type DocCases struct {
	Dir      string             `json:"dir"`
	Goal     string             `json:"goal"`
	Main     int                `json:"main"`
	Holdout  int                `json:"holdout"`
	Measures []eval.MeasureInfo `json:"measures"`
}

// DocConfig is the eval's settings.
type DocConfig struct {
	Repeats     int      `json:"repeats"`
	Model       string   `json:"model"`
	Effort      string   `json:"effort"`
	ReaderModel string   `json:"reader_model"`
	GraderModel string   `json:"grader_model"`
	Tools       []string `json:"tools"`
	Deliver     string   `json:"deliver"`
	Rule        string   `json:"rule"`
	Alpha       float64  `json:"alpha"`
	Margin      float64  `json:"margin"`
	Baseline    string   `json:"baseline"`
	Against     string   `json:"against"`
}

// DocRun is one run.
type DocRun struct {
	Label            string   `json:"label"`
	Arm              string   `json:"arm"`
	Model            string   `json:"model"`
	Effort           string   `json:"effort"`
	Stored           bool     `json:"stored"`
	Cells            int      `json:"cells"`
	Errors           int      `json:"errors"`
	MeanWords        float64  `json:"mean_words"`
	HoldoutMeanWords *float64 `json:"holdout_mean_words"`
	Costs            DocCosts `json:"costs"`
}

// DocCosts are dollars by role.
type DocCosts struct {
	Generator float64 `json:"generator"`
	Reader    float64 `json:"reader"`
	Grader    float64 `json:"grader"`
	Total     float64 `json:"total"`
}

// DocRow is one measure's rates, one per run in Runs' order.
type DocRow struct {
	Measure string    `json:"measure"`
	Label   string    `json:"label"`
	Rates   []DocRate `json:"rates"`
}

// DocRate is a pass rate with its Wilson 95% interval.
type DocRate struct {
	Run    string  `json:"run"`
	Passed int     `json:"passed"`
	Graded int     `json:"graded"`
	Rate   float64 `json:"rate"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// DocCompare is one candidate against the base runs.
type DocCompare struct {
	Candidate   string          `json:"candidate"`
	Verdict     string          `json:"verdict"`
	Exit        int             `json:"exit"`
	Sentence    string          `json:"sentence"`
	Main        DocDecision     `json:"main"`
	Holdout     *DocDecision    `json:"holdout"`
	Gain        float64         `json:"gain"`
	HoldoutGain *float64        `json:"holdout_gain"`
	Gap         *float64        `json:"gap"`
	Regressions []DocRegression `json:"regressions"`
}

// DocDecision is an acceptance rule's decision.
type DocDecision struct {
	Rule            string       `json:"rule"`
	Verdict         string       `json:"verdict"`
	Exit            int          `json:"exit"`
	Sentence        string       `json:"sentence"`
	Need            int          `json:"need"`
	Drift           float64      `json:"drift"`
	SeedFalseReject float64      `json:"seed_false_reject"`
	GradeErrors     int          `json:"grade_errors"`
	Measures        []DocMeasure `json:"measures"`
}

// DocMeasure is one measure of a decision.
type DocMeasure struct {
	Measure   string  `json:"measure"`
	Label     string  `json:"label"`
	Base      DocRate `json:"base"`
	Candidate DocRate `json:"candidate"`
	// Drop, Upper, P and Adjusted are null where the rule could not
	// compute them (no case graded on both sides; Upper from fewer than
	// 2); Upper, P and Adjusted also under the seed rule, which has none of them, and P and Adjusted
	// where the paired rule could not test the measure (fewer than 3
	// cases: evalstats.Measure.Tested).
	Drop     *float64 `json:"drop"`
	Upper    *float64 `json:"upper"`
	P        *float64 `json:"p"`
	Adjusted *float64 `json:"adjusted"`
	Reject   bool     `json:"reject"`
	Cases    int      `json:"cases"`
}

// DocRegression is a main case a measure regressed on.
type DocRegression struct {
	Case    string `json:"case"`
	Measure string `json:"measure"`
}

// DocInstrument is --baseline's check of the instrument.
type DocInstrument struct {
	Second          DocDecision `json:"second"`
	SecondAccepted  bool        `json:"second_accepted"`
	Control         DocDecision `json:"control"`
	ControlRejected bool        `json:"control_rejected"`
	ResplitAccept   float64     `json:"resplit_accept"`
	Resplits        int         `json:"resplits"`
}

// NewDoc is the --json object of a view.
func NewDoc(v *View) Doc {
	rec, res := v.Rec, v.Res
	d := Doc{
		SchemaVersion: JSONVersion, Kind: "eval", Mode: rec.Mode, Status: rec.Status, Folder: res.Dir,
		Skill: rec.Skill,
		Cases: DocCases{Dir: rec.Cases.Dir, Goal: rec.Cases.Goal, Main: len(rec.Cases.Main), Holdout: len(rec.Cases.Holdout), Measures: rec.Cases.Measures},
		Config: DocConfig{Repeats: rec.Config.Repeats, Model: rec.Config.Model, Effort: rec.Config.Effort,
			ReaderModel: rec.Config.ReaderModel, GraderModel: rec.Config.GraderModel, Tools: rec.Config.Tools,
			Deliver: rec.Config.Deliver, Rule: rec.Config.Rule, Alpha: rec.Config.Alpha, Margin: rec.Config.Margin,
			Baseline: rec.Config.Baseline, Against: rec.Config.Against},
		Runs: []DocRun{}, Table: []DocRow{}, HoldoutTable: []DocRow{}, Comparisons: []DocCompare{},
		Exit: res.Exit, Verdict: res.Verdict, Sentence: res.Sentence, CellErrors: res.CellErrors,
		Notes: append([]string{}, rec.Notes...),
		Agent: rec.AgentName(), JudgeAgent: rec.JudgeAgentName(), CostEstimated: rec.CostEstimated,
	}
	if d.Config.Tools == nil {
		d.Config.Tools = []string{}
	}
	if d.Cases.Measures == nil {
		d.Cases.Measures = []eval.MeasureInfo{}
	}
	labels := v.ColumnLabels()
	costs := v.Costs()
	mw, hw := v.MeanWords(false), v.MeanWords(true)
	for i, c := range v.Columns {
		r := DocRun{Label: c.Info.Label, Arm: c.Info.Arm, Model: c.Info.Model, Effort: c.Info.Effort, Stored: c.Info.Stored,
			Cells: len(c.Main) + len(c.Holdout), MeanWords: mw[i], Costs: docCosts(costs[i])}
		for _, cell := range append(append([]*eval.Cell{}, c.Main...), c.Holdout...) {
			if cell.Status != eval.CellOK {
				r.Errors++
			}
		}
		if res.HasHoldout() {
			h := hw[i]
			r.HoldoutMeanWords = &h
		}
		d.Runs = append(d.Runs, r)
		if !c.Info.Stored {
			d.Costs = addCosts(d.Costs, costs[i])
		}
	}
	d.Costs = docCosts(v.ThisEval(eval.Costs{Generator: d.Costs.Generator, Reader: d.Costs.Reader, Grader: d.Costs.Grader}))
	d.Table = docRows(v.Main, labels)
	if v.Holdout != nil {
		d.HoldoutTable = docRows(v.Holdout, labels)
	}
	for _, c := range res.Comparisons {
		dc := DocCompare{Candidate: c.Candidate.Info.Label, Verdict: c.Verdict, Exit: c.Exit, Sentence: c.Sentence,
			Main: docDecision(v, c.Main), Gain: finite(c.Gain), Regressions: []DocRegression{}}
		if c.Holdout != nil {
			h := docDecision(v, *c.Holdout)
			dc.Holdout = &h
			hg, gap := c.HoldoutGain, c.Gain-c.HoldoutGain
			dc.HoldoutGain, dc.Gap = num(hg), num(gap)
		}
		for _, r := range c.Regressions {
			dc.Regressions = append(dc.Regressions, DocRegression{Case: r.Case, Measure: r.Measure})
		}
		d.Comparisons = append(d.Comparisons, dc)
	}
	if in := res.Instrument; in != nil {
		d.Instrument = &DocInstrument{Second: docDecision(v, in.Second), SecondAccepted: in.SecondAccepted,
			Control: docDecision(v, in.Control), ControlRejected: in.ControlRejected,
			ResplitAccept: in.ResplitAccept, Resplits: in.Resplits}
	}
	return d
}

func docRows(rows []Row, labels []string) []DocRow {
	out := []DocRow{}
	for _, r := range rows {
		dr := DocRow{Measure: r.Measure, Label: r.Label, Rates: []DocRate{}}
		for i, x := range r.Rates {
			run := ""
			if i < len(labels) {
				run = labels[i]
			}
			dr.Rates = append(dr.Rates, docRate(run, x))
		}
		out = append(out, dr)
	}
	return out
}

func docRate(run string, r evalstats.Rate) DocRate {
	return DocRate{Run: run, Passed: r.Passed, Graded: r.Graded, Rate: finite(r.Rate), Lo: finite(r.Lo), Hi: finite(r.Hi)}
}

func docDecision(v *View, d evalstats.Decision) DocDecision {
	out := DocDecision{Rule: d.Rule, Verdict: d.Verdict, Exit: d.Exit, Sentence: d.Sentence, Need: d.Need, Drift: finite(d.Drift),
		SeedFalseReject: finite(d.SeedFalseReject), GradeErrors: d.GradeErrors, Measures: []DocMeasure{}}
	for _, m := range d.Measures {
		dm := DocMeasure{Measure: m.Name, Label: v.label(m.Name), Base: docRate("base", m.Base),
			Candidate: docRate("candidate", m.Candidate), Drop: num(m.Drop), Upper: num(m.Upper), P: num(m.P), Adjusted: num(m.Adjusted),
			Reject: m.Reject, Cases: m.Cases}
		if d.Rule == evalstats.RuleSeed || m.Cases < 2 {
			// The seed rule has no bound and no p-values, nor has the
			// paired rule from fewer than 2 cases: the fields hold 0.
			dm.Upper = nil
		}
		if d.Rule != evalstats.RuleSeed && m.Cases == 0 {
			dm.Drop = nil // no case compared
		}
		if d.Rule == evalstats.RuleSeed || !m.Tested() {
			// An untested measure's 1 is the rule's, not a test's.
			dm.P, dm.Adjusted = nil, nil
		}
		out.Measures = append(out.Measures, dm)
	}
	return out
}

// num is x, or nil when it is not a finite number (JSON has none).
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

func docCosts(c eval.Costs) DocCosts {
	return DocCosts{Generator: c.Generator, Reader: c.Reader, Grader: c.Grader, Total: c.Total()}
}

func addCosts(a DocCosts, c eval.Costs) DocCosts {
	return DocCosts{Generator: a.Generator + c.Generator, Reader: a.Reader + c.Reader, Grader: a.Grader + c.Grader, Total: a.Total + c.Total()}
}

// JSON writes the --json object, one line.
func JSON(w io.Writer, v *View) error {
	b, err := json.Marshal(NewDoc(v))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
