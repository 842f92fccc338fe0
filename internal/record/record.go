// Package record is the record of a run as it is kept on disk: run.json's
// types (each conversation's turns, verdicts and costs, the plan, the
// outcome) and suite.json's, how both are saved and loaded, and the
// enumerations they store. It decides nothing: package verdict reads a
// record and fills in its outcome.
package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vibe-test/vibe-test/internal/atomicfile"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/jsonerr"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/readfile"
	"github.com/vibe-test/vibe-test/internal/rubric"
)

// SchemaVersion of run.json. Readers check it; bump it on any change that
// an older reader would misread.
//
// 2: the two-arm design (the fresh arm, Config.Rule and Effect, the
// diluted-vs-fresh statistics, alpha-spending looks).
// 3: probes keyed by number (Turn.Probe), so a schedule may put them at
// any turn (Plan.Schedule: --dilute-to, --compact-before, work fillers),
// and compactions. A version-2 reader would look for probes at turns 6, 8
// and 10 only.
const SchemaVersion = 3

// MinSchemaVersion is the oldest run.json this version reads: schema 1 was
// the pre-release design with no fresh arm, which cannot be decided today.
const MinSchemaVersion = 2

// Run statuses.
const (
	StatusPending        = "pending"
	StatusRunning        = "running"
	StatusCompleted      = "completed"
	StatusBaselineFailed = "baseline-failed"
	StatusError          = "error"
	StatusInterrupted    = "interrupted"
	// StatusBudgetExhausted: a turn would have started after --max-budget-usd
	// was spent.
	StatusBudgetExhausted = "budget-exhausted"
)

// Turn statuses.
const (
	TurnOK       = "ok"
	TurnError    = "error"
	TurnTimedOut = "timed-out"
	// TurnPromptTooLong: the API refused the conversation as too long.
	TurnPromptTooLong = "prompt-too-long"
)

// Run is run.json.
type Run struct {
	SchemaVersion int       `json:"schema_version"`
	Status        string    `json:"status"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at,omitzero"`
	Versions      Versions  `json:"versions"`
	Skill         Skill     `json:"skill"`
	Config        Config    `json:"config"`
	// Isolation is "hermetic" (fresh config dir per conversation) or
	// "author-config" (the author's login kept, isolated by flags alone).
	Isolation string `json:"isolation"`
	// Jail is "bubblewrap" when every claude process ran in a jail, "none"
	// when the agent saw what the author's user sees; JailNote says why
	// there was none. Empty in runs from before the jail.
	Jail          string         `json:"jail,omitempty"`
	JailNote      string         `json:"jail_note,omitempty"`
	GateBypassed  bool           `json:"gate_bypassed"`
	Rubric        *rubric.Rubric `json:"rubric,omitempty"`
	Plan          *plan.Plan     `json:"plan,omitempty"`
	Conversations []Conversation `json:"conversations"`
	// Fresh is the fresh arm: for conversation i, fresh triple i asks each
	// probe as the first message of its own new session in a fresh sandbox.
	// The exit code compares the probes diluted with the same probes here.
	Fresh []Conversation `json:"fresh"`
	// Controls are the --control conversations: the same schedule with no
	// skill installed, or each probe in a fresh session. They never decide
	// the exit code; they tell where the skill earns its lines.
	Controls []Conversation `json:"controls,omitempty"`
	// Sequential is set with --until-decided.
	Sequential *Sequential `json:"sequential,omitempty"`
	Costs      Costs       `json:"costs"`
	Outcome    Outcome     `json:"outcome"`
	Error      string      `json:"error,omitempty"`
}

// Versions of the tools that made the run.
type Versions struct {
	VibeTest        string `json:"vibe_test"`
	Claude          string `json:"claude"`
	ClaudeVerified  string `json:"claude_verified"`
	ClaudeMismatch  bool   `json:"claude_mismatch,omitempty"`
	RubricPrompt    string `json:"rubric_prompt"`
	JudgePrompt     string `json:"judge_prompt"`
	RunSchema       int    `json:"run_schema"`
	ClaudeParserMsg string `json:"claude_warning,omitempty"`
	// Agent and AgentVerified are the other CLI's version (codex,
	// gemini: config.agent or config.judge_agent) and the one its parser
	// was verified on; absent when only claude ran.
	Agent         string `json:"agent,omitempty"`
	AgentVerified string `json:"agent_verified,omitempty"`
	// JudgeAgent and JudgeAgentVerified are the judge's CLI's when it is
	// a third one (--agent codex --judge-agent gemini, say).
	JudgeAgent         string `json:"judge_agent,omitempty"`
	JudgeAgentVerified string `json:"judge_agent_verified,omitempty"`
}

// Skill identifies the skill measured.
type Skill struct {
	Name string `json:"name"`
	// DeclaredName is the frontmatter's name when the CLI lists the skill
	// under another (its folder name: the declared one breaks the spec).
	DeclaredName string `json:"declared_name,omitempty"`
	Path         string `json:"path"`
	Hash         string `json:"hash"`
	// Warnings are the skill's deviations from the Agent Skills spec that
	// the CLI still loads, each naming the rule it breaks.
	Warnings []string `json:"warnings,omitempty"`
	// ToolsNotGranted are tools the skill (or --allowed-tools) names that the
	// agent's session does not have, with why.
	ToolsNotGranted []string `json:"tools_not_granted,omitempty"`
}

// Config is the run's settings as given.
type Config struct {
	Conversations int `json:"conversations"`
	Concurrency   int `json:"concurrency"`
	// Model is the agent's model as the CLI resolved it for the run's
	// first session (conversation.ModelPin), passed with --model on every
	// agent turn after it; "" until a session has reported it.
	Model string `json:"model,omitempty"`
	// ModelSource says where Model came from: "flag" (--model), "config"
	// (vibe-test.yaml) or "cli-default" (the CLI's default, resolved once).
	ModelSource string `json:"model_source,omitempty"`
	// ModelAsked is the name given (an alias such as sonnet) when the CLI
	// resolved it to another.
	ModelAsked string `json:"model_asked,omitempty"`
	JudgeModel string `json:"judge_model,omitempty"`
	// AllowedTools is the agent's --allowedTools list: the base tools
	// (Skill among them), the skill's allowed-tools, then --allowed-tools.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// SessionWideTools are the skill's allowed-tools that AllowedTools
	// grants for the whole session while the CLI would grant them only
	// from the skill's Skill call to the end of that turn
	// (claude.SessionWide); Turn.OutsideSkillGrant names the calls that
	// ran on that difference.
	SessionWideTools []string `json:"session_wide_tools,omitempty"`
	// SessionMode is how the turns of a conversation reached the CLI:
	// "interactive" (one long-lived process per conversation, each turn one
	// user message) or "resume" (one `claude -p --resume` process per
	// turn). Empty in runs from before the modes, which ran as resume:
	// read it with SessionModeOf.
	SessionMode string `json:"session_mode,omitempty"`
	// Agent is the CLI driven (--agent): "codex" or "gemini"; empty for
	// claude, the reference (so its records stay as they were). Read it
	// with AgentOf.
	Agent string `json:"agent,omitempty"`
	// JudgeAgent is the CLI of the rubric, plan and judge calls
	// (--judge-agent); empty for claude. Read it with JudgeAgentOf.
	JudgeAgent string `json:"judge_agent,omitempty"`
	// CostEstimated: the agent's costs are estimated from token counts
	// (codex, gemini), not the CLI's own figure.
	CostEstimated  bool     `json:"cost_estimated,omitempty"`
	NoBaselineGate bool     `json:"no_baseline_gate"`
	TurnTimeout    string   `json:"turn_timeout"`
	MaxRetries     int      `json:"claude_max_retries"`
	ConfigFile     string   `json:"config_file,omitempty"`
	RubricFile     string   `json:"rubric_file,omitempty"`
	FillersDir     string   `json:"fillers_dir,omitempty"`
	KeepSandbox    bool     `json:"keep_sandbox"`
	MaxBudgetUSD   float64  `json:"max_budget_usd,omitempty"`
	Controls       []string `json:"controls,omitempty"`
	PassEnv        []string `json:"pass_env,omitempty"`
	// Rule sets the exit code: RuleDilutedVsFresh (default) or
	// RuleAnyProbeFailed (seed 002's rule).
	Rule         string   `json:"rule,omitempty"`
	Alpha        float64  `json:"alpha,omitempty"`
	Effect       float64  `json:"effect,omitempty"`
	JudgeRepeats int      `json:"judge_repeats,omitempty"`
	Args         []string `json:"args,omitempty"`
}

// Costs in USD, kept apart by purpose.
type Costs struct {
	Agent  float64 `json:"agent_usd"`
	Rubric float64 `json:"rubric_usd"`
	Plan   float64 `json:"plan_usd"`
	Judge  float64 `json:"judge_usd"`
	Total  float64 `json:"total_usd"`
	// Tokens the judge and rubric calls saw, apart from the agent's.
	JudgeTokens  int64 `json:"judge_tokens"`
	RubricTokens int64 `json:"rubric_tokens"`
}

// Conversation is one 10-turn session.
type Conversation struct {
	Index int `json:"index"` // 1-based
	// Control is "" for a measured conversation, "fresh" for a fresh triple,
	// else the control's kind ("no-skill").
	Control   string   `json:"control,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
	Status    string   `json:"status"`
	Error     string   `json:"error,omitempty"`
	Fillers   []string `json:"fillers"`
	// Sandbox, Home and ConfigDir locate the conversation's workspace while
	// it exists (during the run, after an interrupt, with --keep-sandbox), so
	// resume can continue the session.
	Sandbox   string `json:"sandbox,omitempty"`
	Home      string `json:"home,omitempty"`
	ConfigDir string `json:"config_dir,omitempty"`
	Tmp       string `json:"tmp,omitempty"` // the conversation's own TMPDIR
	Turns     []Turn `json:"turns"`
	// Abandoned are turns that did not complete (interrupted, errored, or
	// lost with a sandbox); kept for the record, never judged.
	Abandoned []Turn `json:"abandoned_turns,omitempty"`
	// Rewinds are the times the session file was cut back to the last
	// completed turn before a turn was run again, so the model never saw
	// the rerun turn's prompt twice.
	Rewinds []Rewind `json:"rewinds,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Shape   string   `json:"shape,omitempty"`
	// ModelChange is set when the model that answered changed inside the
	// conversation: a confound, since a different model is a decay that is
	// not dilution.
	ModelChange string `json:"model_change,omitempty"`
}

// Rewind is one cut of the session file before a rerun: what the stopped
// try of Turn had saved (its prompt, the answers, tool results) was removed.
type Rewind struct {
	Turn         int    `json:"turn"`
	RemovedBytes int64  `json:"removed_bytes"`
	RemovedLines int    `json:"removed_lines"`
	Reason       string `json:"reason"` // why the turn ran again: the stopped try's status (timed-out, error) or "resume"
}

// Compaction is one compaction of a conversation's session: the context
// before it and the CLI's estimate after it (the summary and the messages
// kept verbatim), what it cost, and the stream of the /compact invocation.
type Compaction struct {
	Trigger    string  `json:"trigger"` // manual (vibe-test's /compact) or auto (the CLI's own)
	PreTokens  int64   `json:"pre_tokens"`
	PostTokens int64   `json:"post_tokens"`
	Transcript string  `json:"transcript,omitempty"`
	CostUSD    float64 `json:"cost_usd"`
	DurationMS int64   `json:"duration_ms,omitempty"`
}

// Attempt is a failed try of a turn that was run again.
type Attempt struct {
	Transcript string  `json:"transcript"`
	Status     string  `json:"status"`
	Error      string  `json:"error,omitempty"`
	ExitCode   int     `json:"exit_code"`
	CostUSD    float64 `json:"cost_usd"`
	// CostEstimated: CostUSD is priced from the try's token counts (a
	// claude try stopped before its result line): Turn.CostEstimated.
	CostEstimated bool `json:"cost_estimated,omitempty"`
	// DurationMS is how long the try ran: the turn's own duration_ms is
	// its last try's.
	DurationMS int64 `json:"duration_ms,omitempty"`
}

// Turn is one turn's record.
type Turn struct {
	Turn int    `json:"turn"`
	Kind string `json:"kind"` // base, filler, probe
	// SessionID is set on undiluted control turns, each its own session.
	SessionID  string `json:"session_id,omitempty"`
	Prompt     string `json:"prompt"`
	FillerID   string `json:"filler_id,omitempty"`
	Transcript string `json:"transcript"` // relative to the run folder
	Status     string `json:"status"`
	Error      string `json:"error,omitempty"`
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	// From the trace, judge-free. ToolCalls are all of the turn's calls in
	// order, its sub-agents' marked (Call.SubagentOf); ToolCallCount counts
	// the agent's own, SubagentCallCount its sub-agents'.
	ToolCalls         []Call `json:"tool_calls"`
	ToolCallCount     int    `json:"tool_call_count"`
	SubagentCallCount int    `json:"subagent_call_count,omitempty"`
	// SkillInvoked: a Skill call for the skill under test succeeded.
	SkillInvoked bool `json:"skill_invoked"`
	// SkillDenied: a Skill call for it was refused permission.
	SkillDenied bool `json:"skill_denied,omitempty"`
	// Hooks are the skill's frontmatter hooks that ran during the turn, in
	// order (the CLI runs them from the Skill call to the end of its
	// process).
	Hooks []Hook `json:"hooks,omitempty"`
	// OutsideSkillGrant are the calls (1-based, in ToolCalls) that ran on a
	// Config.SessionWideTools tool before the turn's Skill call for the
	// skill, or in a turn without one: the CLI alone would have refused
	// them to an agent run with -p.
	OutsideSkillGrant []int `json:"outside_skill_grant,omitempty"`
	// AnsweredBy are the models that answered the turn's API calls.
	AnsweredBy []string `json:"answered_by,omitempty"`
	APICalls   int      `json:"api_calls"`
	// SubagentAPICalls and SubagentModels are the turn's sub-agents' (a
	// context: fork skill's), as far as the stream shows them (a sub-agent
	// call that answered with text only never reaches it): not in
	// APICalls, AnsweredBy or ContextTokens.
	SubagentAPICalls int      `json:"subagent_api_calls,omitempty"`
	SubagentModels   []string `json:"subagent_models,omitempty"`
	ContextTokens    int64    `json:"context_tokens"`
	// CostUSD is the turn's own cost; SessionCostUSD the CLI's running
	// total for the session when the turn ended (what it reports).
	CostUSD        float64 `json:"cost_usd"`
	SessionCostUSD float64 `json:"session_cost_usd,omitempty"`
	// CostEstimated: the claude CLI says a turn's cost in its result line
	// alone, and this try stopped before it (a turn timeout, a kill, an
	// interrupt), billed for its API calls all the same: CostUSD prices
	// the calls the stream showed at the catalogue's list prices
	// (estimate.SpentCost). SessionCostUSD stays the CLI's.
	CostEstimated bool `json:"cost_estimated,omitempty"`
	Retries       int  `json:"api_retries,omitempty"`
	// SessionBytes is the session file's length when the turn completed:
	// a rerun of the next turn first cuts the file back to it. 0: unknown
	// (a record from before it was kept, or a session of its own).
	SessionBytes int64 `json:"session_bytes,omitempty"`
	// Probe is a probe turn's number (1-based): what pairs it with the same
	// probe asked fresh, whichever turn the schedule put it at.
	Probe int `json:"probe,omitempty"`
	// ContextBefore is the context of the last call of the turn before,
	// when this one was asked: what a diluted-to schedule held against the
	// probe's Level. LevelNotReached: the schedule's filler cap came first.
	ContextBefore   int64 `json:"context_before,omitempty"`
	Level           int64 `json:"level,omitempty"`
	LevelNotReached bool  `json:"level_not_reached,omitempty"`
	// Compactions are the session's compactions for this turn: the CLI's
	// /compact run just before its prompt (--compact-before), or the CLI
	// compacting on its own during it.
	Compactions []Compaction `json:"compactions,omitempty"`
	// AfterCompaction: the session had been compacted before the turn's
	// prompt reached the model.
	AfterCompaction bool `json:"after_compaction,omitempty"`
	// Attempts are earlier tries of this turn that failed and were retried.
	Attempts []Attempt      `json:"attempts,omitempty"`
	Verdict  *judge.Verdict `json:"verdict,omitempty"`
	// EarlierJudgeUSD and EarlierJudgeTokens are what judging the turn
	// cost before Verdict (a judge error judged again on resume, a
	// judging an interrupt stopped): paid, so counted with it. A replaced
	// verdict took its cost with it, and costs.judge went down on resume.
	EarlierJudgeUSD    float64 `json:"earlier_judge_usd,omitempty"`
	EarlierJudgeTokens int64   `json:"earlier_judge_tokens,omitempty"`
	// EarlierJudgeEstimated: some of EarlierJudgeUSD is priced from token
	// counts (judge.Verdict.CostEstimated of a judging it took in).
	EarlierJudgeEstimated bool `json:"earlier_judge_estimated,omitempty"`
}

// Hook is one run of a skill's hook: its name (event:matcher), outcome
// and exit code; its output is in the transcript.
type Hook struct {
	Name     string `json:"name"`
	Outcome  string `json:"outcome"`
	ExitCode int    `json:"exit_code"`
}

// Call is a tool call as saved in run.json: the input in full, the result
// clipped (the transcript has it whole).
type Call struct {
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Result  string          `json:"result,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// SubagentOf marks a sub-agent's call (a context: fork skill's step):
	// the 1-based number, in this list, of the call that started the
	// sub-agent. Agent is the sub-agent's type.
	SubagentOf int    `json:"subagent_of,omitempty"`
	Agent      string `json:"agent,omitempty"`
}

// validInput is a call's input as run.json can hold it: JSON. The
// redactor masks text, not JSON, so a secret inside a number ({"pin":
// 31415926535}) became {"pin":[REDACTED]}, which no encoder writes: every
// later save of run.json failed, and the run's record stopped there. Such
// an input is kept as one JSON string of its redacted text; a missing one
// is {}.
func validInput(in json.RawMessage) json.RawMessage {
	switch {
	case len(bytes.TrimSpace(in)) == 0:
		return json.RawMessage("{}")
	case json.Valid(in):
		return in
	}
	b, _ := json.Marshal(string(in)) // a string marshals, whatever it holds
	return b
}

// ResultChars is how much of a call's result run.json keeps.
const ResultChars = 500

// CallsOf converts a parsed turn's calls for run.json, each input and
// result passed through clean (the run's redactor) before a long result
// is cut to ResultChars: cut first, a secret across the cut no longer
// matched its own value, nor a private key its shape without its END
// line, and its head stayed in run.json.
func CallsOf(t claude.Turn, clean func([]byte) []byte) []Call {
	out := make([]Call, 0, len(t.Calls))
	number := map[string]int{}
	for i, c := range t.Calls {
		number[c.ID] = i + 1
		r, in := c.Result, c.Input
		if clean != nil {
			r, in = string(clean([]byte(r))), clean(in)
		}
		in = validInput(in)
		if len(r) > ResultChars {
			cut := ResultChars
			for cut > 0 && !utf8.RuneStart(r[cut]) {
				cut-- // not inside a character
			}
			r = r[:cut] + "…"
		}
		call := Call{Name: c.Name, Input: in, Result: r, IsError: c.IsError}
		if c.Parent != "" {
			call.SubagentOf, call.Agent = number[c.Parent], c.Agent
			if call.Agent == "" {
				call.Agent = "sub-agent"
			}
		}
		out = append(out, call)
	}
	return out
}

// Judged reports whether the turn kind is judged.
func (t *Turn) Judged() bool { return t.Kind != plan.KindFiller }

// Result is the turn's judged result: pass, fail, judge-error, or "" when
// not judged.
func (t *Turn) Result() string {
	if t.Verdict == nil {
		return ""
	}
	return t.Verdict.Result
}

// Control kinds.
const (
	ControlNoSkill = "no-skill"
	// ArmFresh marks a fresh triple (Conversation.Control).
	ArmFresh = "fresh"
)

// EveryTurn yields every turn the run holds, in each arm (the diluted
// conversations, the fresh triples, the controls) and, per conversation,
// its abandoned turns and then its turns: every record that spent the
// run's money (TallyCosts sums them in this order).
func (r *Run) EveryTurn() iter.Seq[*Turn] {
	return func(yield func(*Turn) bool) {
		for _, arm := range [][]Conversation{r.Conversations, r.Fresh, r.Controls} {
			for i := range arm {
				for _, ts := range [][]Turn{arm[i].Abandoned, arm[i].Turns} {
					for k := range ts {
						if !yield(&ts[k]) {
							return
						}
					}
				}
			}
		}
	}
}

// DirName is the folder of the conversation's transcripts in the run folder.
func (c *Conversation) DirName() string {
	if c.Control == ArmFresh {
		return fmt.Sprintf("fresh-%d", c.Index)
	}
	if c.Control != "" {
		return fmt.Sprintf("control-%s-%d", c.Control, c.Index)
	}
	return fmt.Sprintf("conv-%d", c.Index)
}

// Shown returns the record to show for a turn number: the completed turn,
// else the last abandoned try of it (an error or timeout), else nil.
func (c *Conversation) Shown(n int) *Turn {
	if t := c.TurnAt(n); t != nil {
		return t
	}
	for i := len(c.Abandoned) - 1; i >= 0; i-- {
		if c.Abandoned[i].Turn == n {
			return &c.Abandoned[i]
		}
	}
	return nil
}

// MarkBypass sets GateBypassed as soon as a baseline failed under
// --no-baseline-gate, so even a run.json written mid-run says so.
func (r *Run) MarkBypass() {
	if !r.Config.NoBaselineGate {
		return
	}
	for i := range r.Conversations {
		if t := r.Conversations[i].TurnAt(1); t != nil && t.Result() == "fail" {
			r.GateBypassed = true
		}
	}
}

// SpentJudging adds to the turn's earlier judging what a judging that
// left no verdict of it (v: replaced, or stopped) cost.
func (t *Turn) SpentJudging(v *judge.Verdict) {
	t.EarlierJudgeUSD += v.CostUSD
	t.EarlierJudgeTokens += v.Tokens
	t.EarlierJudgeEstimated = t.EarlierJudgeEstimated || v.CostEstimated
}

// CompactionCost is what the turn's compactions cost (their summary
// calls), apart from the turn's own CostUSD.
func (t *Turn) CompactionCost() float64 {
	var sum float64
	for _, c := range t.Compactions {
		sum += c.CostUSD
	}
	return sum
}

// ProbeNumber is a turn's probe number: its Probe, or for a record made
// before probes were numbered (every probe then sat at turn 6, 8 or 10)
// the one its turn gives; 0 for a turn that is no probe.
func (t *Turn) ProbeNumber() int {
	if t.Kind != plan.KindProbe {
		return 0
	}
	if t.Probe > 0 {
		return t.Probe
	}
	for i, n := range plan.ProbeTurns {
		if n == t.Turn {
			return i + 1
		}
	}
	return 0
}

// ProbeAt returns the completed record of probe k (1-based), or nil.
func (c *Conversation) ProbeAt(k int) *Turn {
	for i := range c.Turns {
		if c.Turns[i].ProbeNumber() == k {
			return &c.Turns[i]
		}
	}
	return nil
}

// ShownProbe is Shown for probe k: the completed record, else the last
// abandoned try of it, else nil.
func (c *Conversation) ShownProbe(k int) *Turn {
	if t := c.ProbeAt(k); t != nil {
		return t
	}
	for i := len(c.Abandoned) - 1; i >= 0; i-- {
		if c.Abandoned[i].ProbeNumber() == k {
			return &c.Abandoned[i]
		}
	}
	return nil
}

// Unjudged says whether a completed turn needs judging (NeedsJudging):
// resume judges it again.
func (c *Conversation) Unjudged() bool {
	for i := range c.Turns {
		if c.Turns[i].NeedsJudging() {
			return true
		}
	}
	return false
}

// NeedsJudging says whether a turn that is judged (not a filler) has no
// verdict, or a judge error.
func (t *Turn) NeedsJudging() bool {
	return t.Kind != plan.KindFiller && (t.Verdict == nil || t.Verdict.Result == judge.JudgeError)
}

// LastTurn is the highest turn number the conversation recorded, completed
// or abandoned.
func (c *Conversation) LastTurn() int {
	n := 0
	for _, list := range [][]Turn{c.Turns, c.Abandoned} {
		for i := range list {
			n = max(n, list[i].Turn)
		}
	}
	return n
}

// TurnAt returns the record of a turn number, or nil.
func (c *Conversation) TurnAt(n int) *Turn {
	for i := range c.Turns {
		if c.Turns[i].Turn == n {
			return &c.Turns[i]
		}
	}
	return nil
}

// The run folder's one file-mode policy: owner-only, since transcripts and
// verdicts may quote what the agent read.
const (
	DirMode  = 0o700
	FileMode = 0o600
)

// Save writes run.json atomically: a temp file in the same folder, synced,
// then renamed over the old one, so a crash never leaves half a file.
func Save(dir string, r *Run) error {
	b, err := Encode(r)
	if err != nil {
		return err
	}
	return SaveEncoded(dir, b)
}

// Encode is run.json's bytes for r; SaveEncoded writes them. The two halves
// of Save let a caller that holds a lock over r encode under it and write
// after letting go.
func Encode(r *Run) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding run.json: %w", err)
	}
	return append(b, '\n'), nil
}

// SaveEncoded writes Encode's bytes as dir's run.json, atomically.
func SaveEncoded(dir string, b []byte) error {
	return atomicfile.Write(filepath.Join(dir, "run.json"), b, FileMode)
}

// WriteJSON writes any value atomically as indented JSON.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	return atomicfile.Write(path, append(b, '\n'), FileMode)
}

// Load reads a run folder's run.json.
func Load(dir string) (*Run, error) {
	path := filepath.Join(dir, "run.json")
	b, err := readRecord(path, "a vibe-test run folder")
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, jsonerr.Format(path, b, err, "a run record")
	}
	if r.SchemaVersion == 0 {
		return nil, fmt.Errorf("%s: field \"schema_version\" is missing, expected a vibe-test run record", path)
	}
	if r.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d is newer than this vibe-test reads (%d): upgrade vibe-test", path, r.SchemaVersion, SchemaVersion)
	}
	if r.SchemaVersion < MinSchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d was written by a pre-release vibe-test, before each probe was also asked fresh; this version reads %d to %d: run the measurement again", path, r.SchemaVersion, MinSchemaVersion, SchemaVersion)
	}
	if err := transcriptsInside(path, &r); err != nil {
		return nil, err
	}
	// Resume goes on in the recorded mode: an unknown one ran as if known.
	if m := r.Config.SessionMode; m != "" && m != claude.SessionInteractive && m != claude.SessionResume {
		return nil, fmt.Errorf("%s: field \"config.session_mode\": %q, expected %q or %q", path, m, claude.SessionInteractive, claude.SessionResume)
	}
	return &r, nil
}

// transcriptsInside refuses a record whose transcript paths leave the run
// folder: rejudge, resume and report read them, and a hand-made
// "../../.ssh/id_rsa" would be read, and sent to the judge.
func transcriptsInside(path string, r *Run) error {
	for _, arm := range []struct {
		name  string
		units []Conversation
	}{{"conversations", r.Conversations}, {"fresh", r.Fresh}, {"controls", r.Controls}} {
		for i := range arm.units {
			for _, list := range []struct {
				name  string
				turns []Turn
			}{{"turns", arm.units[i].Turns}, {"abandoned", arm.units[i].Abandoned}} {
				for j, t := range list.turns {
					paths := []string{t.Transcript}
					for _, a := range t.Attempts {
						paths = append(paths, a.Transcript)
					}
					for _, p := range paths {
						if p != "" && !filepath.IsLocal(p) {
							return fmt.Errorf("%s: field \"%s[%d].%s[%d].transcript\": %q, expected a path inside the run folder", path, arm.name, i, list.name, j, p)
						}
					}
				}
			}
		}
	}
	return nil
}

// readRecord reads a record file; a missing one is named with the folder
// it was expected in (want), other errors with the path once. Only a
// regular file is read: a FIFO named run.json blocked report, resume,
// rejudge, compare and merge for ever, deaf to Ctrl-C.
func readRecord(path, want string) ([]byte, error) {
	b, err := readfile.Regular(path, maxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file (expected %s)", path, want)
	}
	return b, err
}

// maxRecord bounds a record file: far above any run's (a 200-conversation
// run's is some megabytes), below what would exhaust memory.
const maxRecord = 1 << 30

// FreshTriple is the pending record of the fresh triple that goes with
// conversation index.
func FreshTriple(index int) Conversation {
	return Conversation{Index: index, Control: ArmFresh, Status: StatusPending, Turns: []Turn{}}
}

// NoteModel records the models that answered a completed turn and, the
// first time they differ from an earlier turn's, the conversation's model
// change.
func (c *Conversation) NoteModel(t *Turn) {
	if c.ModelChange != "" || len(t.AnsweredBy) == 0 {
		return
	}
	if len(t.AnsweredBy) > 1 {
		c.ModelChange = fmt.Sprintf("the model changed inside turn %d: %s", t.Turn, strings.Join(t.AnsweredBy, " then "))
		return
	}
	// Compare with the latest earlier turn that recorded its model.
	var prev *Turn
	for i := range c.Turns {
		if p := &c.Turns[i]; p.Turn < t.Turn && len(p.AnsweredBy) > 0 && (prev == nil || p.Turn > prev.Turn) {
			prev = p
		}
	}
	if prev == nil {
		return
	}
	if last := prev.AnsweredBy[len(prev.AnsweredBy)-1]; last != t.AnsweredBy[0] {
		c.ModelChange = fmt.Sprintf("the model changed at turn %d: %s answered turn %d, %s turn %d", t.Turn, last, prev.Turn, t.AnsweredBy[0], t.Turn)
	}
}

// SessionModeOf is the run's session mode, "resume" for a run recorded
// before there were modes (it ran one process per turn).
func SessionModeOf(c Config) string {
	if c.SessionMode == "" {
		return "resume"
	}
	return c.SessionMode
}

// AgentOf is the CLI a run drove: its config's agent, or claude.
func AgentOf(c Config) string {
	if c.Agent == "" {
		return "claude"
	}
	return c.Agent
}

// CLI is one agent CLI that took part in a run, with its version and the
// one its parser was verified on.
type CLI struct {
	Name, Version, Verified string
	// Mismatch: the version differs from the verified one (the run
	// warned so when it started; every report says it again).
	Mismatch bool
}

// CLIs are the CLIs that took part in a run (the driven agent, the
// judge's), claude first when it did: a codex run judged by codex has no
// claude version to show, and showed "claude: unknown".
func (v Versions) CLIs(c Config) []CLI {
	var out []CLI
	agent, judge := AgentOf(c), JudgeAgentOf(c)
	if agent == "claude" || judge == "claude" {
		out = append(out, CLI{Name: "claude", Version: v.Claude, Verified: v.ClaudeVerified, Mismatch: v.ClaudeMismatch})
	}
	// Versions.Agent is the driven agent's when it is not claude, else
	// the judge's.
	other := agent
	if other == "claude" {
		other = judge
	}
	// Known on both sides and different: a version never read is no
	// mismatch.
	unverified := func(version, verified string) bool {
		return version != "" && verified != "" && version != verified
	}
	if other != "claude" {
		out = append(out, CLI{Name: other, Version: v.Agent, Verified: v.AgentVerified, Mismatch: unverified(v.Agent, v.AgentVerified)})
	}
	if judge != "claude" && judge != other {
		out = append(out, CLI{Name: judge, Version: v.JudgeAgent, Verified: v.JudgeAgentVerified, Mismatch: unverified(v.JudgeAgent, v.JudgeAgentVerified)})
	}
	return out
}

// JudgeAgentOf is the CLI a run's judge calls went through, or claude.
func JudgeAgentOf(c Config) string {
	if c.JudgeAgent == "" {
		return "claude"
	}
	return c.JudgeAgent
}
