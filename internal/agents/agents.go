// Package agents names the coding-agent CLIs vibe-test can drive and builds
// each one's parts from the author's environment: where its binary is,
// which stand-in model server (if any) it talks to, whether the author has
// credentials for it, its conversation driver and its cold structured
// caller. It is the only package that imports every agent package, so the
// command line and the engine choose an agent by name without knowing any.
//
// Claude Code stays the reference: its turns are driven by the claude
// package's own richer path (hooks, sub-agents, its config dir), so For
// returns no agent.Agent for it; codex and gemini are driven through
// agent.Agent.
package agents

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/codex"
	"github.com/vibe-test/vibe-test/internal/execpath"
	"github.com/vibe-test/vibe-test/internal/gemini"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/redact"
)

// The --agent values.
const (
	Claude = "claude"
	Codex  = "codex"
	Gemini = "gemini"
)

// Names are the --agent values, the reference first.
var Names = []string{Claude, Codex, Gemini}

// Check says whether name is an agent vibe-test drives; the error names the
// flag and the values it takes.
func Check(flag, name string) error {
	if slices.Contains(Names, name) {
		return nil
	}
	return fmt.Errorf("--%s %q: expected one of %s", flag, name, strings.Join(Names, ", "))
}

// BaseURLVar is the variable that points an agent at a stand-in model
// server. Claude Code reads ANTHROPIC_BASE_URL itself; codex ignores
// OPENAI_BASE_URL, so vibe-test reads it and writes the provider into the
// conversation's config.toml; gemini reads GOOGLE_GEMINI_BASE_URL itself,
// and vibe-test sets it (with a stand-in key, never the author's).
var BaseURLVar = map[string]string{
	Claude: "ANTHROPIC_BASE_URL",
	Codex:  "OPENAI_BASE_URL",
	Gemini: "GOOGLE_GEMINI_BASE_URL",
}

// BaseURL is the stand-in server name's agent talks to, from env ("" for
// the vendor's API). Claude's is left to the CLI (it reads the variable
// from the environment vibe-test passes it), so this is "" for claude.
func BaseURL(name string, env []string) string {
	if name == Claude {
		return ""
	}
	return strings.TrimRight(envValue(env, BaseURLVar[name]), "/")
}

// HasCredentials says whether env lets name's CLI sign in from a hermetic
// home: its API key, or a stand-in server (which gets a stand-in key).
func HasCredentials(name string, env []string) bool {
	switch name {
	case Claude:
		return claude.HasCredentials(env) || envValue(env, "ANTHROPIC_BASE_URL") != ""
	case Codex:
		return codex.HasCredentials(env) || BaseURL(name, env) != ""
	case Gemini:
		return gemini.HasCredentials(env) || BaseURL(name, env) != ""
	}
	return false
}

// DefaultJudge is the agent the rubric, plan and judge calls go through
// when --judge-agent is not given: the driven agent when the author has
// credentials for it in the environment (one key is enough), else the
// first of Names they have such credentials for (claude's judge prompts
// are the calibrated ones), else claude: with no key in the environment
// Claude Code signs in with the author's own login, how most people run
// it (and without one its call fails with claude's credentials advice).
// Driving claude, the judge is claude.
func DefaultJudge(driven string, env []string) string {
	if driven == Claude || HasCredentials(driven, env) {
		return driven
	}
	for _, n := range Names {
		if HasCredentials(n, env) {
			return n
		}
	}
	return Claude
}

// CredentialsAdvice says what to do when name's key is refused.
func CredentialsAdvice(name string) string {
	switch name {
	case Codex:
		return codex.CredentialsAdvice
	case Gemini:
		return gemini.CredentialsAdvice
	}
	return claude.CredentialsAdvice
}

// CredentialVars are the variables that carry name's secrets (redacted from
// every artifact whichever agent runs).
func CredentialVars() []string {
	vars := append([]string{}, claude.CredentialVars...)
	vars = append(vars, codex.OpenAIKeyVar)
	return append(vars, gemini.CredentialVars...)
}

// BinaryVar overrides where name's CLI is (VIBE_TEST_CLAUDE is the
// engine's; the others follow it).
var BinaryVar = map[string]string{
	Claude: "VIBE_TEST_CLAUDE",
	Codex:  "VIBE_TEST_CODEX",
	Gemini: "VIBE_TEST_GEMINI",
}

// pinnedDir is where `make tools` installs the CLIs, relative to the repo.
var pinnedDir = filepath.Join("tools", "node_modules", ".bin")

// FindBinary looks for a non-claude agent's CLI as engine.FindClaude does
// for claude: the override variable, PATH, then the pinned install under
// each of roots. For codex it returns the native binary behind npm's
// launcher (codex.Native). Claude is the engine's (FindClaude).
func FindBinary(name string, env []string, roots []string) (string, error) {
	if name == Claude {
		return "", errors.New("agents: claude's binary is found by engine.FindClaude")
	}
	found := envValue(env, BinaryVar[name])
	if found == "" {
		found = execpath.Find(name, envValue(env, "PATH"))
	}
	if found == "" {
		for _, root := range roots {
			if p := filepath.Join(root, pinnedDir, name); execpath.IsExecutable(p) {
				found = p
				break
			}
		}
	}
	if found == "" {
		pkg := map[string]string{Codex: "@openai/codex@" + codex.VerifiedVersion, Gemini: "@google/gemini-cli@" + gemini.VerifiedVersion}[name]
		return "", fmt.Errorf("%s not found on PATH nor in %s (beside vibe-test, or in the vibe-test repository as the working folder): run `make tools` there, or `npm install -g %s`, or set %s to its path", name, filepath.Join(pinnedDir, name), pkg, BinaryVar[name])
	}
	if name == Codex {
		return codex.Native(found)
	}
	return found, nil
}

// For is name's conversation driver, with retries as --max-retries (each
// CLI's own retry setting): nil for claude, whose turns the claude package
// drives itself.
func For(name string, retries int) agent.Agent {
	switch name {
	case Codex:
		return codex.Agent{Retries: retries}
	case Gemini:
		return gemini.Agent{MaxAttempts: min(max(retries+1, 1), 10)}
	}
	return nil
}

// ColdOptions are what a non-claude cold caller needs.
type ColdOptions struct {
	Binary  string
	Env     []string
	PassEnv []string
	Retries int
	Timeout time.Duration
	Grace   time.Duration
	Jail    *jail.Spec
}

// Cold is name's cold structured caller (rubric, plan, judge, reader,
// grader) for codex or gemini; claude's is engine.ColdCaller.
func Cold(name string, o ColdOptions) (agent.Structured, error) {
	url := BaseURL(name, o.Env)
	switch name {
	case Codex:
		return codex.Caller{Binary: o.Binary, BaseEnv: o.Env, PassEnv: o.PassEnv, BaseURL: url, Retries: o.Retries, Timeout: o.Timeout, Grace: o.Grace, Jail: o.Jail}, nil
	case Gemini:
		return gemini.Caller{Binary: o.Binary, BaseEnv: o.Env, PassEnv: o.PassEnv, BaseURL: url, Timeout: o.Timeout, Grace: o.Grace, Jail: o.Jail, MaxAttempts: min(max(o.Retries+1, 1), 10)}, nil
	}
	return nil, fmt.Errorf("agents: no cold caller here for %q (claude's is engine.ColdCaller)", name)
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// ParseTurn reads a saved transcript of name's CLI back into a turn (for
// rejudge and resume): each CLI prints its own events.
func ParseTurn(name string, r io.Reader) (claude.Turn, error) {
	switch name {
	case Codex:
		return codex.ParseTurn(r)
	case Gemini:
		return gemini.ParseTurn(r)
	}
	return claude.ParseTurn(r)
}

// Failure says why a turn of name's CLI failed, or "" when it succeeded,
// in that CLI's terms (codex's success is a completed turn and exit 0).
func Failure(name string, t claude.Turn, exitCode int) string {
	switch name {
	case Codex:
		return codex.Failure(t, exitCode)
	case Gemini:
		return t.FailureOf(Gemini, exitCode)
	}
	return t.Failure(exitCode)
}

// SkillLoadFailure is why the agent's CLI said it could not load the skill
// installed as skillName ("" when it said nothing): codex logs it on its
// stderr; claude and gemini say nothing (vibe-test's reading of SKILL.md
// follows theirs before the run starts).
func SkillLoadFailure(name, stderr, skillName string) string {
	if name == Codex {
		return codex.SkillLoadFailure(stderr, skillName)
	}
	return ""
}

// ErrSkillNotLoaded is wrapped by SkillNotLoaded's error: every later turn
// or message of the same skill would be written without it too, so a run
// or an eval stops there.
var ErrSkillNotLoaded = errors.New("did not load the skill")

// SkillNotLoaded is the error for a turn whose CLI (name) said why (its
// SkillLoadFailure) it did not load the skill under test.
func SkillNotLoaded(name, why string) error {
	return fmt.Errorf("the %s CLI %w (%q on its stderr), so the model never saw it; vibe-test's own reading of SKILL.md took it: fix what the CLI names, or run it with --agent claude", name, ErrSkillNotLoaded, why)
}

// DefaultModel is the model a non-claude agent runs when --model names
// none (claude's is the CLI's own default, resolved once).
func DefaultModel(name string) string {
	switch name {
	case Codex:
		return codex.DefaultModel
	case Gemini:
		return gemini.DefaultModel
	}
	return ""
}

// Pieces says which lines of name's transcript are pieces of a streamed
// text (nil for claude, whose stream-json carries whole messages), for
// redact.NewStreamWriter.
func Pieces(name string) redact.Delta {
	switch name {
	case Codex:
		return codex.Piece
	case Gemini:
		return gemini.Piece
	}
	return nil
}
