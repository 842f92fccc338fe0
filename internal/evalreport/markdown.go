package evalreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/vibe-test/vibe-test/internal/mdtext"
)

// Markdown writes the eval as GitHub-flavoured Markdown (for
// $GITHUB_STEP_SUMMARY or a pull-request comment): the verdict, the
// per-measure tables (the holdout as aggregates), costs, and each
// candidate's decision. Text from the case set, the skill or a model is
// escaped, so it can neither inject Markdown or HTML nor break a table.
func Markdown(w io.Writer, v *View) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s%s\n\n", TitlePrefix, md(v.subject()))
	fmt.Fprintf(&b, "**%s** (exit %d): %s\n\n", verdictWord(v.Res.Verdict), v.Res.Exit, md(v.Res.Sentence))
	fmt.Fprintf(&b, "%s\n\n", md(v.Settings()))
	fmt.Fprintf(&b, "Goal: %s\n\n", md(v.Rec.Cases.Goal))
	mdTable(&b, v, fmt.Sprintf("Main cases (%d)", len(v.Rec.Cases.Main)), v.Main, false)
	if v.Holdout != nil {
		mdTable(&b, v, fmt.Sprintf("Holdout cases (%d, aggregates only)", len(v.Rec.Cases.Holdout)), v.Holdout, true)
	}
	fmt.Fprintf(&b, "| %s | generator | reader | grader | total |\n|---|---|---|---|---|\n", strings.ToLower(v.CostTitle()[:1])+v.CostTitle()[1:])
	for i, c := range v.Costs() {
		label := md(v.Columns[i].Info.Label)
		if v.Columns[i].Info.Stored {
			label += " (stored)"
		}
		fmt.Fprintf(&b, "| %s | %.4f | %.4f | %.4f | %.4f |\n", label, c.Generator, c.Reader, c.Grader, c.Total())
	}
	b.WriteString("\n")
	if in := v.Res.Instrument; in != nil {
		fmt.Fprintf(&b, "- base run 2 against base run 1: **%s**: %s\n", verdictWord(in.Second.Verdict), md(in.Second.Sentence))
		fmt.Fprintf(&b, "- the control against both base runs: **%s**: %s\n", verdictWord(in.Control.Verdict), md(in.Control.Sentence))
		if in.Resplits > 0 {
			fmt.Fprintf(&b, "- A/A re-splits of the baseline's repeats: %.0f%% of %d accepted\n", 100*in.ResplitAccept, in.Resplits)
		}
		b.WriteString("\n")
	}
	for _, c := range v.Res.Comparisons {
		fmt.Fprintf(&b, "### %s: %s\n\n", md(c.Candidate.Info.Label), verdictWord(c.Verdict))
		fmt.Fprintf(&b, "%s\n\n", md(c.Sentence))
		for _, part := range []struct {
			name string
			show bool
		}{{"main", true}, {"holdout", c.Holdout != nil}} {
			if !part.show {
				continue
			}
			d := c.Main
			if part.name == "holdout" {
				d = *c.Holdout
			}
			h1, h2 := boundHeads(d)
			fmt.Fprintf(&b, "| %s: %s | base | candidate | drop | %s | %s | |\n|---|---|---|---|---|---|---|\n", part.name, verdictWord(d.Verdict), h1, h2)
			for _, m := range d.Measures {
				res := measureStatus(d, m, "**worse**")
				c1, c2 := boundCols(d, m)
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", md(v.label(m.Name)), rateShort(m.Base), rateShort(m.Candidate), dropCol(d, m), c1, c2, res)
			}
			b.WriteString("\n")
			if pooledDiffers(d) {
				b.WriteString(md(strings.ReplaceAll(strings.ReplaceAll(pooledNote, "\n    ", " "), "base and candidate:", "Base and candidate:")) + ".\n\n")
			}
		}
		if c.Holdout != nil {
			fmt.Fprintf(&b, "Overfit gap: main gain %+.3f minus holdout gain %+.3f = %+.3f\n\n", c.Gain, c.HoldoutGain, c.Gain-c.HoldoutGain)
		}
		if len(c.Regressions) > 0 {
			b.WriteString("Regressed (passed at least 2/3 of the baseline repeats, failed every candidate repeat):\n\n")
			for _, r := range c.Regressions {
				fmt.Fprintf(&b, "- %s: %s\n", md(r.Case), md(v.label(r.Measure)))
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdTable(b *strings.Builder, v *View, title string, rows []Row, holdout bool) {
	fmt.Fprintf(b, "| %s |", md(title))
	for _, l := range v.ColumnLabels() {
		fmt.Fprintf(b, " %s |", md(l))
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(v.Columns)) + "\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s |", md(r.Label))
		for _, x := range r.Rates {
			fmt.Fprintf(b, " %s |", md(rate(x)))
		}
		b.WriteString("\n")
	}
	b.WriteString("| mean words |")
	for _, m := range v.MeanWords(holdout) {
		fmt.Fprintf(b, " %.0f |", m)
	}
	b.WriteString("\n\n")
}

// md makes text safe in Markdown, on one line (mdtext.Escape: the run
// summary's escaping, autolinks included).
func md(s string) string { return mdtext.Escape(s) }
