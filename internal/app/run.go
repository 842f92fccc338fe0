package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/estimate"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/chart"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/conversation"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/suite"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/term"
)

// RunOptions are `vibe-test run`'s (and the bare command line's): the
// engine's settings, and how to show the result.
type RunOptions struct {
	engine.Settings
	Output Output
	// SeedSet: --seed was given; otherwise the run draws one (and a shard,
	// which needs the same fillers as its siblings, refuses to run).
	SeedSet bool
	// DryRun: print the calls and their estimated cost, run nothing.
	DryRun bool
	// Shard of Shards: --shard i/n; Shards is 0 when the run is not a shard.
	Shard, Shards int
}

func runFlagSet() []cli.Flag {
	return append(outputFlags(),
		&cli.StringFlag{Name: "config", Category: catInput, Usage: "the run's config `FILE` (tasks, fixture, models)", DefaultText: "vibe-test.yaml beside SKILL.md, if any"},
		&cli.StringFlag{Name: "rubric", Category: catInput, Usage: "use a reviewed rubric `FILE` instead of extracting one"},
		&cli.StringFlag{Name: "out", Category: catOutput, Usage: "the run `folder` (a suite's folder for several skills)", DefaultText: "./vibe-runs/<UTC time>-<skill> (or -suite)"},
		&cli.IntFlag{Name: "conversations", Category: catDilution, Value: 2, Usage: "independent conversations to run"},
		&cli.IntFlag{Name: "concurrency", Category: catDilution, Usage: "conversations run at once", DefaultText: "all"},
		&cli.StringFlag{Name: "agent", Category: catAgent, Usage: "the coding-agent CLI to drive: `claude|codex|gemini` (see README, \"Agents\")", DefaultText: agents.Claude},
		&cli.StringFlag{Name: "judge-agent", Category: catVerdict, Usage: "the CLI of the rubric, plan and judge calls: `claude|codex|gemini`", DefaultText: "the --agent when its key is set, else the first with one (claude first)"},
		&cli.StringFlag{Name: "model", Category: catAgent, Usage: "the agent's model, resolved once and pinned for the run", DefaultText: "the config's, else the CLI's"},
		&cli.StringFlag{Name: "session", Category: catAgent, Value: claude.DefaultSessionMode, Usage: "how a conversation reaches the CLI: `interactive|resume` (one long-lived process per conversation, each turn one message, as a person's session; or one `claude -p --resume` process per turn, which re-sends the whole skill on every invocation: see docs/faults.md, \"Session modes\")"},
		&cli.StringSliceFlag{Name: "allowed-tools", Category: catAgent, Usage: "also let the agent use these `tools` (space- or comma-separated, patterns such as \"Bash(git diff:*)\" kept whole; repeatable)"},
		&cli.StringFlag{Name: "judge-model", Category: catVerdict, Usage: "the rubric, plan and judge model", DefaultText: "the config's, else the CLI's"},
		&cli.BoolFlag{Name: "no-baseline-gate", Category: catVerdict, Usage: "go on when turn 1 fails (stamped loudly on every artifact)"},
		&cli.BoolFlag{Name: "keep-sandbox", Category: catAgent, Usage: "keep each conversation's sandbox folder"},
		&cli.DurationFlag{Name: "turn-timeout", Category: catLimits, Value: conversation.DefaultTurnTimeout, Usage: "stop a turn that runs longer (SIGTERM, then SIGKILL)"},
		&cli.IntFlag{Name: "max-retries", Category: catLimits, Value: 2, Usage: "the CLI's own retries for every call (CLAUDE_CODE_MAX_RETRIES; codex's request and stream retries; gemini's attempts, one more)"},
		&cli.StringFlag{Name: "fillers", Category: catDilution, Usage: "what dilutes the context: `work|passages|DIR` (coding chores in the sandbox that fill it with tool output; the built-in everyday passages; or a folder of your own passages, *.md and *.txt, added to those)", DefaultText: "the config's, else passages"},
		&cli.StringFlag{Name: "dilute-to", Category: catDilution, Usage: "ask each probe once the context reaches these `levels` of tokens, one per probe, e.g. 50k,100k,150k (fillers are added until it does)", DefaultText: "the config's, else the seed's turns 6, 8 and 10"},
		&cli.StringFlag{Name: "compact-before", Category: catDilution, Usage: "run the CLI's own /compact on the session before these `probes` (1 to 3, e.g. 2 or 2,3; on the seed's schedule probe 2 is turn 8)"},
		&cli.StringFlag{Name: "compact-at", Category: catDilution, Usage: "run the CLI's own /compact once, before the first turn after the context reaches this `level` of tokens, e.g. 120k"},
		&cli.IntFlag{Name: "max-fillers", Category: catDilution, Usage: "with --dilute-to, the most fillers asked before any one probe (then it is asked where the context got to, and the record says so)", DefaultText: "60"},
		&cli.Int64Flag{Name: "seed", Category: catInput, Usage: "filler selection seed, recorded in plan.json", DefaultText: "random"},
		&cli.StringSliceFlag{Name: "pass-env", Category: catAgent, Usage: "also pass this environment `variable` to the agent (repeatable)"},
		&cli.StringFlag{Name: "rule", Category: catVerdict, Value: record.RuleDilutedVsFresh, Usage: "what sets exit 1: `diluted-vs-fresh|any-probe-failed` (the first when the probes pass significantly less often diluted than fresh, at --alpha; the second when any probe failed after a passed baseline, not a test)"},
		&cli.Float64Flag{Name: "alpha", Category: catVerdict, Value: 0.05, Usage: "the false-alarm rate of --rule diluted-vs-fresh"},
		&cli.Float64Flag{Name: "effect", Category: catVerdict, Value: record.DefaultEffect, Usage: "the drop in probe pass rate (0-1) worth catching: a run that could catch it with 80% power and did not says held, otherwise not enough evidence"},
		&cli.StringSliceFlag{Name: "control", Category: catDilution, Usage: "also run a control: `no-skill` (same schedule, no skill installed); repeatable. (Each probe is always asked fresh as well: that is the comparison.)"},
		&cli.BoolFlag{Name: "until-decided", Category: catVerdict, Usage: "add --conversations (with their fresh sessions) at a time until decay is shown, the skill held, or --max-conversations is reached"},
		&cli.IntFlag{Name: "max-conversations", Category: catVerdict, Value: 20, Usage: "the cap of --until-decided"},
		&cli.IntFlag{Name: "judge-repeats", Category: catVerdict, Value: 1, Usage: "judge each turn this many times; disagreeing verdicts make the turn uncertain"},
		&cli.Float64Flag{Name: "max-budget-usd", Category: catLimits, Usage: "stop starting turns once the run has spent this much (agent, rubric, plan and judge)", DefaultText: "no limit"},
		&cli.IntFlag{Name: "turn-retries", Category: catLimits, Value: 3, Usage: "rerun a turn this often after the CLI's own retries give up on a transient API error"},
		&cli.DurationFlag{Name: "retry-backoff", Category: catLimits, Value: 10 * time.Second, Usage: "the first wait before rerunning a turn (doubles each time)"},
		&cli.StringFlag{Name: "shard", Category: catInput, Usage: "run share `i/n` of a suite (needs --seed; `vibe-test merge` joins the n shard folders)"},
		&cli.BoolFlag{Name: "dry-run", Category: catInput, Usage: "print every call the run would make and an estimated cost, then stop: no model call, no claude process, no run folder"},
		&cli.StringFlag{Name: "isolation", Category: catAgent, Usage: "`jail|none`: each claude process in a bubblewrap jail (an error where none can start), or none (the agent sees what you see)", DefaultText: "the jail where bubblewrap works"},
	)
}

// scheduleFlags reads --fillers, --dilute-to, --compact-before and
// --max-fillers into the schedule overrides (the config's schedule is
// read, and overridden field by field, when the run starts).
func scheduleFlags(c *cli.Context, o *engine.Settings) error {
	switch f := c.String("fillers"); f {
	case "":
	case plan.FillersWork, plan.FillersPassages:
		o.FillerKind = f
	default:
		o.FillerKind, o.FillersDir = plan.FillersPassages, f
	}
	if v := c.String("dilute-to"); v != "" {
		levels, err := plan.ParseLevels(v)
		if err != nil {
			return fmt.Errorf("--dilute-to: %v", err)
		}
		if err := (&plan.Schedule{DiluteTo: levels}).Check(); err != nil {
			return fmt.Errorf("--dilute-to %s: %v", v, strings.TrimPrefix(err.Error(), "dilute_to: "))
		}
		o.DiluteTo = levels
	}
	if v := c.String("compact-before"); v != "" {
		probes, err := plan.ParseProbes(v)
		if err != nil {
			return fmt.Errorf("--compact-before: %v", err)
		}
		o.CompactBefore = probes
	}
	if v := c.String("compact-at"); v != "" {
		n, err := plan.ParseTokens(v)
		if err != nil {
			return fmt.Errorf("--compact-at: %v", err)
		}
		o.CompactAt = n
	}
	if c.IsSet("max-fillers") {
		if n := c.Int("max-fillers"); n < 1 || n > plan.MaxFillersLimit {
			return fmt.Errorf("--max-fillers: %d, expected 1 to %d", n, plan.MaxFillersLimit)
		}
		o.MaxFillers = c.Int("max-fillers")
	}
	return nil
}

// runOptions reads run's flags and checks those that go together.
func runOptions(c *cli.Context) (RunOptions, error) {
	o := RunOptions{Settings: engine.Settings{
		Args:      c.Args().Slice(),
		SkillPath: c.Args().First(), ConfigPath: c.String("config"), RubricPath: c.String("rubric"),
		OutDir: c.String("out"), Conversations: c.Int("conversations"), Concurrency: c.Int("concurrency"),
		Model: c.String("model"), JudgeModel: c.String("judge-model"),
		NoBaselineGate: c.Bool("no-baseline-gate"), KeepSandbox: c.Bool("keep-sandbox"),
		TurnTimeout: c.Duration("turn-timeout"), MaxRetries: c.Int("max-retries"),
		Seed: c.Int64("seed"), PassEnv: c.StringSlice("pass-env"),
		AllowedTools: splitTools(c.StringSlice("allowed-tools")), SessionMode: c.String("session"),
		Rule: c.String("rule"), Alpha: c.Float64("alpha"), JudgeRepeats: c.Int("judge-repeats"), Controls: c.StringSlice("control"),
		UntilDecided: c.Bool("until-decided"), MaxConversations: c.Int("max-conversations"),
		Effect:       c.Float64("effect"),
		MaxBudgetUSD: c.Float64("max-budget-usd"), TurnRetries: c.Int("turn-retries"), RetryBackoff: c.Duration("retry-backoff"),
		Isolation: c.String("isolation"), Grace: engine.DefaultGrace,
		Agent: c.String("agent"), JudgeAgent: c.String("judge-agent"),
	}, Output: outputFrom(c), SeedSet: c.IsSet("seed"), DryRun: c.Bool("dry-run")}
	if c.IsSet("agent") {
		if err := agents.Check("agent", o.Agent); err != nil {
			return o, err
		}
	}
	if c.IsSet("judge-agent") {
		if err := agents.Check("judge-agent", o.JudgeAgent); err != nil {
			return o, err
		}
	}
	if err := claude.CheckSessionMode(o.SessionMode); err != nil {
		return o, err
	}
	if err := scheduleFlags(c, &o.Settings); err != nil {
		return o, err
	}
	if err := engine.CheckCompaction(o.Agent, &plan.Schedule{CompactBefore: o.CompactBefore, CompactAt: o.CompactAt}, o.Settings, ""); err != nil {
		return o, err
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
	if o.Rule != record.RuleDilutedVsFresh && o.Rule != record.RuleAnyProbeFailed {
		return o, fmt.Errorf("--rule: %q, expected %q or %q", o.Rule, record.RuleDilutedVsFresh, record.RuleAnyProbeFailed)
	}
	if c.IsSet("alpha") && o.Rule != record.RuleDilutedVsFresh {
		return o, fmt.Errorf("--alpha only applies with --rule %s (the any-probe-failed rule is not a test and has no level)", record.RuleDilutedVsFresh)
	}
	if c.IsSet("max-conversations") && !o.UntilDecided {
		return o, fmt.Errorf("--max-conversations only applies with --until-decided")
	}
	if !(o.Effect > 0 && o.Effect <= 1) {
		return o, fmt.Errorf("--effect: %v, expected a drop between 0 and 1 (0.3 = 30 points)", o.Effect)
	}
	if o.UntilDecided {
		if o.Rule != record.RuleDilutedVsFresh {
			return o, fmt.Errorf("--until-decided needs --rule %s", record.RuleDilutedVsFresh)
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
	// Written so that NaN fails them: `--alpha NaN` passed `<= 0 || >= 0.5`,
	// and the run spent its whole budget before run.json could not encode it.
	if !(o.Alpha > 0 && o.Alpha < 0.5) {
		return o, fmt.Errorf("--alpha: %v, expected a level between 0 and 0.5", o.Alpha)
	}
	for _, k := range o.Controls {
		if k != record.ControlNoSkill {
			return o, fmt.Errorf("--control: %q, expected %q", k, record.ControlNoSkill)
		}
	}
	if o.JudgeRepeats < 1 || o.JudgeRepeats > 9 {
		return o, fmt.Errorf("--judge-repeats: %d, expected 1 to 9", o.JudgeRepeats)
	}
	if err := checkBudget(o.MaxBudgetUSD); err != nil {
		return o, err
	}
	if c.IsSet("max-budget-usd") && o.MaxBudgetUSD == 0 {
		return o, zeroBudget
	}
	for _, name := range o.PassEnv {
		// A NAME=VALUE given here was recorded whole in run.json, value
		// and all: the value is never echoed.
		if !envName.MatchString(name) {
			shown := name
			if k, _, ok := strings.Cut(name, "="); ok {
				shown = k + "=…"
			}
			return o, fmt.Errorf("--pass-env: %q, expected a variable's name (letters, digits, _), whose value the agent then gets", term.Line(shown))
		}
	}
	if o.Isolation != "" && o.Isolation != engine.IsolationJail && o.Isolation != engine.IsolationNone {
		return o, fmt.Errorf("--isolation: %q, expected %q or %q", o.Isolation, engine.IsolationJail, engine.IsolationNone)
	}
	if err := checkRetries(o.TurnRetries, o.RetryBackoff); err != nil {
		return o, err
	}
	if v := c.String("shard"); v != "" {
		var err error
		if o.Shard, o.Shards, err = parseShard(v); err != nil {
			return o, err
		}
		// A dry run only prints the shard's share.
		if !o.DryRun && !o.SeedSet {
			return o, fmt.Errorf("--shard needs --seed N: every shard must pick the same fillers for the same conversation, so their runs can be merged")
		}
		if !o.DryRun && (o.UntilDecided || len(o.Controls) > 0) {
			return o, fmt.Errorf("--shard: --until-decided and --control do not go with shards (each shard holds a fixed share of the conversations)")
		}
	}
	// The estimate is for people: asked for JSON, it printed text on stdout
	// where a script read it.
	if o.DryRun && o.Output.JSON {
		return o, fmt.Errorf("--json does not go with --dry-run, which prints an estimate for people")
	}
	return o, nil
}

// runRun measures a skill, or a suite of them, or prints what that would
// call and cost (--dry-run).
func runRun(ctx context.Context, o RunOptions, stdio IO) error {
	if !o.SeedSet {
		o.Seed = rand.Int64N(1 << 31)
	}
	isSuite := suite.IsSuite(o.Args) || o.Shards > 0
	if o.DryRun {
		if isSuite {
			return suiteDryRun(ctx, o, stdio)
		}
		e, err := engine.DryRun(ctx, o.Settings, stdio.Env, o.SeedSet)
		if err != nil {
			return err
		}
		writeEstimate(e, stdio)
		return nil
	}
	if err := o.Output.checkFiles(o.OutDir, append(skillFolders(o.Args), o.ConfigPath, o.RubricPath, o.FillersDir)...); err != nil {
		return err
	}
	if err := o.Output.checkOutside(o.OutDir); err != nil {
		return err
	}
	if isSuite {
		return runSuite(ctx, o, stdio)
	}
	r, err := execute(ctx, o.Settings, o.Output, stdio)
	if err != nil {
		return err
	}
	return outcomeError(r)
}

// writeEstimate shows a dry run: its warnings on stderr, as the run would
// print them before it starts, and the calls and cost on stdout.
func writeEstimate(e *estimate.Estimate, stdio IO) {
	for _, w := range e.Warnings {
		fmt.Fprintf(stdio.Stderr, "warning: %s\n", term.Line(w))
	}
	e.Write(stdio.Stdout, term.Line)
}

// execute runs a measurement with the engine, showing its progress and the
// finished run on stdio.
func execute(ctx context.Context, s engine.Settings, out Output, stdio IO) (*record.Run, error) {
	return engine.Start(ctx, s, engineIO(stdio), hooks(out, stdio))
}

func engineIO(stdio IO) engine.IO {
	return engine.IO{Env: stdio.Env, Stdout: stdio.Stdout, Stderr: stdio.Stderr}
}

// hooks show a run's progress on stderr and the finished run as out says.
func hooks(out Output, stdio IO) engine.Hooks {
	return engine.Hooks{
		Progress: newProgress(stdio.Stderr, out.styled(stdio) && !out.JSON),
		Show:     func(dir string, r *record.Run) error { return out.show(dir, r, stdio) },
	}
}

// outcomeError turns a finished run's outcome into the exit code.
func outcomeError(r *record.Run) error {
	if r.Outcome.Exit == exit.OK {
		return nil
	}
	return &exit.Error{Code: r.Outcome.Exit, Err: errors.New(outcomeLine(r.Outcome.Exit, r.Outcome.Verdict, r.Outcome.Sentence))}
}

// outcomeLine is stderr's last line for a finished run or eval that did
// not pass: its verdict ("decay", a CI log's marker), and for no verdict
// (exit 3) the reason too: "vibe-test: error" alone ended a run whose
// every turn had failed to reach the API, the cause only in the summary
// above it.
func outcomeLine(code int, verdict, sentence string) string {
	if code == exit.Tool && sentence != "" {
		return verdict + ": " + sentence
	}
	return verdict
}

// splitTools reads --allowed-tools values: each may hold several tools,
// separated by spaces or commas outside parentheses.
func splitTools(values []string) []string {
	// urfave/cli splits a value at every comma, even inside a pattern's
	// parentheses; joining the pieces back and splitting outside
	// parentheses gives the tools as written.
	return skill.SplitTools(strings.Join(values, ","))
}

// writeChart renders chart.html; a binary built without the echarts script
// says where to get one that has it instead of writing a page that cannot
// draw.
func writeChart(dir string, r *record.Run) error {
	return atomicfile.WriteFunc(filepath.Join(dir, "chart.html"), record.FileMode, func(w io.Writer) error {
		return chart.Render(w, summary.ChartData(r))
	})
}

// envName is an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkBudget refuses a budget that is negative or not a number (NaN, Inf
// pass a plain `< 0`), for a run and its resume alike.
func checkBudget(usd float64) error {
	if !(usd >= 0) || math.IsInf(usd, 0) {
		return fmt.Errorf("--max-budget-usd: %v, expected a positive amount", usd)
	}
	return nil
}

// zeroBudget: a budget of 0 given ran with no limit at all (0 is how the
// engine says none), though no turn should start with nothing to spend.
var zeroBudget = errors.New("--max-budget-usd: 0, expected a positive amount (leave it out for no limit)")

// checkRetries refuses what a run and its resume cannot retry with.
func checkRetries(retries int, backoff time.Duration) error {
	if retries < 0 || retries > 10 {
		return fmt.Errorf("--turn-retries: %d, expected 0 to 10", retries)
	}
	if backoff < 0 {
		return fmt.Errorf("--retry-backoff: %v, expected a wait of 0 or more", backoff)
	}
	return nil
}
