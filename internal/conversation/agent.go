package conversation

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/codex"
	"github.com/vibe-test/vibe-test/internal/gemini"
	"github.com/vibe-test/vibe-test/internal/readfile"
	"github.com/vibe-test/vibe-test/internal/sandbox"
)

// The driver's path for an agent other than claude (Driver.Agent set):
// the skill goes where that CLI finds project skills, its hermetic config
// is written into the sandbox's home, and each turn is an agent.Agent
// Run (resume mode) or a Send to its agent.Live (interactive mode).

// agentName is the driven CLI's --agent value.
func (d *Driver) agentName() string {
	if d.Agent == nil {
		return agents.Claude
	}
	return d.Agent.Name()
}

// turnSpec is one turn of the agent in sb: its prompt, the session to
// resume, the stream's writer.
func (d *Driver) turnSpec(sb *sandbox.Sandbox, prompt, resume string, w io.Writer) (agent.TurnSpec, error) {
	spec := agent.TurnSpec{
		Binary: d.Binary, Prompt: prompt, Resume: resume, Model: d.Model, Tools: d.Tools,
		Dir: sb.Dir, Home: sb.Home, BaseEnv: d.BaseEnv, PassEnv: d.PassEnv, Stdout: w,
		Timeout: d.TurnTimeout, Grace: d.Grace, BaseURL: d.BaseURL,
	}
	if d.Skill != nil {
		spec.SkillNames = []string{d.Skill.Listed()}
	}
	if sb.Home == "" {
		return spec, fmt.Errorf("the %s conversation has no home folder of its own", d.agentName())
	}
	if sb.Tmp != "" {
		spec.Extra = append(spec.Extra, "TMPDIR="+sb.Tmp)
	}
	if d.Jail != nil {
		j, err := d.jailFor(sb)
		if err != nil {
			return spec, err
		}
		spec.Jail = &j
	}
	// The hermetic config (provider, approvals, telemetry off, tools) is
	// written before every try: it is the run's, whatever a turn changed.
	if err := d.Agent.PrepareHome(spec); err != nil {
		return spec, fmt.Errorf("preparing the %s home: %w", d.agentName(), err)
	}
	return spec, nil
}

// agentRun runs one invocation of the agent: a compaction (kind compact),
// or a turn, in its own process or on the live one.
func (d *Driver) agentRun(ctx context.Context, sb *sandbox.Sandbox, resume, prompt string, compact bool, w io.Writer, live *liveSession) (claude.Outcome, error) {
	spec, err := d.turnSpec(sb, prompt, resume, w)
	if err != nil {
		return claude.Outcome{}, err
	}
	if live != nil {
		return live.sendAgent(ctx, d, spec, compact)
	}
	if compact {
		a, ok := d.Agent.(codex.Agent)
		if !ok {
			return claude.Outcome{}, fmt.Errorf("%s cannot compact a session", d.agentName())
		}
		return a.Compact(ctx, spec)
	}
	return d.Agent.Run(ctx, spec)
}

// sendAgent is send for a non-claude agent: a new process (resuming the
// conversation's session) when there is none, then one message, or a
// compaction of the live thread.
func (l *liveSession) sendAgent(ctx context.Context, d *Driver, spec agent.TurnSpec, compact bool) (claude.Outcome, error) {
	if l.a == nil {
		s, err := d.Agent.StartLive(spec)
		if err != nil {
			return claude.Outcome{}, err
		}
		l.a = s
	}
	var out claude.Outcome
	var err error
	if compact {
		c, ok := l.a.(*codex.Live)
		if !ok {
			return claude.Outcome{}, fmt.Errorf("%s cannot compact a session", d.agentName())
		}
		out, err = c.Compact(ctx, spec.Stdout, spec.Timeout)
	} else {
		out, err = l.a.Send(ctx, spec.Prompt, spec.Stdout, spec.Timeout)
	}
	if err != nil || out.TimedOut || agents.Failure(d.agentName(), out.Turn, out.ExitCode) != "" {
		l.a.Close()
		l.a = nil
	}
	return out, err
}

// agentSessionFile is the file the agent keeps the session in: codex's
// rollout, gemini's session file, both appended a line per record.
func (d *Driver) agentSessionFile(sb *sandbox.Sandbox, id string) (string, error) {
	if !sessionID.MatchString(id) {
		return "", fmt.Errorf("session id %q is not one the CLI makes", id)
	}
	if sb.Home == "" {
		return "", fmt.Errorf("no home folder for session %s", id)
	}
	switch d.agentName() {
	case agents.Codex:
		return codex.RolloutFile(codex.CodexHome(sb.Home), id)
	case agents.Gemini:
		return gemini.SessionFile(sb.Home, id)
	}
	return "", fmt.Errorf("no session file known for %s", d.agentName())
}

// sessionCost is the session's running cost after a turn whose CLI
// reported total: codex's figure is the thread's running total, as
// claude's total_cost_usd is; gemini's is the turn's own (from the session
// records the turn added), so it is added to where the last turn left it.
func (d *Driver) sessionCost(total, before float64) float64 {
	if d.agentName() == agents.Gemini {
		return before + total
	}
	return total
}

// parseSaved reads a saved transcript with the driven CLI's parser.
func (d *Driver) parseSaved(path string) (claude.Turn, error) {
	f, err := readfile.Open(filepath.Clean(path)) // a FIFO would block resume for ever
	if err != nil {
		return claude.Turn{}, err
	}
	defer f.Close()
	return agents.ParseTurn(d.agentName(), f)
}
