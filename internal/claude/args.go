package claude

import (
	"os"
	"strings"

	"github.com/vibe-test/vibe-test/internal/proc"
)

// BaseTools are the tools every agent turn may use without asking. Skill is
// among them: a skill whose frontmatter has allowed-tools makes invoking it
// a permission request, which -p denies unless Skill is allowed (seen on
// claude 2.1.328).
var BaseTools = []string{"Bash", "Read", "Edit", "Write", "Glob", "Grep", "Skill"}

// AgentTools is the run's --allowedTools list: the base tools, then the
// skill's allowed-tools, then the author's --allowed-tools, each once.
func AgentTools(skillTools, extra []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]string{BaseTools, skillTools, extra} {
		for _, t := range list {
			if t != "" && !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// SessionWide lists the skill's allowed-tools that a run's --allowedTools
// grants for the whole session while nothing else there would: neither
// BaseTools nor extra (the author's --allowed-tools) holds the rule, or
// the bare tool it narrows (Bash covers Bash(git:*)). The CLI itself
// grants a skill's allowed-tools only from its Skill call to the end of
// that turn, and again at each later Skill call for it, even one answered
// "already loaded" (seen on 2.1.328); vibe-test grants them from the first
// call of every turn, so that a step the agent takes from a skill it
// remembers is not refused for want of a second invocation (a refusal the
// fresh arm, which invokes the skill in the same turn, would never meet).
// These are the tools for which that differs.
func SessionWide(skillTools, extra []string) []string {
	var out []string
	for _, t := range skillTools {
		covered := false
		for _, rule := range append(append([]string{}, BaseTools...), extra...) {
			name, _, narrowed := strings.Cut(rule, "(")
			tool, _, _ := strings.Cut(t, "(")
			if rule == t || !narrowed && name == tool {
				covered = true
				break
			}
		}
		if !covered && !contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// knownTools are the tools the pinned CLI (2.1.328) has in an agent session
// under AgentArgs: the init event's tools (claude/testdata/transcripts/
// skill-invoked.jsonl) plus Glob and Grep, which --allowedTools adds, and
// Agent, the name the API sees for Task.
var knownTools = map[string]bool{
	"Agent": true, "Bash": true, "CronCreate": true, "CronDelete": true, "CronList": true, "Edit": true,
	"EnterWorktree": true, "ExitWorktree": true, "Glob": true, "Grep": true, "ListAgents": true, "Monitor": true,
	"NotebookEdit": true, "Read": true, "ReportFindings": true, "ScheduleWakeup": true, "SendMessage": true,
	"Skill": true, "Task": true, "TaskStop": true, "ToolSearch": true, "WebFetch": true, "WebSearch": true,
	"Workflow": true, "Write": true,
}

// NotGranted lists the tools of a list that the run cannot grant, with why:
// what --allowedTools names is granted only when the session has such a
// tool. Under AgentArgs it has no MCP server (--strict-mcp-config loads
// none), so mcp__ tools never exist, and a name the pinned CLI does not
// have (TodoWrite, LS, MultiEdit of older versions, a typo) matches nothing.
func NotGranted(tools []string) []string {
	var out []string
	for _, t := range tools {
		name, _, _ := strings.Cut(t, "(")
		switch {
		case strings.HasPrefix(name, "mcp__"):
			out = append(out, t+" (an MCP tool: the agent runs with no MCP servers)")
		case !knownTools[name]:
			out = append(out, t+" (claude "+VerifiedVersion+" has no tool of that name)")
		}
	}
	return out
}

// AgentArgs is the argv of one agent turn, isolated from the author's own
// setup: project settings only (with a fresh config dir this hides the
// author's skills, CLAUDE.md, hooks and MCP servers, while the skill
// installed in the sandbox, a project skill, stays), no MCP servers but
// ours (none). tools are passed one
// argument each, so a pattern with spaces (Bash(git diff:*)) stays whole.
// model is always given: a run pins its agent model.
func AgentArgs(prompt, resumeSession, model string, tools []string) []string {
	args := []string{"-p", prompt,
		"--output-format", "stream-json", "--verbose",
		"--setting-sources", "project", "--strict-mcp-config",
		"--allowedTools",
	}
	args = append(args, tools...)
	if resumeSession != "" {
		args = append(args, "--resume", resumeSession)
	}
	if model != "" {
		args = append(args, "--model", model)
	}
	return args
}

// HookEvents makes the CLI print each hook it runs as system/hook_started
// and hook_response events (2.1.328), which ParseTurn keeps: an agent
// turn passes it when the skill declares hooks.
const HookEvents = "--include-hook-events"

// GeneratorArgs is the argv of one generator call of `vibe-test eval`
// (seed 000's generate step): a one-shot session isolated like AgentArgs,
// whose built-in tools are exactly tools (--tools) and allowed without
// asking (--allowedTools), with the skill appended to the system prompt
// from systemFile (--append-system-prompt-file: the whole file verbatim,
// PROTOCOL.md §4 (c)) when it is not "", the model and effort when given
// (--effort: low, medium, high, xhigh or max), and no session left behind.
func GeneratorArgs(prompt, model, effort string, tools []string, systemFile string) []string {
	args := []string{"-p", prompt,
		"--output-format", "stream-json", "--verbose",
		"--setting-sources", "project", "--strict-mcp-config",
		"--no-session-persistence",
		"--tools",
	}
	args = append(args, tools...)
	args = append(args, "--allowedTools")
	args = append(args, tools...)
	if systemFile != "" {
		args = append(args, "--append-system-prompt-file", systemFile)
	}
	if model != "" {
		args = append(args, "--model", model)
	}
	if effort != "" {
		args = append(args, "--effort", effort)
	}
	return args
}

// StructuredArgs is the argv of a cold call that must answer with JSON
// matching schema (--json-schema: the CLI offers the model a
// StructuredOutput tool and puts its input in the result line's
// structured_output): no other tools, no session left behind.
func StructuredArgs(prompt, schema, model string) []string {
	args := []string{"-p", prompt,
		"--output-format", "stream-json", "--verbose",
		"--json-schema", schema, "--tools", "",
		"--setting-sources", "project", "--strict-mcp-config",
		"--no-session-persistence",
	}
	if model != "" {
		args = append(args, "--model", model)
	}
	return args
}

// CredentialVars are the variables that carry the author's credentials.
var CredentialVars = []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"}

// passThrough are the variables an agent process may inherit: what the CLI
// needs to find its binary, speak the user's locale and reach its API.
// Everything else in the author's environment stays out.
var passThrough = []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"}

// passPrefixes: the CLI's own configuration (base URL, model names, retries,
// credentials) lives in these.
var passPrefixes = []string{"ANTHROPIC_", "CLAUDE_CODE_"}

// EnvOptions says how to build an agent's environment.
type EnvOptions struct {
	Home      string   // a fresh HOME; "" keeps the author's (and their login)
	ConfigDir string   // CLAUDE_CONFIG_DIR; "" keeps the author's setting
	Extra     []string // KEY=VALUE set last (e.g. CLAUDE_CODE_MAX_RETRIES)
	PassEnv   []string // names the author asked to pass (--pass-env)
}

// Env builds an environment by allowlist from base (normally os.Environ()).
func Env(base []string, o EnvOptions) []string {
	allowed := map[string]bool{}
	for _, k := range passThrough {
		allowed[k] = true
	}
	for _, k := range o.PassEnv {
		allowed[k] = true
	}
	if o.Home == "" {
		allowed["HOME"] = true
	}
	if o.ConfigDir == "" {
		allowed["CLAUDE_CONFIG_DIR"] = true
	}
	vars := map[string]string{}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if allowed[k] || hasAnyPrefix(k, passPrefixes) {
			vars[k] = v
		}
	}
	// A non-interactive, quiet CLI: no telemetry, no update checks.
	vars["TERM"] = "dumb"
	vars["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
	vars["DISABLE_TELEMETRY"] = "1"
	vars["DISABLE_AUTOUPDATER"] = "1"
	if vars["LANG"] == "" {
		vars["LANG"] = "C.UTF-8"
	}
	if o.Home != "" {
		vars["HOME"] = o.Home
	}
	if o.ConfigDir != "" {
		vars["CLAUDE_CONFIG_DIR"] = o.ConfigDir
	}
	return proc.Environ(vars, o.Extra)
}

// HasCredentials reports whether the environment carries an API key or
// OAuth token, which lets a run use a fresh config dir (fully hermetic).
func HasCredentials(base []string) bool {
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		for _, c := range CredentialVars {
			if k == c && v != "" {
				return true
			}
		}
	}
	return false
}

// AuthorConfigDir is where the author's own Claude Code config lives.
func AuthorConfigDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return home + "/.claude"
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
