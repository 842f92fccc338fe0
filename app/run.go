package app

import (
	"context"
	"errors"
	"fmt"
	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/vibe-test/vibe-test/chart"
	"github.com/vibe-test/vibe-test/claude"
	"github.com/vibe-test/vibe-test/fillers"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/term"
	"github.com/vibe-test/vibe-test/judge"
	"github.com/vibe-test/vibe-test/plan"
	"github.com/vibe-test/vibe-test/probe"
	"github.com/vibe-test/vibe-test/report"
	"github.com/vibe-test/vibe-test/result"
	"github.com/vibe-test/vibe-test/rubric"
	"github.com/vibe-test/vibe-test/skill"
)

// Options of one run; flags map onto these one to one.
type Options struct {
	SkillPath      string
	ConfigPath     string
	RubricPath     string
	OutDir         string
	Conversations  int
	Concurrency    int
	Model          string
	JudgeModel     string
	NoBaselineGate bool
	KeepSandbox    bool
	TurnTimeout    time.Duration
	Grace          time.Duration
	MaxRetries     int
	FillersDir     string
	Seed           int64
	PassEnv        []string
	// AllowedTools are tools granted beyond the base list and the skill's
	// allowed-tools (--allowed-tools).
	AllowedTools []string
	Args         []string
	// Rule sets the exit code (result.RuleDilutedVsFresh or
	// result.RuleAnyProbeFailed).
	Rule         string
	Alpha        float64
	JudgeRepeats int
	Controls     []string
	// Sequential mode (--until-decided).
	UntilDecided     bool
	MaxConversations int
	// Effect is the drop in probe pass share the run aims to detect.
	Effect       float64
	MaxBudgetUSD float64
	TurnRetries  int
	RetryBackoff time.Duration
	Output       output
	// Isolation is --isolation: "jail", "none", or "" for the jail where
	// bubblewrap works.
	Isolation string
	// CacheDir holds cached rubrics ("" = $VIBE_TEST_CACHE_DIR or the
	// user's cache folder).
	CacheDir string
}

func runFlagSet() []cli.Flag {
	return append(outputFlags(),
		&cli.StringFlag{Name: "config", Usage: "the run's config `FILE` (tasks, fixture, models)", DefaultText: "vibe-test.yaml beside SKILL.md, if any"},
		&cli.StringFlag{Name: "rubric", Usage: "use a reviewed rubric `FILE` instead of extracting one"},
		&cli.StringFlag{Name: "out", Usage: "the run `folder`", DefaultText: "./vibe-runs/<UTC time>-<skill>"},
		&cli.IntFlag{Name: "conversations", Value: 2, Usage: "independent conversations to run"},
		&cli.IntFlag{Name: "concurrency", Usage: "conversations run at once", DefaultText: "all"},
		&cli.StringFlag{Name: "model", Usage: "the agent's model, resolved once and pinned for the run", DefaultText: "the config's, else the CLI's"},
		&cli.StringSliceFlag{Name: "allowed-tools", Usage: "also let the agent use these `tools` (space- or comma-separated, patterns such as \"Bash(git diff:*)\" kept whole; repeatable)"},
		&cli.StringFlag{Name: "judge-model", Usage: "the rubric, plan and judge model", DefaultText: "the config's, else the CLI's"},
		&cli.BoolFlag{Name: "no-baseline-gate", Usage: "go on when turn 1 fails (stamped loudly on every artifact)"},
		&cli.BoolFlag{Name: "keep-sandbox", Usage: "keep each conversation's sandbox folder"},
		&cli.DurationFlag{Name: "turn-timeout", Value: probe.DefaultTurnTimeout, Usage: "stop a turn that runs longer (SIGTERM, then SIGKILL)"},
		&cli.IntFlag{Name: "max-retries", Value: 2, Usage: "CLAUDE_CODE_MAX_RETRIES for every claude call"},
		&cli.StringFlag{Name: "fillers", Usage: "a `folder` of your own filler passages (*.md, *.txt) added to the built-in ones"},
		&cli.Int64Flag{Name: "seed", Usage: "filler selection seed, recorded in plan.json", DefaultText: "random"},
		&cli.StringSliceFlag{Name: "pass-env", Usage: "also pass this environment `variable` to the agent"},
		&cli.StringFlag{Name: "rule", Value: result.RuleDilutedVsFresh, Usage: "what sets exit 1: `diluted-vs-fresh|any-probe-failed` (the first when the probes pass significantly less often diluted than fresh, at --alpha; the second when any probe failed after a passed baseline, not a test)"},
		&cli.StringFlag{Name: "gate", Hidden: true, Usage: "replaced by --rule (any = any-probe-failed, significant = diluted-vs-fresh)"},
		&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "the false-alarm rate of --rule diluted-vs-fresh"},
		&cli.Float64Flag{Name: "effect", Value: result.DefaultEffect, Usage: "the drop in probe pass rate (0-1) worth catching: a run that could catch it with 80% power and did not says held, otherwise not enough evidence"},
		&cli.StringSliceFlag{Name: "control", Usage: "also run a control: `no-skill` (same schedule, no skill installed); repeatable. (Each probe is always asked fresh as well: that is the comparison.)"},
		&cli.BoolFlag{Name: "until-decided", Usage: "add --conversations (with their fresh sessions) at a time until decay is shown, the skill held, or --max-conversations is reached"},
		&cli.IntFlag{Name: "max-conversations", Value: 20, Usage: "the cap of --until-decided"},
		&cli.Float64Flag{Name: "noise-floor", Hidden: true},
		&cli.Float64Flag{Name: "beta", Hidden: true},
		&cli.IntFlag{Name: "judge-repeats", Value: 1, Usage: "judge each turn this many times; disagreeing verdicts make the turn uncertain"},
		&cli.Float64Flag{Name: "max-budget-usd", Usage: "stop starting turns once the run has spent this much (agent, rubric, plan and judge)", DefaultText: "no limit"},
		&cli.IntFlag{Name: "turn-retries", Value: 3, Usage: "rerun a turn this often after the CLI's own retries give up on a transient API error"},
		&cli.DurationFlag{Name: "retry-backoff", Value: 10 * time.Second, Usage: "the first wait before rerunning a turn (doubles each time)"},
		&cli.StringFlag{Name: "isolation", Usage: "`jail|none`: each claude process in a bubblewrap jail (an error where none can start), or none (the agent sees what you see)", DefaultText: "the jail where bubblewrap works"},
	)
}

// optionsFrom reads the flags; warn hears about flags that still work but
// changed meaning.
func optionsFrom(c *cli.Context, warn io.Writer) (Options, error) {
	o := Options{
		SkillPath: c.Args().First(), ConfigPath: c.String("config"), RubricPath: c.String("rubric"),
		OutDir: c.String("out"), Conversations: c.Int("conversations"), Concurrency: c.Int("concurrency"),
		Model: c.String("model"), JudgeModel: c.String("judge-model"),
		NoBaselineGate: c.Bool("no-baseline-gate"), KeepSandbox: c.Bool("keep-sandbox"),
		TurnTimeout: c.Duration("turn-timeout"), MaxRetries: c.Int("max-retries"),
		FillersDir: c.String("fillers"), Seed: c.Int64("seed"), PassEnv: c.StringSlice("pass-env"),
		AllowedTools: splitTools(c.StringSlice("allowed-tools")),
		Rule:         c.String("rule"), Alpha: c.Float64("alpha"), JudgeRepeats: c.Int("judge-repeats"), Controls: c.StringSlice("control"),
		UntilDecided: c.Bool("until-decided"), MaxConversations: c.Int("max-conversations"),
		Effect:       c.Float64("effect"),
		MaxBudgetUSD: c.Float64("max-budget-usd"), TurnRetries: c.Int("turn-retries"), RetryBackoff: c.Duration("retry-backoff"),
		Isolation: c.String("isolation"), Grace: defaultGrace,
	}
	if c.NArg() > 1 {
		return o, fmt.Errorf("one skill per run: got %d paths (%s)", c.NArg(), strings.Join(c.Args().Slice(), ", "))
	}
	if o.Conversations < 1 || o.Conversations > 200 {
		return o, fmt.Errorf("--conversations: %d, expected 1 to 200", o.Conversations)
	}
	if o.Concurrency < 0 {
		return o, fmt.Errorf("--concurrency: %d, expected 0 (all) or more", o.Concurrency)
	}
	if o.TurnTimeout <= 0 {
		return o, fmt.Errorf("--turn-timeout: %s, expected a positive duration", o.TurnTimeout)
	}
	if o.MaxRetries < 0 || o.MaxRetries > 20 {
		return o, fmt.Errorf("--max-retries: %d, expected 0 to 20", o.MaxRetries)
	}
	for _, name := range []string{"noise-floor", "beta"} {
		if c.IsSet(name) {
			return o, fmt.Errorf("--%s: no longer used: --until-decided now spends --alpha over its looks and needs no noise floor or miss rate (see README, \"Stopping early\")", name)
		}
	}
	if g := c.String("gate"); g != "" {
		if c.IsSet("rule") {
			return o, fmt.Errorf("--gate: replaced by --rule; give only --rule")
		}
		switch g {
		case result.GateAny:
			o.Rule = result.RuleAnyProbeFailed
		case result.GateSignificant:
			o.Rule = result.RuleDilutedVsFresh
		default:
			return o, fmt.Errorf("--gate: %q, expected %q or %q (and --gate is replaced by --rule)", g, result.GateAny, result.GateSignificant)
		}
		fmt.Fprintf(warn, "warning: --gate %s is replaced by --rule %s\n", g, o.Rule)
	}
	if o.Rule != result.RuleDilutedVsFresh && o.Rule != result.RuleAnyProbeFailed {
		return o, fmt.Errorf("--rule: %q, expected %q or %q", o.Rule, result.RuleDilutedVsFresh, result.RuleAnyProbeFailed)
	}
	if c.IsSet("alpha") && o.Rule != result.RuleDilutedVsFresh {
		return o, fmt.Errorf("--alpha only applies with --rule %s (the any-probe-failed rule is not a test and has no level)", result.RuleDilutedVsFresh)
	}
	if c.IsSet("max-conversations") && !o.UntilDecided {
		return o, fmt.Errorf("--max-conversations only applies with --until-decided")
	}
	if !(o.Effect > 0 && o.Effect <= 1) {
		return o, fmt.Errorf("--effect: %v, expected a drop between 0 and 1 (0.3 = 30 points)", o.Effect)
	}
	if o.UntilDecided {
		if o.Rule != result.RuleDilutedVsFresh {
			return o, fmt.Errorf("--until-decided needs --rule %s", result.RuleDilutedVsFresh)
		}
		if o.MaxConversations < o.Conversations {
			return o, fmt.Errorf("--max-conversations: %d, expected at least --conversations (%d, the batch size)", o.MaxConversations, o.Conversations)
		}
		if o.MaxConversations > 200 {
			return o, fmt.Errorf("--max-conversations: %d, expected at most 200", o.MaxConversations)
		}
		if len(o.Controls) > 0 {
			return o, fmt.Errorf("--control and --until-decided do not go together: controls are sized by --conversations")
		}
	}
	if o.Alpha <= 0 || o.Alpha >= 0.5 {
		return o, fmt.Errorf("--alpha: %v, expected a level between 0 and 0.5", o.Alpha)
	}
	var controls []string
	for _, k := range o.Controls {
		switch k {
		case result.ControlNoSkill:
			controls = append(controls, k)
		case result.ControlUndiluted:
			// Every run asks each probe fresh now; accepted so old CI lines
			// keep working.
			fmt.Fprintln(warn, "note: --control undiluted is now part of every run (the fresh arm); the flag is ignored")
		default:
			return o, fmt.Errorf("--control: %q, expected %q", k, result.ControlNoSkill)
		}
	}
	o.Controls = controls
	if o.JudgeRepeats < 1 || o.JudgeRepeats > 9 {
		return o, fmt.Errorf("--judge-repeats: %d, expected 1 to 9", o.JudgeRepeats)
	}
	if o.MaxBudgetUSD < 0 {
		return o, fmt.Errorf("--max-budget-usd: %v, expected a positive amount", o.MaxBudgetUSD)
	}
	if o.Isolation != "" && o.Isolation != isolationJail && o.Isolation != isolationNone {
		return o, fmt.Errorf("--isolation: %q, expected %q or %q", o.Isolation, isolationJail, isolationNone)
	}
	if o.TurnRetries < 0 || o.TurnRetries > 10 {
		return o, fmt.Errorf("--turn-retries: %d, expected 0 to 10", o.TurnRetries)
	}
	if !c.IsSet("seed") {
		o.Seed = rand.Int64N(1 << 31)
	}
	return o, nil
}

func runCommand(c *cli.Context, stdio IO) error {
	o, err := optionsFrom(c, stdio.Stderr)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	o.Args = c.Args().Slice()
	o.Output = outputFrom(c, stdio)
	r, err := Execute(c.Context, o, stdio)
	if err != nil {
		return err
	}
	return outcomeError(r)
}

// outcomeError turns a finished run's outcome into the exit code.
func outcomeError(r *result.Run) error {
	if r.Outcome.Exit == exit.OK {
		return nil
	}
	return &exit.Error{Code: r.Outcome.Exit, Err: errors.New(r.Outcome.Verdict)}
}

// Execute runs the whole measurement and writes the run folder. An error
// means the tool could not do its job (the run folder, if made, holds what
// was done); a finished run's verdict is in its Outcome.
func Execute(ctx context.Context, o Options, stdio IO) (*result.Run, error) {
	sk, err := skill.Load(o.SkillPath)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	cfg, cfgPath, err := loadConfig(o, sk)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	var reviewed *rubric.Rubric
	if o.RubricPath != "" {
		if reviewed, err = rubric.Load(o.RubricPath); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
	}
	pool := fillers.Builtin()
	if o.FillersDir != "" {
		own, err := fillers.LoadDir(o.FillersDir)
		if err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		pool = append(pool, own...)
	}
	if err := checkOutDir(o.OutDir); err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	binary, err := findClaude(stdio.Env)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	version, err := claude.Version(ctx, binary, claude.Env(stdio.Env, claude.EnvOptions{}))
	if err != nil {
		return nil, exit.Errorf(exit.Tool, "checking the claude CLI: %v", err)
	}
	if claude.OlderThan(version, claude.MinVersion) {
		return nil, exit.Errorf(exit.Tool, "%s is claude %s, too old for the flags vibe-test needs (%s or newer): install the pinned version with `npm install -g @anthropic-ai/claude-code@%s`", binary, version, claude.MinVersion, claude.VerifiedVersion)
	}
	jailKind, jailNote, err := chooseJail(ctx, o.Isolation, stdio.Env)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	hermetic := claude.HasCredentials(stdio.Env)
	model, judgeModel := o.Model, o.JudgeModel
	modelSource := "flag"
	if cfg != nil {
		if model == "" && cfg.Model != "" {
			model, modelSource = cfg.Model, "config"
		}
		if judgeModel == "" {
			judgeModel = cfg.JudgeModel
		}
	}
	if model == "" {
		modelSource = "cli-default"
	}
	// Pin the agent model once: every turn passes the resolved name, so a
	// default that moves between turns (a new default, a plan limit) cannot
	// change the agent mid-run. Resolving makes no model call.
	// Resolved in the jail the run will use (the run folder does not exist
	// yet, so it has nothing to hide).
	resolver := coldCaller(binary, stdio.Env, hermetic, o.MaxRetries, time.Minute, o.Grace)
	resolver.Jail = jailSpec(jailKind, stdio.Env, binary, hermetic, claude.AuthorConfigDir(), sk.Dir, filepath.Dir(cfgPath), cacheDir(o, stdio.Env))
	resolved, err := resolver.ResolveModel(ctx, model)
	if err != nil {
		if ctx.Err() != nil {
			return nil, exit.Errorf(exit.Interrupted, "interrupted before the run began")
		}
		return nil, exit.Errorf(exit.Tool, "resolving the agent model (%s): %v", modelName(model), err)
	}
	modelAsked := ""
	if model != "" && model != resolved {
		modelAsked = model
	}
	tools := claude.AgentTools(sk.AllowedTools, o.AllowedTools)
	notGranted := claude.NotGranted(append(append([]string{}, sk.AllowedTools...), o.AllowedTools...))
	for _, w := range sk.Warnings {
		fmt.Fprintf(stdio.Stderr, "warning: %s\n", w)
	}
	for _, t := range notGranted {
		fmt.Fprintf(stdio.Stderr, "warning: the agent will not have the tool %s; a skill step that needs it will fail\n", t)
	}
	outDir, err := makeOutDir(o.OutDir, sk.Name)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	spec := jailSpec(jailKind, stdio.Env, binary, hermetic, claude.AuthorConfigDir(),
		outDir, sk.Dir, filepath.Dir(cfgPath), cacheDir(o, stdio.Env))
	run := &result.Run{
		SchemaVersion: result.SchemaVersion,
		Status:        result.StatusRunning,
		StartedAt:     time.Now().UTC(),
		Versions: result.Versions{
			VibeTest: Version, Claude: version, ClaudeVerified: claude.VerifiedVersion,
			ClaudeMismatch: version != claude.VerifiedVersion,
			RubricPrompt:   rubric.PromptVersion, JudgePrompt: judge.PromptVersion, RunSchema: result.SchemaVersion,
		},
		Skill: result.Skill{Name: sk.Name, DeclaredName: sk.DeclaredName, Path: sk.Path, Hash: sk.Hash,
			Warnings: sk.Warnings, ToolsNotGranted: notGranted},
		Config: result.Config{
			Conversations: o.Conversations, Concurrency: o.Concurrency, Model: resolved, ModelSource: modelSource, ModelAsked: modelAsked,
			JudgeModel: judgeModel, AllowedTools: tools,
			NoBaselineGate: o.NoBaselineGate, TurnTimeout: o.TurnTimeout.String(), MaxRetries: o.MaxRetries,
			ConfigFile: cfgPath, RubricFile: o.RubricPath, FillersDir: o.FillersDir, KeepSandbox: o.KeepSandbox,
			MaxBudgetUSD: o.MaxBudgetUSD, PassEnv: o.PassEnv, Rule: o.Rule, Alpha: o.Alpha, Effect: o.Effect, JudgeRepeats: o.JudgeRepeats, Controls: o.Controls, Args: o.Args,
		},
		Isolation: "author-config", Jail: jailKind, JailNote: jailNote,
	}
	if hermetic {
		run.Isolation = "hermetic"
	}
	warnNoJail(stdio.Stderr, jailKind, jailNote)
	if run.Versions.ClaudeMismatch {
		fmt.Fprintf(stdio.Stderr, "warning: claude %s differs from %s, the version vibe-test's parser was verified on; results may be misread\n", version, claude.VerifiedVersion)
	}
	if o.UntilDecided {
		run.Sequential = &result.Sequential{Alpha: o.Alpha, Effect: o.Effect,
			Max: o.MaxConversations, Batch: o.Conversations, Decision: result.SeqContinue}
	}
	sess := &session{run: run, dir: outDir}
	sess.update(func() {})
	fmt.Fprintf(stdio.Stderr, "vibe-test: run folder %s\n", outDir)
	fail := func(err error) (*result.Run, error) {
		sess.update(func() {
			run.Status, run.Error, run.FinishedAt = result.StatusError, err.Error(), time.Now().UTC()
			run.Outcome = result.Outcome{Exit: exit.Tool, Verdict: "error", Sentence: "No verdict: " + err.Error()}
			if ctx.Err() != nil {
				run.Status = result.StatusInterrupted
				run.Outcome = result.Outcome{Exit: exit.Interrupted, Verdict: "interrupted", Sentence: "Interrupted before the conversations began."}
			}
		})
		if ctx.Err() != nil {
			return run, exit.Errorf(exit.Interrupted, "interrupted; the run folder %s keeps what was done", outDir)
		}
		return run, exit.With(exit.Tool, err)
	}

	// The plan: the config's tasks, or drafted by one cold call.
	var pl *plan.Plan
	if cfg != nil {
		pl = plan.FromConfig(cfgPath, cfg)
	} else {
		fmt.Fprintln(stdio.Stderr, "vibe-test: no vibe-test.yaml beside the skill: drafting the base task and probes with one model call")
		caller := coldCaller(binary, stdio.Env, hermetic, o.MaxRetries, o.TurnTimeout, o.Grace)
		caller.Jail = spec
		var turn claude.Turn
		pl, turn, err = plan.Draft(ctx, caller, sk, judgeModel)
		sess.update(func() { run.Costs.Plan += turn.CostUSD })
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdio.Stdout, "Drafted tasks (saved in plan.json; copy them into %s beside SKILL.md to keep them):\n%s\n", plan.ConfigName, indent(term.Clean(pl.YAML())))
	}
	pl.Model, pl.JudgeModel, pl.FillerSeed = resolved, judgeModel, o.Seed
	picks := make([][]fillers.Passage, o.Conversations)
	for i := range picks {
		if picks[i], err = fillers.Pick(pool, 6, o.Seed+int64(i)); err != nil {
			return fail(fmt.Errorf("choosing fillers: %w", err))
		}
		ids := make([]string, len(picks[i]))
		for k, p := range picks[i] {
			ids[k] = p.ID
		}
		pl.Fillers = append(pl.Fillers, ids)
	}
	sess.update(func() {
		run.Plan = pl
		run.Rubric = reviewed
		for i := 0; i < o.Conversations; i++ {
			run.Conversations = append(run.Conversations, result.Conversation{
				Index: i + 1, Status: result.StatusPending, Fillers: pl.Fillers[i], Turns: []result.Turn{},
			})
			run.Fresh = append(run.Fresh, result.FreshTriple(i+1))
		}
		for _, kind := range o.Controls {
			for i := 0; i < o.Conversations; i++ {
				c := result.Conversation{Index: i + 1, Control: kind, Status: result.StatusPending, Turns: []result.Turn{}}
				if kind == result.ControlNoSkill {
					c.Fillers = pl.Fillers[i] // the same fillers as the measured conversation
				}
				run.Controls = append(run.Controls, c)
			}
		}
	})
	if err := result.WriteJSON(filepath.Join(outDir, "plan.json"), pl); err != nil {
		return fail(err)
	}
	return drive(ctx, sess, driveInput{
		binary: binary, env: stdio.Env, hermetic: hermetic, jail: spec, skill: sk, plan: pl, picks: picks,
		cacheDir: cacheDir(o, stdio.Env), opts: o, out: o.Output, pool: pool, seed: o.Seed,
	}, stdio)
}

// splitTools reads --allowed-tools values: each may hold several tools,
// separated by spaces or commas outside parentheses.
func splitTools(values []string) []string {
	// urfave/cli splits a value at every comma, even inside a pattern's
	// parentheses; joining the pieces back and splitting outside
	// parentheses gives the tools as written.
	return skill.SplitTools(strings.Join(values, ","))
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// writeChart renders chart.html; a binary built without the echarts script
// says how to build it instead of writing a page that cannot draw.
func writeChart(dir string, r *result.Run) error {
	return atomicfile.WriteFunc(filepath.Join(dir, "chart.html"), result.FileMode, func(w io.Writer) error {
		return chart.Render(w, report.ChartData(r))
	})
}

// loadConfig finds the config: --config, else vibe-test.yaml beside SKILL.md.
func loadConfig(o Options, sk *skill.Skill) (*plan.Config, string, error) {
	path := o.ConfigPath
	if path == "" {
		beside := filepath.Join(sk.Dir, plan.ConfigName)
		if _, err := os.Stat(beside); err != nil {
			return nil, "", nil
		}
		path = beside
	}
	cfg, err := plan.LoadConfig(path)
	if err != nil {
		return nil, "", err
	}
	return cfg, path, nil
}

// findClaude looks for the CLI the way the author's shell would, then in
// the repository's pinned install (tools/node_modules/.bin, where `make
// tools` puts it) beside the vibe-test binary or in the working folder
// when that is the repository, so
// `./vibe-test` works after `make build` without changing PATH.
func findClaude(env []string) (string, error) {
	p, _, err := locateClaude(env, pinnedDirs())
	return p, err
}

// pinnedDir is where `make tools` installs the CLI, relative to the repo.
var pinnedDir = filepath.Join("tools", "node_modules", ".bin")

// pinnedDirs are the folders that may hold tools/: the binary's, and the
// working folder when it is the vibe-test repository (a skill's own
// checkout could hold a tools/ of its own, which is not run).
func pinnedDirs() []string {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dirs = append(dirs, filepath.Dir(exe))
	}
	if wd, err := os.Getwd(); err == nil && isVibeTestRepo(wd) {
		dirs = append(dirs, wd)
	}
	return dirs
}

// isVibeTestRepo says whether dir holds vibe-test's go.mod.
func isVibeTestRepo(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && strings.HasPrefix(string(b), "module github.com/vibe-test/vibe-test\n")
}

// locateClaude is findClaude with the folders to try for tools/; how says
// where the CLI was found, for the demo's next step.
func locateClaude(env []string, roots []string) (path, how string, err error) {
	if p := envValue(env, "VIBE_TEST_CLAUDE"); p != "" {
		return p, "VIBE_TEST_CLAUDE", nil
	}
	for _, dir := range filepath.SplitList(envValue(env, "PATH")) {
		if p := filepath.Join(dir, "claude"); isExecutable(p) {
			return p, "PATH", nil
		}
	}
	if p, err := exec.LookPath("claude"); err == nil && envValue(env, "PATH") == "" {
		return p, "PATH", nil
	}
	for _, root := range roots {
		if p := filepath.Join(root, pinnedDir, "claude"); isExecutable(p) {
			return p, "the pinned install in " + filepath.Join(root, "tools"), nil
		}
	}
	return "", "", fmt.Errorf("claude not found on PATH nor in %s (beside vibe-test, or in the vibe-test repository as the working folder): run `make tools` there, or `npm install -g @anthropic-ai/claude-code@%s`, or set VIBE_TEST_CLAUDE to its path", filepath.Join(pinnedDir, "claude"), claude.VerifiedVersion)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// makeOutDir creates the run folder (owner-only) and claims it by creating
// run.json exclusively, so two runs never share a folder: an existing
// non-empty folder is never written into, and a default name taken by a
// run started in the same second gets a suffix.
func makeOutDir(out, name string) (string, error) {
	if out != "" {
		if err := checkOutDir(out); err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return "", fmt.Errorf("creating run folder %s: %w", out, err)
		}
		if err := claimOutDir(out); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return "", fmt.Errorf("--out %s: another run took the folder just now, expected a new folder", out)
			}
			return "", fmt.Errorf("creating run folder %s: %w", out, err)
		}
		return filepath.Abs(out)
	}
	base := filepath.Join("vibe-runs", time.Now().UTC().Format("20060102T150405Z")+"-"+name)
	if err := os.MkdirAll("vibe-runs", 0o755); err != nil {
		return "", fmt.Errorf("creating run folder %s: %w", base, err)
	}
	for n := 1; n <= 100; n++ {
		dir := base
		if n > 1 {
			dir = fmt.Sprintf("%s-%d", base, n)
		}
		err := claimOutDir(dir)
		if errors.Is(err, fs.ErrExist) {
			continue // a run started in the same second
		}
		if err != nil {
			return "", fmt.Errorf("creating run folder %s: %w", dir, err)
		}
		return filepath.Abs(dir)
	}
	return "", fmt.Errorf("creating run folder %s: 100 runs of this skill started this second already hold its names", base)
}

// claimOutDir makes dir (or takes an existing empty one) and creates its
// run.json exclusively: whoever creates it owns the folder. The error
// wraps fs.ErrExist when another run got there first.
func claimOutDir(dir string) error {
	if err := os.Mkdir(dir, result.DirMode); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		if entries, rerr := os.ReadDir(dir); rerr != nil || len(entries) > 0 {
			return err // taken (or not a folder)
		}
		if err := os.Chmod(dir, result.DirMode); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "run.json"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, result.FileMode)
	if err != nil {
		return err
	}
	return f.Close()
}

// checkOutDir refuses a run folder that holds anything: an earlier run is
// never written over.
func checkOutDir(out string) error {
	if out == "" {
		return nil
	}
	st, err := os.Stat(out)
	if err != nil {
		return nil
	}
	if !st.IsDir() {
		return fmt.Errorf("--out %s: is a file, expected a new folder", out)
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return fmt.Errorf("--out %s: folder exists and is not empty, expected a new folder (a run is never written over another)", out)
	}
	return nil
}

// coldCaller makes rubric, plan and judge calls.
func coldCaller(binary string, env []string, hermetic bool, maxRetries int, timeout, grace time.Duration) claude.Caller {
	return claude.Caller{Binary: binary, Env: coldEnv(env, hermetic, maxRetries), Timeout: timeout, Grace: grace}
}

// coldEnv builds the environment of rubric, plan and judge calls: hermetic
// runs get a fresh HOME and config dir inside the call's own folder.
func coldEnv(base []string, hermetic bool, maxRetries int) func(dir string) []string {
	return func(dir string) []string {
		o := claude.EnvOptions{Extra: []string{fmt.Sprintf("CLAUDE_CODE_MAX_RETRIES=%d", maxRetries)}}
		// The CLI's temp files go into the call's folder and leave with it
		// (in the jail /tmp is in memory anyway).
		if tmp := filepath.Join(dir, ".tmp"); os.MkdirAll(tmp, 0o700) == nil {
			o.Extra = append(o.Extra, "TMPDIR="+tmp)
		}
		if hermetic {
			o.Home = filepath.Join(dir, ".home")
			o.ConfigDir = filepath.Join(o.Home, ".claude")
			_ = os.MkdirAll(o.ConfigDir, 0o700)
		}
		return claude.Env(base, o)
	}
}

func cacheDir(o Options, env []string) string {
	if o.CacheDir != "" {
		return o.CacheDir
	}
	if d := envValue(env, "VIBE_TEST_CACHE_DIR"); d != "" {
		return d
	}
	return rubric.DefaultCacheDir()
}

const (
	defaultGrace       = 3 * time.Second
	defaultDemoTimeout = 2 * time.Minute
)
