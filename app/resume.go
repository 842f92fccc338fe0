package app

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/vibe-test/vibe-test/claude"
	"github.com/vibe-test/vibe-test/fillers"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/jail"
	"github.com/vibe-test/vibe-test/probe"
	"github.com/vibe-test/vibe-test/result"
	"github.com/vibe-test/vibe-test/skill"
)

func resumeFlags() []cli.Flag {
	return append(outputFlags(),
		&cli.Float64Flag{Name: "max-budget-usd", Usage: "the run's budget, counting what it already spent", DefaultText: "the run's own"},
		&cli.IntFlag{Name: "turn-retries", Value: 3, Usage: "rerun a turn this often after a transient API error"},
		&cli.DurationFlag{Name: "retry-backoff", Value: 10 * time.Second, Usage: "the first wait before rerunning a turn"},
	)
}

// resumeCommand continues an interrupted or crashed run: each unfinished
// conversation goes on from its last completed turn with its saved session
// and config dir, and unjudged turns are judged.
func resumeCommand(c *cli.Context, stdio IO) error {
	if c.NArg() != 1 {
		return exit.Errorf(exit.Tool, "resume: expected one RUN_DIR, got %d arguments", c.NArg())
	}
	dir := c.Args().First()
	r, err := result.Load(dir)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	if finished(r) {
		fmt.Fprintf(stdio.Stdout, "%s: nothing to resume: the run finished (status %s); `%s report %s` shows it again\n", dir, r.Status, stdio.prog(), dir)
		return nil
	}
	if isDemoRun(r) {
		return exit.Errorf(exit.Tool, "%s: a demo run cannot be resumed (its skill and scripted model existed only while it ran): run `%s demo` again", dir, stdio.prog())
	}
	if r.Plan == nil || len(r.Conversations) == 0 {
		return exit.Errorf(exit.Tool, "%s: the run stopped before its conversations began (no plan in run.json): start a new run", dir)
	}
	sk, err := skill.Load(r.Skill.Path)
	if err != nil {
		return exit.With(exit.Tool, fmt.Errorf("resume needs the run's skill: %w", err))
	}
	if sk.Hash != r.Skill.Hash {
		return exit.Errorf(exit.Tool, "%s: the skill changed since the run began (hash %.12s, now %.12s): resuming would mix two versions; start a new run", r.Skill.Path, r.Skill.Hash, sk.Hash)
	}
	pool := fillers.Builtin()
	if r.Config.FillersDir != "" {
		own, err := fillers.LoadDir(r.Config.FillersDir)
		if err != nil {
			return exit.With(exit.Tool, err)
		}
		pool = append(pool, own...)
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
				return exit.Errorf(exit.Tool, "%s: conversation %d used filler %q, which this vibe-test does not have", dir, conv.Index, id)
			}
			picks[i] = append(picks[i], p)
		}
	}
	binary, hermetic, timeout, err := savedRunSetup(dir, r, stdio.Env, "resume it")
	if err != nil {
		return err
	}
	o := Options{
		Concurrency: r.Config.Concurrency, TurnTimeout: timeout, Grace: defaultGrace, MaxRetries: r.Config.MaxRetries,
		KeepSandbox: r.Config.KeepSandbox, PassEnv: r.Config.PassEnv, MaxBudgetUSD: r.Config.MaxBudgetUSD,
		TurnRetries: c.Int("turn-retries"), RetryBackoff: c.Duration("retry-backoff"),
	}
	if c.IsSet("max-budget-usd") {
		o.MaxBudgetUSD = c.Float64("max-budget-usd")
		r.Config.MaxBudgetUSD = o.MaxBudgetUSD
	}
	// The run's own jail: a jailed run is never continued without one.
	mode := ""
	switch r.Jail {
	case jail.Bubblewrap:
		mode = isolationJail
	case jail.None:
		mode = isolationNone
	}
	jailKind, jailNote, err := chooseJail(c.Context, mode, stdio.Env)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	warnNoJail(stdio.Stderr, jailKind, jailNote)
	spec := jailSpec(jailKind, stdio.Env, binary, hermetic, claude.AuthorConfigDir(),
		absDir(dir), sk.Dir, filepath.Dir(r.Config.ConfigFile), cacheDir(Options{}, stdio.Env))
	sess := &session{run: r, dir: dir}
	sess.update(func() { r.Status, r.Error, r.Jail, r.JailNote = result.StatusRunning, "", jailKind, jailNote })
	fmt.Fprintf(stdio.Stderr, "vibe-test: resuming %s\n", dir)
	r, err = drive(c.Context, sess, driveInput{
		binary: binary, env: stdio.Env, hermetic: hermetic, jail: spec, skill: sk, plan: r.Plan, picks: picks,
		cacheDir: cacheDir(Options{}, stdio.Env), opts: o, out: outputFrom(c, stdio), pool: pool, seed: r.Plan.FillerSeed,
	}, stdio)
	if err != nil {
		return err
	}
	return outcomeError(r)
}

// finished says whether every conversation of a run came to its end, so
// resuming has nothing left to do. An error, an interrupt or a spent budget
// leaves work to resume.
func finished(r *result.Run) bool {
	if r.Error != "" || len(r.Conversations) == 0 {
		return false
	}
	if r.Status != result.StatusCompleted && r.Status != result.StatusBaselineFailed {
		return false
	}
	for _, arm := range [][]result.Conversation{r.Conversations, r.Fresh, r.Controls} {
		for _, c := range arm {
			if c.Status != result.StatusCompleted && c.Status != result.StatusBaselineFailed {
				return false
			}
		}
	}
	return true
}

// savedRunSetup is what continuing or re-judging a saved run needs: the
// CLI, the run's isolation (the same credentials must be set, or the
// sessions and config dirs would not match), and its turn timeout.
func savedRunSetup(dir string, r *result.Run, env []string, purpose string) (binary string, hermetic bool, timeout time.Duration, err error) {
	if binary, err = findClaude(env); err != nil {
		return "", false, 0, exit.With(exit.Tool, err)
	}
	hermetic = r.Isolation == "hermetic"
	if hermetic != claude.HasCredentials(env) {
		return "", false, 0, exit.Errorf(exit.Tool, "%s: the run used isolation %q; set the same credentials (ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, or neither) to %s", dir, r.Isolation, purpose)
	}
	timeout, perr := time.ParseDuration(r.Config.TurnTimeout)
	if perr != nil || timeout <= 0 {
		timeout = probe.DefaultTurnTimeout
	}
	return binary, hermetic, timeout, nil
}

func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
