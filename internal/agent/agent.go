// Package agent is the one small interface vibe-test drives a coding-agent
// CLI through: Claude Code (package claude, the reference), OpenAI's Codex
// CLI (package codex) and Google's Gemini CLI (package gemini). Each
// implementation is the only code that knows its CLI's flags, config files,
// event shapes and session files; everything above it (the conversation
// driver, the judge, the eval roles) works with the Turn values it returns,
// which are claude.Turn's shape: tool calls with results, the final text,
// errors, the context of the last API call, a cost.
package agent

import (
	"context"
	"io"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/jail"
)

// Turn is one agent turn as every agent reports it (see claude.Turn).
type Turn = claude.Turn

// Outcome is what an agent process did apart from what it printed.
type Outcome = claude.Outcome

// TurnSpec is one prompt for an agent, with everything its process needs.
type TurnSpec struct {
	Binary string
	Prompt string
	// Resume is the session (thread) to continue; "" starts a new one.
	Resume string
	Model  string
	Effort string
	// Tools are the tools granted, in claude's names (Bash, Read, Edit,
	// Write, Glob, Grep, Skill): each agent maps them to its own, and says
	// which it cannot grant (NotGranted).
	Tools []string
	// SystemPromptFile is appended to the agent's system prompt (seed
	// 000's --append-system-prompt-file; eval's --deliver system-prompt).
	SystemPromptFile string
	// Dir is the sandbox, the agent's working folder.
	Dir string
	// SkillNames are the names the skill under test is listed under by
	// the agent's CLI (skill.Skill.Listed): a setting that hides skills
	// by name must not hide it.
	SkillNames []string
	// Home is the conversation's own home folder (HOME, and where each
	// agent keeps its config and sessions): hermetic, fresh per run.
	Home string
	// BaseEnv is the author's environment; each agent passes through it
	// only what its CLI needs (an allowlist), plus Extra (KEY=VALUE).
	BaseEnv []string
	Extra   []string
	PassEnv []string
	// Stdout receives the raw stream as it arrives (the saved transcript).
	Stdout io.Writer
	// Timeout bounds the turn; Grace is how long SIGTERM is given before
	// SIGKILL.
	Timeout, Grace time.Duration
	// Jail, when set, runs the process in a bubblewrap jail.
	Jail *jail.Spec
	// BaseURL, when set, points the agent at a stand-in model server
	// (scripted/) instead of its vendor's API.
	BaseURL string
}

// Live is one long-lived agent process (interactive mode): each Send is
// one user message in the same session.
type Live interface {
	Send(ctx context.Context, prompt string, stdout io.Writer, timeout time.Duration) (Outcome, error)
	Close()
}

// Agent is a coding-agent CLI.
type Agent interface {
	// Name is the --agent value: claude, codex or gemini.
	Name() string
	// SkillDir is where, relative to the sandbox, the agent discovers a
	// project skill of this name (the skill folder is installed there).
	SkillDir(name string) string
	// PrepareHome writes the hermetic configuration the agent reads into
	// spec.Home (model provider, approval policy, telemetry off, ...).
	PrepareHome(spec TurnSpec) error
	// Run runs one turn as its own process (resume mode when spec.Resume
	// is set).
	Run(ctx context.Context, spec TurnSpec) (Outcome, error)
	// StartLive starts one process for a whole conversation (interactive
	// mode); its first Send is the first turn.
	StartLive(spec TurnSpec) (Live, error)
	// SkillLoaded says whether a turn loaded the named skill, by the
	// agent's own signal (claude: a Skill call; codex: a read of the
	// SKILL.md path or "$name" in the prompt; gemini: activate_skill).
	SkillLoaded(t Turn, name string) bool
	// NotGranted lists tools of spec.Tools the agent cannot grant.
	NotGranted(tools []string) []string
	// CostExact says whether Turn.CostUSD is the CLI's own figure (true)
	// or estimated from token counts at a pinned price table (false: the
	// record labels it estimated).
	CostExact() bool
}

// Structured is a cold structured call (rubric, plan, judge, reader,
// grader): one prompt, an answer validated against a JSON Schema.
type Structured interface {
	Structured(ctx context.Context, prompt, schema, model string) (Turn, error)
}
