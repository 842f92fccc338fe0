package scripted

import (
	"fmt"
	"sort"
)

// The generator personas of a case-based eval (`vibe-test eval`): each
// plays one version of a skill, told apart by the skill text the CLI
// appends to the system prompt (Generation.Markers).
const (
	// PersonaBaseline follows the skill's procedure: the right decision,
	// its facts, one closing question.
	PersonaBaseline = "baseline"
	// PersonaControl was given no skill (the empty-skill control): it
	// answers without the procedure.
	PersonaControl = "control"
	// PersonaShorter follows a shorter version of the skill: as right as
	// the baseline, in fewer words.
	PersonaShorter = "shorter"
	// PersonaBroken follows a version of the skill that gets the decision
	// wrong.
	PersonaBroken = "broken"
)

// Generation is the scripted generator of an eval.
type Generation struct {
	// Markers tell the personas apart: persona → a phrase that only that
	// version's skill text holds. A generator request holding none of them
	// plays PersonaControl.
	Markers map[string]string
	Cases   []GenerationCase
}

// GenerationCase is how each persona answers one case.
type GenerationCase struct {
	// Prompt is a phrase of the case's prompt; it routes the call.
	Prompt string
	// Searches are Grep patterns the generator runs in its workspace
	// before it answers, one call each (output_mode content), so the
	// fixture is read for real through the CLI's own tool.
	Searches []string
	// Answers are each persona's final message; a persona without one
	// answers as PersonaControl does.
	Answers map[string]string
}

// Reading is the scripted reader's notes for a message that holds a
// phrase (the reader prompt quotes the message whole).
type Reading struct {
	Contains string
	// Notes is the structured answer: {decision, rebuild, follow_ups,
	// close_answer}.
	Notes any
}

// Grading is the scripted grader's answer for a message that holds a
// phrase.
type Grading struct {
	Contains string
	// Grades is the structured answer: {grades: [{id, result, quote}]}.
	Grades any
}

// EvalRules are the rules of an eval's scripted model: the generator
// personas (agent calls, routed by case prompt and skill marker), then the
// reader's and the grader's structured answers (routed by a phrase of the
// message they were given, in order: the first that matches wins). A
// reader or grader call that matches nothing gets text instead of the
// StructuredOutput tool, which the CLI returns without structured_output:
// the caller's error path.
func EvalRules(g Generation, readings []Reading, gradings []Grading) ([]Rule, error) {
	personas := make([]string, 0, len(g.Markers))
	for p, m := range g.Markers {
		if m == "" {
			return nil, fmt.Errorf("scripted: persona %q: empty marker", p)
		}
		if p == PersonaControl {
			return nil, fmt.Errorf("scripted: the control persona has no marker (it is what a request without any plays)")
		}
		personas = append(personas, p)
	}
	sort.Strings(personas)
	var rules []Rule
	for i, c := range g.Cases {
		if c.Prompt == "" {
			return nil, fmt.Errorf("scripted: generation case %d: empty prompt phrase", i)
		}
		steps := func(answer string) []Step {
			var out []Step
			for _, pat := range c.Searches {
				out = append(out, Step{ToolUses: []ToolUse{{Name: "Grep", Input: map[string]any{"pattern": pat, "output_mode": "content"}}}})
			}
			return append(out, Step{Text: answer})
		}
		control, ok := c.Answers[PersonaControl]
		if !ok {
			return nil, fmt.Errorf("scripted: generation case %q: no control answer", c.Prompt)
		}
		for _, p := range personas {
			answer, ok := c.Answers[p]
			if !ok {
				answer = control
			}
			rules = append(rules, Rule{Kind: KindAgent, Contains: c.Prompt, BodyHas: g.Markers[p], Steps: steps(answer)})
		}
		rules = append(rules, Rule{Kind: KindAgent, Contains: c.Prompt, Steps: steps(control)})
	}
	answer := func(v any) []Step {
		return []Step{{ToolUses: []ToolUse{{Name: "StructuredOutput", Input: v}}}}
	}
	for _, r := range readings {
		if r.Contains == "" {
			return nil, fmt.Errorf("scripted: a reading with an empty phrase would answer every message")
		}
		rules = append(rules, Rule{Kind: KindReader, Contains: r.Contains, Steps: answer(r.Notes)})
	}
	for _, gr := range gradings {
		if gr.Contains == "" {
			return nil, fmt.Errorf("scripted: a grading with an empty phrase would answer every message")
		}
		rules = append(rules, Rule{Kind: KindGrader, Contains: gr.Contains, Steps: answer(gr.Grades)})
	}
	return rules, nil
}
