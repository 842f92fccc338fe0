package evalreport

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/lipgloss"

	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/evalstats"
	"github.com/vibe-test/vibe-test/internal/term"
)

// Summary writes the terminal summary: the settings, the per-measure
// table (control, base 1, base 2, candidate, with Wilson 95% intervals)
// for the main cases and, as aggregates, for the holdout, the mean words
// and the cost per role, then the decision with its measures and the
// regressions. styled makes the verdict bold.
func Summary(w io.Writer, v *View, styled bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", term.Line(v.Title()))
	fmt.Fprintf(&b, "skill %s (%d lines, %d words, hash %s)\n", term.Line(v.Rec.Skill.Path), v.Rec.Skill.Lines, v.Rec.Skill.Words, short(v.Rec.Skill.Hash))
	fmt.Fprintf(&b, "%s\n", term.Line(v.Settings()))
	fmt.Fprintf(&b, "goal: %s\n", term.Line(v.Rec.Cases.Goal))
	for _, n := range v.Rec.Notes {
		fmt.Fprintf(&b, "note: %s\n", term.Line(n))
	}
	if v.Rec.Jail == "none" {
		fmt.Fprintf(&b, "warning: NO JAIL: %s\n", term.Line(v.Rec.JailNote))
	}
	b.WriteString("\n")
	table(&b, v, fmt.Sprintf("Main cases (%d)", len(v.Rec.Cases.Main)), v.Main, false)
	if v.Holdout != nil {
		b.WriteString("\n")
		table(&b, v, fmt.Sprintf("Holdout cases (%d, aggregates only)", len(v.Rec.Cases.Holdout)), v.Holdout, true)
	}
	// The intervals' kind, as report.html gives it: unlabelled, they read
	// as the decision's own.
	b.WriteString("[lo, hi]: the Wilson 95% interval of the share of cells that passed, the cells counted as\n")
	b.WriteString("independent (the cells of one case are not): it describes; the decision below is the rule's.\n")
	b.WriteString("\n")
	costs(&b, v)
	b.WriteString("\n")
	decision(&b, v, styled)
	io.WriteString(w, b.String())
}

// table writes one per-measure table.
func table(b *strings.Builder, v *View, title string, rows []Row, holdout bool) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s", title)
	for _, l := range v.ColumnLabels() {
		fmt.Fprintf(tw, "\t%s", term.Line(l))
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s", term.Line(r.Label))
		for _, x := range r.Rates {
			fmt.Fprintf(tw, "\t%s", rate(x))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "  mean words")
	for _, m := range v.MeanWords(holdout) {
		fmt.Fprintf(tw, "\t%.0f", m)
	}
	fmt.Fprintln(tw)
	tw.Flush()
}

// costs writes each run's cost by role; a stored run cost nothing now.
func costs(b *strings.Builder, v *View) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tgenerator\treader\tgrader\ttotal\n", v.CostTitle())
	total := eval.Costs{}
	for i, c := range v.Costs() {
		info := v.Columns[i].Info
		label := term.Line(info.Label)
		switch {
		case v.Rec.Rejudged && (!info.Stored || info.Regraded):
			// Its messages were made by the eval rejudged, its reading and
			// grading here: "cost when made" stood beside this rejudge's
			// reader and grader costs. A stored run copied as it was keeps
			// the label below.
			label += " (generator: when made; reader, grader: this rejudge)"
		case info.Stored:
			label += " (stored, cost when made)"
		}
		if !info.Stored {
			total.Generator += c.Generator
			total.Reader += c.Reader
			total.Grader += c.Grader
		}
		fmt.Fprintf(tw, "  %s\t%.4f\t%.4f\t%.4f\t%.4f\n", label, c.Generator, c.Reader, c.Grader, c.Total())
	}
	total = v.ThisEval(total)
	fmt.Fprintf(tw, "  this eval\t%.4f\t%.4f\t%.4f\t%.4f\n", total.Generator, total.Reader, total.Grader, total.Total())
	tw.Flush()
}

// decision writes the verdict and what it rests on.
func decision(b *strings.Builder, v *View, styled bool) {
	res := v.Res
	word := verdictWord(res.Verdict)
	if styled {
		word = lipgloss.NewStyle().Bold(true).Render(word)
	}
	fmt.Fprintf(b, "%s (exit %d): %s\n", word, res.Exit, term.Line(res.Sentence))
	if in := res.Instrument; in != nil {
		fmt.Fprintf(b, "  base run 2 against base run 1: %s (%s)\n", verdictWord(in.Second.Verdict), term.Line(in.Second.Sentence))
		fmt.Fprintf(b, "  the control against both base runs: %s (%s)\n", verdictWord(in.Control.Verdict), term.Line(in.Control.Sentence))
		if in.Resplits > 0 {
			fmt.Fprintf(b, "  A/A re-splits of the baseline's repeats: %.0f%% of %d accepted\n", 100*in.ResplitAccept, in.Resplits)
		}
	}
	for _, c := range res.Comparisons {
		fmt.Fprintf(b, "\n%s against the base runs, by %s:\n", term.Line(c.Candidate.Info.Label), v.RuleLine())
		measures(b, v, "main", c.Main)
		if c.Holdout != nil {
			measures(b, v, "holdout", *c.Holdout)
			fmt.Fprintf(b, "  overfit gap: main gain %+.3f minus holdout gain %+.3f = %+.3f\n", c.Gain, c.HoldoutGain, c.Gain-c.HoldoutGain)
		}
		if len(c.Regressions) > 0 {
			var parts []string
			for _, r := range c.Regressions {
				parts = append(parts, r.Case+" "+r.Measure)
			}
			fmt.Fprintf(b, "  regressed (passed at least 2/3 of the baseline repeats, failed every candidate repeat): %s\n", term.Line(strings.Join(parts, ", ")))
		}
		if len(res.Comparisons) > 1 {
			cost := eval.CostOf(append(append([]*eval.Cell{}, c.Candidate.Main...), c.Candidate.Holdout...))
			fmt.Fprintf(b, "  %s (exit %d), generation cost %.4f USD: %s\n", verdictWord(c.Verdict), c.Exit, cost.Generator, term.Line(c.Sentence))
		}
	}
	fmt.Fprintf(b, "eval folder: %s\n", term.Line(res.Dir))
}

// measureStatus is a measure's last column: worse, ok, or untested where
// the paired rule could not have found it worse (graded on both sides in
// fewer than 3 cases: "ok" there read as a measure that held).
func measureStatus(d evalstats.Decision, m evalstats.Measure, worse string) string {
	switch {
	case m.Reject:
		return worse
	case d.Rule != evalstats.RuleSeed && !m.Tested():
		return "untested"
	}
	return "ok"
}

// measures writes a decision's per-measure lines.
func measures(b *strings.Builder, v *View, part string, d evalstats.Decision) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	h1, h2 := boundHeads(d)
	fmt.Fprintf(tw, "  %s: %s\tbase\tcandidate\tdrop\t%s\t%s\t\n", part, verdictWord(d.Verdict), h1, h2)
	for _, m := range d.Measures {
		res := measureStatus(d, m, "WORSE")
		c1, c2 := boundCols(d, m)
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\t%s\t%s\n", term.Line(v.label(m.Name)), rateShort(m.Base), rateShort(m.Candidate), dropCol(d, m), c1, c2, res)
	}
	tw.Flush()
	if pooledDiffers(d) {
		b.WriteString("    (" + pooledNote + ")\n")
	}
	if part == "main" || d.Verdict != evalstats.Accept {
		fmt.Fprintf(b, "    %s\n", term.Line(d.Sentence))
	}
}

// pooledNote says why a table's drop is not its base minus its candidate
// (pooledDiffers), wrapped for the terminal's table.
const pooledNote = "base and candidate: graded measures passed, pooled over the cases; drop: the mean of the per-case drops\n" +
	"    over the cases graded on both sides, the paired rule's estimate; they differ where cases have different\n" +
	"    numbers of graded measures"

// pooledDiffers says whether a paired decision's table shows a drop that
// is not its base minus its candidate as printed: "1.000 0.600 +0.417" read
// as a slip of arithmetic where three cases had a measure n/a.
func pooledDiffers(d evalstats.Decision) bool {
	if d.Rule == evalstats.RuleSeed {
		return false
	}
	for _, m := range d.Measures {
		if m.Cases > 0 && m.Base.Graded > 0 && m.Candidate.Graded > 0 && math.Abs(m.Base.Rate-m.Candidate.Rate-m.Drop) >= 0.0005 {
			return true
		}
	}
	return false
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
