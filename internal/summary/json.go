package summary

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
)

// JSONSchemaVersion is the version of the summary JSON that JSON writes (not
// run.json's): bump it on any change a reader of the old one would misread.
//
// 2: the outcome says its rule and the diluted-vs-fresh comparison.
// 3: the jail, and the outcome's effective turn and context.
const JSONSchemaVersion = 3

// JSONSummary is the terminal summary as one JSON object, for scripts and
// CI: the same cells, counts and sentence, no styling.
type JSONSummary struct {
	SchemaVersion int `json:"schema_version"`
	// Warning is BypassBanner when the baseline gate was bypassed, first
	// so that it is the first thing a reader sees.
	Warning      string `json:"warning,omitempty"`
	Skill        string `json:"skill"`
	Status       string `json:"status"`
	GateBypassed bool   `json:"gate_bypassed"`
	// Jail is "bubblewrap" when every agent process ran jailed, "none"
	// (with JailNote saying why) when the agent saw what the author's user
	// sees: the terminal, Markdown and JUnit said NO JAIL, --json did not.
	Jail     string `json:"jail,omitempty"`
	JailNote string `json:"jail_note,omitempty"`
	// SessionMode is how the conversations reached the CLI: interactive or
	// resume (run.json's config.session_mode; resume for older runs).
	SessionMode string `json:"session_mode"`
	// Agent is the CLI driven when not claude (run.json's config.agent);
	// CostEstimated says its costs are estimated from token counts.
	Agent         string             `json:"agent,omitempty"`
	CostEstimated bool               `json:"cost_estimated,omitempty"`
	Outcome       JSONOutcome        `json:"outcome"`
	Conversations []JSONConversation `json:"conversations"`
	Costs         record.Costs       `json:"costs"`
}

// JSONOutcome is the run's verdict.
type JSONOutcome struct {
	Verdict  string `json:"verdict"`
	ExitCode int    `json:"exit_code"`
	Sentence string `json:"sentence"`
	// Rule is what set the exit code: diluted-vs-fresh or any-probe-failed.
	Rule string `json:"rule"`
	// The comparison behind the default rule: each arm's judged probes and
	// passes (the diluted arm over DilutedPopulation), the drop in mean
	// per-unit share, its one-sided p, and the drop the run could have
	// caught with 80% power (0: none).
	DilutedPopulation string  `json:"diluted_population"`
	DilutedPassed     int     `json:"diluted_passed"`
	DilutedProbes     int     `json:"diluted_probes"`
	FreshPassed       int     `json:"fresh_passed"`
	FreshProbes       int     `json:"fresh_probes"`
	Drop              float64 `json:"drop"`
	P                 float64 `json:"p"`
	// Testable is false when an arm has fewer than 2 units with a judged
	// probe: the test was not made, and P (1) says nothing.
	Testable          bool    `json:"testable"`
	Alpha             float64 `json:"alpha"`
	MinDetectableDrop float64 `json:"min_detectable_drop"`
	// AnyFailureChance: with any-probe-failed, how often that rule fires on
	// a stable skill at the fresh pass rate.
	AnyFailureChance float64 `json:"any_failure_chance,omitempty"`
	// EffectiveTurn is the last probe's turn whose diluted pass rate held
	// (0: none judged), EffectiveContext its context, as the summary's
	// "effective turn" line.
	EffectiveTurn     int      `json:"effective_turn"`
	EffectiveContext  int64    `json:"effective_context,omitempty"`
	Notes             []string `json:"notes"`
	StoppedConsulting []string `json:"stopped_consulting"`
}

// JSONConversation is one conversation's row of the summary. ContextStart
// and ContextEnd are its own first and last known context sizes (0 when
// none is known), never joined with another conversation's.
type JSONConversation struct {
	Index        int    `json:"index"`
	Status       string `json:"status"`
	Error        string `json:"error,omitempty"`
	Shape        string `json:"shape"`
	ContextStart int64  `json:"context_start"`
	ContextEnd   int64  `json:"context_end"`
	// Alerts are what no verdict says: a model change (a confound), the
	// skill refused to the agent, a set-up problem.
	Alerts []string   `json:"alerts,omitempty"`
	Turns  []JSONTurn `json:"turns"`
}

// JSONTurn is one of the ten turns, run or not. Result is what Cell shows:
// PASS, PASS*, FAIL, ESCAPE, JUDGE-ERROR, filler, ERROR, TIMEOUT,
// "not judged", or "-" for a turn that did not run.
type JSONTurn struct {
	Turn           int      `json:"turn"`
	Kind           string   `json:"kind"`
	Result         string   `json:"result"`
	ToolCalls      int      `json:"tool_calls"`
	ContextTokens  int64    `json:"context_tokens"`
	FailedCriteria []string `json:"failed_criteria"`
	EscapeReason   string   `json:"escape_reason,omitempty"`
	JudgeError     string   `json:"judge_error,omitempty"`
	// Probe is a probe's number; AfterCompaction says the session had been
	// compacted before it was asked.
	Probe           int  `json:"probe,omitempty"`
	AfterCompaction bool `json:"after_compaction,omitempty"`
}

// Summarize builds the JSON summary of r. Lists are never null.
func Summarize(r *record.Run) JSONSummary {
	o := r.Outcome
	s := JSONSummary{
		SchemaVersion: JSONSchemaVersion,
		Skill:         r.Skill.Name,
		Status:        r.Status,
		GateBypassed:  r.GateBypassed,
		Jail:          r.Jail, JailNote: r.JailNote,
		SessionMode: record.SessionModeOf(r.Config),
		Agent:       r.Config.Agent, CostEstimated: r.Config.CostEstimated,
		Outcome: JSONOutcome{
			Verdict: o.Verdict, ExitCode: o.Exit, Sentence: o.Sentence, Rule: o.Rule,
			DilutedPopulation: o.Stats.DilutedPopulation,
			DilutedPassed:     o.Stats.Comparison.Diluted.Passed, DilutedProbes: o.Stats.Comparison.Diluted.Probes,
			FreshPassed: o.Stats.Comparison.Fresh.Passed, FreshProbes: o.Stats.Comparison.Fresh.Probes,
			Drop: o.Stats.Comparison.Drop, P: o.Stats.Comparison.P, Testable: o.Stats.Comparison.Testable, Alpha: o.Stats.Alpha,
			MinDetectableDrop: o.Stats.MinDetectableDrop, AnyFailureChance: o.AnyFailureChance,
			EffectiveTurn: o.Stats.EffectiveTurn, EffectiveContext: o.Stats.EffectiveContext,
			Notes: nonNil(o.Notes), StoppedConsulting: nonNil(o.StoppedConsulting),
		},
		Conversations: []JSONConversation{},
		Costs:         r.Costs,
	}
	if r.GateBypassed {
		s.Warning = BypassBanner
	}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		first, last := contextRange(c)
		jc := JSONConversation{
			Index: c.Index, Status: c.Status, Error: c.Error, Shape: c.Shape,
			ContextStart: first, ContextEnd: last, Turns: []JSONTurn{}, Alerts: convAlerts(c),
		}
		for n := 1; n <= TurnCount(r, c); n++ {
			t := c.TurnAt(n)
			jt := JSONTurn{Turn: n, Kind: ScheduledKind(r, n), Result: Cell(t), FailedCriteria: []string{}}
			if t != nil {
				jt.Kind, jt.ToolCalls, jt.ContextTokens = t.Kind, t.ToolCallCount, t.ContextTokens
				jt.Probe, jt.AfterCompaction = t.ProbeNumber(), t.AfterCompaction
				if v := t.Verdict; v != nil {
					jt.FailedCriteria = failedCriteria(v, r.Rubric)
					if v.EscapeHatch || v.Partial {
						jt.EscapeReason = v.EscapeReason
					}
					if v.Result == judge.JudgeError {
						jt.JudgeError = v.Error
					}
				}
			}
			jc.Turns = append(jc.Turns, jt)
		}
		s.Conversations = append(s.Conversations, jc)
	}
	return s
}

// TurnCount is how many turns to show for a conversation: the seed's ten
// in a run on its schedule, else as many as the conversation recorded.
func TurnCount(r *record.Run, c *record.Conversation) int {
	n := c.LastTurn()
	if r.Plan == nil || r.Plan.Schedule.Fixed() {
		n = max(n, plan.Turns)
	}
	return n
}

// ScheduledKind is the kind a turn the conversation never reached would
// have had: known in the seed's schedule, "" in a diluted-to one (which
// decides as it goes).
func ScheduledKind(r *record.Run, n int) string {
	if r.Plan == nil || r.Plan.Schedule.Fixed() {
		return plan.Kind(n)
	}
	return ""
}

// JSON writes the summary as one indented JSON object.
func JSON(w io.Writer, r *record.Run) error {
	b, err := json.MarshalIndent(Summarize(r), "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the JSON summary: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// failedCriteria is what the terminal summary lists ("id: text" of each
// must criterion that did not pass), or the bare ids when the run has no
// rubric.
func failedCriteria(v *judge.Verdict, rb *rubric.Rubric) []string {
	if rb != nil {
		return nonNil(v.Failed(rb))
	}
	out := []string{}
	for _, c := range v.Criteria {
		if c.Result != judge.Pass && c.Kind == rubric.Must {
			out = append(out, c.ID)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
