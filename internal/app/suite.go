package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/chart"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/junit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/report"
	"github.com/vibe-test/vibe-test/internal/suite"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/term"
)

// parseShard reads --shard i/n.
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("--shard: %q, expected i/n with 1 <= i <= n (e.g. 2/3)", s)
	}
	return i, n, nil
}

// runSuite runs a suite (several skills, or a folder of skills) or a
// shard of one: each skill's chart is written as it finishes, and one table
// follows. The skills' own summaries are not printed: skills run side by
// side, so their summaries would come in whatever order they finish, and a
// suite reader wants the table; `vibe-test report SUITE_DIR/<skill>` shows
// one in full.
func runSuite(ctx context.Context, o RunOptions, stdio IO) error {
	s := suite.Settings{Settings: o.Settings, Paths: o.Args, Out: o.OutDir, Shard: o.Shard, Shards: o.Shards}
	if err := notForSuite(o, "(and cached rubric) lies beside its SKILL.md"); err != nil {
		return err
	}
	h := suite.Hooks{
		Show:     chartOnly,
		Progress: plainProgress,
		Done:     func(e record.SuiteEntry) { fmt.Fprintf(stdio.Stderr, "vibe-test: %s\n", term.Line(doneLine(e))) },
	}
	eio := engineIO(stdio)
	if o.Output.JSON {
		eio.Stdout = stdio.Stderr // stdout holds the one JSON object
	}
	idx, dir, err := suite.Run(ctx, s, eio, h)
	if idx != nil {
		if perr := showSuite(idx, dir, o.Output, stdio); perr != nil && err == nil {
			err = exit.With(exit.Tool, perr)
		}
	}
	if err != nil {
		return err
	}
	return suiteExit(idx)
}

// notForSuite refuses --config and --rubric for a suite: each skill has its
// own.
func notForSuite(o RunOptions, beside string) error {
	for _, f := range []struct{ name, value string }{{"config", o.ConfigPath}, {"rubric", o.RubricPath}} {
		if f.value != "" {
			return exit.Errorf(exit.Tool, "--%s: not for a suite: each skill's vibe-test.yaml %s", f.name, beside)
		}
	}
	return nil
}

// doneLine is what stderr hears when a skill finishes.
func doneLine(e record.SuiteEntry) string {
	line := fmt.Sprintf("%s finished: %s (exit %d)", e.Name, e.Verdict, e.ExitCode)
	if e.Verdict == "" {
		line = fmt.Sprintf("%s stopped: %s (exit %d)", e.Name, e.Error, e.ExitCode)
	}
	return line
}

// showSuite prints the suite's table (on stderr with --json, whose object
// goes to stdout) and writes --junit and --markdown.
func showSuite(idx *record.Suite, dir string, out Output, stdio IO) error {
	// The suite page is for reading: a failure to write it is said, and the
	// table, JSON, JUnit and Markdown still come.
	if err := writeSuitePage(dir, idx); err != nil {
		fmt.Fprintf(stdio.Stderr, "vibe-test: %s\n", term.Line(err.Error()))
	}
	if out.JUnit != "" {
		if err := writeSuiteJUnit(out.JUnit, idx, dir); err != nil {
			return err
		}
	}
	if out.Markdown != "" {
		var entries []summary.MarkdownEntry
		for _, e := range idx.Skills {
			me := summary.MarkdownEntry{Name: e.Name, Dir: e.Dir(dir)}
			if r, err := record.Load(me.Dir); err == nil && r.Plan != nil {
				me.Run = r
			}
			entries = append(entries, me)
		}
		err := atomicfile.WriteFunc(out.Markdown, record.FileMode, func(w io.Writer) error { return summary.Markdown(w, entries) })
		if err != nil {
			return fmt.Errorf("--markdown %s: %w", out.Markdown, err)
		}
	}
	human := stdio.Stdout
	if out.JSON {
		human = stdio.Stderr
	}
	summary.SuiteTable(human, idx, dir, out.styled(stdio) && !out.JSON)
	fmt.Fprintf(human, "suite page: %s\n", term.Clean(filepath.Join(dir, chart.SuitePageName)))
	if out.JSON {
		b, err := json.MarshalIndent(idx, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdio.Stdout, "%s\n", b)
	}
	return nil
}

// writeSuitePage writes the suite folder's index.html, linking each
// skill's chart.html.
func writeSuitePage(dir string, idx *record.Suite) error {
	return atomicfile.WriteFunc(filepath.Join(dir, chart.SuitePageName), record.FileMode, func(w io.Writer) error {
		return chart.RenderSuite(w, idx)
	})
}

// writeSuiteJUnit writes a testsuite per skill that has a run record,
// atomically.
func writeSuiteJUnit(path string, idx *record.Suite, dir string) error {
	var names []string
	var runs []*record.Run
	for _, e := range idx.Skills {
		r, err := record.SkillRun(dir, e)
		if err != nil {
			return exit.With(exit.Tool, err)
		}
		if r == nil {
			continue // the skill stopped before its run began: suite.json says why
		}
		names, runs = append(names, e.Name), append(runs, r)
	}
	err := atomicfile.WriteFunc(path, record.FileMode, func(w io.Writer) error { return junit.WriteSuite(w, names, runs) })
	if err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}

// suiteExit is the suite's exit code, with the skills that set it named.
func suiteExit(idx *record.Suite) error {
	if idx.ExitCode == exit.OK {
		return nil
	}
	// Each with its verdict, and for no verdict its error: "set by a"
	// alone ended a suite whose skill ran out of budget, the reason only
	// in the table above it.
	var names []string
	for _, e := range idx.Skills {
		if e.ExitCode == idx.ExitCode {
			why := e.Verdict
			if e.ExitCode == exit.Tool && e.Error != "" {
				why = strings.TrimSpace(why + ": " + e.Error)
			}
			if why != "" {
				names = append(names, e.Name+" ("+why+")")
			} else {
				names = append(names, e.Name)
			}
		}
	}
	return exit.Errorf(idx.ExitCode, "suite exit code %d, set by %s", idx.ExitCode, strings.Join(names, ", "))
}

// reportSuite re-prints a suite folder's table, each skill redecided from
// its run folder (and its chart redrawn), as `report RUN_DIR` does for one.
func reportSuite(o ReportOptions, stdio IO) error {
	dir := o.Dir
	idx, err := report.Suite(dir, func(rd string, r *record.Run) {
		if err := writeChart(rd, r); err != nil {
			fmt.Fprintf(stdio.Stderr, "vibe-test: %s\n", term.Line(err.Error()))
		}
	})
	if err != nil {
		return err
	}
	if idx.Status == record.StatusRunning {
		fmt.Fprintf(stdio.Stderr, "vibe-test: %s: the suite has not finished (or its vibe-test was stopped by force): the table shows what its run folders hold\n", dir)
	}
	if err := showSuite(idx, dir, o.Output, stdio); err != nil {
		return exit.With(exit.Tool, err)
	}
	return suiteExit(idx)
}

func mergeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Category: catOutput, Usage: "the merged suite `folder`", DefaultText: "./vibe-runs/<UTC time>-suite"},
		&cli.BoolFlag{Name: "json", Category: catOutput, Usage: "print the merged suite index as one JSON object on stdout (the table goes to stderr)"},
		&cli.StringFlag{Name: "junit", Category: catOutput, Usage: "also write JUnit XML to `FILE` (a test suite per skill, a test case per judged turn)"},
		&cli.StringFlag{Name: "markdown", Category: catOutput, Usage: "also write a Markdown summary to `FILE` (a row per skill; for $GITHUB_STEP_SUMMARY or a PR comment)"},
		&cli.BoolFlag{Name: "no-color", Category: catOutput, Usage: "plain output even on a terminal (NO_COLOR is honoured too)"},
	}
}

// MergeOptions are `vibe-test merge`'s.
type MergeOptions struct {
	Out    string   // the merged suite's folder ("": a new one under ./vibe-runs)
	Shards []string // the shards' folders
	Output Output
}

func mergeOptions(c *cli.Context) (MergeOptions, error) {
	if c.NArg() == 0 {
		return MergeOptions{}, exit.Errorf(exit.Tool, "merge: expected every shard's folder (vibe-test merge --out DIR SHARD_DIR...)")
	}
	return MergeOptions{Out: c.String("out"), Shards: c.Args().Slice(), Output: outputFrom(c)}, nil
}

// runMerge joins shard folders into one suite folder and exits with the
// merged suite's code.
func runMerge(ctx context.Context, o MergeOptions, stdio IO) error {
	var inputs []string
	for _, shard := range o.Shards {
		inputs = append(inputs, recordedInputs(shard)...)
	}
	if err := o.Output.checkFiles(o.Out, inputs...); err != nil {
		return err
	}
	if err := o.Output.checkOutside(o.Out); err != nil {
		return err
	}
	h := suite.Hooks{Show: chartOnly}
	idx, dir, err := suite.Merge(ctx, o.Out, o.Shards, stdio.Stderr, h)
	if err != nil {
		return err
	}
	if err := showSuite(idx, dir, o.Output, stdio); err != nil {
		return exit.With(exit.Tool, err)
	}
	return suiteExit(idx)
}

// resumeSuite continues every unfinished skill of a suite folder and
// prints the suite's table.
func resumeSuite(ctx context.Context, o ResumeOptions, stdio IO) error {
	h := suite.Hooks{Show: chartOnly, Progress: plainProgress, Done: func(e record.SuiteEntry) { fmt.Fprintf(stdio.Stderr, "vibe-test: %s\n", term.Line(doneLine(e))) }}
	idx, err := suite.Resume(ctx, o.Dir, o.ResumeSettings, engineIO(stdio), h)
	if idx != nil {
		if perr := showSuite(idx, o.Dir, o.Output, stdio); perr != nil && err == nil {
			err = exit.With(exit.Tool, perr)
		}
	}
	if err != nil {
		return err
	}
	return suiteExit(idx)
}

// plainProgress is a suite skill's progress: one plain line per event,
// since several skills' blocks cannot be redrawn in place together.
func plainProgress(w io.Writer) engine.Progress { return newProgress(w, false) }

// chartOnly is a suite's Show hook: each skill's chart.html, its summary
// left to the table (and `report`). A chart it cannot write is said on the
// skill's own stderr, never the suite's: skills end side by side.
func chartOnly(dir string, r *record.Run, stderr io.Writer) error {
	if err := writeChart(dir, r); err != nil {
		fmt.Fprintf(stderr, "vibe-test: %s\n", term.Line(err.Error()))
	}
	return nil
}

// suiteDryRun prints, for each skill of the suite (or of the shard), what
// its run would call and cost, then the suite's total: no model call, no
// claude process, no folder.
func suiteDryRun(ctx context.Context, o RunOptions, stdio IO) error {
	s := suite.Settings{Settings: o.Settings, Paths: o.Args, Shard: o.Shard, Shards: o.Shards}
	if err := notForSuite(o, "(and rubric.json) lies beside its SKILL.md"); err != nil {
		return err
	}
	ests, err := suite.DryRun(ctx, s, stdio.Env, o.SeedSet)
	if err != nil {
		return err
	}
	total, priced, others := 0.0, true, ""
	var unpriced []string
	for _, e := range ests {
		writeEstimate(e, stdio)
		fmt.Fprintln(stdio.Stdout)
		total += e.Total
		priced = priced && e.AllPriced
		others = e.Agents
		for _, m := range e.Unpriced {
			if !slices.Contains(unpriced, m) {
				unpriced = append(unpriced, m)
			}
		}
	}
	switch {
	case others != "":
		fmt.Fprintf(stdio.Stdout, "suite: %s, estimated cost: none: prices: claude only (this suite goes through %s)\n", summary.Count(len(ests), "skill"), others)
	case priced:
		fmt.Fprintf(stdio.Stdout, "suite: %s, estimated cost $%.2f in all\n", summary.Count(len(ests), "skill"), total)
	case total == 0:
		// No call was priced: a total of $0.00 would read as free.
		fmt.Fprintf(stdio.Stdout, "suite: %s, estimated cost: none: the price table does not know %s (give --model/--judge-model with a model id to get one)\n", summary.Count(len(ests), "skill"), term.Line(strings.Join(unpriced, " and ")))
	default:
		fmt.Fprintf(stdio.Stdout, "suite: %s, estimated cost $%.2f for the calls priced above (some models have no price: see each skill)\n", summary.Count(len(ests), "skill"), total)
	}
	return nil
}
