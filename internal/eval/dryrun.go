package eval

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/codex"
	"github.com/vibe-test/vibe-test/internal/estimate"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/gemini"
)

// What the estimate assumes of a cell, beyond the sizes it reads from
// disk (the skill, each prompt, the measures and keys). The message size
// is seed 000's (about 400 words).
const (
	AssumedMessageChars = 2500
	AssumedNotesChars   = 1200
	GeneratorToolCalls  = 2   // the files the generator reads before it answers
	ReaderOutputTokens  = 400 // the reader's notes
	GradeOutputTokens   = 80  // per measure graded
)

// Line is one kind of call of an eval.
type Line struct {
	What   string
	Calls  int
	Model  string
	Cost   float64
	Priced bool
}

// Estimate is --dry-run's answer.
type Estimate struct {
	Skill    string
	Cases    int
	Holdout  int
	Repeats  int
	Lines    []Line
	Total    float64
	Unpriced []string
	Notes    []string
	// Tables are the agents besides claude whose pinned price tables
	// priced lines (codex, gemini).
	Tables []string
}

type tokens struct{ input, output, cacheWrite, cacheRead float64 }

func (t tokens) cost(p estimate.Price) float64 {
	return (t.input*p.Input + t.output*p.Output + t.cacheWrite*p.CacheWrite + t.cacheRead*p.CacheRead) / 1e6
}

func chars(n int) float64 { return float64(n) / estimate.CharsPerToken }

// DryRun says every call an eval would make and what it would cost at list
// prices, from the sizes on disk: no claude process, no model call, no
// folder. It checks the case set's hygiene first, as an eval does.
func DryRun(ctx context.Context, s Settings, stdio IO) (*Estimate, error) {
	set, sk, err := admit(ctx, s, stdio)
	if err != nil {
		return nil, err
	}
	storedControl := false
	var base *Baseline
	if s.Against != "" {
		if base, err = LoadBaseline(set, s.Against); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		for _, r := range base.Runs {
			storedControl = storedControl || r.Arm == ArmControl
		}
	}
	if err := checkNewBaseline(set, s.Baseline); err != nil {
		return nil, err
	}
	given := s
	s = s.resolved(set, stdio.Env)
	if base != nil {
		s = s.gridRoles(given, base)
	}
	if sk, err = readSkill(sk, s, stdio); err != nil {
		return nil, err
	}
	e := &Estimate{Skill: sk.Path, Cases: len(set.Cases), Holdout: len(set.Holdout), Repeats: s.Repeats}
	for _, a := range []string{s.Agent, s.JudgeAgent} {
		if a != agents.Claude && !contains(e.Tables, a) {
			e.Tables = append(e.Tables, a)
		}
	}
	cellsPerRun := s.Repeats * len(set.All())
	type genRun struct {
		label, model, effort string
		skillChars           int
	}
	var runs []genRun
	switch s.mode() {
	case ModeBaseline:
		runs = []genRun{{"control (empty skill)", s.Model, s.Effort, 0}, {"base 1", s.Model, s.Effort, len(sk.Raw)}, {"base 2", s.Model, s.Effort, len(sk.Raw)}}
	default:
		// As planRuns: the baseline's stored control is shown instead.
		if s.Control && !storedControl {
			runs = append(runs, genRun{"control (empty skill)", s.Model, s.Effort, 0})
		}
		if len(s.Grid) > 0 {
			for _, p := range s.Grid {
				pt := Point{Model: firstNonEmpty(p.Model, s.Model), Effort: firstNonEmpty(p.Effort, s.Effort)}
				runs = append(runs, genRun{"grid " + pt.Label(), pt.Model, pt.Effort, len(sk.Raw)})
			}
		} else {
			runs = append(runs, genRun{"candidate", s.Model, s.Effort, len(sk.Raw)})
		}
		if s.Against != "" {
			e.Notes = append(e.Notes, fmt.Sprintf("the base runs come from the stored baseline %s: no call", s.Against))
		}
	}
	for _, r := range runs {
		var gen, read, grade tokens
		for _, c := range set.All() {
			g := generatorTokens(len(c.Prompt), r.skillChars)
			rd := readerTokens(len(c.Prompt))
			gr := graderTokens(set, c)
			for k := 0; k < s.Repeats; k++ {
				gen = gen.add(g)
				read = read.add(rd)
				grade = grade.add(gr)
			}
		}
		e.add(s.Agent, Line{What: "generator: " + r.label, Calls: cellsPerRun, Model: r.model}, gen)
		e.add(s.JudgeAgent, Line{What: "reader: " + r.label, Calls: cellsPerRun, Model: s.ReaderModel}, read)
		e.add(s.JudgeAgent, Line{What: "grader: " + r.label, Calls: cellsPerRun, Model: s.GraderModel}, grade)
	}
	e.Notes = append(e.Notes,
		fmt.Sprintf("%d main and %d holdout %s, %d %s: %d cells a run, each one generator, one reader and one grader call (a grader call asked again when a quote is not in the message is not counted)", len(set.Cases), len(set.Holdout), plural(len(set.Holdout), "case", "cases"), s.Repeats, plural(s.Repeats, "repeat", "repeats"), cellsPerRun),
		fmt.Sprintf("the generator is assumed to read %d files (%d tokens each) and answer in %d characters, about %d words", GeneratorToolCalls, estimate.ToolResultTokens, AssumedMessageChars, AssumedMessageChars/6))
	return e, nil
}

func (t tokens) add(o tokens) tokens {
	return tokens{t.input + o.input, t.output + o.output, t.cacheWrite + o.cacheWrite, t.cacheRead + o.cacheRead}
}

// generatorTokens is one generator call: the first request writes the
// system prompt, the skill and the prompt into the cache; each tool call
// adds its request and result; the answer ends it.
func generatorTokens(promptChars, skillChars int) tokens {
	first := chars(estimate.AgentOverheadChars + skillChars + promptChars)
	t := tokens{cacheWrite: first, output: estimate.ToolCallOutputTokens}
	cached := first
	step := float64(estimate.ToolCallOutputTokens + estimate.ToolResultTokens)
	for i := 0; i < GeneratorToolCalls; i++ {
		t.cacheRead += cached
		t.cacheWrite += step
		cached += step
		out := float64(estimate.ToolCallOutputTokens)
		if i == GeneratorToolCalls-1 {
			out = chars(AssumedMessageChars)
		}
		t.output += out
	}
	return t
}

func readerTokens(promptChars int) tokens {
	in := chars(estimate.ColdOverheadChars + len(ReaderPrompt(strings.Repeat("x", promptChars), strings.Repeat("x", AssumedMessageChars))))
	return tokens{cacheWrite: in, output: ReaderOutputTokens}
}

func graderTokens(set *cases.Set, c *cases.Case) tokens {
	var asked []askedMeasure
	for _, m := range set.Measures {
		if k, ok := c.KeyFields(m); ok {
			asked = append(asked, askedMeasure{Measure: m, key: json.RawMessage(k)})
		}
	}
	notes := &Notes{Rebuild: strings.Repeat("x", AssumedNotesChars)}
	in := chars(estimate.ColdOverheadChars + len(GraderPrompt(set.Goal, c.Prompt, strings.Repeat("x", AssumedMessageChars), notes, asked, "")))
	return tokens{cacheWrite: in, output: float64(GradeOutputTokens * max(len(asked), 1))}
}

// priceOf is a model's price for agent: claude's from the pinned CLI's
// catalog, codex's and gemini's from their packages' pinned tables (a
// cache write billed as input: neither charges extra for it). Codex's
// default model against OpenAI's API is the CLI's own choice: no price.
func priceOf(agent, model string) (estimate.Price, string, bool) {
	switch agent {
	case agents.Codex:
		p, ok := codex.PriceOf(model)
		return estimate.Price{Input: p.Input, Output: p.Output, CacheWrite: p.Input, CacheRead: p.CachedInput}, model, ok && model != ""
	case agents.Gemini:
		model = cmp.Or(model, gemini.DefaultModel)
		p, ok := gemini.PriceOf(model)
		return estimate.Price{Input: p.Input, Output: p.Output, CacheWrite: p.Input, CacheRead: p.Cached}, model, ok
	}
	return estimate.PriceOf(model)
}

func (e *Estimate) add(agent string, l Line, t tokens) {
	p, id, ok := priceOf(agent, l.Model)
	if ok {
		l.Model, l.Cost, l.Priced = id, t.cost(p), true
		e.Total += l.Cost
	} else {
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

// SetupProcesses are the claude processes an eval starts before its first
// cell: the version check and the model lookups (no model call).
const SetupProcesses = 4

// Write prints the estimate.
func (e *Estimate) Write(w io.Writer, clean func(string) string) {
	var b strings.Builder
	fmt.Fprintf(&b, "dry run: %s (no model call, no claude process, no eval folder)\n\n", clean(e.Skill))
	fmt.Fprintf(&b, "%-44s %7s  %-20s %10s\n", "calls the eval will make", "calls", "model", "cost")
	calls := 0
	for _, l := range e.Lines {
		model := l.Model
		if model == "" {
			model = "CLI default"
		}
		cost := "no price"
		if l.Priced {
			cost = fmt.Sprintf("$%.4f", l.Cost)
		}
		fmt.Fprintf(&b, "  %-42s %7d  %-20s %10s\n", clean(l.What), l.Calls, clean(model), cost)
		calls += l.Calls
	}
	fmt.Fprintf(&b, "  %-42s %7d  (up to %d claude processes, no model call)\n", "version check, model lookups", 0, SetupProcesses)
	fmt.Fprintf(&b, "  %-42s %7d\n", "total", calls)
	for _, n := range e.Notes {
		fmt.Fprintf(&b, "  %s\n", clean(n))
	}
	b.WriteString("\n")
	switch {
	case len(e.Unpriced) == 0:
		fmt.Fprintf(&b, "estimated cost: $%.2f\n", e.Total)
	default:
		fmt.Fprintf(&b, "estimated cost: $%.2f for the calls priced above; no estimate for %s, which the price table does not know (give --model with a model id)\n", e.Total, clean(strings.Join(e.Unpriced, " and ")))
	}
	fmt.Fprintf(&b, "prices: list prices read %s\n", estimate.PricesRead)
	for _, a := range e.Tables {
		switch a {
		case agents.Codex:
			fmt.Fprintf(&b, "prices: codex's at the pinned table of vibe-test's codex package (OpenAI's rates as listed in June 2026); its own calls' overhead is assumed to be claude's\n")
		case agents.Gemini:
			fmt.Fprintf(&b, "prices: gemini's at the pinned table of vibe-test's gemini package (pinned %s); its own calls' overhead is assumed to be claude's\n", gemini.PricesAsOf)
		}
	}
	fmt.Fprintf(&b, "assumptions: text is %d characters a token; each call's first request writes its whole input to the prompt cache (an upper bound) and later requests read it\n", estimate.CharsPerToken)
	io.WriteString(w, b.String())
}
