package compare

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/vibe-test/vibe-test/internal/term"
)

// Failures are the measures that dropped significantly, one phrase each.
func (cmp *Comparison) Failures() []string {
	var out []string
	for _, m := range cmp.Result.Measures {
		if m.Reject {
			out = append(out, fmt.Sprintf("%s %.3f vs base %.3f, adjusted p = %.3g <= %.3g", m.Name, m.Test.Diluted.Mean, m.Test.Fresh.Mean, m.Adjusted, cmp.Result.Alpha))
		}
	}
	return out
}

// Write prints the runs, the table of measures and the verdict.
func (cmp *Comparison) Write(w io.Writer) {
	// The folders' names are printed as the other text from outside is.
	fmt.Fprintf(w, "Compare: candidate %s against %s\n", term.Line(cmp.Candidate.Dir), plural(len(cmp.Bases), "base run", "base runs"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(role string, r Sample) {
		total := r.Units[Total]
		mean := "-"
		if len(total) > 0 {
			sum := 0.0
			for _, u := range total {
				sum += u.Share()
			}
			mean = fmt.Sprintf("%.3f", sum/float64(len(total)))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\tskill %s\t%s scored\tmean total %s\n",
			role, term.Line(r.Dir), term.Line(r.Run.Skill.Name), short(r.Run.Skill.Hash), plural(len(total), "conversation", "conversations"), mean)
	}
	for _, b := range cmp.Bases {
		line("base", b)
	}
	line("candidate", cmp.Candidate)
	tw.Flush()

	if len(cmp.Result.Measures) > 0 {
		fmt.Fprintf(w, "\nEach measure is a share per conversation (the conversations are the units). A permutation test of which run each conversation came from (every relabelling where there are at most %d, else up to %d at random) compares the versions; each measure's p is adjusted for all %d measures (maxT), and a measure fails at adjusted p <= alpha %.2g.\n\n",
			Permutations, Permutations, len(cmp.Result.Measures), cmp.Result.Alpha)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\tbase\tcandidate\tdrop\tadjusted p\tresult")
		for _, m := range cmp.Result.Measures {
			t := m.Test
			p, res := "-", "not testable"
			if t.Testable {
				p, res = fmt.Sprintf("%.3g", m.Adjusted), passWord(!m.Reject)
			}
			label := m.Name
			if m.Name == Total {
				label = "total (turns passed)"
			}
			fmt.Fprintf(tw, "%s\t%.3f (n=%d)\t%.3f (n=%d)\t%+.3f\t%s\t%s\n", label, t.Fresh.Mean, t.Fresh.Units, t.Diluted.Mean, t.Diluted.Units, t.Drop, p, res)
		}
		tw.Flush()
		fmt.Fprintln(w, "n counts conversations. A drop is base minus candidate.")
		if len(cmp.Bases) == 1 {
			fmt.Fprintln(w, "One base run: run-to-run variation (different days, API drift) is not in its spread. A second base run (vibe-test compare BASE1 BASE2 CANDIDATE) measures it.")
		}
	}
	if len(cmp.Dropped) > 0 {
		fmt.Fprintln(w, "\nCriteria not compared (a rubric that differs also changes what a turn's pass means, so read the totals with care):")
		for _, d := range cmp.Dropped {
			fmt.Fprintf(w, "  %s\n", term.Line(d))
		}
	}
	if len(cmp.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range cmp.Notes {
			fmt.Fprintln(w, term.Clean(n))
		}
	}
	fmt.Fprintln(w)
	switch {
	case cmp.Undecided != "":
		fmt.Fprintf(w, "CANNOT DECIDE: %s.\n", term.Line(cmp.Undecided))
	case !cmp.Result.Reject:
		fmt.Fprintln(w, "ACCEPT: no measure dropped significantly. This is not proof of no change: a small real drop can hide in the noise of this many conversations.")
	default:
		fmt.Fprintf(w, "REJECT: the candidate dropped significantly: %s.\n", strings.Join(cmp.Failures(), "; "))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func passWord(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

// short abbreviates a content hash for display.
func short(h string) string {
	if h == "" {
		return "(none)"
	}
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func orDefault(s string) string {
	if s == "" {
		return "the CLI's default"
	}
	return s
}
