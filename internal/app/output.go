package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/chart"
	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/evalreport"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/junit"
	"github.com/vibe-test/vibe-test/internal/ownfile"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/term"
)

// outputFlags choose how a finished run is shown; run and report share them.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "json", Category: catOutput, Usage: "print the summary as one JSON object on stdout (the human summary goes to stderr)"},
		&cli.StringFlag{Name: "junit", Category: catOutput, Usage: "also write JUnit XML to `FILE` (a test suite per conversation, a test case per judged turn)"},
		&cli.StringFlag{Name: "markdown", Category: catOutput, Usage: "also write a Markdown summary to `FILE` (verdict, diluted vs fresh, cost, isolation; for $GITHUB_STEP_SUMMARY or a PR comment)"},
		&cli.BoolFlag{Name: "no-color", Category: catOutput, Usage: "plain output even on a terminal (NO_COLOR is honoured too)"},
	}
}

// Output is what outputFlags chose.
type Output struct {
	JSON     bool   // --json
	JUnit    string // --junit FILE
	Markdown string // --markdown FILE
	NoColor  bool   // --no-color
}

func outputFrom(c *cli.Context) Output {
	return Output{JSON: c.Bool("json"), JUnit: c.String("junit"), Markdown: c.String("markdown"), NoColor: c.Bool("no-color")}
}

// checkFiles refuses, before any model call, an output file that could not
// be written when the run ends: its folder missing or not a folder, the
// path itself a folder, or one file named twice. Refused at the end it
// cost the run and left CI without its report. The file is not created
// here: a run that fails must not leave an empty junit.xml behind. Nor
// may it write over what is already there and not its own: a record or
// transcript of a run, suite or eval folder, or what keep names (the
// skill's folder, the config, the rubric: a file, or a folder whose files
// are kept).
//
// out is the folder the command is about to make (--out), or "": a report
// directly in it (`--out results --junit results/junit.xml`, a CI job's
// layout) has a folder by the time it is written, and was refused as
// having none.
func (o Output) checkFiles(out string, keep ...string) error {
	if o.JUnit != "" && o.Markdown != "" && sameFile(o.JUnit, o.Markdown) {
		return exit.Errorf(exit.Tool, "--junit and --markdown both name %s, expected two files", o.JUnit)
	}
	for _, f := range []struct{ flag, path string }{{"--junit", o.JUnit}, {"--markdown", o.Markdown}} {
		if f.path == "" {
			continue
		}
		if st, err := os.Stat(f.path); err == nil && st.IsDir() {
			return exit.Errorf(exit.Tool, "%s %s: a folder, expected a file to write", f.flag, f.path)
		}
		if isRecord(f.path) || inRecordFolder(f.path) {
			return exit.Errorf(exit.Tool, "%s %s: a vibe-test record, expected another file to write (writing over it would lose the run)", f.flag, f.path)
		}
		if k, ok := keptBy(f.path, keep); ok {
			return exit.Errorf(exit.Tool, "%s %s: an existing file of %s, expected another file to write (writing over it would lose it)", f.flag, f.path, k)
		}
		dir := filepath.Dir(f.path)
		st, err := os.Stat(dir)
		if errors.Is(err, fs.ErrNotExist) && out != "" && resolvedPath(dir) == resolvedPath(out) {
			continue // made by the command, before the report is written
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return exit.Errorf(exit.Tool, "%s %s: no folder %s, expected the file's folder to exist", f.flag, f.path, dir)
		case err != nil:
			return exit.Errorf(exit.Tool, "%s %s: %v", f.flag, f.path, err)
		case !st.IsDir():
			return exit.Errorf(exit.Tool, "%s %s: %s is a file, expected the file's folder", f.flag, f.path, dir)
		}
		// The file is written through a temporary one beside it, which
		// the folder must take (not read-only, not another user's): tried
		// now with an empty one, removed at once. Found at the end, it cost
		// the run and turned its exit code into 3.
		if err := atomicfile.CanCreateIn(dir); err != nil {
			return exit.Errorf(exit.Tool, "%s %s: folder %s takes no new file (%v), expected a folder vibe-test may write in", f.flag, f.path, dir, err)
		}
	}
	return nil
}

// resolvedPath is p absolute, with the links of its folders resolved: its
// longest part that exists, then the rest as written (p and its folder
// need not exist yet: a new --out's report). Two spellings of one place
// give one path.
func resolvedPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// sameFile says whether two paths name one file: spelled alike once
// absolute, in the same folder reached through a link, or one file
// already (a link to the other, a hard link).
func sameFile(a, b string) bool {
	if resolvedPath(a) == resolvedPath(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// styled says whether to show colours and rounded borders: on a terminal,
// unless --no-color or NO_COLOR says no.
func (o Output) styled(stdio IO) bool {
	return stdio.Styled && !o.NoColor && envValue(stdio.Env, "NO_COLOR") == ""
}

// show writes the run's artifacts for people and machines: chart.html in
// the run folder, the summary, the JSON summary and junit.xml when asked.
func (o Output) show(dir string, r *record.Run, stdio IO) error {
	if err := writeChart(dir, r); err != nil {
		fmt.Fprintf(stdio.Stderr, "vibe-test: %s\n", term.Line(err.Error()))
	}
	human := stdio.Stdout
	if o.JSON {
		human = stdio.Stderr
	}
	summary.Summary(human, r, o.styled(stdio) && !o.JSON)
	fmt.Fprintf(human, "run folder: %s\n", dir)
	if o.JSON {
		if err := summary.JSON(stdio.Stdout, r); err != nil {
			return err
		}
	}
	if o.JUnit != "" {
		if err := writeJUnit(o.JUnit, r); err != nil {
			return err
		}
	}
	if o.Markdown != "" {
		if err := writeMarkdown(o.Markdown, dir, r); err != nil {
			return err
		}
	}
	return nil
}

// writeMarkdown writes the file atomically, so a reader never sees half of
// it. It replaces the file: GitHub gives each step its own
// $GITHUB_STEP_SUMMARY, and the Action's script appends a copy to it when
// it must keep what is there.
func writeMarkdown(path, dir string, r *record.Run) error {
	entries := []summary.MarkdownEntry{{Dir: dir, Run: r}}
	if err := atomicfile.WriteFunc(path, record.FileMode, func(w io.Writer) error { return summary.Markdown(w, entries) }); err != nil {
		return fmt.Errorf("--markdown %s: %w", path, err)
	}
	return nil
}

// writeJUnit writes the file atomically, so CI never reads half of it.
func writeJUnit(path string, r *record.Run) error {
	if err := atomicfile.WriteFunc(path, record.FileMode, func(w io.Writer) error { return junit.Write(w, r) }); err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}

// checkOutside refuses a --junit or --markdown path inside the folder the
// command is about to make (out, "" for an automatic one) where the record
// will be: a .json or .jsonl file there is, or will be, the run's, suite's
// or eval's (`--out o --junit o/suite.json` replaced the new suite.json,
// and report and resume could not read the folder). junit.xml there is
// fine.
func (o Output) checkOutside(out string) error {
	if out == "" {
		return nil
	}
	// Resolved, links and all: `report LINK --markdown RUN/chart.html`,
	// LINK leading to RUN, replaced the chart.
	root := resolvedPath(out)
	for _, f := range []struct{ flag, path string }{{"--junit", o.JUnit}, {"--markdown", o.Markdown}} {
		if f.path == "" {
			continue
		}
		abs := resolvedPath(f.path)
		if !strings.HasPrefix(abs, root+string(filepath.Separator)) {
			continue
		}
		if recordExt(abs) || ownPage(abs) {
			return exit.Errorf(exit.Tool, "%s %s: inside %s, where the record is written, expected another file (a .json or .jsonl there is the record's; chart.html, index.html and report.html its pages)", f.flag, f.path, out)
		}
	}
	return nil
}

// inRecordFolder says whether path is an existing .json or .jsonl file
// inside a run, suite or eval folder, at any depth: a transcript, a cell,
// a judge's verdicts. `--junit run/conv-1/turn-01.jsonl` wrote over a
// transcript, and rejudge then judged the lost turn a fail.
func inRecordFolder(path string) bool {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return false
	}
	if !recordExt(path) {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		for _, name := range folderRecords {
			if _, err := os.Stat(filepath.Join(d, name)); err == nil {
				return true
			}
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// folderRecords are the files that make a folder a run's, a suite's or an
// eval's.
var folderRecords = []string{"run.json", record.SuiteFile, "eval.json"}

// ownPage says whether path is named as the pages vibe-test writes into
// its folders (a run's chart.html, a suite's index.html, an eval's
// report.html): --markdown OUT/chart.html replaced the run's chart.
func ownPage(path string) bool {
	switch filepath.Base(path) {
	case "chart.html", chart.SuitePageName, evalreport.HTMLName:
		return true
	}
	return false
}

// recordExt says whether path is named as a folder's records are: JSON
// (run.json, cells, verdicts) or JSON lines (transcripts).
func recordExt(path string) bool {
	ext := filepath.Ext(path)
	return ext == ".json" || ext == ".jsonl"
}

// keptBy names the entry of keep that path, an existing file, is or lies
// in (links resolved).
func keptBy(path string, keep []string) (string, bool) {
	st, err := os.Stat(path)
	// A report vibe-test wrote (JUnit or Markdown, of a run, a suite
	// or an eval) is not kept: `vibe-test . --junit junit.xml` run twice
	// in a skill's folder replaces its own report of the first run.
	if err != nil || ownfile.IsReport(path) {
		return "", false
	}
	real := resolvedPath(path)
	for _, k := range keep {
		kst, err := os.Stat(k)
		if k == "" || err != nil {
			continue
		}
		if os.SameFile(st, kst) {
			return k, true
		}
		if kst.IsDir() && strings.HasPrefix(real, resolvedPath(k)+string(filepath.Separator)) {
			return k, true
		}
	}
	return "", false
}

// skillFolders are the folders of the skills named on a command line (a
// SKILL.md's folder, or the folder given): their files are the author's.
func skillFolders(args []string) []string {
	var out []string
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && !st.IsDir() {
			a = filepath.Dir(a)
		}
		out = append(out, a)
	}
	return out
}

// recordedInputs are the author's files the run, suite or eval folder dir
// was made from, as its record names them: the skills' folders, the
// config, rubric, fillers and fixture, the case set. report, resume and
// merge write --junit and --markdown over none of them, as run and eval
// refuse to (checkFiles' keep): `report RUN --markdown skill/SKILL.md`
// replaced the skill, and the next resume found its hash changed. A record
// that does not load names none; its own error comes after, named.
func recordedInputs(dir string) []string {
	switch {
	case record.IsSuite(dir):
		s, err := record.LoadSuite(dir)
		if err != nil {
			return nil
		}
		var out []string
		for _, e := range s.Skills {
			out = append(out, skillFolders([]string{e.Path})...)
			out = append(out, runInputs(filepath.Join(dir, e.RunDir))...)
		}
		return out
	case eval.IsEvalDir(dir):
		rec, err := eval.LoadRecord(dir)
		if err != nil {
			return nil
		}
		return append(skillFolders([]string{rec.Skill.Path}), rec.Cases.Dir)
	}
	return runInputs(dir)
}

// runInputs is recordedInputs of one run folder.
func runInputs(dir string) []string {
	r, err := record.Load(dir)
	if err != nil {
		return nil
	}
	out := append(skillFolders([]string{r.Skill.Path}), r.Config.ConfigFile, r.Config.RubricFile, r.Config.FillersDir)
	if r.Plan != nil {
		out = append(out, r.Plan.Fixture)
	}
	return out
}

// isRecord says whether path is an existing record of a run, suite or
// eval folder (run.json, suite.json, eval.json, plan.json, rubric.json,
// verdicts-N.json, a baseline's manifest.json): --junit or --markdown
// mistyped as one wrote over it, and the folder was lost to report and
// resume.
func isRecord(path string) bool {
	if _, err := os.Stat(path); err != nil {
		return false
	}
	switch base := filepath.Base(path); {
	case slices.Contains(folderRecords, base), base == "plan.json", base == "rubric.json", base == "manifest.json":
		return true
	case strings.HasPrefix(base, "verdicts-") && strings.HasSuffix(base, ".json"):
		return true
	}
	return false
}
