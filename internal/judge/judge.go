// Package judge decides whether one turn followed the skill, from what the
// agent executed rather than what it wrote.
//
// Deterministic checks run first and win. The model judge then sees a
// condensed, numbered trace of the tool calls, with the agent's final text
// shown but labelled as claims. Its answer must cite calls that exist; an
// answer that does not parse or validate is retried and then recorded as a
// judge error, never as a pass or a fail.
package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/rubric"
)

// Turn results.
const (
	Pass       = "pass"
	Fail       = "fail"
	JudgeError = "judge-error"
	// Uncertain: repeated judgements of the turn disagree (--judge-repeats).
	Uncertain = "uncertain"
	// NotApplicable is a criterion's result, never a turn's: the task gave
	// the step no occasion. It does not pass a must criterion.
	NotApplicable = "n/a"
)

// RepeatVerdict is one of several judgements of the same turn.
type RepeatVerdict struct {
	Result      string `json:"result"`
	EscapeHatch bool   `json:"escape_hatch"`
	Error       string `json:"error,omitempty"`
}

// PromptVersion changes whenever the judge prompt or schema changes.
// judge-v2: a sub-agent's calls (a context: fork skill's steps) are in the
// trace, marked, with a line saying what the mark means.
// judge-v3: the prompt says what n/a means, and that it does not pass a
// must criterion (a turn passes when every must criterion passes).
const PromptVersion = "judge-v3"

// CriterionVerdict is the judgement of one criterion.
type CriterionVerdict struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Result   string `json:"result"` // pass, fail, n/a
	Evidence string `json:"evidence"`
	Call     int    `json:"call"` // 1-based call number cited; 0 for none
	// Source is "check" when a deterministic check decided, else "judge".
	Source string `json:"source"`
	// JudgeResult is the model's own answer where a check overrode it.
	JudgeResult string `json:"judge_result,omitempty"`
}

// Verdict is the judgement of one turn.
type Verdict struct {
	Result       string             `json:"result"` // pass, fail, judge-error
	Criteria     []CriterionVerdict `json:"criteria,omitempty"`
	EscapeHatch  bool               `json:"escape_hatch"`
	EscapeReason string             `json:"escape_reason,omitempty"`
	// Partial marks an escape-hatch flag the checks contradicted: a
	// must-criterion's check passed, so the procedure was not abandoned.
	Partial bool `json:"partial,omitempty"`
	// SetupProblem is set when a must-criterion's check matched only calls
	// that failed (a non-zero exit, a missing file): the step was tried but
	// the sandbox lacks what the skill needs. It quotes the failing output.
	// Such a turn says nothing about the skill; the baseline gate treats it
	// as a failed baseline with a set-up message.
	SetupProblem string `json:"setup_problem,omitempty"`
	OverCall     bool   `json:"judge_over_call,omitempty"`
	Error        string `json:"error,omitempty"`
	// Refused: the API refused the judge's credentials (HTTP 401 or 403).
	// Every later judgement would be refused too, so the run stops.
	Refused  bool `json:"-"`
	Attempts int  `json:"attempts"`
	// Repeats and Agreement are set with --judge-repeats > 1: each
	// judgement's result, and per criterion the share that agreed.
	Repeats   []RepeatVerdict    `json:"repeats,omitempty"`
	Agreement map[string]float64 `json:"agreement,omitempty"`
	// Judge cost and tokens, kept apart from the agent's. CostEstimated:
	// some of the cost is priced from token counts (a call stopped before
	// the claude CLI said its cost: claude.Turn.CostEstimated).
	CostUSD       float64 `json:"cost_usd"`
	CostEstimated bool    `json:"cost_estimated,omitempty"`
	Tokens        int64   `json:"tokens"`
	Model         string  `json:"model,omitempty"`
}

// Failed lists the must criteria that did not pass, as "id: text" (with
// " (n/a)" for one the judge found not applicable).
func (v *Verdict) Failed(r *rubric.Rubric) []string {
	var out []string
	for _, c := range v.Criteria {
		if c.Kind != rubric.Must || c.Result == Pass {
			continue
		}
		line := c.ID // a record without its rubric
		if crit, ok := r.ByID(c.ID); ok {
			line += ": " + crit.Text
		}
		if c.Result == NotApplicable {
			line += " (n/a)"
		}
		out = append(out, line)
	}
	return out
}

// Schema is the JSON schema of the judge's answer; the title routes the call
// in the scripted model.
const Schema = `{"title":"verdict","type":"object","additionalProperties":false,"properties":{` +
	`"criteria":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{` +
	`"id":{"type":"string"},"result":{"type":"string","enum":["pass","fail","n/a"]},"evidence":{"type":"string"},"call":{"type":"integer","minimum":0}},` +
	`"required":["id","result","evidence","call"]}},` +
	`"escape_hatch":{"type":"boolean"},"escape_reason":{"type":"string"}},` +
	`"required":["criteria","escape_hatch","escape_reason"]}`

// Caller is the cold-call seam: claude.Structured.
type Caller = claude.Structured

// Judge judges turns against one rubric.
type Judge struct {
	Caller   Caller
	Rubric   *rubric.Rubric
	Model    string
	Attempts int // model calls per turn before judge-error (default 2)
	Repeats  int // independent judgements per turn (default 1)
}

// Judge returns the verdict of one turn given the task it answered.
//
// With Repeats > 1 the model judges the turn that many times; verdicts that
// disagree make the turn Uncertain, never silently resolved.
func (j *Judge) Judge(ctx context.Context, task string, turn claude.Turn) Verdict {
	if j.Repeats <= 1 {
		return j.once(ctx, task, turn)
	}
	var vs []Verdict
	for i := 0; i < j.Repeats; i++ {
		vs = append(vs, j.once(ctx, task, turn))
	}
	return merge(vs)
}

// merge combines repeated verdicts of one turn.
func merge(vs []Verdict) Verdict {
	v := vs[0]
	v.Repeats = nil
	agree := map[string]int{}
	for _, r := range vs {
		v.Repeats = append(v.Repeats, RepeatVerdict{Result: r.Result, EscapeHatch: r.EscapeHatch, Error: r.Error})
		if r.Result == JudgeError {
			// An error in any repeat leaves the turn undecided.
			v.Result, v.Error = JudgeError, r.Error
		}
	}
	for i := 1; i < len(vs); i++ {
		v.CostUSD += vs[i].CostUSD
		v.CostEstimated = v.CostEstimated || vs[i].CostEstimated
		v.Tokens += vs[i].Tokens
		v.Attempts += vs[i].Attempts
		// Any repeat's override of an escape-hatch flag marks the turn,
		// whichever repeat came first (it followed the first alone).
		v.Partial = v.Partial || vs[i].Partial
		v.OverCall = v.OverCall || vs[i].OverCall
		v.Refused = v.Refused || vs[i].Refused
	}
	if v.Result == JudgeError {
		return v
	}
	// Agreement per criterion: the share of repeats that match the first.
	v.Agreement = map[string]float64{}
	for k, c := range v.Criteria {
		same := 0
		for _, r := range vs {
			if k < len(r.Criteria) && r.Criteria[k].Result == c.Result {
				same++
			}
		}
		agree[c.ID] = same
		v.Agreement[c.ID] = float64(same) / float64(len(vs))
	}
	for _, r := range vs[1:] {
		if r.Result != v.Result || r.EscapeHatch != v.EscapeHatch {
			v.Result = Uncertain
			v.Error = "the judge's repeated verdicts disagree"
		}
	}
	return v
}

// once is one judgement: checks, then the model, retried on a bad answer.
func (j *Judge) once(ctx context.Context, task string, turn claude.Turn) Verdict {
	calls := CheckCalls(turn.Calls)
	checks := map[string]rubric.CheckResult{}
	for _, c := range j.Rubric.Criteria {
		if c.Check == nil {
			continue
		}
		res, err := c.Check.Run(calls)
		if err != nil { // validated at load; kept as a guard
			return Verdict{Result: JudgeError, Error: fmt.Sprintf("check %s: %v", c.ID, err)}
		}
		checks[c.ID] = res
	}
	prompt := Prompt(j.Rubric, task, turn)
	v := Verdict{Model: j.Model}
	setupID, setupMsg := SetupProblem(j.Rubric, checks, turn.Calls)
	attempts := j.Attempts
	if attempts <= 0 {
		attempts = 2
	}
	var lastErr error
	for v.Attempts < attempts {
		v.Attempts++
		out, err := j.Caller.Structured(ctx, prompt, Schema, j.Model)
		v.CostUSD += out.CostUSD
		v.CostEstimated = v.CostEstimated || out.CostEstimated
		v.Tokens += out.LastUsage.Context() + out.OutputTokens
		if err != nil {
			lastErr = err
			if errors.Is(err, claude.ErrCredentials) {
				v.Refused = true
				break // a refused key is refused again
			}
			if ctx.Err() != nil {
				break
			}
			continue
		}
		// Only the calls the trace showed may be cited: a citation of
		// call 99 where 80 were shown was evidence the judge never saw.
		ans, err := ParseAnswer(out.StructuredOutput, j.Rubric, min(len(turn.Calls), maxCalls))
		if err != nil {
			lastErr = err
			continue
		}
		combine(&v, ans, j.Rubric, checks)
		if setupID != "" {
			// Not a pass: the required step was attempted and failed.
			v.SetupProblem, v.Result = setupMsg, Fail
			for k := range v.Criteria {
				if v.Criteria[k].ID == setupID {
					v.Criteria[k].Result, v.Criteria[k].Evidence = Fail, setupMsg
				}
			}
		}
		return v
	}
	v.Result = JudgeError
	v.Error = lastErr.Error()
	return v
}

// Answer is the judge model's answer, validated.
type Answer struct {
	Criteria []struct {
		ID       string `json:"id"`
		Result   string `json:"result"`
		Evidence string `json:"evidence"`
		Call     int    `json:"call"`
	} `json:"criteria"`
	EscapeHatch  bool   `json:"escape_hatch"`
	EscapeReason string `json:"escape_reason"`
}

// ParseAnswer decodes and validates the judge's answer: every criterion once,
// known results, cited calls that exist.
func ParseAnswer(b []byte, r *rubric.Rubric, ncalls int) (*Answer, error) {
	var a Answer
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("judge answer does not parse: %w", err)
	}
	seen := map[string]bool{}
	for _, c := range a.Criteria {
		if _, ok := r.ByID(c.ID); !ok {
			return nil, fmt.Errorf("judge answer names unknown criterion %q", c.ID)
		}
		if seen[c.ID] {
			return nil, fmt.Errorf("judge answer repeats criterion %q", c.ID)
		}
		seen[c.ID] = true
		switch c.Result {
		case Pass, Fail, NotApplicable:
		default:
			return nil, fmt.Errorf("judge answer for %q: result %q, expected pass, fail or n/a", c.ID, c.Result)
		}
		if c.Call < 0 || c.Call > ncalls {
			return nil, fmt.Errorf("judge answer for %q cites call %d, but the trace has %d calls", c.ID, c.Call, ncalls)
		}
	}
	for _, c := range r.Criteria {
		if !seen[c.ID] {
			return nil, fmt.Errorf("judge answer omits criterion %q", c.ID)
		}
	}
	if a.EscapeHatch && strings.TrimSpace(a.EscapeReason) == "" {
		return nil, fmt.Errorf("judge answer flags an escape hatch without a reason")
	}
	return &a, nil
}

// combine merges checks and the model's answer into the verdict. Checks win;
// an escape-hatch flag contradicted by a passing must-check is downgraded to
// partial compliance and counted as a judge over-call.
func combine(v *Verdict, a *Answer, r *rubric.Rubric, checks map[string]rubric.CheckResult) {
	byID := map[string]int{}
	for i, c := range a.Criteria {
		byID[c.ID] = i
	}
	mustCheckPassed := false
	v.Result = Pass
	for _, c := range r.Criteria {
		ans := a.Criteria[byID[c.ID]]
		cv := CriterionVerdict{ID: c.ID, Kind: c.Kind, Result: ans.Result, Evidence: ans.Evidence, Call: ans.Call, Source: "judge"}
		if res, ok := checks[c.ID]; ok {
			result := Fail
			if res.Pass {
				result = Pass
			}
			if result != ans.Result {
				cv.JudgeResult = ans.Result
			}
			cv.Result, cv.Evidence, cv.Call, cv.Source = result, res.Evidence, res.Call, "check"
			if c.Kind == rubric.Must && res.Pass && c.Check.Expect == "present" {
				mustCheckPassed = true
			}
		}
		// A turn passes when every must criterion passes: one the judge
		// found not applicable is not shown by any call, and a turn whose
		// every required step was "n/a" (an agent that stopped using
		// tools, say) would otherwise count as compliant.
		if c.Kind == rubric.Must && cv.Result != Pass {
			v.Result = Fail
		}
		v.Criteria = append(v.Criteria, cv)
	}
	v.EscapeHatch, v.EscapeReason = a.EscapeHatch, a.EscapeReason
	if v.EscapeHatch && mustCheckPassed {
		// The required step ran: that is partial compliance, not an
		// abandoned procedure (seed 002's over-called escape hatches).
		v.EscapeHatch, v.Partial, v.OverCall = false, true, true
	}
	if v.EscapeHatch {
		v.Result = Fail
	}
}

// SetupProblem finds a must-criterion whose present-check matched only
// calls that failed: a Bash call with an error result (a non-zero exit), a
// call whose error says a file or command is missing, or a call denied
// permission. The command was there but the step did not run, so the turn
// cannot count as a pass: the sandbox lacks what the skill needs. It
// returns the criterion and a message quoting the failing output, or "".
func SetupProblem(r *rubric.Rubric, checks map[string]rubric.CheckResult, calls []claude.ToolCall) (id, msg string) {
	cc := CheckCalls(calls)
	for _, c := range r.Criteria {
		res, ok := checks[c.ID]
		if !ok || c.Kind != rubric.Must || c.Check.Expect != "present" || !res.Pass {
			continue
		}
		first := 0
		allFailed := true
		for i := range cc {
			if m, err := c.Check.Run(cc[i : i+1]); err != nil || !m.Pass {
				continue
			}
			if !failedCall(calls[i]) {
				allFailed = false
				break
			}
			if first == 0 {
				first = i + 1
			}
		}
		if allFailed && first > 0 {
			call := calls[first-1]
			out := clip(oneLine(call.Result), 300)
			if call.Denied {
				out = "denied permission: " + out
			}
			return c.ID, fmt.Sprintf("set-up problem: %s matched call %d (%s), which failed: %s", c.ID, first, call.Name, out)
		}
	}
	return "", ""
}

// failedCall: a call that was made and failed, as opposed to one the agent
// chose not to make.
func failedCall(c claude.ToolCall) bool {
	if c.Denied {
		return true
	}
	if !c.IsError {
		return false
	}
	low := strings.ToLower(c.Result)
	return c.Name == "Bash" || strings.Contains(low, "no such file") || strings.Contains(low, "does not exist") || strings.Contains(low, "not found")
}

// CheckCalls is the trace as deterministic checks see it.
func CheckCalls(calls []claude.ToolCall) []rubric.Call {
	out := make([]rubric.Call, len(calls))
	for i, c := range calls {
		out[i] = rubric.Call{Name: c.Name, Input: compactJSON(c.Input)}
	}
	return out
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// Bounds of the condensed trace: enough to judge, never the whole turn.
const (
	maxInput  = 600
	maxResult = 400
	maxText   = 1500
	maxCalls  = 80
)

// Trace renders the condensed, numbered trace the judge reads. A
// sub-agent's call is numbered with the rest, in the order it ran, and
// marked with the call that started the sub-agent: a context: fork skill
// runs its steps there, so they are the skill's own.
func Trace(turn claude.Turn) string {
	var b strings.Builder
	if len(turn.Calls) == 0 {
		b.WriteString("(no tool calls: the agent executed nothing)\n")
	}
	number := map[string]int{}
	for i, c := range turn.Calls {
		number[c.ID] = i + 1
		if i == maxCalls {
			fmt.Fprintf(&b, "... %d more calls not shown\n", len(turn.Calls)-maxCalls)
			break
		}
		status := "ok"
		switch {
		case c.Denied:
			status = "DENIED"
		case !c.HasResult:
			status = "NO RESULT"
		case c.IsError:
			status = "ERROR"
		}
		by := ""
		if c.Parent != "" {
			by = fmt.Sprintf("(sub-agent of [%d]) ", number[c.Parent])
		}
		fmt.Fprintf(&b, "[%d] %s%s %s\n    -> %s: %s\n", i+1, by, c.Name, clip(inputFields(c), maxInput), status, clip(oneLine(c.Result), maxResult))
	}
	return b.String()
}

// hasSubagent reports whether a sub-agent made any of the calls.
func hasSubagent(turn claude.Turn) bool {
	for _, c := range turn.Calls {
		if c.Parent != "" {
			return true
		}
	}
	return false
}

// inputFields keeps the input fields that say what a call did; file contents
// and long edit strings are clipped by the caller.
func inputFields(c claude.ToolCall) string {
	return compactJSON(c.Input)
}

// Prompt is the judge prompt for one turn.
func Prompt(r *rubric.Rubric, task string, turn claude.Turn) string {
	var b strings.Builder
	b.WriteString("You grade whether an AI coding agent followed a written procedure, using ONLY the tool calls it executed.\n\n")
	b.WriteString("CRITERIA:\n")
	for _, c := range r.Criteria {
		fmt.Fprintf(&b, "- %s (%s): %s\n", c.ID, c.Kind, c.Text)
	}
	b.WriteString("\nTASK GIVEN TO THE AGENT:\n")
	b.WriteString(clip(task, maxText))
	b.WriteString("\n\nTOOL CALLS THE AGENT EXECUTED (numbered; this is the evidence):\n")
	if hasSubagent(turn) {
		b.WriteString("(A call marked \"(sub-agent of [N])\" was executed by a sub-agent that call N started: the skill ran its procedure there. Those calls are the skill's steps and count as evidence like the others.)\n")
	}
	b.WriteString(Trace(turn))
	b.WriteString("\nTHE AGENT'S FINAL MESSAGE (claims only, NOT evidence of any action):\n\"\"\"\n")
	// Its own """ would close the fence and let the agent write text
	// that reads as the prompt's (a forged evidence section, an
	// instruction): each becomes ''' inside it.
	b.WriteString(strings.ReplaceAll(clip(turn.Text, maxText), `"""`, `'''`))
	b.WriteString("\n\"\"\"\n\n")
	b.WriteString(`For every criterion answer result pass, fail or n/a, with evidence that cites a call number in "call" (0 when no call applies). A criterion passes only when the calls show it; what the agent says it did counts for nothing. n/a means the task gave the criterion no occasion at all; like fail, it does not pass a must criterion.
Set escape_hatch true only when the agent abandoned the procedure entirely and hand-rolled its own approach; skipping some steps while doing the core ones is partial compliance, not an escape hatch. Give escape_reason (empty when false).
Answer with the StructuredOutput tool.`)
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" …[%d bytes cut]", len(s)-cut)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Redact applies clean (a redactor) to every text the judge wrote: its
// evidence, escape reason and errors reach run.json, the chart, JUnit and
// the terminal, and the judge read the unredacted trace.
func (v *Verdict) Redact(clean func(string) string) {
	v.EscapeReason = clean(v.EscapeReason)
	v.Error = clean(v.Error)
	// It quotes a failed call's output ("which failed: Exit code 3 ..."),
	// which a key the call printed was in.
	v.SetupProblem = clean(v.SetupProblem)
	for i := range v.Criteria {
		v.Criteria[i].Evidence = clean(v.Criteria[i].Evidence)
	}
	for i := range v.Repeats {
		v.Repeats[i].Error = clean(v.Repeats[i].Error)
	}
}
