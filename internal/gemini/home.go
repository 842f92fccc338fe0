package gemini

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/proc"
)

// builtinSkills ship inside the CLI (bundle/builtin) and are listed to the
// model in every session unless disabled: they would sit beside the skill
// under measurement.
var builtinSkills = []string{"skill-creator", "antigravity-support"}

// BuiltinSkills are the names of the skills the pinned CLI ships.
func BuiltinSkills() []string { return slices.Clone(builtinSkills) }

// needsPolicy are the tools the CLI's headless default mode does not even
// declare unless a policy rule allows them (PROTOCOL §2.3).
var needsPolicy = map[string]bool{
	"run_shell_command": true, "write_file": true, "replace": true,
	"activate_skill": true, "web_fetch": true,
}

// settingsFile and policyFile are where PrepareHome writes the hermetic
// configuration: $GEMINI_CLI_HOME/.gemini/, which the CLI reads instead of
// the author's ~/.gemini.
func settingsFile(home string) string { return filepath.Join(home, ".gemini", "settings.json") }
func policyFile(home string) string   { return filepath.Join(home, ".gemini", "policy.toml") }

// settings is the hermetic settings.json of one conversation's home.
// Every entry was needed or is justified in PROTOCOL §1: the API key
// auth (without it GOOGLE_GEMINI_BASE_URL selects a gateway type -p
// refuses, exit 41), folder trust off (exit 55 otherwise), no usage
// statistics (DNS lookups of Google's Clearcut and an installation id on
// every request), no telemetry or update checks, bounded retries, no
// .env files read from the sandbox upward, the built-in skills off, the
// tools reduced to the granted ones, and the policy granting what the
// headless mode refuses. Redaction keeps variables named like secrets
// (GEMINI_API_KEY among them) out of the shell commands' environment.
func settings(home string, tools []grant, maxAttempts int, skillNames []string) map[string]any {
	core := []string{}
	for _, g := range tools {
		name := g.native
		if g.prefix != "" {
			name += "(" + g.prefix + ")"
		}
		core = append(core, name)
		if g.native == "glob" && !slices.ContainsFunc(tools, func(x grant) bool { return x.native == "list_directory" }) {
			// claude's Glob is also how it lists a folder; the CLI has a
			// tool of its own for that.
			core = append(core, "list_directory")
		}
	}
	s := map[string]any{
		"security": map[string]any{
			"auth":                         map[string]any{"selectedType": "gemini-api-key"},
			"folderTrust":                  map[string]any{"enabled": false},
			"environmentVariableRedaction": map[string]any{"enabled": true},
		},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general": map[string]any{
			"enableAutoUpdate":             false,
			"enableAutoUpdateNotification": false,
			"maxAttempts":                  maxAttempts,
			// update_topic and enter_plan_mode are tools the model would
			// see beside the granted ones.
			"topicUpdateNarration": false,
			"plan":                 map[string]any{"enabled": false},
		},
		"advanced":     map[string]any{"ignoreLocalEnv": true},
		"skills":       map[string]any{"disabled": disabledSkills(skillNames)},
		"experimental": map[string]any{"enableAgents": false},
		"model":        map[string]any{"skipNextSpeakerCheck": true},
		"tools":        map[string]any{"core": core},
		"policyPaths":  []string{policyFile(home)},
	}
	return s
}

// policy is the policy file granting the tools headless mode refuses: a
// whole tool, or for the shell a command prefix. Redirections (>, >>, 2>&1)
// are allowed for a whole shell grant, which claude's Bash allows too; a
// prefix grant stays without them, as claude's patterns match the whole
// command. tools.core alone would allow the tools too, but its rules
// (priority 4.25 in the CLI's tiers: user tier 4 + 250/1000) carry no
// allowRedirection, so every command with a redirection would be refused;
// these rules rank above them (4 + 500/1000).
func policy(tools []grant) string {
	var b strings.Builder
	b.WriteString("# Written for one conversation: the tools it was granted.\n")
	for _, g := range tools {
		if !needsPolicy[g.native] {
			continue
		}
		fmt.Fprintf(&b, "\n[[rule]]\ntoolName = %s\n", strconv.Quote(g.native))
		if g.prefix != "" {
			fmt.Fprintf(&b, "commandPrefix = %s\n", strconv.Quote(g.prefix))
		} else if g.native == "run_shell_command" {
			b.WriteString("allowRedirection = true\n")
		}
		b.WriteString("decision = \"allow\"\npriority = 500\n")
	}
	return b.String()
}

// PrepareHome writes the hermetic configuration into spec.Home: settings,
// the policy of spec.Tools (claude's base tools when empty), and
// spec.SystemPromptFile as the global GEMINI.md, which the CLI appends to
// its system prompt (PROTOCOL §4.4). It also makes the home's tmp folder,
// the TMPDIR of a turn outside the jail.
func (a Agent) PrepareHome(spec agent.TurnSpec) error {
	if spec.Home == "" {
		return fmt.Errorf("gemini: the turn has no home folder")
	}
	tools := spec.Tools
	if len(tools) == 0 {
		tools = claude.BaseTools
	}
	return writeHome(spec.Home, settings(spec.Home, grants(tools), a.attempts(), spec.SkillNames), policy(grants(tools)), spec.SystemPromptFile)
}

// disabledSkills are the built-in skills the settings hide beside a skill
// under test listed as skillNames. The setting hides every skill of a
// built-in's name, case aside; a project skill of exactly that name takes
// the built-in's place in the listing (addSkillsWithPrecedence, keyed by
// the exact name), so it is not disabled and the built-in is not listed
// either (anthropics/skills has a skill-creator). One that differs in
// case only is refused before the run (skill.LoadAs).
func disabledSkills(skillNames []string) []string {
	disabled := []string{}
	for _, b := range builtinSkills {
		if !slices.Contains(skillNames, b) {
			disabled = append(disabled, b)
		}
	}
	return disabled
}

func writeHome(home string, s map[string]any, pol, systemPromptFile string) error {
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("gemini: creating %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o700); err != nil {
		return fmt.Errorf("gemini: creating the home's tmp folder: %w", err)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(settingsFile(home), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("gemini: writing settings: %w", err)
	}
	if err := os.WriteFile(policyFile(home), []byte(pol), 0o600); err != nil {
		return fmt.Errorf("gemini: writing the policy: %w", err)
	}
	memory := filepath.Join(dir, "GEMINI.md")
	if systemPromptFile == "" {
		if err := os.Remove(memory); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("gemini: %w", err)
		}
		return nil
	}
	text, err := os.ReadFile(systemPromptFile)
	if err != nil {
		return fmt.Errorf("gemini: reading the system prompt file: %w", err)
	}
	if err := os.WriteFile(memory, text, 0o600); err != nil {
		return fmt.Errorf("gemini: writing %s: %w", memory, err)
	}
	return nil
}

func (a Agent) attempts() int {
	switch {
	case a.MaxAttempts <= 0:
		return DefaultMaxAttempts
	case a.MaxAttempts > 10:
		return 10 // the settings schema's maximum
	}
	return a.MaxAttempts
}

// CredentialVars carry the author's Gemini API credentials.
var CredentialVars = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}

// passThrough are the variables the CLI may inherit: what it needs to find
// node, speak the user's locale and reach its API. Everything else in the
// author's environment stays out.
var passThrough = []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"}

// Env builds a turn's environment by allowlist from spec.BaseEnv. The
// author's API key passes only when the turn talks to Google; with a
// stand-in (spec.BaseURL) the CLI gets StandInKey and the stand-in's URL.
// HOME and GEMINI_CLI_HOME are spec.Home (the CLI reads ~/.gemini and
// ~/.agents/skills from there); GEMINI_CLI_NO_RELAUNCH keeps it one
// process that SIGTERM stops (the relauncher ignores it, PROTOCOL §6).
// Extra (KEY=VALUE) is set last.
func Env(spec agent.TurnSpec) []string {
	allowed := map[string]bool{}
	for _, k := range passThrough {
		allowed[k] = true
	}
	for _, k := range spec.PassEnv {
		allowed[k] = true
	}
	if spec.BaseURL == "" {
		for _, k := range CredentialVars {
			allowed[k] = true
		}
		allowed["GOOGLE_GEMINI_BASE_URL"] = true
	}
	vars := map[string]string{}
	for _, kv := range spec.BaseEnv {
		k, v, ok := strings.Cut(kv, "=")
		if ok && allowed[k] {
			vars[k] = v
		}
	}
	if spec.BaseURL != "" {
		// Never the author's key to a stand-in, even when passed by name
		// (GOOGLE_API_KEY reached it through --pass-env).
		for _, k := range CredentialVars {
			delete(vars, k)
		}
		vars["GOOGLE_GEMINI_BASE_URL"] = spec.BaseURL
		vars["GEMINI_API_KEY"] = StandInKey
	}
	if vars["LANG"] == "" {
		vars["LANG"] = "C.UTF-8"
	}
	vars["TERM"] = "dumb"
	vars["NO_COLOR"] = "1"
	vars["GEMINI_CLI_NO_RELAUNCH"] = "true"
	vars["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
	if spec.Home != "" {
		vars["HOME"] = spec.Home
		vars["GEMINI_CLI_HOME"] = spec.Home
		// Outside the jail the CLI's temp files (shell output, error
		// reports) stay in the conversation's home; the jail sets its own
		// /tmp.
		vars["TMPDIR"] = filepath.Join(spec.Home, "tmp")
	}
	return proc.Environ(vars, spec.Extra)
}

// HasCredentials reports whether the environment carries a Gemini API
// key, the only login a hermetic home can use (an OAuth login lives in
// the author's ~/.gemini).
func HasCredentials(base []string) bool {
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		if slices.Contains(CredentialVars, k) && v != "" {
			return true
		}
	}
	return false
}
