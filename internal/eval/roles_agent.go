package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/sandbox"
)

// onceAgent is once for an agent other than claude (codex, gemini), driven
// through agent.Agent: a fresh copy of the case's fixture with the skill
// installed where that agent discovers project skills (--deliver skill),
// or the skill text as its system prompt file (--deliver system-prompt:
// codex's developer_instructions, gemini's global GEMINI.md); a hermetic
// home of its own (PrepareHome) that no other case sees; one turn, its raw
// stream saved redacted; its failure classified as claude's is (refused
// credentials stop the eval with the agent's advice, a transient API error
// is tried again, a timeout is an error of the cell).
func (g *generator) onceAgent(ctx context.Context, c *cases.Case, v version, transcript string, info *GenInfo) (claude.Turn, error) {
	opts := sandbox.Options{Fixture: c.Fixture, Files: c.Files, Hermetic: true, Exclude: g.exclude}
	if g.deliver == cases.DeliverSkill && v.skill != nil {
		opts.Skill, opts.SkillDir = v.skill, g.drv.SkillDir(v.skill.Name)
	}
	sb, err := sandbox.New(opts)
	if err != nil {
		return claude.Turn{}, err
	}
	defer func() {
		if !g.keepSandbox {
			_ = sb.Remove()
		}
	}()
	tools := g.tools
	sysFile := ""
	if g.deliver != cases.DeliverSkill {
		// Beside the workspace, as for claude; the agent package reads it
		// into the home before the CLI starts. The control's is empty.
		dir, err := os.MkdirTemp(filepath.Dir(sb.Dir), "sys-")
		if err != nil {
			return claude.Turn{}, err
		}
		sysFile = filepath.Join(dir, "SKILL.md")
		if err := os.WriteFile(sysFile, []byte(v.text), 0o600); err != nil {
			return claude.Turn{}, err
		}
	} else if v.skill != nil && !contains(tools, "Skill") {
		tools = append(append([]string{}, tools...), "Skill")
	}
	if err := os.MkdirAll(filepath.Dir(transcript), 0o700); err != nil {
		return claude.Turn{}, err
	}
	f, err := os.OpenFile(transcript, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return claude.Turn{}, fmt.Errorf("creating transcript: %w", err)
	}
	defer f.Close()
	w := g.redactor.NewWriter(f)
	spec := agent.TurnSpec{
		Binary: g.agentBinary, Prompt: c.Prompt, Model: v.model, Effort: v.effort, Tools: tools,
		SystemPromptFile: sysFile, Dir: sb.Dir, Home: sb.Home, BaseEnv: g.env, Stdout: w,
		Timeout: g.timeout, Grace: g.grace, BaseURL: g.baseURL,
	}
	if g.agentJail != nil {
		j := g.agentJail.With(sb.Tmp, sb.Dir, []string{sb.Dir, sb.Home}, nil)
		spec.Jail = &j
	}
	if err := g.drv.PrepareHome(spec); err != nil {
		return claude.Turn{}, err
	}
	start := time.Now()
	out, runErr := g.drv.Run(ctx, spec)
	if out.TimedOut || ctx.Err() != nil {
		sb.KillStrays()
	}
	info.DurationMS = time.Since(start).Milliseconds()
	if err := w.Flush(); err != nil && runErr == nil {
		runErr = fmt.Errorf("writing transcript: %w", err)
	}
	t := out.Turn
	info.APICalls = t.APICalls
	info.ToolCalls = nil
	for _, call := range t.Calls {
		info.ToolCalls = append(info.ToolCalls, call.Name)
	}
	info.Model = t.Model
	if len(t.AnsweredBy) > 0 {
		info.Model = t.AnsweredBy[len(t.AnsweredBy)-1]
	}
	if runErr != nil {
		return t, runErr
	}
	switch f := agents.Failure(g.agent, t, out.ExitCode); {
	case out.TimedOut:
		return t, fmt.Errorf("the generator timed out after %s", g.timeout)
	case t.APIErrorStatus == 401 || t.APIErrorStatus == 403:
		return t, fmt.Errorf("%w (HTTP %d): %s", claude.ErrCredentials, t.APIErrorStatus, agents.CredentialsAdvice(g.agent))
	case f != "" && transient(t):
		return t, fmt.Errorf("%w: %s", errTransient, g.redactor.String(f))
	case f != "":
		return t, errors.New(g.redactor.String(f))
	case strings.TrimSpace(t.Text) == "":
		return t, errors.New("the generator ended its turn with no message")
	}
	return t, nil
}
