package scripted

import (
	"fmt"
	"regexp"
)

// Procedure describes a skill's task from the model's side, so a persona can
// play it compliantly, improvise, or skip it.
type Procedure struct {
	TaskPattern string // regexp: a prompt matching it is a skill task (base task or probe); other agent prompts are fillers
	Follow      []Step // compliant steps (tool calls of the procedure, then a final text step)
	Improvise   []Step // escape hatch: hand-rolls its own approach (tool calls, but not the procedure's)
	FromMemory  string // answer with no tool calls at all
	FillerReply string // reply to a filler prompt (a short generic summary if empty)
}

// WorkPattern finds the shell command a work filler quotes: a prompt that
// is not a task and holds a command in backticks ("Run `tail -n 200
// var/log/app.log` and summarise the errors you see; change nothing.") is
// answered by running it with the Bash tool, then the filler reply, so
// the context fills with tool output as in a real session. A filler with
// no backticks (a passage) gets the reply alone. The first quoted span
// is the command.
const WorkPattern = "`(?P<command>[^`]+)`"

// The personas PersonaRules knows.
const (
	PersonaSteady = "steady" // follows the procedure at every task turn
	// PersonaDecaying follows through prompt turn 7 and answers from memory
	// from turn 8 on: it follows fresh (a probe asked as the first message
	// of a new session is prompt turn 1) and stops in a diluted context.
	PersonaDecaying = "decaying"
	PersonaNever    = "never" // answers from memory at every task turn: fails the baseline
	// PersonaEscaping follows at prompt turn 1 (the baseline, and every
	// probe asked fresh) and improvises at every later task turn.
	PersonaEscaping = "escaping"
	// PersonaNoisy follows 4 times in 5 at every task turn, fresh or
	// diluted, and answers from memory the fifth: a stable but noisy skill
	// with no dilution effect at all. Which session slips is counted per
	// prompt and turn (Rule.EveryNth), so the counts are the same in every
	// run.
	PersonaNoisy = "noisy"
	// PersonaForgetting follows the procedure at every task turn until its
	// session has been compacted (the request carries the CLI's
	// continuation message, Continuation) and answers from memory after:
	// the skill's instructions did not survive the summary. It answers the
	// summary request itself with forgettingSummary, which does not
	// mention the procedure. Fresh sessions are never compacted, so it
	// follows there.
	PersonaForgetting = "forgetting"
)

// forgettingSummary is the forgetting persona's answer to the CLI's
// summary request: in <summary> tags, so the CLI takes it at the first
// try, and silent about the procedure.
const forgettingSummary = "<summary>\nThe user asked a series of questions about the project and some everyday topics; each was answered briefly. Nothing is pending.\n</summary>"

// decayTurn is the first prompt turn at which the decaying persona stops
// consulting the procedure. The demo's probes sit at turns 1, 6, 8 and 10, so
// it holds at 1 and 6 and fails at 8 and 10: the seed's surviving finding.
const decayTurn = 8

const (
	defaultFillerReply = "Done. In short: I looked at the request and answered it; nothing else needed changing."
	defaultFromMemory  = "Done from memory: I know this procedure well, so I skipped running it."
)

// PersonaRules returns the rules that make agent sessions of the given persona
// behave as described, for concatenation with other personas' rules in one
// Script. Task rules come before the filler rules, and the task rules of each
// persona cover every turn, so a task prompt never falls through to a filler
// reply. Fillers are answered alike by every persona: a work filler (a
// command in backticks, WorkPattern) by running the command with Bash, then
// the filler reply; any other by the reply alone.
func PersonaRules(persona string, p Procedure) ([]Rule, error) {
	if p.TaskPattern == "" {
		return nil, fmt.Errorf("scripted: persona %q: empty TaskPattern", persona)
	}
	if _, err := regexp.Compile(p.TaskPattern); err != nil {
		return nil, fmt.Errorf("scripted: persona %q: TaskPattern: %w", persona, err)
	}
	fromMemory := p.FromMemory
	if fromMemory == "" {
		fromMemory = defaultFromMemory
	}
	filler := p.FillerReply
	if filler == "" {
		filler = defaultFillerReply
	}
	task := func(turns []int, steps []Step) Rule {
		return Rule{Kind: KindAgent, Persona: persona, Turns: turns, Pattern: p.TaskPattern, Steps: steps}
	}
	memory := []Step{{Text: fromMemory}}

	var rules []Rule
	switch persona {
	case PersonaSteady:
		rules = []Rule{task(nil, p.Follow)}
	case PersonaDecaying:
		early := make([]int, 0, decayTurn-1)
		for t := 1; t < decayTurn; t++ {
			early = append(early, t)
		}
		rules = []Rule{task(early, p.Follow), task(nil, memory)}
	case PersonaNever:
		rules = []Rule{task(nil, memory)}
	case PersonaEscaping:
		rules = []Rule{task([]int{1}, p.Follow), task(nil, p.Improvise)}
	case PersonaNoisy:
		slip := task(nil, memory)
		slip.EveryNth = 5
		rules = []Rule{slip, task(nil, p.Follow)}
	case PersonaForgetting:
		after := task(nil, memory)
		after.BodyHas = Continuation
		rules = []Rule{after, task(nil, p.Follow)}
	default:
		return nil, fmt.Errorf("scripted: unknown persona %q (want %s, %s, %s, %s, %s or %s)",
			persona, PersonaSteady, PersonaDecaying, PersonaNever, PersonaEscaping, PersonaNoisy, PersonaForgetting)
	}
	// The summary request of a compaction comes first: it is neither a
	// task nor a filler to run commands for, whatever its text (a task
	// pattern could match its long instructions). The forgetting persona
	// writes a summary that drops the procedure; the others give their
	// plain filler reply, which the CLI takes as the summary after asking
	// once more for a <summary> block.
	summary := filler
	if persona == PersonaForgetting {
		summary = forgettingSummary
	}
	rules = append([]Rule{{Kind: KindAgent, Persona: persona, Contains: SummaryRequest, Steps: []Step{{Text: summary}}}}, rules...)
	work := []Step{
		{ToolUses: []ToolUse{{Name: "Bash", Input: map[string]string{"command": "${command}", "description": "Run the command from the request"}, FromPrompt: true}}},
		{Text: filler},
	}
	rules = append(rules,
		Rule{Kind: KindAgent, Persona: persona, Pattern: WorkPattern, Steps: work},
		Rule{Kind: KindAgent, Persona: persona, Steps: []Step{{Text: filler}}})
	return rules, nil
}
