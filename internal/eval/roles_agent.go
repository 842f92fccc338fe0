package eval

import (
	"context"
	"errors"
	"fmt"
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
		if sysFile, err = systemFile(sb, v.text); err != nil {
			return claude.Turn{}, err
		}
	} else if v.skill != nil && !contains(tools, "Skill") {
		tools = append(append([]string{}, tools...), "Skill")
	}
	f, err := createTranscript(transcript)
	if err != nil {
		return claude.Turn{}, err
	}
	defer f.Close()
	w := g.redactor.NewStreamWriter(f, agents.Pieces(g.agent)) // a secret split across pieces too
	spec := agent.TurnSpec{
		Binary: g.agentBinary, Prompt: c.Prompt, Model: v.model, Effort: v.effort, Tools: tools,
		SystemPromptFile: sysFile, Dir: sb.Dir, Home: sb.Home, BaseEnv: g.env, Stdout: w,
		Timeout: g.timeout, Grace: g.grace, BaseURL: g.baseURL,
	}
	if g.deliver == cases.DeliverSkill && v.skill != nil {
		spec.SkillNames = []string{v.skill.Listed()}
	}
	if sb.Tmp != "" {
		// As a conversation's turn: without a jail (whose /tmp is the
		// sandbox's) the CLI's and its commands' temp files went to the
		// machine's /tmp.
		spec.Extra = append(spec.Extra, "TMPDIR="+sb.Tmp)
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
	turn, err := g.settle(out, runErr, agents.Failure(g.agent, out.Turn, out.ExitCode), agents.CredentialsAdvice(g.agent), info)
	if g.deliver == cases.DeliverSkill && v.skill != nil && ctx.Err() == nil && !errors.Is(err, claude.ErrCredentials) {
		// The CLI never listed the skill (codex says so on its stderr):
		// the message, or the failure, came without it, and is no
		// candidate's; nor would any other be (the eval stops on it).
		if why := agents.SkillLoadFailure(g.agent, out.Stderr, v.skill.Name); why != "" {
			err = agents.SkillNotLoaded(g.agent, g.redactor.String(why))
		}
	}
	return turn, err
}
