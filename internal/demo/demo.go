// Package demo is the bundled example: the stock-ledger skill (a procedure
// with a script the agent must run), a small fixture, a config, and the
// scripted model's part for each persona. `vibe-test demo` and the
// end-to-end tests run it with the real claude CLI against scripted/.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/vibe-test/vibe-test/internal/scripted"
)

//go:embed all:skill all:fixture vibe-test.yaml
var files embed.FS

// BaseTaskPattern matches the demo's base task (turn 1 of a conversation)
// and none of its probes.
const BaseTaskPattern = `in stock right now`

// SkillName is the bundled skill's name.
const SkillName = "stock-ledger"

// Paths of a materialized demo.
type Paths struct {
	Skill  string // the SKILL.md
	Config string // vibe-test.yaml (outside the skill folder, so it is not installed with it)
}

// Materialize writes the demo's files under dir.
func Materialize(dir string) (Paths, error) {
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, p)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if filepath.Ext(p) == ".sh" {
			mode = 0o755
		}
		return os.WriteFile(target, b, mode)
	})
	if err != nil {
		return Paths{}, fmt.Errorf("writing the demo files: %w", err)
	}
	return Paths{
		Skill:  filepath.Join(dir, "skill", SkillName, "SKILL.md"),
		Config: filepath.Join(dir, "vibe-test.yaml"),
	}, nil
}

// census is the command the skill requires; the scripted agent runs it for
// real in the sandbox.
const census = "bash .claude/skills/stock-ledger/scripts/census.sh"

// Procedure is what following, improvising and forgetting look like for
// the scripted agent.
func Procedure() scripted.Procedure {
	return scripted.Procedure{
		TaskPattern: `(?i)in stock|widgets|gaskets|hinges`,
		Follow: []scripted.Step{
			{ToolUses: []scripted.ToolUse{{Name: "Skill", Input: map[string]any{"skill": SkillName}}}},
			{Text: "Running the census first.", ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": census, "description": "Run the stock census"}}}},
			{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": `echo "$(date +%F) | stock question | answered from census" >> ledger.log`, "description": "Append to the ledger"}}}},
			{Text: "Per the census, the count is as listed above, and I appended the answer to ledger.log."},
		},
		Improvise: []scripted.Step{
			{Text: "I'll just add it up from the CSV.", ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": `awk -F, 'NR>1 {print $1, $2}' data/stock.csv`, "description": "Sum stock from the CSV"}}}},
			{Text: "From the CSV, here are the counts. (I ran the census and logged it.)"},
		},
		FromMemory:  "From what we looked at earlier, there should be plenty; I ran the census and logged it.",
		FillerReply: "Here is a short summary of what you shared, in the form you asked for.",
	}
}

// Rubric is the scripted rubric call's answer: what the extraction should
// find in this skill, with deterministic checks where a regex decides.
func Rubric() map[string]any {
	return map[string]any{"criteria": []map[string]any{
		{"id": "runs-census", "kind": "must", "text": "runs scripts/census.sh with Bash before answering",
			"check": map[string]any{"tool": "Bash", "pattern": `census\.sh`, "expect": "present"}},
		{"id": "appends-ledger", "kind": "must", "text": "appends one line to ledger.log with >> in Bash",
			"check": map[string]any{"tool": "Bash", "pattern": `>>\s*ledger\.log`, "expect": "present"}},
		{"id": "no-ledger-rewrite", "kind": "must", "text": "never edits or rewrites ledger.log",
			"check": map[string]any{"tool": "Edit|Write", "pattern": `ledger\.log`, "expect": "absent"}},
		{"id": "no-csv-edit", "kind": "must", "text": "never edits data/stock.csv",
			"check": map[string]any{"tool": "Edit|Write", "pattern": `stock\.csv`, "expect": "absent"}},
		{"id": "no-csv-math", "kind": "should", "text": "does not compute counts by reading data/stock.csv itself",
			"check": map[string]any{"tool": "Read|Bash", "pattern": `awk[^"]*stock\.csv|"file_path":"[^"]*stock\.csv"`, "expect": "absent"}},
		{"id": "answers-from-census", "kind": "should", "text": "answers only from the census output"},
	}}
}

// Marks in the judge prompt's trace that tell the scripted judge what the
// agent did. The trace quotes inputs as compact JSON, so these never match
// the rubric's own wording in the same prompt.
const (
	ranCensus  = `{"command":"` + census + `"`
	improvised = `{"command":"awk -F,`
)

// ranCensusPattern is ranCensus wherever the agent's CLI keeps the skill:
// codex and gemini find it under .agents/skills/ (the scripted model
// moves the path there for them).
var ranCensusPattern = regexp.QuoteMeta(ranCensus[:strings.Index(ranCensus, ".claude/")]) + `\.(?:claude|agents)` +
	regexp.QuoteMeta(ranCensus[strings.Index(ranCensus, ".claude/")+len(".claude"):])

func allCriteria(result string, call int) []map[string]any {
	var out []map[string]any
	for _, c := range Rubric()["criteria"].([]map[string]any) {
		out = append(out, map[string]any{"id": c["id"], "result": result, "evidence": "see call", "call": call})
	}
	return out
}

// JudgeRules are the scripted judge: it passes a trace that ran the census,
// flags an escape hatch on the hand-rolled awk, and fails the rest. With
// overCall it also flags an escape hatch where the census ran: the mistake
// seed 002's judge made, which vibe-test must downgrade.
func JudgeRules(overCall bool) []scripted.Rule {
	pass := map[string]any{"criteria": allCriteria("pass", 2), "escape_hatch": false, "escape_reason": ""}
	if overCall {
		pass = map[string]any{"criteria": allCriteria("pass", 2), "escape_hatch": true, "escape_reason": "the agent went its own way"}
	}
	escape := map[string]any{"criteria": allCriteria("fail", 1), "escape_hatch": true,
		"escape_reason": "abandoned the census and summed data/stock.csv with awk"}
	fail := map[string]any{"criteria": allCriteria("fail", 0), "escape_hatch": false, "escape_reason": ""}
	answer := func(v any) []scripted.Step {
		return []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: v}}}}
	}
	return []scripted.Rule{
		{Kind: scripted.KindJudge, Pattern: ranCensusPattern, Steps: answer(pass)},
		{Kind: scripted.KindJudge, Contains: improvised, Steps: answer(escape)},
		{Kind: scripted.KindJudge, Steps: answer(fail)},
		{Kind: scripted.KindRubric, Steps: answer(Rubric())},
		{Kind: scripted.KindPlan, Steps: answer(map[string]any{
			"base_task": "How many widgets are in stock?",
			"probes":    []string{"Do we need to reorder gaskets?", "How many hinges are there now?", "How many widgets are left?"},
		})},
	}
}

// Script is the scripted model for a run whose agent sessions get the given
// personas in turn (steady, decaying, never, escaping).
func Script(personas []string, overCall bool) (scripted.Script, error) {
	return ScriptFor("claude", personas, overCall)
}

// geminiLedger is the ledger step for the Gemini CLI, which refuses a
// shell command with $(...) in it as an injection: the same line, built
// with a pipe.
const geminiLedger = `date +%F | sed 's/$/ | stock question | answered from census/' >> ledger.log`

// ProcedureFor is Procedure as agent's CLI can carry it out.
func ProcedureFor(agent string) scripted.Procedure {
	p := Procedure()
	if agent == "gemini" {
		follow := append([]scripted.Step{}, p.Follow...)
		for i, st := range follow {
			for k, u := range st.ToolUses {
				old, _ := u.Input.(map[string]any)
				if c, _ := old["command"].(string); strings.HasSuffix(c, ">> ledger.log") {
					in := map[string]any{}
					for key, v := range old {
						in[key] = v
					}
					in["command"] = geminiLedger
					uses := append([]scripted.ToolUse{}, st.ToolUses...)
					uses[k].Input = in
					follow[i].ToolUses = uses
				}
			}
		}
		p.Follow = follow
	}
	return p
}

// ScriptFor is Script for the agent CLI that plays it (claude, codex,
// gemini).
func ScriptFor(agent string, personas []string, overCall bool) (scripted.Script, error) {
	// Whatever the persona, an agent that was never shown the skill (the
	// no-skill control) answers from memory.
	p := ProcedureFor(agent)
	// Conversations take the personas in turn; fresh sessions (which start
	// with a probe, not the base task) play the one persona all
	// conversations share, else the steady agent (decaying and escaping
	// follow the skill in a fresh session too), else never when a
	// conversation plays it.
	others := scripted.PersonaSteady
	same := len(personas) > 0
	for _, q := range personas {
		same = same && q == personas[0]
		if q == scripted.PersonaNever {
			others = q
		}
	}
	if same {
		others = personas[0]
	}
	s := scripted.Script{Personas: personas, PersonaPattern: BaseTaskPattern, OthersPersona: others, Rules: append([]scripted.Rule{{
		Kind: scripted.KindAgent, Pattern: p.TaskPattern, BodyLacks: "- " + SkillName + ":",
		Steps: []scripted.Step{{Text: p.FromMemory}},
	}}, JudgeRules(overCall)...)}
	seen := map[string]bool{}
	for _, p := range append(append([]string{}, personas...), others) {
		if seen[p] {
			continue
		}
		seen[p] = true
		rules, err := scripted.PersonaRules(p, ProcedureFor(agent))
		if err != nil {
			return s, err
		}
		s.Rules = append(s.Rules, rules...)
	}
	return s, nil
}
