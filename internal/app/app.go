// Package app is vibe-test's command line: flags become options, options
// become a run, the run becomes a summary, files and an exit code. main.go
// only wires the process to Main, so whole commands run inside tests.
package app

import (
	"context"
	"fmt"
	xterm "github.com/charmbracelet/x/term"
	"io"
	"os"
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
	// Parse first, under a lock: urfave/cli writes to its package-level help
	// and version flags while parsing, which races when tests run several
	// commands at once. The chosen command then runs outside the lock.
	var action func() error
	if len(args) > 0 {
		stdio.argv0 = args[0]
	}
	a := newApp(stdio, &action)
	parseMu.Lock()
	err := a.RunContext(ctx, reorder(a, args))
	parseMu.Unlock()
	if err == nil && action != nil {
		err = action()
	}
	if err != nil {
		// An error may quote a file, the CLI or a model: one clean line.
		msg := term.Line(err.Error())
		fmt.Fprintf(stdio.Stderr, "vibe-test: %s\n", msg)
	}
	return exit.Code(err)
}

var parseMu sync.Mutex

// newApp builds the command line; the chosen command's work is stored in
// *action rather than run during parsing.
func newApp(stdio IO, action *func() error) *cli.App {
	later := func(run func(*cli.Context, IO) error) cli.ActionFunc {
		return func(c *cli.Context) error {
			*action = func() error { return run(c, stdio) }
			return nil
		}
	}
	runFlags := runFlagSet()
	a := &cli.App{
		Name:  "vibe-test",
		Usage: "measure whether an agent still follows a skill after the conversation moves on",
		// The help template indents every line of UsageText itself.
		UsageText: "vibe-test [flags] ./SKILL.md\nvibe-test [flags] ./skills-folder | a/SKILL.md b/SKILL.md ...   (a suite)\nvibe-test merge --out DIR SHARD_DIR...\nvibe-test demo\nvibe-test init ./SKILL.md\nvibe-test report RUN_DIR|SUITE_DIR\nvibe-test help [COMMAND]",
		Version:   Version,
		Writer:    stdio.Stdout,
		ErrWriter: stdio.Stderr,
		// urfave/cli would call os.Exit itself, skipping deferred cleanup;
		// Main maps errors to exit codes instead.
		ExitErrHandler: func(*cli.Context, error) {},
		// `vibe-test help [COMMAND]` works as well as --help; without the
		// command, "help" would be taken as a skill path.
		HideHelpCommand: false,
		Flags:           runFlags,
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				_ = cli.ShowAppHelp(c)
				return exit.Errorf(exit.Tool, "no skill given: expected a path to a SKILL.md or its folder")
			}
			return later(runCommand)(c)
		},
		Commands: []*cli.Command{
			{
				Name:      "run",
				Usage:     "run the decay measurement on a skill, or on a suite of skills (the default command)",
				ArgsUsage: "./SKILL.md | ./skills-folder | a/SKILL.md b/SKILL.md ...",
				Flags:     runFlags,
				Action:    later(runCommand),
			},
			{
				Name:   "demo",
				Usage:  "run the bundled example skill against a scripted model with the real claude CLI (no credentials needed)",
				Flags:  demoFlags(),
				Action: later(demoCommand),
			},
			{
				Name:      "resume",
				Usage:     "continue an interrupted run from each conversation's last completed turn (a suite: every unfinished skill)",
				ArgsUsage: "RUN_DIR|SUITE_DIR",
				Flags:     resumeFlags(),
				Action:    later(resumeCommand),
			},
			{
				Name:      "report",
				Usage:     "re-render the summary and chart of a saved run, or a suite's table (no model calls)",
				ArgsUsage: "RUN_DIR|SUITE_DIR",
				Flags:     outputFlags(),
				Action:    later(reportCommand),
			},
			{
				Name:      "rejudge",
				Usage:     "judge a saved run's turns again from their transcripts; writes verdicts-N.json beside run.json, never over it",
				ArgsUsage: "RUN_DIR",
				Flags:     rejudgeFlags(),
				Action:    later(rejudgeCommand),
			},
			{
				Name:      "merge",
				Usage:     "join the folders of a suite's shards (--shard i/n) into one suite folder, each skill decided over every shard's conversations",
				ArgsUsage: "SHARD_DIR...",
				Flags:     mergeFlags(),
				Action:    later(mergeCommand),
			},
			{
				Name:      "compare",
				Usage:     "accept or reject a new skill version: does the candidate run score lower than the base runs, conversation by conversation, on the total or any shared criterion (Welch's test, alpha split over the measures)",
				ArgsUsage: "BASE_RUN [BASE_RUN2 ...] CANDIDATE_RUN",
				Flags:     []cli.Flag{&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "the chance of rejecting an unchanged skill"}},
				Action:    later(compareCommand),
			},
			{
				Name:      "init",
				Usage:     "draft a commented vibe-test.yaml (tasks and rubric) beside a SKILL.md",
				ArgsUsage: "./SKILL.md",
				Flags:     initFlags(),
				Action:    later(initCommand),
			},
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return exit.With(exit.Tool, fmt.Errorf("%w (see vibe-test --help)", err))
		},
	}
	return a
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
