// Package estimate says, before a run, every call it will make and what it
// will likely cost: `vibe-test --dry-run`. It works from what is on disk
// (the skill, the config, a reviewed rubric, the filler passages) and a
// price table; it starts no claude process and makes no model call.
//
// The cost is a forecast from sizes, not a measurement. Text becomes tokens
// at 4 characters a token. Each request is priced as the CLI prices it:
// the CLI marks the prompt cache on every request (the recorded requests in
// scripted/testdata/requests carry cache_control breakpoints on the system
// prompt and the newest message), so a request of a session writes what is
// new since the last request into the cache and reads the rest from it.
// The first request of every session writes its whole input: an upper
// bound, since sessions started within five minutes of each other share the
// system prompt's cache. What the agent does in a turn is assumed (the
// constants below): a judged turn loads the skill, makes two tool calls and
// answers; a filler turn is answered in one request; every baseline passes,
// so no conversation stops at the gate; nothing is retried.
package estimate

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/fillers"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// Sizes of what the pinned CLI sends besides the prompt, in characters,
// measured on its recorded requests (scripted/testdata/requests; a test
// keeps these in step when `make fixtures` records them again).
const (
	// AgentOverheadChars: an agent session's first request without its
	// prompt: the system prompt, the 14 tool definitions and the reminders.
	AgentOverheadChars = 52_888
	// ColdOverheadChars: a cold call's (rubric, plan, judge) first request
	// without its prompt: the system prompt and the StructuredOutput tool.
	ColdOverheadChars = 7_627
)

// The agent's behaviour the estimate assumes, in tokens.
const (
	CharsPerToken         = 4
	ToolCallsPerJudged    = 2   // tool calls of a judged turn, besides the Skill call
	ToolResultTokens      = 500 // what each tool call returns
	ToolCallOutputTokens  = 100 // a request that ends in a tool call (thinking included)
	AnswerOutputTokens    = 300 // the answer of a judged turn
	FillerOutputTokens    = 600 // the answer to a filler passage
	AlreadyLoadedTokens   = 20  // "Skill /x is already loaded above" in a live session
	DraftedTaskChars      = 200 // a drafted task, when there is no config
	RubricCriteria        = 6   // an extracted rubric's criteria, when none is given
	CriterionChars        = 100
	RubricOutputTokens    = 1200
	DraftOutputTokens     = 500
	JudgeOutputTokens     = 600
	judgedTurnsPerSession = 4 // turn 1 and the three probes
	// A /compact: the CLI's summary request (its instructions, about 2,000
	// tokens) over the whole context, answered with a summary; the session
	// goes on from the summary and the latest messages.
	CompactPromptTokens  = 2000
	CompactSummaryTokens = 2000
	CompactKeptTokens    = 2000
)

// Input is what a run would be given.
type Input struct {
	Skill *skill.Skill
	// Config holds the tasks; nil when they will be drafted by a call.
	Config *plan.Config
	// Rubric is a reviewed rubric (--rubric); nil when it will be
	// extracted, unless RubricCached.
	Rubric       *rubric.Rubric
	RubricCached bool
	// Fillers are the passages each conversation gets (exactly, with
	// --seed), or a stand-in of average size when the seed is random.
	Fillers [][]fillers.Passage
	// FillersExact: Fillers are the run's own picks (a fixed seed).
	FillersExact bool
	// Conversations the run makes at most (the cap with --until-decided).
	Conversations int
	UntilDecided  bool
	SessionMode   string // interactive or resume
	// Model and JudgeModel as given ("" = the CLI's default, which only a
	// claude process can tell).
	Model, JudgeModel string
	JudgeRepeats      int
	NoSkillControl    bool
	// Schedule is the run's schedule (nil: the seed's ten turns).
	Schedule *plan.Schedule
}

// Tokens of one kind of call, summed, by how they are billed.
type Tokens struct {
	Input, Output, CacheWrite, CacheRead float64
}

func (t *Tokens) add(u Tokens) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheWrite += u.CacheWrite
	t.CacheRead += u.CacheRead
}

// Line is one kind of call the run makes.
type Line struct {
	What      string
	Calls     int // turns or cold calls
	Processes int // claude processes they take
	Requests  int // API requests (estimated)
	Model     string
	Tokens    Tokens
	// Cost is Tokens at Model's price; Priced is false for a model the
	// table does not know.
	Cost   float64
	Priced bool
}

// Estimate is the dry run's answer.
type Estimate struct {
	// Agents, when set, names the CLIs other than claude the run would
	// use (--agent, --judge-agent): the price table is claude's, so no
	// cost is printed rather than a wrong one.
	Agents     string
	Skill      string
	SkillChars int
	Lines      []Line
	Notes      []string
	Total      float64
	AllPriced  bool
	Unpriced   []string // models with no price
	// Warnings are what the run would print as "warning: ..." before it
	// starts (the skill's, a missing jail, tools not granted); the caller
	// prints them on stderr, as the run does.
	Warnings []string
}

// SetupProcesses are the claude processes a run starts before its first
// model call, which make none: `claude --version` (the agent model is pinned
// by the run's first session, with no process of its own).
const SetupProcesses = 1

// session follows one CLI session's context and prices its requests as the
// prompt cache bills them.
type session struct {
	ctx      float64 // tokens in context after the last request
	requests int
	t        Tokens
}

// request sends newIn tokens more than the context holds and receives out.
func (s *session) request(newIn, out float64) {
	s.t.CacheRead += s.ctx
	s.t.CacheWrite += newIn
	s.t.Output += out
	s.ctx += newIn + out
	s.requests++
}

func tokens(chars int) float64 { return float64(chars) / CharsPerToken }

// judgedTurn plays a judged turn: the task (after extra tokens, the CLI's
// own on a session's first request), the skill (its body when it is
// injected, else the short "already loaded"), two tool calls, the answer.
func judgedTurn(s *session, extra float64, taskChars int, skillTokens float64, withSkill bool) {
	s.request(extra+tokens(taskChars), ToolCallOutputTokens) // ends in the Skill call, or a tool call without the skill
	if withSkill {
		s.request(skillTokens, ToolCallOutputTokens)
	}
	for i := 1; i < ToolCallsPerJudged; i++ {
		s.request(ToolResultTokens, ToolCallOutputTokens)
	}
	s.request(ToolResultTokens, AnswerOutputTokens)
}

// aboutK rounds a forecast number of tokens to thousands ("28k").
func aboutK(n float64) string { return fmt.Sprintf("%.0fk", n/1000) }

// Make works out the calls and the cost.
func Make(in Input) *Estimate {
	e := &Estimate{Skill: in.Skill.Name, SkillChars: len(in.Skill.Raw), AllPriced: true}
	skillTokens := tokens(len(in.Skill.Body))
	tasks := taskChars(in.Config)
	resume := in.SessionMode == "resume"
	repeats := max(in.JudgeRepeats, 1)
	n := in.Conversations

	agent := func(what string, calls, procs int, ss []*session) {
		l := Line{What: what, Calls: calls, Processes: procs, Model: in.Model}
		for _, s := range ss {
			l.Requests += s.requests
			l.Tokens.add(s.t)
		}
		e.add(l)
	}

	// The conversations: one session each, on the run's schedule (a
	// diluted-to one is played against the context this session model
	// grows, so its turn count is a forecast too).
	var turns, compactions int
	// What the forecast of the measured conversations shows the schedule
	// cannot do: a probe asked with no filler before it (its level below
	// the context turn 1 leaves), the most context a session reaches.
	unfilled := map[int]int64{} // probe → the context before it
	var most float64
	conversation := func(picks []fillers.Passage, withSkill bool) *session {
		s := &session{}
		first := true
		filler := 0
		var p plan.Progress
		for {
			step, more := in.Schedule.Next(p)
			if !more {
				break
			}
			turns++
			over := 0.0
			if first {
				over = tokens(AgentOverheadChars) + tokens(len(in.Skill.Description))
				first = false
			}
			if step.Compact {
				compactions++
				p.Compacted = true
				s.request(CompactPromptTokens, CompactSummaryTokens)
				s.ctx = tokens(AgentOverheadChars) + CompactSummaryTokens + CompactKeptTokens
			}
			p.Turns++
			switch step.Kind {
			case plan.KindFiller:
				var f fillers.Passage
				if len(picks) > 0 {
					f = picks[filler%len(picks)]
				}
				filler++
				if len(f.Files) > 0 {
					// A work chore: one command, its output, the answer.
					out := f.Output
					if out == 0 {
						for _, body := range f.Files {
							out += len(body)
						}
					}
					s.request(over+tokens(len(f.Text)), ToolCallOutputTokens)
					s.request(tokens(out), FillerOutputTokens)
				} else {
					s.request(over+tokens(len(f.Text)), FillerOutputTokens)
				}
				p.Fillers++
			default:
				body := skillTokens
				if step.Turn > 1 && !resume {
					body = AlreadyLoadedTokens // a live session answers a second invocation so
				}
				if _, seen := unfilled[step.Probe]; step.Kind == plan.KindProbe && p.Fillers == 0 && !seen {
					unfilled[step.Probe] = p.Context
				}
				judgedTurn(s, over, tasks[step.Probe], body, withSkill)
				p.Fillers = 0
				if step.Kind == plan.KindProbe {
					p.Probes++
				}
			}
			p.Context = int64(s.ctx)
			most = max(most, s.ctx)
		}
		return s
	}
	var convs []*session
	for i := 0; i < n; i++ {
		convs = append(convs, conversation(in.Fillers[i%len(in.Fillers)], true))
	}
	procs := n
	if resume {
		procs = turns + compactions
	}
	what := fmt.Sprintf("agent turns: %d conversations x %d turns", n, plan.Turns)
	if !in.Schedule.Fixed() {
		what = fmt.Sprintf("agent turns: %d conversations, about %d turns each to reach %s tokens", n, (turns+n-1)/max(n, 1), plan.FormatTokens(in.Schedule.DiluteTo[len(in.Schedule.DiluteTo)-1]))
	}
	if compactions > 0 {
		what += fmt.Sprintf(", %d /compact", compactions)
	}
	agent(what, turns, procs, convs)
	if !in.Schedule.Fixed() {
		for k := 1; k <= len(in.Schedule.DiluteTo); k++ {
			if ctx, ok := unfilled[k]; ok {
				e.Warnings = append(e.Warnings, fmt.Sprintf("probe %d's level, %s tokens, is below the context the turns before it leave (about %s): it is asked with no filler before it and measures no more dilution than they give", k, plan.FormatTokens(in.Schedule.DiluteTo[k-1]), aboutK(float64(ctx))))
			}
		}
	}
	if in.Schedule != nil && in.Schedule.CompactAt > 0 && compactions == 0 {
		e.Warnings = append(e.Warnings, fmt.Sprintf("/compact at %s tokens: the sessions are forecast to reach about %s, so none would compact; lower the level or dilute further (dilute_to)", plan.FormatTokens(in.Schedule.CompactAt), aboutK(most)))
	}

	// The fresh arm: each probe as the first message of its own session.
	var fresh []*session
	for i := 0; i < n; i++ {
		for k := 1; k <= len(plan.ProbeTurns); k++ {
			s := &session{}
			judgedTurn(s, tokens(AgentOverheadChars)+tokens(len(in.Skill.Description)), tasks[k], skillTokens, true)
			fresh = append(fresh, s)
		}
	}
	agent(fmt.Sprintf("fresh sessions: %d triples x 3 probes", n), 3*n, 3*n, fresh)

	judged := n*judgedTurnsPerSession + 3*n
	if in.NoSkillControl {
		var ctl []*session
		turns, compactions = 0, 0
		for i := 0; i < n; i++ {
			ctl = append(ctl, conversation(in.Fillers[i%len(in.Fillers)], false))
		}
		if resume {
			procs = turns + compactions
		}
		agent(fmt.Sprintf("no-skill control: %d conversations, %d turns in all", n, turns), turns, procs, ctl)
		judged += n * judgedTurnsPerSession
	}

	cold := func(what string, calls, procs int, promptChars int, out float64) {
		l := Line{What: what, Calls: calls, Processes: procs, Requests: calls, Model: in.JudgeModel}
		l.Tokens.CacheWrite = float64(calls) * (tokens(ColdOverheadChars) + tokens(promptChars))
		l.Tokens.Output = float64(calls) * out
		e.add(l)
	}
	if in.Config == nil {
		cold("plan drafting (no vibe-test.yaml)", 1, 1, len(plan.DraftPrompt(in.Skill)), DraftOutputTokens)
	}
	switch {
	case in.Rubric != nil:
		e.Notes = append(e.Notes, "rubric: the reviewed --rubric file, no call")
	case in.RubricCached:
		e.Notes = append(e.Notes, "rubric: cached for this skill and judge model, no call")
	default:
		cold("rubric extraction", 1, 1, len(rubric.Prompt(in.Skill)), RubricOutputTokens)
	}
	// The judge's calls share a pool of processes (claude.Pool), one for
	// each unit running at once; past PoolIdleMax units, counted as one a
	// call (an upper bound). Each prompt comes after the record of /clear.
	judgeCalls := judged * repeats
	judgeProcs := judgeCalls
	units := 2 * n // the conversations and their fresh triples
	if in.NoSkillControl {
		units += n
	}
	if units <= claude.PoolIdleMax {
		judgeProcs = min(judgeCalls, units)
	}
	cold(fmt.Sprintf("judge calls: %d judged turns x %d", judged, repeats), judgeCalls, judgeProcs, claude.ClearRecordChars+judgePromptChars(in), JudgeOutputTokens)

	if in.UntilDecided {
		e.Notes = append(e.Notes, fmt.Sprintf("--until-decided: counted at its cap of %d conversations; it stops earlier when the test decides", n))
	}
	if !in.FillersExact {
		e.Notes = append(e.Notes, "fillers: the seed is random, so each conversation is counted with passages of the pool's average size (give --seed for the exact ones)")
	}
	if in.Config == nil {
		e.Notes = append(e.Notes, fmt.Sprintf("tasks: drafted at run time, counted as %d characters each", DraftedTaskChars))
	}
	return e
}

func (e *Estimate) add(l Line) {
	p, id, ok := PriceOf(l.Model)
	if ok {
		l.Model, l.Cost, l.Priced = id, p.cost(l.Tokens), true
		e.Total += l.Cost
	} else {
		e.AllPriced = false
		name := l.Model
		if name == "" {
			name = "the CLI's default"
		}
		if !contains(e.Unpriced, name) {
			e.Unpriced = append(e.Unpriced, name)
		}
	}
	e.Lines = append(e.Lines, l)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// taskChars are the sizes of each judged turn's task: [0] the base task's,
// [k] probe k's.
func taskChars(c *plan.Config) map[int]int {
	out := map[int]int{0: DraftedTaskChars}
	for k := 1; k <= len(plan.ProbeTurns); k++ {
		out[k] = DraftedTaskChars
	}
	if c == nil {
		return out
	}
	out[0] = len(c.BaseTask)
	for i := range plan.ProbeTurns {
		if i < len(c.Probes) {
			out[i+1] = len(c.Probes[i].Task)
		}
	}
	return out
}

// judgePromptChars is the size of one judge prompt: the real prompt for a
// turn of the assumed shape (two tool calls and a Skill call, their inputs
// and results at the sizes the judge clips them to, a full answer).
func judgePromptChars(in Input) int {
	rb := in.Rubric
	if rb == nil {
		rb = &rubric.Rubric{}
		for i := 0; i < RubricCriteria; i++ {
			rb.Criteria = append(rb.Criteria, rubric.Criterion{ID: fmt.Sprintf("criterion-%d", i+1), Kind: rubric.Must, Text: strings.Repeat("x", CriterionChars)})
		}
	}
	return len(judge.Prompt(rb, strings.Repeat("x", taskChars(in.Config)[2]), assumedTurn()))
}

// assumedTurn is a judged turn of the assumed shape, each input and result
// as long as the judge's trace keeps it.
func assumedTurn() claude.Turn {
	t := claude.Turn{Text: strings.Repeat("x", 1500)}
	t.Calls = append(t.Calls, claude.ToolCall{Name: "Skill", Input: json.RawMessage(`{"skill":"x"}`), Result: "Launching skill", HasResult: true})
	for i := 0; i < ToolCallsPerJudged; i++ {
		t.Calls = append(t.Calls, claude.ToolCall{Name: "Bash", Input: json.RawMessage(`{"command":"` + strings.Repeat("x", 600) + `"}`), Result: strings.Repeat("x", 400), HasResult: true})
	}
	return t
}

// Write prints the estimate for people: the calls, then the cost, then
// every assumption that made it.
func (e *Estimate) Write(w io.Writer, clean func(string) string) {
	var b strings.Builder
	fmt.Fprintf(&b, "dry run: %s (no model call, no claude process, no run folder)\n", clean(e.Skill))
	fmt.Fprintf(&b, "skill: %d characters, about %.0f tokens (%d characters a token)\n\n", e.SkillChars, tokens(e.SkillChars), CharsPerToken)
	fmt.Fprintf(&b, "%-52s %7s %9s %9s  %-20s %10s\n", "calls the run will make", "calls", "processes", "requests", "model", "cost")
	calls, procs, reqs := 0, 0, 0
	for _, l := range e.Lines {
		model := l.Model
		if model == "" {
			model = "CLI default"
		}
		cost := "no price"
		if e.Agents != "" {
			cost = "-"
		} else if l.Priced {
			cost = fmt.Sprintf("$%.4f", l.Cost)
		}
		fmt.Fprintf(&b, "  %-50s %7d %9d %9d  %-20s %10s\n", l.What, l.Calls, l.Processes, l.Requests, clean(model), cost)
		calls, procs, reqs = calls+l.Calls, procs+l.Processes, reqs+l.Requests
	}
	fmt.Fprintf(&b, "  %-50s %7d %9d %9d\n", "version check (no model call)", 0, SetupProcesses, 0)
	procs += SetupProcesses
	fmt.Fprintf(&b, "  %-50s %7d %9d %9d\n", "total", calls, procs, reqs)
	for _, n := range e.Notes {
		fmt.Fprintf(&b, "  %s\n", clean(n))
	}
	b.WriteString("\n")
	switch {
	case e.Agents != "":
		fmt.Fprintf(&b, "estimated cost: none: prices: claude only (this run goes through %s; the calls and requests above are claude's shape, a guide to the count only)\n", e.Agents)
	case e.AllPriced:
		fmt.Fprintf(&b, "estimated cost: $%.2f\n", e.Total)
	case e.Total > 0:
		fmt.Fprintf(&b, "estimated cost: $%.2f for the calls priced above; no estimate for %s, which the price table does not know (give --model/--judge-model with a model id to get one)\n", e.Total, clean(strings.Join(e.Unpriced, " and ")))
	default:
		fmt.Fprintf(&b, "estimated cost: none: the price table does not know %s (give --model/--judge-model with a model id to get one)\n", clean(strings.Join(e.Unpriced, " and ")))
	}
	if e.Agents == "" {
		fmt.Fprintf(&b, "prices: list prices read %s\n", PricesRead)
	}
	fmt.Fprintf(&b, "assumptions: text is %d characters a token; the CLI adds %d characters to an agent session's first request and %d to a cold call's (measured on its recorded requests); "+
		"each request writes what is new to the prompt cache and reads the rest, and a session's first request writes all of it (an upper bound); "+
		"a judged turn is the Skill call, %d tool calls of %d result tokens each and an answer of %d tokens (%d per tool-call request, thinking included); a filler is answered in %d tokens; "+
		"every baseline passes and nothing is retried\n",
		CharsPerToken, AgentOverheadChars, ColdOverheadChars, ToolCallsPerJudged, ToolResultTokens, AnswerOutputTokens, ToolCallOutputTokens, FillerOutputTokens)
	io.WriteString(w, b.String())
}
