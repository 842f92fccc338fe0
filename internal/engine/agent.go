package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/codex"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/gemini"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
)

// AgentName is an --agent value as the engine reads it: "" is claude.
func AgentName(name string) string {
	if name == "" {
		return agents.Claude
	}
	return name
}

// JudgeAgentName is the judge's agent: --judge-agent, else the registry's
// default for the driven agent and the environment.
func JudgeAgentName(judge, driven string, env []string) string {
	if judge != "" {
		return judge
	}
	return agents.DefaultJudge(AgentName(driven), env)
}

// FindAgent is name's CLI: claude's as FindClaude finds it, another's
// through the registry (the override variable, PATH, the pinned install).
func FindAgent(name string, env []string) (string, error) {
	if AgentName(name) == agents.Claude {
		return FindClaude(env)
	}
	return agents.FindBinary(name, env, PinnedDirs())
}

// agentVersion is a non-claude CLI's version (agents.Version), and the
// version vibe-test verified it on.
func agentVersion(ctx context.Context, name, binary string, env []string) (version, verified string, err error) {
	verified = map[string]string{agents.Codex: codex.VerifiedVersion, agents.Gemini: gemini.VerifiedVersion}[name]
	if verified == "" {
		return "", "", fmt.Errorf("no version check for %s", name)
	}
	version, err = agents.Version(ctx, name, binary, env)
	return version, verified, err
}

// CheckCompaction refuses a schedule that compacts under an agent that
// cannot (gemini has no compaction a client can ask for): one line naming
// the flag or field and the turn.
func CheckCompaction(name string, s *plan.Schedule, o Settings, cfgPath string) error {
	if AgentName(name) != agents.Gemini || !s.Compacts() {
		return nil
	}
	what := cfgPath + ": field \"schedule.compact_before\""
	if len(s.CompactBefore) == 0 {
		what = cfgPath + ": field \"schedule.compact_at\""
	}
	if o.CompactBefore != nil || o.CompactAt > 0 {
		what = "--compact-before"
		if o.CompactAt > 0 {
			what = "--compact-at"
		}
	}
	where := ""
	switch {
	case len(s.CompactBefore) > 0 && s.Fixed():
		where = fmt.Sprintf(" (before turn %d, probe %d)", plan.ProbeTurns[s.CompactBefore[0]-1], s.CompactBefore[0])
	case len(s.CompactBefore) > 0:
		where = fmt.Sprintf(" (before probe %d)", s.CompactBefore[0])
	case s.CompactAt > 0:
		where = fmt.Sprintf(" (at %d tokens)", s.CompactAt)
	}
	return exit.Errorf(exit.Tool, "%s asks for a compaction%s, but --agent gemini cannot compact a session: drop it, or use --agent claude or codex", what, where)
}

// coldParts are what the rubric, plan and judge calls go through.
type coldParts struct {
	agent    string
	binary   string
	hermetic bool       // claude's: a fresh home for each call
	jail     *jail.Spec // the calls' jail (nil: none)
}

// coldCaller is the cold structured caller of p: claude's (whose judge
// calls share a pool), or the registry's for codex and gemini.
func (p coldParts) caller(env, passEnv []string, retries int, timeout, grace time.Duration) (claude.Structured, *claude.Caller, error) {
	if p.agent == agents.Claude {
		c := ColdCaller(p.binary, env, p.hermetic, retries, timeout, grace)
		c.Jail = p.jail
		return c, &c, nil
	}
	c, err := agents.Cold(p.agent, agents.ColdOptions{Binary: p.binary, Env: env, PassEnv: passEnv, Retries: retries, Timeout: timeout, Grace: grace, Jail: p.jail})
	return c, nil, err
}

// SavedCold is the cold caller a saved run's judge used (for rejudge): its
// config's judge agent, found again in this environment.
func SavedCold(r *record.Run, env []string, jailSpec func(binary string, hermetic bool) *jail.Spec, timeout time.Duration) (claude.Structured, error) {
	name := record.JudgeAgentOf(r.Config)
	bin, err := FindAgent(name, env)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	p := coldParts{agent: name, binary: bin, hermetic: claude.HasCredentials(env)}
	if jailSpec != nil {
		p.jail = jailSpec(bin, p.hermetic)
	}
	c, _, err := p.caller(env, r.Config.PassEnv, r.Config.MaxRetries, timeout, DefaultGrace)
	return c, err
}
