package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/conversation"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/fillers"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/term"
)

// ResumeSettings are what a resumed run may change; everything else comes
// from its run.json.
type ResumeSettings struct {
	TurnRetries  int
	RetryBackoff time.Duration
	// MaxBudgetUSD, when set, replaces the run's budget (counting what it
	// already spent).
	MaxBudgetUSD *float64
	// Shared, when set, is the suite's limit and budget (see
	// Settings.Shared).
	Shared *Shared
}

// Finished says whether every conversation of a run came to its end, so
// resuming has nothing left to do. An error, an interrupt or a spent budget
// leaves work to resume.
func Finished(r *record.Run) bool {
	if r.Error != "" || len(r.Conversations) == 0 {
		return false
	}
	if r.Status != record.StatusCompleted && r.Status != record.StatusBaselineFailed {
		return false
	}
	for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh, r.Controls} {
		for _, c := range arm {
			if c.Status != record.StatusCompleted && c.Status != record.StatusBaselineFailed {
				return false
			}
			if c.Status == record.StatusCompleted && c.Unjudged() {
				return false // a judge error to judge again
			}
		}
	}
	return true
}

// Resume continues a saved run: each unfinished conversation and fresh
// triple goes on from its last completed turn with its saved session and
// config dir (in the run's own jail), and unjudged turns are judged. r is
// the run loaded from dir.
func Resume(ctx context.Context, dir string, r *record.Run, rs ResumeSettings, stdio IO, h Hooks) (*record.Run, error) {
	release, err := LockFolder(dir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	defer release()
	if r.Plan == nil || len(r.Conversations) == 0 {
		return nil, exit.Errorf(exit.Tool, "%s: the run stopped before its conversations began (no plan in run.json): start a new run", dir)
	}
	// As a new run does, before anything is paid for: every sandbox a
	// resume makes (a fresh probe's, a conversation's restarted) would be
	// refused there, each an error of its own.
	if p := sandbox.TempDirProblem(); p != "" {
		return nil, exit.Errorf(exit.Tool, "%s", p)
	}
	sk, err := skill.LoadAs(r.Skill.Path, record.AgentOf(r.Config))
	if err != nil {
		return nil, exit.With(exit.Tool, fmt.Errorf("resume needs the run's skill: %w", err))
	}
	if sk.Hash != r.Skill.Hash {
		return nil, exit.Errorf(exit.Tool, "%s: the skill changed since the run began (hash %.12s, now %.12s): resuming would mix two versions; start a new run", r.Skill.Path, r.Skill.Hash, sk.Hash)
	}
	if r.Plan.FixtureHash != "" {
		now, err := fixtureHash(r.Plan, dir, r.Config.RubricFile, CacheDir("", stdio.Env))
		if err != nil {
			return nil, exit.With(exit.Tool, fmt.Errorf("resume needs the run's fixture: %w", err))
		}
		if now != r.Plan.FixtureHash {
			return nil, exit.Errorf(exit.Tool, "%s: the fixture changed since the run began (hash %.12s, now %.12s): resuming would give the conversations left another project; start a new run", r.Plan.Fixture, r.Plan.FixtureHash, now)
		}
	}
	pool, err := fillerPool(r.Plan.Schedule, r.Config.FillersDir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	byID := map[string]fillers.Passage{}
	for _, p := range pool {
		byID[p.ID] = p
	}
	picks := make([][]fillers.Passage, len(r.Conversations))
	for i, conv := range r.Conversations {
		for _, id := range conv.Fillers {
			p, ok := byID[id]
			if !ok {
				return nil, exit.Errorf(exit.Tool, "%s: conversation %d used filler %q, which this vibe-test does not have", dir, conv.Index, id)
			}
			picks[i] = append(picks[i], p)
		}
	}
	binary, hermetic, timeout, err := SavedRunSetup(dir, r, stdio.Env, "resume it")
	if err != nil {
		return nil, err
	}
	o := Settings{
		Concurrency: r.Config.Concurrency, TurnTimeout: timeout, Grace: DefaultGrace, MaxRetries: r.Config.MaxRetries,
		KeepSandbox: r.Config.KeepSandbox, PassEnv: r.Config.PassEnv, MaxBudgetUSD: r.Config.MaxBudgetUSD,
		TurnRetries: rs.TurnRetries, RetryBackoff: rs.RetryBackoff, Shared: rs.Shared,
	}
	if rs.MaxBudgetUSD != nil {
		o.MaxBudgetUSD = *rs.MaxBudgetUSD
		r.Config.MaxBudgetUSD = o.MaxBudgetUSD
	}
	// The run's own jail: a jailed run is never continued without one.
	mode := ""
	switch r.Jail {
	case jail.Bubblewrap:
		mode = IsolationJail
	case jail.None:
		mode = IsolationNone
	}
	jailKind, jailNote, err := ChooseJail(ctx, mode, stdio.Env)
	if err != nil {
		// An interrupt while the jail is tried is an interrupt (exit
		// 130), not a jail that cannot start: nothing was changed yet.
		if ctx.Err() != nil {
			return nil, exit.Errorf(exit.Interrupted, "interrupted before the run went on; `vibe-test resume %s` continues it", term.Arg(dir))
		}
		return nil, exit.With(exit.Tool, err)
	}
	WarnNoJail(stdio.Stderr, jailKind, jailNote)
	spec := JailSpec(jailKind, stdio.Env, binary, hermetic, claude.AuthorConfigDir(),
		absDir(dir), sk.Dir, filepath.Dir(r.Config.ConfigFile), CacheDir("", stdio.Env))
	// The run's own agents: the driven one, and the judge's.
	driven, judgeAgent := record.AgentOf(r.Config), record.JudgeAgentOf(r.Config)
	var drv agent.Agent
	if driven != agents.Claude {
		drv = agents.For(driven, r.Config.MaxRetries)
	}
	cold := coldParts{agent: judgeAgent, binary: binary, hermetic: hermetic, jail: spec}
	if judgeAgent != driven {
		if cold.binary, err = FindAgent(judgeAgent, stdio.Env); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		cold.hermetic = judgeAgent != agents.Claude || claude.HasCredentials(stdio.Env)
		cold.jail = JailSpec(jailKind, stdio.Env, cold.binary, cold.hermetic, claude.AuthorConfigDir(),
			absDir(dir), sk.Dir, filepath.Dir(r.Config.ConfigFile), CacheDir("", stdio.Env))
	}
	sess := openJournal(r, dir)
	defer sess.close()
	_ = sess.commit(func() { r.Status, r.Error, r.Jail, r.JailNote = record.StatusRunning, "", jailKind, jailNote })
	// The run's own session mode: a run recorded before the modes ran as
	// resume, and goes on that way.
	fmt.Fprintf(stdio.Stderr, "vibe-test: resuming %s (session %s, as recorded)\n", dir, record.SessionModeOf(r.Config))
	r, err = drive(ctx, sess, driveInput{
		binary: binary, env: stdio.Env, hermetic: hermetic, jail: spec, agent: drv, cold: cold, skill: sk, plan: r.Plan, picks: picks,
		cacheDir: CacheDir("", stdio.Env), opts: o, pool: pool, seed: r.Plan.FillerSeed,
	}, stdio, h)
	if err != nil {
		return nil, err
	}
	return r, err
}

// SavedRunSetup is what continuing or re-judging a saved run needs: the
// CLI, the run's isolation (the same credentials must be set, or the
// sessions and config dirs would not match), and its turn timeout.
func SavedRunSetup(dir string, r *record.Run, env []string, purpose string) (binary string, hermetic bool, timeout time.Duration, err error) {
	name := record.AgentOf(r.Config)
	if err := agents.Check("agent", name); err != nil {
		return "", false, 0, exit.Errorf(exit.Tool, "%s: run.json config.agent: %v", dir, err)
	}
	if binary, err = FindAgent(name, env); err != nil {
		return "", false, 0, exit.With(exit.Tool, err)
	}
	hermetic = r.Isolation == "hermetic"
	// Another agent always ran with a fresh home, whatever keys are set.
	if name == agents.Claude && hermetic != claude.HasCredentials(env) {
		return "", false, 0, exit.Errorf(exit.Tool, "%s: the run used isolation %q; set the same credentials (ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, or neither) to %s", dir, r.Isolation, purpose)
	}
	timeout, perr := time.ParseDuration(r.Config.TurnTimeout)
	if perr != nil || timeout <= 0 {
		timeout = conversation.DefaultTurnTimeout
	}
	return binary, hermetic, timeout, nil
}

func absDir(dir string) string {
	if dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
