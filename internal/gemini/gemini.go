// Package gemini runs Google's Gemini CLI headless as an agent.Agent, and
// reads what it printed and what it kept in its session files.
//
// It is the only package that knows the CLI's flags, its settings and
// policy files, the shapes of its stream-json events and ACP messages, and
// its session files (verified on the version in VerifiedVersion; the
// recordings are in testdata/, made by `go test ./internal/gemini -run
// TestRecord -record`). Two things the CLI does not print are read from
// the session file after each turn and appended to the transcript as one
// turn_end line: the exact tool arguments and model-facing tool results
// (the stream has display strings, ACP has neither), and the token counts
// of each model call (the stream has only sums), from which the context of
// the last call and an estimated cost (price.go) come.
//
// Turns are reported in claude's vocabulary, so what reads a turn (rubric
// checks, the judge's trace, Turn.SkillUse) needs no second dictionary:
// tool calls carry claude's tool names (run_shell_command is Bash, read_file
// Read, replace Edit, write_file Write, glob Glob, grep_search Grep,
// activate_skill Skill with its input {"skill": name}); tools with no
// claude counterpart keep Gemini's name.
package gemini

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/agent"
)

// VerifiedVersion is the Gemini CLI version this package was verified
// against; tools/package.json pins the same (a test keeps them in step).
const VerifiedVersion = "0.61.0"

// DefaultModel is the model a turn runs when the spec names none. The CLI's
// own default ("auto") adds a routing call before every prompt and picks a
// model per prompt, which a measurement must not let vary.
const DefaultModel = "gemini-2.5-flash"

// StandInKey is the API key given to the CLI when it talks to a stand-in
// server (TurnSpec.BaseURL): the CLI refuses to start without one, and the
// author's own key must never reach a stand-in.
const StandInKey = "stand-in-key"

// Agent is the Gemini CLI as an agent.Agent.
type Agent struct {
	// MaxAttempts is the CLI's attempts per model call (settings
	// general.maxAttempts, 1 to 10); 0 means DefaultMaxAttempts. The CLI's
	// own default, 10, spends about four minutes on a persistent 429.
	MaxAttempts int
}

// DefaultMaxAttempts: a first try and two retries (backoff 5 s, then 10 s).
const DefaultMaxAttempts = 3

var _ agent.Agent = Agent{}

// Name is the --agent value.
func (Agent) Name() string { return "gemini" }

// SkillDir is where the CLI discovers a project skill: it reads
// <cwd>/.agents/skills/<name>/SKILL.md (and .gemini/skills/, which is not
// used, so one path serves codex too).
func (Agent) SkillDir(name string) string { return filepath.Join(".agents", "skills", name) }

// CostExact is false: the CLI reports tokens, not money; Turn.CostUSD is
// estimated at the price table in price.go.
func (Agent) CostExact() bool { return false }

// SkillLoaded says whether the turn activated the named skill: a
// successful activate_skill call for it (reported as claude's Skill).
func (Agent) SkillLoaded(t agent.Turn, name string) bool {
	ok, _ := t.SkillUse(name)
	return ok
}

// toolNames maps claude's tool names (TurnSpec.Tools) to the CLI's.
var toolNames = map[string]string{
	"Bash":      "run_shell_command",
	"Read":      "read_file",
	"Edit":      "replace",
	"Write":     "write_file",
	"Glob":      "glob",
	"Grep":      "grep_search",
	"Skill":     "activate_skill",
	"WebFetch":  "web_fetch",
	"WebSearch": "google_web_search",
}

// claudeNames is toolNames the other way round.
var claudeNames = func() map[string]string {
	m := map[string]string{}
	for c, g := range toolNames {
		m[g] = c
	}
	return m
}()

// ClaudeName is the claude name of one of the CLI's tools; a tool with no
// counterpart keeps its own name.
func ClaudeName(native string) string {
	if c, ok := claudeNames[native]; ok {
		return c
	}
	return native
}

// grant is one tool of TurnSpec.Tools as the CLI can grant it: a tool name
// for settings tools.core and, for a command pattern (Bash(git diff:*)),
// the command prefix a policy rule allows.
type grant struct {
	native string
	prefix string // run_shell_command only; "" grants every command
}

// parseGrant reads one entry of TurnSpec.Tools. ok is false when the CLI
// cannot grant it; why says so.
func parseGrant(tool string) (g grant, ok bool, why string) {
	name, arg, hasArg := strings.Cut(tool, "(")
	native := toolNames[name]
	switch {
	case strings.HasPrefix(name, "mcp__"):
		return g, false, "an MCP tool: the agent runs with no MCP servers"
	case native == "":
		return g, false, "the Gemini CLI has no tool for it"
	case !hasArg:
		return grant{native: native}, true, ""
	case native != "run_shell_command" || !strings.HasSuffix(arg, ")"):
		return g, false, "a pattern: the Gemini CLI grants this tool whole or not at all"
	}
	// claude's Bash(git diff:*) and Bash(git diff *) both mean commands
	// starting "git diff"; the policy's commandPrefix is that prefix.
	prefix := strings.TrimSuffix(arg, ")")
	prefix = strings.TrimSuffix(strings.TrimSuffix(prefix, "*"), ":")
	prefix = strings.TrimSpace(prefix)
	if prefix == "" {
		return grant{native: native}, true, ""
	}
	return grant{native: native, prefix: prefix}, true, ""
}

// NotGranted lists the tools of a list the CLI cannot grant, with why.
func (Agent) NotGranted(tools []string) []string {
	var out []string
	for _, t := range tools {
		if _, ok, why := parseGrant(t); !ok {
			out = append(out, t+" ("+why+")")
		}
	}
	return out
}

// grants are the grantable tools of a list, each tool once; a tool granted
// whole drops its command patterns.
func grants(tools []string) []grant {
	var out []grant
	whole := map[string]bool{}
	for _, t := range tools {
		if g, ok, _ := parseGrant(t); ok && g.prefix == "" {
			whole[g.native] = true
		}
	}
	for _, t := range tools {
		g, ok, _ := parseGrant(t)
		if !ok || (g.prefix != "" && whole[g.native]) || slices.Contains(out, g) {
			continue
		}
		out = append(out, g)
	}
	return out
}

// claudeInput is the input a call reports: the CLI's arguments verbatim,
// except activate_skill's {"name": x}, which becomes claude's
// {"skill": x} so Turn.SkillUse reads it.
func claudeInput(native string, args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	if native == "activate_skill" {
		b, _ := json.Marshal(map[string]string{"skill": gjson.GetBytes(args, "name").String()})
		return b
	}
	return args
}
