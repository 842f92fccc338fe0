package summary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vibe-test/vibe-test/internal/chart"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
)

// chartSubtitle is one short line: echarts does not wrap a subtitle, and
// the verdict's sentence, which ran off both ends of the chart, is the
// first thing in the report right below it.
func chartSubtitle(r *record.Run) string {
	sub := fmt.Sprintf("%s · %s", Count(len(r.Conversations), "conversation"), modelName(r))
	if v := r.Outcome.Verdict; v != "" {
		sub += fmt.Sprintf(" · %s (exit %d): the sentence is below", strings.ReplaceAll(v, "-", " "), r.Outcome.Exit)
	}
	return sub
}

// chartTitle says what the chart shows: decay over the seed's ten turns,
// or up to the context levels of a diluted-to schedule.
func chartTitle(r *record.Run) string {
	if r.Plan == nil || r.Plan.Schedule.Fixed() {
		return "decay over 10 turns"
	}
	lv := r.Plan.Schedule.DiluteTo
	return "decay up to " + plan.FormatTokens(lv[len(lv)-1]) + " tokens of context"
}

// ChartData maps a run to chart.html's input: the chart, and the report
// below it (facts, rubric, statistics, and per judged turn the criteria and
// the condensed trace). It reads only the record, so an old run redraws.
func ChartData(r *record.Run) chart.Data {
	d := chart.Data{
		Title:        r.Skill.Name + " — " + chartTitle(r),
		Subtitle:     chartSubtitle(r),
		GateBypassed: r.GateBypassed,
		Facts:        facts(r),
		Stats:        chartStats(r.Outcome.Stats),
	}
	if r.Plan != nil && !r.Plan.Schedule.Default() {
		d.Schedule = ScheduleWords(r)
		d.ByContext = !r.Plan.Schedule.Fixed() || r.Plan.Schedule.Compacts()
	}
	texts := map[string]string{}
	if r.Rubric != nil {
		for _, c := range r.Rubric.Criteria {
			cr := chart.Criterion{ID: c.ID, Kind: c.Kind, Text: c.Text}
			if c.Check != nil {
				cr.Check = &chart.Check{Tool: c.Check.Tool, Pattern: c.Check.Pattern, Expect: c.Check.Expect}
			}
			d.Rubric = append(d.Rubric, cr)
			texts[c.ID] = c.Text
		}
	}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		cc := chart.Conversation{
			Label:  fmt.Sprintf("conv %d", c.Index),
			Status: c.Status, Shape: c.Shape, Error: c.Error,
			Notes: append(convAlerts(c), c.Notes...),
		}
		for t := 1; t <= TurnCount(r, c); t++ {
			p := chart.Point{Turn: t, Kind: ScheduledKind(r, t)}
			// The completed turn, else the last try that did not complete
			// (an error or a timeout): what happened there is worth seeing.
			if tr := c.Shown(t); tr != nil {
				p.Kind = tr.Kind
				p.ContextTokens, p.ToolCalls, p.SkillInvoked = tr.ContextTokens, tr.ToolCallCount, tr.SkillInvoked
				p.Probe, p.AfterCompaction = tr.ProbeNumber(), tr.AfterCompaction
				var words []string
				for _, cp := range tr.Compactions {
					words = append(words, CompactionWords(cp))
				}
				p.Compaction = strings.Join(words, "; ")
				p.Status, p.Error = tr.Status, tr.Error
				if tr.Judged() {
					// Filler prompts are long passages; judged tasks are
					// what the agent was asked to do.
					p.Task = tr.Prompt
				}
				p.Calls = calls(tr.ToolCalls)
			}
			if tr := c.TurnAt(t); tr != nil && tr.Verdict != nil {
				v := tr.Verdict
				p.Result = v.Result
				p.Escape, p.EscapeReason = v.EscapeHatch, v.EscapeReason
				p.Partial, p.OverCall = v.Partial, v.OverCall
				p.VerdictError = v.Error
				p.FailedCriteria = v.Failed(r.Rubric)
				for _, cv := range v.Criteria {
					p.Criteria = append(p.Criteria, chart.CriterionResult{
						ID: cv.ID, Kind: cv.Kind, Text: texts[cv.ID], Result: cv.Result,
						Source: cv.Source, Evidence: cv.Evidence, Call: cv.Call, JudgeResult: cv.JudgeResult,
					})
				}
			}
			cc.Turns = append(cc.Turns, p)
		}
		d.Conversations = append(d.Conversations, cc)
	}
	return d
}

func facts(r *record.Run) *chart.Facts {
	o := r.Outcome
	f := &chart.Facts{
		SkillName: r.Skill.Name, SkillPath: r.Skill.Path, SkillHash: r.Skill.Hash,
		Model: r.Config.Model, AgentTools: r.Config.AllowedTools, JudgeModel: r.Config.JudgeModel,
		SessionMode:     SessionModeText(r.Config),
		VibeTestVersion: r.Versions.VibeTest,
		Isolation:       r.Isolation, Jail: r.Jail, JailNote: r.JailNote,
		CostEstimated: r.Config.CostEstimated,
		Conversations: len(r.Conversations),
		Status:        r.Status,
		Verdict:       o.Verdict, Sentence: o.Sentence, ExitCode: o.Exit, Shape: o.Shape,
		Error:     r.Error,
		Costs:     costs(r),
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
	}
	for _, cli := range r.Versions.CLIs(r.Config) {
		fact := chart.CLIFact{Name: cli.Name, Version: cli.Version, Verified: cli.Verified, Mismatch: cli.Mismatch}
		if cli.Name == "claude" {
			fact.Warning = r.Versions.ClaudeParserMsg
		}
		f.CLIs = append(f.CLIs, fact)
	}
	// Another agent's CLI than claude, as the summary's agent line names it.
	if a := r.Config.Agent; a != "" {
		f.Agent = strings.TrimSpace(a + " " + r.Versions.Agent)
	}
	if j := record.JudgeAgentOf(r.Config); j != record.AgentOf(r.Config) {
		f.JudgeAgent = j
	}
	// The plan carries the models a config file chose when no flag did.
	if r.Plan != nil {
		if f.Model == "" {
			f.Model = r.Plan.Model
		}
		if f.JudgeModel == "" {
			f.JudgeModel = r.Plan.JudgeModel
		}
	}
	switch {
	case f.Model != "" && r.Config.ModelSource == "cli-default":
		f.Model += " (the CLI's default, pinned for the run)"
	case f.Model != "" && r.Config.ModelAsked != "":
		f.Model += " (asked as " + r.Config.ModelAsked + ")"
	}
	// What no verdict says comes first: a model change is a confound.
	for i := range r.Conversations {
		if c := &r.Conversations[i]; c.ModelChange != "" {
			f.Notes = append(f.Notes, fmt.Sprintf("MODEL CHANGED in conversation %d: %s (%s)", c.Index, c.ModelChange, Confound))
		}
	}
	f.Notes = append(f.Notes, skillAlerts(r)...)
	f.Notes = append(f.Notes, o.Notes...)
	for _, s := range o.StoppedConsulting {
		f.Notes = append(f.Notes, "Stopped consulting (from the raw trace, judge-free): "+s)
	}
	return f
}

func chartStats(s record.Stats) *chart.Stats {
	if len(s.PerTurn) == 0 {
		return nil // a run decided before statistics existed
	}
	c := s.Comparison
	cs := &chart.Stats{
		EffectiveTurn: s.EffectiveTurn, Alpha: s.Alpha,
		DilutedPopulation: s.DilutedPopulation, DilutedMean: c.Diluted.Mean, FreshMean: c.Fresh.Mean,
		DilutedUnits: c.Diluted.Units, FreshUnits: c.Fresh.Units, Testable: c.Testable, Drop: c.Drop, P: c.P,
		MinDetectableDrop: s.MinDetectableDrop,
		CheckAgreed:       s.CheckAgreed, CheckTotal: s.CheckTotal,
		NonDiscriminating: s.NonDiscriminating,
	}
	for _, t := range s.PerTurn {
		r := chart.TurnRate{Turn: t.Turn, Population: t.Population, Passes: t.Passes, N: t.N, Lo: t.Lo, Hi: t.Hi,
			Probe: t.Probe, ContextTokens: t.ContextTokens, AfterCompaction: t.AfterCompaction}
		if t.Arm == "fresh" {
			cs.Fresh = append(cs.Fresh, r)
		} else {
			cs.PerTurn = append(cs.PerTurn, r)
		}
	}
	return cs
}

// calls is a turn's trace for the report: inputs as readable compact JSON.
func calls(in []record.Call) []chart.ToolCall {
	var out []chart.ToolCall
	for _, c := range in {
		name := c.Name
		if c.SubagentOf > 0 {
			// A context: fork skill's step, run by its sub-agent.
			name = fmt.Sprintf("%s (sub-agent of %d)", c.Name, c.SubagentOf)
		}
		out = append(out, chart.ToolCall{Name: name, Input: readableJSON(c.Input), Result: c.Result, IsError: c.IsError})
	}
	return out
}

// readableJSON is raw as compact JSON, with the \u003c \u003e \u0026 that
// Go's encoder writes for < > & turned back into the characters, so that a
// reader sees ">> ledger.log" rather than "\u003e\u003e ledger.log". The
// result is still the same JSON; the report escapes it for HTML. Input that
// is not JSON is returned as it is.
func readableJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	s := b.Bytes()
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			out = append(out, s[i])
			continue
		}
		// An escape: \uXXXX for one of the three, else copied whole (so
		// that the escaped backslash of "\\u003e" is never misread).
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch strings.ToLower(string(s[i+2 : i+6])) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, s[i], s[i+1]), i+1
	}
	return string(out)
}

func modelName(r *record.Run) string {
	if r.Config.Model != "" {
		return "model " + r.Config.Model
	}
	return "default model"
}

// costs is the run's costs as the chart and the summaries show them.
func costs(r *record.Run) chart.Costs {
	c := r.Costs
	return chart.Costs{Agent: c.Agent, Rubric: c.Rubric, Plan: c.Plan, Judge: c.Judge, Total: c.Total}
}
