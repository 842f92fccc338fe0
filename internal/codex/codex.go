// Package codex runs OpenAI's Codex CLI headless as one of vibe-test's
// agents (agent.Agent, agent.Structured) and reads what it printed.
//
// It is the only package that knows the CLI's flags, config.toml, `codex
// exec --json` events, `codex app-server` JSON-RPC and rollout files, as
// verified on VerifiedVersion (docs/agents.md, "Codex CLI"; recordings in
// testdata/). Its Turns have claude's shape and claude's tool names (see
// ParseTurn), so everything above the agent reads them alike.
//
// What differs from claude, for the code that drives it:
//   - a resume-mode turn is `codex exec resume <thread> --json <prompt>`;
//     a live conversation is one `codex app-server` process (StartLive);
//   - the session file is the thread's rollout (RolloutFile), appended
//     per turn like claude's session file;
//   - the skill is read, not invoked: SkillLoaded is a successful shell
//     read of .agents/skills/<name>/SKILL.md, or codex injecting the skill
//     for a "$name" in the prompt (Turn.Skills lists what it injected; for
//     claude that field lists the skills available);
//   - CostUSD is estimated from token counts at the pinned Prices, and is
//     the thread's running total as claude's total_cost_usd is;
//   - there is no /compact in exec; Failure has codex's wording.
package codex

import (
	"context"
	"errors"
	"fmt"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/agent"
)

// Agent is the Codex CLI. Its zero value is usable: no retries.
type Agent struct {
	// Retries is how often codex retries a failed model request, at each
	// of its two layers (vibe-test's --max-retries).
	Retries int
	// IdleTimeoutMS bounds a stalled stream after its headers (0: codex's
	// own 300 s); the turn's timeout bounds everything else.
	IdleTimeoutMS int
}

var (
	_ agent.Agent      = Agent{}
	_ agent.Structured = Caller{}
)

// Name is the --agent value.
func (Agent) Name() string { return "codex" }

// SkillDir is where codex finds a project skill: <cwd>/.agents/skills
// (also read from every folder up to the git root; PROTOCOL.md §5.1).
func (Agent) SkillDir(name string) string { return filepath.Join(".agents", "skills", name) }

// CostExact is false: codex reports tokens, the cost is estimated.
func (Agent) CostExact() bool { return false }

// config is the config.toml of a turn spec.
func (a Agent) config(spec agent.TurnSpec) (Config, error) {
	c := Config{
		BaseURL:       spec.BaseURL,
		Model:         spec.Model,
		Effort:        spec.Effort,
		Retries:       a.Retries,
		IdleTimeoutMS: a.IdleTimeoutMS,
	}
	if spec.SystemPromptFile != "" {
		b, err := os.ReadFile(spec.SystemPromptFile)
		if err != nil {
			return c, fmt.Errorf("reading the system prompt file: %w", err)
		}
		c.Instructions = string(b)
	}
	return c, nil
}

// PrepareHome writes $HOME/.codex/config.toml into spec.Home: the model
// provider (the stand-in at spec.BaseURL, else OpenAI's API with
// OPENAI_API_KEY), approval never, codex's own sandbox off (the jail is
// the isolation; see configTOML), telemetry, update checks, web
// search, bundled skills, sub-agents and goals off, bounded retries, and
// spec.SystemPromptFile as developer_instructions. The fresh HOME also
// keeps $HOME/.agents/skills empty, which codex reads whatever CODEX_HOME
// says.
func (a Agent) PrepareHome(spec agent.TurnSpec) error {
	if spec.Home == "" {
		return errors.New("codex: the turn has no home folder")
	}
	c, err := a.config(spec)
	if err != nil {
		return err
	}
	return writeConfig(CodexHome(spec.Home), c)
}

// ExecArgs is the argv of one resume-mode turn: `exec` for the first,
// `exec resume <thread>` for the next (PROTOCOL.md §6.1). --strict-config
// makes a config key this version does not know an error; outside a git
// repository exec refuses to run without --skip-git-repo-check. The
// prompt follows "--", so one that starts with "-" stays a prompt.
func ExecArgs(prompt, resume, model string) []string {
	args := []string{"exec"}
	if resume != "" {
		args = append(args, "resume")
	}
	args = append(args, "--json", "--strict-config", "--skip-git-repo-check")
	if model != "" {
		args = append(args, "-m", model)
	}
	args = append(args, "--")
	if resume != "" {
		args = append(args, resume)
	}
	return append(args, prompt)
}

// Run runs one turn as its own process (resume mode when spec.Resume is
// set), then reads the thread's rollout for what the stream lacks: the
// calls' usage, the context of the last one, the model, the injected
// skills and the estimated running cost.
func (a Agent) Run(ctx context.Context, spec agent.TurnSpec) (Outcome, error) {
	inv, err := a.invocation(spec, ExecArgs(spec.Prompt, spec.Resume, spec.Model))
	if err != nil {
		return Outcome{}, err
	}
	out, turnStarted, err := run(ctx, inv)
	applyRollout(&out.Turn, turnStarted, CodexHome(spec.Home))
	return out, err
}

// applyRollout adds what the thread's rollout says of its newest turn,
// for a turn whose stream showed it start (turn.started): a process that
// printed thread.started (a resumed thread's id too) and died before its
// turn began would otherwise be given the previous turn's calls, usage
// and context.
func applyRollout(t *Turn, turnStarted bool, codexHome string) {
	if !turnStarted || t.SessionID == "" {
		return
	}
	if path, err := RolloutFile(codexHome, t.SessionID); err == nil {
		if ro, err := ReadRollout(path); err == nil {
			ro.apply(t)
		}
	}
}

// invocation is the process of a turn: the native binary, the allowlisted
// environment, the sandbox, the jail. It writes the config first when
// PrepareHome has not.
func (a Agent) invocation(spec agent.TurnSpec, args []string) (Invocation, error) {
	if _, err := os.Stat(filepath.Join(CodexHome(spec.Home), "config.toml")); err != nil {
		if err := a.PrepareHome(spec); err != nil {
			return Invocation{}, err
		}
	}
	bin, err := Native(spec.Binary)
	if err != nil {
		return Invocation{}, err
	}
	return Invocation{
		Binary: bin,
		Args:   args,
		Env: Env(spec.BaseEnv, EnvOptions{
			Home:    spec.Home,
			StandIn: spec.BaseURL != "",
			PassEnv: spec.PassEnv,
			Extra:   spec.Extra,
		}),
		Dir:     spec.Dir,
		Stdout:  spec.Stdout,
		Timeout: spec.Timeout,
		Grace:   spec.Grace,
		Jail:    spec.Jail,
	}, nil
}

// readVerbs are the commands that read a file out whole or in part; a
// command line naming the SKILL.md with one of them loaded the skill.
var readVerbs = []string{"cat", "sed", "head", "tail", "nl", "less", "more", "awk", "bat", "batcat", "view"}

// SkillLoaded says whether a turn loaded the named skill: codex has no
// skill tool, so the model reads .agents/skills/<name>/SKILL.md with a
// shell command (one that succeeded, with a read verb and the file's path
// in the same simple command), or the prompt named it as "$name" and
// codex injected the file itself (Turn.Skills, from the rollout).
func (Agent) SkillLoaded(t Turn, name string) bool {
	if name == "" {
		return false
	}
	if slices.Contains(t.Skills, name) {
		return true
	}
	path := ".agents/skills/" + name + "/SKILL.md"
	for _, c := range t.Calls {
		if c.Name != "Bash" || !c.HasResult || c.IsError {
			continue
		}
		if readsFile(gjson.GetBytes(c.Input, "command").String(), path) {
			return true
		}
	}
	return false
}

// readsFile: some simple command of cmd (split at ; & | ( ) and newlines
// outside quotes) starts with a read verb and names path, as one word once
// unquoted (a skill's folder may be named "Odd Folder" or "a;b": the
// command quotes or escapes it).
//
// A cd earlier in the command moves where a relative path starts: `cd
// .agents/skills/x && cat SKILL.md` reads it too.
func readsFile(cmd, path string) bool {
	dir := ""
	for _, seg := range simpleCommands(cmd) {
		words, ok := shellWords(seg)
		if !ok {
			words = strings.Fields(seg)
		}
		// Skip leading VAR=value assignments.
		for len(words) > 0 && strings.Contains(words[0], "=") {
			words = words[1:]
		}
		if len(words) >= 2 && words[0] == "cd" {
			dir = joinShellPath(dir, words[1])
			continue
		}
		if len(words) == 0 || !slices.Contains(readVerbs, filepath.Base(words[0])) {
			continue
		}
		if slices.ContainsFunc(words[1:], func(w string) bool {
			w = joinShellPath(dir, w)
			return w == path || strings.HasSuffix(w, "/"+path)
		}) {
			return true
		}
	}
	return false
}

// joinShellPath is p as seen from dir, a folder a cd went to ("": the
// working folder): p itself when absolute or under ~, else cleaned.
func joinShellPath(dir, p string) string {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return p
	}
	return pathpkg.Clean(pathpkg.Join(dir, p))
}

// simpleCommands splits cmd at ; & | ( ) and newlines that are not quoted
// or escaped.
func simpleCommands(cmd string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if strings.TrimSpace(cur.String()) != "" {
			out = append(out, cur.String())
		}
		cur.Reset()
	}
	quote := byte(0)
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case quote == '"':
			if c == '\\' && i+1 < len(cmd) {
				cur.WriteByte(c)
				i++
				c = cmd[i]
			} else if c == '"' {
				quote = 0
			}
		case c == '\\' && i+1 < len(cmd):
			cur.WriteByte(c)
			i++
			c = cmd[i]
		case c == '\'' || c == '"':
			quote = c
		case strings.IndexByte(";&|\n()", c) >= 0:
			flush()
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	return out
}

// granted are the tools (claude's names) codex has an equivalent of:
// exec_command runs Bash and, through it, reading, globbing and
// searching; apply_patch edits and writes; a skill is read with the
// shell. A pattern such as Bash(git diff:*) grants the whole shell:
// codex has no per-command allowlist under approval "never".
var granted = []string{"Bash", "Read", "Edit", "MultiEdit", "Write", "Glob", "Grep", "LS", "Skill"}

// NotGranted lists the tools of a list codex cannot grant, with why.
func (Agent) NotGranted(tools []string) []string {
	var out []string
	for _, t := range tools {
		name, _, _ := strings.Cut(t, "(")
		switch {
		case slices.Contains(granted, name):
		case strings.HasPrefix(name, "mcp__"):
			out = append(out, t+" (an MCP tool: the agent runs with no MCP servers)")
		case name == "WebSearch" || name == "WebFetch":
			out = append(out, t+" (codex's web search is off in the hermetic config)")
		case name == "Task" || name == "Agent":
			out = append(out, t+" (codex's sub-agents are off in the hermetic config)")
		default:
			out = append(out, t+" (codex "+VerifiedVersion+" has no tool of that name)")
		}
	}
	return out
}

// Compact compacts the thread spec.Resume in a process of its own, the
// resume-mode counterpart of claude's `claude -p /compact --resume`: exec
// has no /compact, so an app-server resumes the thread, compacts it
// (Live.Compact) and exits. The stream goes to spec.Stdout.
func (a Agent) Compact(ctx context.Context, spec agent.TurnSpec) (Outcome, error) {
	if spec.Resume == "" {
		return Outcome{}, errors.New("codex: compacting needs a thread to resume")
	}
	l, err := a.StartLive(spec)
	if err != nil {
		return Outcome{}, err
	}
	defer l.Close()
	return l.(*Live).Compact(ctx, spec.Stdout, spec.Timeout)
}
