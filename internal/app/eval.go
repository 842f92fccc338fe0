package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/evalreport"
	"github.com/vibe-test/vibe-test/internal/evalstats"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/term"
)

func evalFlags() []cli.Flag {
	return append(evalOutputFlags(),
		&cli.StringFlag{Name: "cases", Category: catInput, Usage: "the case set `DIR` (cases.yaml, a folder per case)", DefaultText: "cases: in vibe-test.yaml beside SKILL.md"},
		&cli.BoolFlag{Name: "check", Category: catInput, Usage: "check the case set's hygiene (key facts, files git would not commit, pairs) and stop: no model call"},
		&cli.BoolFlag{Name: "dry-run", Category: catInput, Usage: "print every call the eval would make and an estimated cost, then stop"},
		&cli.IntFlag{Name: "repeats", Category: catAgent, Usage: "generations per case and run", DefaultText: "the case set's, else 3"},
		&cli.StringFlag{Name: "agent", Category: catAgent, Usage: "the generator's CLI: `claude|codex|gemini`", DefaultText: "the case set's, else claude"},
		&cli.StringFlag{Name: "judge-agent", Category: catVerdict, Usage: "the reader's and grader's CLI: `claude|codex|gemini`", DefaultText: "the case set's, else the generator's when you have its key, else one you have a key for"},
		&cli.StringFlag{Name: "model", Category: catAgent, Usage: "the generator's model, resolved once and pinned (claude; another agent's is passed as given)", DefaultText: "the case set's"},
		&cli.StringFlag{Name: "effort", Category: catAgent, Usage: "the generator's `level`: low, medium, high, xhigh or max", DefaultText: "the case set's"},
		&cli.StringFlag{Name: "tools", Category: catAgent, Usage: "the generator's `tools`, comma- or space-separated", DefaultText: "the case set's, else Read,Grep,Glob"},
		&cli.StringFlag{Name: "deliver", Category: catAgent, Usage: "how the skill reaches the generator: `system-prompt|skill` (appended to its system prompt, or installed as a project skill)", DefaultText: "the case set's, else system-prompt"},
		&cli.StringFlag{Name: "control", Category: catAgent, Usage: "also run the control: `empty` (the same calls with an empty skill)"},
		&cli.StringFlag{Name: "isolation", Category: catAgent, Usage: "`jail|none`: each agent process in a bubblewrap jail, or none", DefaultText: "the jail where bubblewrap works"},
		&cli.BoolFlag{Name: "keep-sandbox", Category: catAgent, Usage: "keep each generator's workspace folder"},
		&cli.StringFlag{Name: "baseline", Category: catVerdict, Usage: "run the skill twice and the control, store the runs in the case set as baselines/`NAME`, and check the instrument"},
		&cli.StringFlag{Name: "against", Category: catVerdict, Usage: "decide the skill against the stored baseline `NAME`: exit 0 accept, 1 reject, 2 not enough evidence"},
		&cli.StringSliceFlag{Name: "grid", Category: catVerdict, Usage: "with --against, run the generator at each combination, e.g. --grid model=opus,sonnet --grid effort=medium,high (repeatable)"},
		&cli.StringFlag{Name: "rule", Category: catVerdict, Value: evalstats.RulePaired, Usage: "what sets the exit code: `paired|seed` (case by case, with the baseline runs' drift in the noise, calibrated; or fixed margins of two standard errors, not calibrated: its measured false-reject rate is printed beside it)"},
		&cli.Float64Flag{Name: "alpha", Category: catVerdict, Value: eval.DefaultAlpha, Usage: "the chance of rejecting an unchanged skill, over every measure together"},
		&cli.Float64Flag{Name: "margin", Category: catVerdict, Value: eval.DefaultMargin, Usage: "the drop of the total worth calling a regression: accepting needs the drop confidently below it"},
		&cli.StringFlag{Name: "reader-model", Category: catVerdict, Usage: "the reader's model (the cold call that plays you)", DefaultText: "the case set's, else the generator's"},
		&cli.StringFlag{Name: "grader-model", Category: catVerdict, Usage: "the grader's model", DefaultText: "the case set's, else the generator's"},
		&cli.IntFlag{Name: "concurrency", Category: catLimits, Value: eval.DefaultConcurrency, Usage: "cells made at once"},
		&cli.DurationFlag{Name: "timeout", Category: catLimits, Value: eval.DefaultTimeout, Usage: "stop an agent call that runs longer (SIGTERM, then SIGKILL)"},
		&cli.IntFlag{Name: "max-retries", Category: catLimits, Value: 2, Usage: "the CLI's own retries for every call (CLAUDE_CODE_MAX_RETRIES; codex's request and stream retries; gemini's attempts, one more)"},
		&cli.StringFlag{Name: "out", Category: catOutput, Usage: "the eval `folder`", DefaultText: "./vibe-runs/<UTC time>-eval-<skill>"},
	)
}

// evalOutputFlags choose how a finished eval is shown; eval, and resume,
// report and rejudge of an eval folder, share them.
func evalOutputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "json", Category: catOutput, Usage: "print the result as one JSON object on stdout (schema/eval.schema.json; the summary goes to stderr)"},
		&cli.StringFlag{Name: "junit", Category: catOutput, Usage: "also write JUnit XML to `FILE` (a test case per measure, one per regressed case)"},
		&cli.StringFlag{Name: "markdown", Category: catOutput, Usage: "also write a Markdown summary to `FILE`"},
		&cli.BoolFlag{Name: "no-color", Category: catOutput, Usage: "plain output even on a terminal (NO_COLOR is honoured too)"},
	}
}

// EvalOptions are `vibe-test eval`'s.
type EvalOptions struct {
	eval.Settings
	Output Output
	// Check: the case set's hygiene only, no call.
	Check bool
	// DryRun: the calls and their estimated cost, no call.
	DryRun bool
}

func evalOptions(c *cli.Context) (EvalOptions, error) {
	o := EvalOptions{Settings: eval.Settings{
		CasesDir: c.String("cases"), Repeats: c.Int("repeats"), Model: c.String("model"), Effort: c.String("effort"),
		ReaderModel: c.String("reader-model"), GraderModel: c.String("grader-model"),
		Tools: skill.SplitTools(c.String("tools")), Deliver: c.String("deliver"),
		Baseline: c.String("baseline"), Against: c.String("against"),
		Rule: c.String("rule"), Alpha: c.Float64("alpha"), Margin: c.Float64("margin"),
		Concurrency: c.Int("concurrency"), Timeout: c.Duration("timeout"), MaxRetries: c.Int("max-retries"),
		Isolation: c.String("isolation"), OutDir: c.String("out"), KeepSandbox: c.Bool("keep-sandbox"),
		Grace: engine.DefaultGrace, Agent: c.String("agent"), JudgeAgent: c.String("judge-agent"),
	}, Output: outputFrom(c), Check: c.Bool("check"), DryRun: c.Bool("dry-run")}
	for _, f := range []string{"agent", "judge-agent"} {
		if c.IsSet(f) {
			if err := agents.Check(f, c.String(f)); err != nil {
				return o, exit.With(exit.Tool, err)
			}
		}
	}
	// An empty name is a variable left unset (--against "$BASELINE"):
	// Settings read "" as "not given", and the eval measured the skill
	// and exited 0, which CI read as accepted.
	for _, f := range []string{"baseline", "against"} {
		if c.IsSet(f) && strings.TrimSpace(c.String(f)) == "" {
			return o, exit.Errorf(exit.Tool, "--%s: empty, expected a baseline's name (a folder in the case set's baselines/)", f)
		}
	}
	// Settings read 0 as "the default": a 0 given on the command line
	// would have run at 0.05 (or 0.1) without a word.
	if c.IsSet("alpha") && !(o.Alpha > 0) { // NaN too
		return o, exit.Errorf(exit.Tool, "--alpha: %v, expected a level between 0 and 0.5", o.Alpha)
	}
	if c.IsSet("margin") && !(o.Margin > 0) {
		return o, exit.Errorf(exit.Tool, "--margin: %v, expected a drop between 0 and 1 (0.1 = ten points of the total)", o.Margin)
	}
	// A grid's axes may follow --grid as words of their own (--grid
	// model=a,b effort=x,y), which the parser leaves as arguments.
	var args, gridWords []string
	for _, a := range c.Args().Slice() {
		if isGridWord(a) {
			gridWords = append(gridWords, a)
			continue
		}
		args = append(args, a)
	}
	o.Args = c.Args().Slice()
	if len(gridWords) > 0 && !c.IsSet("grid") {
		return o, exit.Errorf(exit.Tool, "%s: expected a skill path, or a --grid axis after --grid", gridWords[0])
	}
	if c.IsSet("grid") {
		g, err := ParseGrid(append(c.StringSlice("grid"), gridWords...))
		if err != nil {
			return o, exit.With(exit.Tool, err)
		}
		o.Grid = g
	}
	// --json is one JSON object on stdout: --check and --dry-run print
	// text for people there, as run's --dry-run does (refused the same).
	if o.Output.JSON && (o.Check || o.DryRun) {
		flag := "--dry-run"
		if o.Check {
			flag = "--check"
		}
		return o, exit.Errorf(exit.Tool, "--json does not go with %s, which prints its findings for people", flag)
	}
	switch len(args) {
	case 0:
		if !o.Check {
			return o, exit.Errorf(exit.Tool, "eval: expected ./SKILL.md (or its folder); --check needs only --cases DIR")
		}
	case 1:
		o.SkillPath = args[0]
	default:
		return o, exit.Errorf(exit.Tool, "eval: expected one skill, got %d arguments", len(args))
	}
	switch v := c.String("control"); v {
	case "":
	case eval.ControlEmpty:
		o.Control = true
	default:
		return o, exit.Errorf(exit.Tool, "--control: %q, expected %q", v, eval.ControlEmpty)
	}
	if c.IsSet("repeats") && o.Repeats < 1 {
		return o, exit.Errorf(exit.Tool, "--repeats: %d, expected 1 to 20", o.Repeats)
	}
	if c.IsSet("tools") && len(o.Tools) == 0 {
		return o, exit.Errorf(exit.Tool, "--tools: empty, expected the generator's tools (Read,Grep,Glob)")
	}
	if o.Concurrency < 1 {
		return o, exit.Errorf(exit.Tool, "--concurrency: %d, expected 1 or more", o.Concurrency)
	}
	if o.Timeout <= 0 {
		return o, exit.Errorf(exit.Tool, "--timeout: %s, expected a positive duration", o.Timeout)
	}
	if err := o.Settings.Check(); err != nil {
		return o, exit.With(exit.Tool, err)
	}
	return o, nil
}

// isGridWord: an argument that is a grid axis (model=… or effort=…).
func isGridWord(a string) bool {
	return strings.HasPrefix(a, "model=") || strings.HasPrefix(a, "effort=")
}

// ParseGrid reads --grid's values into the combinations to run: each
// value holds axes model=a,b and effort=x,y (urfave/cli splits a value at
// its commas, so a word without "=" continues the axis before it); the
// combinations are every model with every effort.
func ParseGrid(values []string) ([]eval.Point, error) {
	axes := map[string][]string{}
	key := ""
	for _, v := range values {
		for _, word := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			if k, val, ok := strings.Cut(word, "="); ok {
				if k != "model" && k != "effort" {
					return nil, fmt.Errorf("--grid: axis %q, expected model= or effort=", k)
				}
				if _, seen := axes[k]; seen {
					return nil, fmt.Errorf("--grid: %s given twice, expected each axis once (model=a,b effort=x,y)", k)
				}
				key, word = k, val
				axes[key] = nil
			}
			if key == "" {
				return nil, fmt.Errorf("--grid: %q, expected model=a,b or effort=x,y", word)
			}
			if word != "" {
				axes[key] = append(axes[key], word)
			}
		}
	}
	for k, vals := range axes {
		if len(vals) == 0 {
			return nil, fmt.Errorf("--grid: %s= names no value", k)
		}
	}
	models, efforts := axes["model"], axes["effort"]
	if len(models) == 0 {
		models = []string{""}
	}
	if len(efforts) == 0 {
		efforts = []string{""}
	}
	var out []eval.Point
	for _, m := range models {
		for _, e := range efforts {
			out = append(out, eval.Point{Model: m, Effort: e})
		}
	}
	if len(out) < 1 || (len(out) == 1 && out[0] == (eval.Point{})) {
		return nil, errors.New("--grid: no combination, expected model=a,b and/or effort=x,y")
	}
	return out, nil
}

// runEval checks a case set, estimates an eval, or runs one.
func runEval(ctx context.Context, o EvalOptions, stdio IO) error {
	eio := eval.IO{Env: stdio.Env, Stderr: stdio.Stderr}
	switch {
	case o.Check:
		set, _, err := eval.LoadSet(o.Settings)
		if err != nil {
			return err
		}
		if err := eval.CheckHygiene(ctx, set, eio); err != nil {
			return err
		}
		for _, n := range eval.DecisionNotes(set) {
			fmt.Fprintf(stdio.Stderr, "note: %s\n", n)
		}
		fmt.Fprintf(stdio.Stdout, "case set %s: %d main and %s, %s, %s: no problem found\n",
			term.Line(set.Dir), len(set.Cases), summary.Count(len(set.Holdout), "holdout case"), summary.Count(len(set.Measures), "measure"), summary.Count(len(set.Diagnostics), "diagnostic"))
		return nil
	case o.DryRun:
		e, err := eval.DryRun(ctx, o.Settings, eio)
		if err != nil {
			return err
		}
		e.Write(stdio.Stdout, term.Line)
		return nil
	}
	if err := o.Output.checkFiles(o.Settings.OutDir, append(skillFolders([]string{o.Settings.SkillPath}), o.Settings.CasesDir)...); err != nil {
		return err
	}
	if err := o.Output.checkOutside(o.Settings.OutDir); err != nil {
		return err
	}
	if err := outsideCaseSet(o); err != nil {
		return err
	}
	res, err := eval.Start(ctx, o.Settings, eio)
	if res != nil {
		if serr := showEval(res, o.Output, stdio); serr != nil && err == nil {
			err = exit.With(exit.Tool, serr)
		}
	}
	if err != nil {
		return err
	}
	return evalExit(res)
}

// showEval writes an eval's artifacts: report.html in its folder, the
// summary, and the JSON, JUnit and Markdown the output asks for.
func showEval(res *eval.Result, out Output, stdio IO) error {
	v := evalreport.NewView(res)
	if err := atomicfile.WriteFunc(filepath.Join(res.Dir, evalreport.HTMLName), record.FileMode, func(w io.Writer) error {
		return evalreport.HTML(w, v)
	}); err != nil {
		fmt.Fprintf(stdio.Stderr, "vibe-test: %s\n", term.Line(err.Error()))
	}
	human := stdio.Stdout
	if out.JSON {
		human = stdio.Stderr
	}
	evalreport.Summary(human, v, out.styled(stdio) && !out.JSON)
	fmt.Fprintf(human, "report: %s\n", filepath.Join(res.Dir, evalreport.HTMLName))
	if out.JSON {
		if err := evalreport.JSON(stdio.Stdout, v); err != nil {
			return err
		}
	}
	if out.JUnit != "" {
		if err := atomicfile.WriteFunc(out.JUnit, 0o644, func(w io.Writer) error { return evalreport.JUnit(w, v) }); err != nil {
			return fmt.Errorf("writing %s: %w", out.JUnit, err)
		}
	}
	if out.Markdown != "" {
		if err := atomicfile.WriteFunc(out.Markdown, 0o644, func(w io.Writer) error { return evalreport.Markdown(w, v) }); err != nil {
			return fmt.Errorf("writing %s: %w", out.Markdown, err)
		}
	}
	return nil
}

// evalExit is a finished eval's exit code as an error.
func evalExit(res *eval.Result) error {
	if res.Exit == exit.OK {
		return nil
	}
	return &exit.Error{Code: res.Exit, Err: errors.New(outcomeLine(res.Exit, res.Verdict, res.Sentence))}
}

// resumeEval continues an interrupted eval.
func resumeEval(ctx context.Context, dir string, out Output, stdio IO) error {
	res, err := eval.Resume(ctx, dir, eval.IO{Env: stdio.Env, Stderr: stdio.Stderr})
	if res != nil {
		if serr := showEval(res, out, stdio); serr != nil && err == nil {
			err = exit.With(exit.Tool, serr)
		}
	}
	if err != nil {
		return err
	}
	return evalExit(res)
}

// reportEval shows a saved eval again, decided again from its cells: no
// model call.
func reportEval(dir string, out Output, stdio IO) error {
	rec, err := eval.LoadRecord(dir)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	res, err := eval.Evaluate(dir, rec)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	res.TakeStatus()
	if rec.Status != eval.StatusCompleted {
		fmt.Fprintf(stdio.Stderr, "vibe-test: the eval is %s: %s\n", rec.Status, term.Line(rec.Outcome.Sentence))
	}
	if err := showEval(res, out, stdio); err != nil {
		return exit.With(exit.Tool, err)
	}
	if rec.Status != eval.StatusCompleted {
		return exit.Errorf(exit.Tool, "%s: the eval did not complete (%s): `vibe-test resume %s` continues it", dir, rec.Status, term.Arg(dir))
	}
	return evalExit(res)
}

// rejudgeEval grades an eval's saved messages again.
func rejudgeEval(ctx context.Context, dir string, rs eval.RejudgeSettings, out Output, stdio IO) error {
	res, err := eval.Rejudge(ctx, dir, rs, eval.IO{Env: stdio.Env, Stderr: stdio.Stderr})
	if res != nil {
		if serr := showEval(res, out, stdio); serr != nil && err == nil {
			err = exit.With(exit.Tool, serr)
		}
	}
	if err != nil {
		return err
	}
	return evalExit(res)
}

// evalCommand is `vibe-test eval`.
func evalCommand(ch *chosen, stdio IO) *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "grade a skill's decisions on known-answer cases: store a baseline, then accept or reject an edit of the skill against it",
		ArgsUsage: "./SKILL.md",
		Description: "vibe-test eval --check --cases ./cases         # the case set's hygiene, no call\n" +
			"vibe-test eval ./SKILL.md --baseline v1         # two base runs and the control, stored\n" +
			"vibe-test eval ./SKILL.md --against v1          # exit 0 accept, 1 reject, 2 not enough evidence\n" +
			"vibe-test eval ./SKILL.md --against v1 --grid model=opus,sonnet --grid effort=medium,high\n" +
			"The case set: docs/eval.md. Its holdout cases are reported as aggregates only.",
		Flags:  evalFlags(),
		Action: bind(ch, stdio, evalOptions, runEval),
	}
}

// outsideCaseSet refuses an eval's output (--out, or vibe-runs/ in the
// working folder without it, --junit, --markdown) inside its case set:
// written there, it changes what is measured. A report in a case's fixture
// changed the case's hash, and the next eval --against refused its
// baseline; an eval folder there is a folder with no case.yaml, and the
// case set no longer loaded. A case set that cannot be found is left to
// the eval to say so.
func outsideCaseSet(o EvalOptions) error {
	dir := o.Settings.CasesDir
	if dir == "" {
		sk, err := skill.LoadAs(o.Settings.SkillPath, skill.AsText)
		if err != nil {
			return nil
		}
		if dir, err = eval.FindCases("", sk); err != nil {
			return nil
		}
	}
	set := resolvedPath(dir)
	out, outFlag := o.Settings.OutDir, "--out"
	if out == "" {
		out, outFlag = "vibe-runs", "the eval folder (vibe-runs/ in the working folder, without --out)"
	}
	for _, f := range []struct{ flag, path string }{{outFlag, out}, {"--junit", o.Output.JUnit}, {"--markdown", o.Output.Markdown}} {
		if f.path == "" {
			continue
		}
		if p := resolvedPath(f.path); p == set || strings.HasPrefix(p, set+string(filepath.Separator)) {
			return exit.Errorf(exit.Tool, "%s %s: inside the case set %s, expected a path outside it (what is written there changes the cases measured)", f.flag, f.path, dir)
		}
	}
	return nil
}
