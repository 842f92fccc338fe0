package report

import (
	"fmt"

	"github.com/vibe-test/vibe-test/chart"
	"github.com/vibe-test/vibe-test/plan"
	"github.com/vibe-test/vibe-test/result"
)

// ChartData maps a run to the chart's input.
func ChartData(r *result.Run) chart.Data {
	d := chart.Data{
		Title:        r.Skill.Name + " — decay over 10 turns",
		Subtitle:     fmt.Sprintf("%d conversations · %s · %s", len(r.Conversations), modelName(r), r.Outcome.Sentence),
		GateBypassed: r.GateBypassed,
	}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		cc := chart.Conversation{Label: fmt.Sprintf("conv %d", c.Index)}
		for t := 1; t <= 10; t++ {
			tr := c.TurnAt(t)
			p := chart.Point{Turn: t, Kind: plan.Kind(t)}
			if tr == nil {
				if a := c.Shown(t); a != nil {
					p.ContextTokens, p.ToolCalls = a.ContextTokens, a.ToolCallCount
				}
			}
			if tr != nil {
				p.ContextTokens, p.ToolCalls = tr.ContextTokens, tr.ToolCallCount
				if tr.Verdict != nil {
					p.Result = tr.Verdict.Result
					p.Escape, p.EscapeReason = tr.Verdict.EscapeHatch, tr.Verdict.EscapeReason
					if r.Rubric != nil {
						p.FailedCriteria = tr.Verdict.Failed(r.Rubric)
					}
				}
			}
			cc.Turns = append(cc.Turns, p)
		}
		d.Conversations = append(d.Conversations, cc)
	}
	return d
}

func modelName(r *result.Run) string {
	if r.Config.Model != "" {
		return "model " + r.Config.Model
	}
	return "default model"
}
