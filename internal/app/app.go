// Package app is vibe-test's command line: each command's flags fill its
// Options, one runX takes them and calls the packages below, which know
// nothing of flags (engine and suite run skills, rejudge, compare, draft,
// report and demo do the other commands' work), then shows the result and
// maps the outcome to an exit code. main.go only wires the process to Main,
// so whole commands run inside tests.
package app

import (
	"context"
	"fmt"
	xterm "github.com/charmbracelet/x/term"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/term"
)

// Version of vibe-test, stamped into run.json (the engine's).
var Version = engine.Version

// IO is where a command reads its environment and writes its output.
type IO struct {
	Env    []string // the process environment (KEY=VALUE)
	Stdout io.Writer
	Stderr io.Writer
	// Styled enables colours and rounded borders (a terminal).
	Styled bool
	// argv0 is the program as the user typed it (Main sets it), so advice
	// names a command that runs: ./vibe-test after make build.
	argv0 string
}

// prog is the command to name in advice.
func (stdio IO) prog() string {
	if stdio.argv0 == "" {
		return "vibe-test"
	}
	return stdio.argv0
}

// Main runs the command line and returns the exit code. Errors are printed
// as one line on stderr.
func Main(ctx context.Context, args []string, stdio IO) int {
	if len(args) > 0 {
		stdio.argv0 = args[0]
	}
	ch, err := parse(args, stdio)
	if err == nil && ch.run != nil {
		err = ch.run(ctx)
	}
	if err != nil {
		// An error may quote a file, the CLI or a model: one clean line.
		msg := term.Line(err.Error())
		fmt.Fprintf(stdio.Stderr, "vibe-test: %s\n", msg)
	}
	return exit.Code(err)
}

// Every command has cli/cli's shape: an Options struct, a function that
// fills it from the parsed flags (the only code that knows urfave/cli), and
// one runX(ctx, opts, io) that does the work through packages that know
// nothing of flags. Flags are tested apart from behaviour: parse gives the
// options and runs nothing.

// chosen is what parsing the command line chose: the command's options, and
// the run that takes them (none for help and --version, printed while
// parsing).
type chosen struct {
	opts any
	run  func(context.Context) error
}

// parse reads args into the chosen command's options. It runs under a
// lock: urfave/cli writes to its package-level help and version flags while
// parsing, which races when tests run several commands at once. The chosen
// command then runs outside the lock.
func parse(args []string, stdio IO) (chosen, error) {
	var ch chosen
	parseMu.Lock()
	defer parseMu.Unlock()
	a := newApp(stdio, &ch)
	err := a.Run(reorder(a, args))
	return ch, err
}

var parseMu sync.Mutex

// bind is a command's action: fill its options from the flags and keep its
// run for after parsing.
func bind[O any](ch *chosen, stdio IO, fill func(*cli.Context) (O, error), run func(context.Context, O, IO) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		o, err := fill(c)
		if err != nil {
			return err
		}
		ch.opts = o
		ch.run = func(ctx context.Context) error { return run(ctx, o, stdio) }
		return nil
	}
}

// newApp builds the command line; the chosen command is stored in *ch
// rather than run during parsing.
func newApp(stdio IO, ch *chosen) *cli.App {
	runFlags := runFlagSet()
	runAction := bind(ch, stdio, runOptions, runRun)
	a := &cli.App{
		Name:  "vibe-test",
		Usage: "measure whether an agent still follows a skill after the conversation moves on",
		// The help template indents every line of UsageText itself.
		UsageText: "vibe-test [flags] ./SKILL.md\nvibe-test [flags] ./skills-folder | a/SKILL.md b/SKILL.md ...   (a suite)\nvibe-test merge --out DIR SHARD_DIR...\nvibe-test demo [--cases]\nvibe-test eval [flags] ./SKILL.md --baseline NAME | --against NAME   (known-answer cases)\nvibe-test init ./SKILL.md\nvibe-test report RUN_DIR|SUITE_DIR|EVAL_DIR\nvibe-test resume RUN_DIR|SUITE_DIR|EVAL_DIR\nvibe-test rejudge RUN_DIR|SUITE_DIR|EVAL_DIR\nvibe-test compare BASE_RUN... CANDIDATE_RUN\nvibe-test help [COMMAND|exit-codes]",
		Version:   Version,
		Writer:    stdio.Stdout,
		ErrWriter: stdio.Stderr,
		// urfave/cli would call os.Exit itself, skipping deferred cleanup;
		// Main maps errors to exit codes instead.
		ExitErrHandler: func(*cli.Context, error) {},
		Flags:          runFlags,
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				_ = cli.ShowAppHelp(c)
				return exit.Errorf(exit.Tool, "no skill given: expected a path to a SKILL.md or its folder")
			}
			return runAction(c)
		},
		Commands: []*cli.Command{
			{
				Name:      "run",
				Usage:     "run the decay measurement on a skill, or on a suite of skills (the default command)",
				ArgsUsage: "./SKILL.md | ./skills-folder | a/SKILL.md b/SKILL.md ...",
				Flags:     runFlags,
				Action:    runAction,
			},
			{
				Name:   "demo",
				Usage:  "run the bundled example skill against a scripted model with the real claude CLI (no credentials needed)",
				Flags:  demoFlags(),
				Action: bind(ch, stdio, demoOptions, runDemo),
			},
			evalCommand(ch, stdio),
			{
				Name:      "resume",
				Usage:     "continue an interrupted run from each conversation's last completed turn (a suite: every unfinished skill; an eval: its unmade cells)",
				ArgsUsage: "RUN_DIR|SUITE_DIR|EVAL_DIR",
				Flags:     resumeFlags(),
				Action:    bind(ch, stdio, resumeOptions, runResume),
			},
			{
				Name:      "report",
				Usage:     "re-render the summary and chart of a saved run, a suite's table or an eval's report (no model calls)",
				ArgsUsage: "RUN_DIR|SUITE_DIR|EVAL_DIR",
				Flags:     outputFlags(),
				Action:    bind(ch, stdio, reportOptions, runReport),
			},
			{
				Name:      "rejudge",
				Usage:     "judge a saved run's turns (a suite's skills) again from their transcripts into verdicts-N.json beside run.json, never over it; an eval's messages into EVAL_DIR/rejudge-N",
				ArgsUsage: "RUN_DIR|SUITE_DIR|EVAL_DIR",
				Flags:     rejudgeFlags(),
				Action:    bind(ch, stdio, rejudgeOptions, runRejudge),
			},
			{
				Name:      "merge",
				Usage:     "join the folders of a suite's shards (--shard i/n) into one suite folder, each skill decided over every shard's conversations",
				ArgsUsage: "SHARD_DIR...",
				Flags:     mergeFlags(),
				Action:    bind(ch, stdio, mergeOptions, runMerge),
			},
			{
				Name:      "compare",
				Usage:     "accept or reject a new skill version: does the candidate run score lower than the base runs, conversation by conversation, on the total or any shared criterion (a permutation test of which run each conversation came from, adjusted over the measures by maxT)",
				ArgsUsage: "BASE_RUN [BASE_RUN2 ...] CANDIDATE_RUN",
				Flags:     compareFlags(),
				Action:    bind(ch, stdio, compareOptions, runCompare),
			},
			{
				Name:      "init",
				Usage:     "draft a commented vibe-test.yaml (tasks and rubric) beside a SKILL.md",
				ArgsUsage: "./SKILL.md",
				Flags:     initFlags(),
				Action:    bind(ch, stdio, initOptions, runInit),
			},
			// `vibe-test help [COMMAND]` works as well as --help; without the
			// command, "help" would be taken as a skill path.
			helpCommand(),
		},
	}
	a.OnUsageError = usageError("vibe-test --help", a.Flags)
	for _, c := range a.Commands {
		c.OnUsageError = usageError("vibe-test "+c.Name+" --help", c.Flags)
	}
	setHelp(a)
	// urfave/cli adds --help itself only when it adds its help command.
	a.Flags = append(slices.Clip(a.Flags), cli.HelpFlag)
	return a
}

// usageError makes a flag the parser refuses one line, in the words the
// user typed (--name, not Go's flag package's -name) with the kind of value
// expected, and the help page that lists the flags.
func usageError(help string, flags []cli.Flag) cli.OnUsageErrorFunc {
	return func(_ *cli.Context, err error, _ bool) error {
		return exit.With(exit.Tool, fmt.Errorf("%s (see %s)", flagError(err, flags), help))
	}
}

var (
	badValueRE  = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-([\w-]+): (.*)$`)
	undefinedRE = regexp.MustCompile(`^flag provided but not defined: -([\w-]+)$`)
	noValueRE   = regexp.MustCompile(`^flag needs an argument: -([\w-]+)$`)
)

// flagError rewords the standard flag package's refusals: `invalid value
// "many" for flag -conversations: parse error` becomes `--conversations:
// "many", expected a whole number`.
func flagError(err error, flags []cli.Flag) string {
	msg := err.Error()
	if m := undefinedRE.FindStringSubmatch(msg); m != nil {
		return dashed(m[1]) + ": no such flag"
	}
	if m := noValueRE.FindStringSubmatch(msg); m != nil {
		return dashed(m[1]) + ": no value given, expected one after it"
	}
	m := badValueRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	value, name, why := m[1], m[2], m[3]
	switch {
	case strings.Contains(why, "out of range"):
		return fmt.Sprintf("%s: %q, out of range", dashed(name), value)
	case strings.HasPrefix(msg, "invalid boolean value"):
		return fmt.Sprintf("%s: %q, expected true or false", dashed(name), value)
	}
	for _, f := range flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		switch f.(type) {
		case *cli.IntFlag, *cli.Int64Flag:
			return fmt.Sprintf("%s: %q, expected a whole number", dashed(name), value)
		case *cli.Float64Flag:
			return fmt.Sprintf("%s: %q, expected a number", dashed(name), value)
		case *cli.DurationFlag:
			return fmt.Sprintf("%s: %q, expected a duration such as 90s or 10m", dashed(name), value)
		}
	}
	return msg
}

// dashed is a flag's name as --help lists it: -h, --conversations.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// reorder moves flags ahead of positional arguments, so
// `vibe-test ./SKILL.md --no-baseline-gate` works as users type it (the
// standard flag parser stops at the first positional argument).
func reorder(a *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	flags := a.Flags
	start := 1
	for _, c := range a.Commands {
		if args[1] == c.Name {
			flags, start = c.Flags, 2
		}
	}
	takesValue := map[string]bool{}
	for _, f := range flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flagArgs, positional []string
	rest := args[start:]
	for i := 0; i < len(rest); i++ {
		s := rest[i]
		if s == "--" {
			positional = append(positional, rest[i+1:]...)
			break
		}
		if strings.HasPrefix(s, "-") && len(s) > 1 {
			flagArgs = append(flagArgs, s)
			name := strings.TrimLeft(s, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
				i++
				flagArgs = append(flagArgs, rest[i])
			}
			continue
		}
		positional = append(positional, s)
	}
	out := append([]string{}, args[:start]...)
	out = append(out, flagArgs...)
	return append(out, positional...)
}

// envValue reads a variable from an environment list.
func envValue(env []string, key string) string { return engine.EnvValue(env, key) }

// IsTerminal reports whether f is a terminal, where output may be styled.
// It asks the terminal driver: a character device is not enough, since
// /dev/null is one (a command started with its stdout discarded got
// colours and live redraws on stderr).
func IsTerminal(f *os.File) bool {
	return xterm.IsTerminal(f.Fd())
}
