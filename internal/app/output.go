package app

import (
	"fmt"
	"io"

	"github.com/vibe-test/vibe-test/internal/atomicfile"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/junit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/term"
)

// outputFlags choose how a finished run is shown; run and report share them.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print the summary as one JSON object on stdout (the human summary goes to stderr)"},
		&cli.StringFlag{Name: "junit", Usage: "also write JUnit XML to `FILE` (a test suite per conversation, a test case per judged turn)"},
		&cli.StringFlag{Name: "markdown", Usage: "also write a Markdown summary to `FILE` (verdict, diluted vs fresh, cost, isolation; for $GITHUB_STEP_SUMMARY or a PR comment)"},
		&cli.BoolFlag{Name: "no-color", Usage: "plain output even on a terminal (NO_COLOR is honoured too)"},
	}
}

// output is what outputFlags chose.
type output struct {
	json     bool
	junit    string
	markdown string
	styled   bool
}

func outputFrom(c *cli.Context, stdio IO) output {
	styled := stdio.Styled && !c.Bool("no-color") && envValue(stdio.Env, "NO_COLOR") == ""
	return output{json: c.Bool("json"), junit: c.String("junit"), markdown: c.String("markdown"), styled: styled}
}

// show writes the run's artifacts for people and machines: chart.html in
// the run folder, the summary, the JSON summary and junit.xml when asked.
func (o output) show(dir string, r *record.Run, stdio IO) error {
	if err := writeChart(dir, r); err != nil {
		fmt.Fprintf(stdio.Stderr, "vibe-test: %s\n", term.Line(err.Error()))
	}
	human := stdio.Stdout
	if o.json {
		human = stdio.Stderr
	}
	summary.Summary(human, r, o.styled && !o.json)
	fmt.Fprintf(human, "run folder: %s\n", dir)
	if o.json {
		if err := summary.JSON(stdio.Stdout, r); err != nil {
			return err
		}
	}
	if o.junit != "" {
		if err := writeJUnit(o.junit, r); err != nil {
			return err
		}
	}
	if o.markdown != "" {
		if err := writeMarkdown(o.markdown, dir, r); err != nil {
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
