package app

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/compare"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/term"
)

// compareCommand applies the compare package's rule between skill
// versions: the last argument is the candidate run, the others are base
// runs, pooled. Exit 0 accepts, 1 rejects, 2 cannot decide, 3 bad input.
func compareCommand(c *cli.Context, stdio IO) error {
	args := c.Args().Slice()
	if len(args) < 2 {
		return exit.Errorf(exit.Tool, "compare: expected BASE_RUN [BASE_RUN2 ...] CANDIDATE_RUN, got %d arguments", len(args))
	}
	alpha := c.Float64("alpha")
	if alpha <= 0 || alpha >= 0.5 {
		return exit.Errorf(exit.Tool, "compare: --alpha: %v, expected a level between 0 and 0.5", alpha)
	}
	seen := map[string]string{}
	runs := make([]comparedRun, 0, len(args))
	for _, dir := range args {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return exit.With(exit.Tool, fmt.Errorf("compare: %s: %w", dir, err))
		}
		if first, ok := seen[abs]; ok {
			return exit.Errorf(exit.Tool, "compare: %s is given twice (also as %s): a run counted twice would shrink the measured noise", dir, first)
		}
		seen[abs] = dir
		r, err := record.Load(dir)
		if err != nil {
			return exit.With(exit.Tool, fmt.Errorf("compare: %w", err))
		}
		runs = append(runs, sampleRun(dir, r))
	}
	cmp := compareRuns(runs[:len(runs)-1], runs[len(runs)-1], alpha)
	cmp.write(stdio.Stdout)
	switch {
	case cmp.undecided != "":
		return exit.Errorf(exit.Indeterminate, "compare: cannot decide: %s", cmp.undecided)
	case cmp.res.Reject:
		return exit.Errorf(exit.Decay, "compare: candidate rejected: %s", strings.Join(cmp.failures(), "; "))
	}
	return nil
}

// comparedRun is one run reduced to what the rule reads.
type comparedRun struct {
	dir    string
	run    *record.Run
	units  map[string][]stats.Unit // per measure, one unit per scored conversation
	scored []compare.Scored        // per scored conversation, its measures
	// criteria are the rubric's ids (or, without a rubric in run.json, the
	// ids seen in verdicts).
	criteria  []string
	unscored  int // conversations with no pass/fail judged turn
	gateStops int // conversations the baseline gate stopped after turn 1
}

// sampleRun scores a run's conversations (compare.Units).
func sampleRun(dir string, r *record.Run) comparedRun {
	scored := compare.Score(r)
	cr := comparedRun{dir: dir, run: r, units: compare.ByMeasure(scored), scored: scored}
	ids := map[string]bool{}
	if r.Rubric != nil {
		for _, c := range r.Rubric.Criteria {
			ids[c.ID] = true
		}
	} else {
		for id := range cr.units {
			if id != compare.Total {
				ids[id] = true
			}
		}
	}
	for i := range r.Conversations {
		if r.Conversations[i].Status == record.StatusBaselineFailed {
			cr.gateStops++
		}
	}
	cr.unscored = len(r.Conversations) - len(cr.units[compare.Total])
	for id := range ids {
		cr.criteria = append(cr.criteria, id)
	}
	slices.Sort(cr.criteria)
	return cr
}

// comparison is the outcome of compareRuns, ready to print.
type comparison struct {
	bases []comparedRun
	cand  comparedRun
	res   compare.Result
	// undecided, when set, is why no verdict can be given (exit 2).
	undecided string
	// dropped lists criteria left out of the rule, with why.
	dropped []string
	notes   []string
}

// compareRuns applies the rule. Base runs are pooled; criteria are
// compared on the ids every run's rubric shares.
func compareRuns(bases []comparedRun, cand comparedRun, alpha float64) *comparison {
	cmp := &comparison{bases: bases, cand: cand}
	all := append(slices.Clone(bases), cand)

	// The same skill by name; its content is expected to differ.
	name := bases[0].run.Skill.Name
	for _, r := range all[1:] {
		if r.run.Skill.Name != name {
			cmp.undecided = fmt.Sprintf("the runs measure different skills (%s is %q, %s is %q); compare versions of one skill",
				bases[0].dir, name, r.dir, r.run.Skill.Name)
			return cmp
		}
	}
	baseHash := bases[0].run.Skill.Hash
	for _, b := range bases[1:] {
		if b.run.Skill.Hash != baseHash {
			cmp.notes = append(cmp.notes, fmt.Sprintf("WARNING: the base runs measure different contents of the skill (%s has hash %s, %s has %s): they are pooled as one base.",
				bases[0].dir, short(baseHash), b.dir, short(b.run.Skill.Hash)))
			break
		}
	}
	if cand.run.Skill.Hash != baseHash {
		cmp.notes = append(cmp.notes, fmt.Sprintf("The candidate's skill content differs from the base (hash %s vs %s), as expected between versions.",
			short(cand.run.Skill.Hash), short(baseHash)))
	} else {
		cmp.notes = append(cmp.notes, "The candidate has the same skill content as the base (same hash): unless the model, the task or the agent changed, this compares the base with itself (an A/A check).")
	}
	for _, field := range []struct {
		what string
		get  func(*record.Run) string
	}{
		{"agent model", func(r *record.Run) string { return r.Config.Model }},
		{"judge model", func(r *record.Run) string { return r.Config.JudgeModel }},
		// A resumed process re-reads the whole skill at each invocation; a
		// live session answers "already loaded": not the same dilution.
		{"session mode", func(r *record.Run) string { return record.SessionModeOf(r.Config) }},
		// Ten turns of passages and 150k tokens of tool output, or a
		// compacted session, are different dilutions.
		{"schedule", func(r *record.Run) string {
			if r.Plan == nil || r.Plan.Schedule.Default() {
				return "the seed's ten turns"
			}
			return summary.ScheduleWords(r.Plan.Schedule)
		}},
	} {
		for _, r := range all[1:] {
			if a, b := field.get(bases[0].run), field.get(r.run); a != b {
				cmp.notes = append(cmp.notes, fmt.Sprintf("WARNING: the %s differs (%s: %s, %s: %s): the comparison mixes it with the skill change.",
					field.what, bases[0].dir, orDefault(a), r.dir, orDefault(b)))
				break
			}
		}
	}
	for _, r := range all {
		if r.run.Status != record.StatusCompleted && r.run.Status != record.StatusBaselineFailed {
			cmp.notes = append(cmp.notes, fmt.Sprintf("WARNING: %s has status %q: only what it finished is compared.", r.dir, r.run.Status))
		}
		if r.gateStops > 0 {
			cmp.notes = append(cmp.notes, fmt.Sprintf("%s: the baseline gate stopped %s after turn 1; their scores come from turn 1 alone.", r.dir, plural(r.gateStops, "conversation", "conversations")))
		}
		if r.unscored > 0 {
			cmp.notes = append(cmp.notes, fmt.Sprintf("%s: %s without a judged turn that passed or failed left out.", r.dir, plural(r.unscored, "conversation", "conversations")))
		}
	}

	shared := slices.Clone(bases[0].criteria)
	for _, r := range all[1:] {
		shared = slices.DeleteFunc(shared, func(id string) bool { return !slices.Contains(r.criteria, id) })
	}
	cmp.dropped = droppedCriteria(all, shared)
	var baseScored []compare.Scored
	for _, b := range bases {
		baseScored = append(baseScored, b.scored...)
	}
	base := compare.ByMeasure(baseScored)
	if len(shared) == 0 {
		cmp.undecided = "the rubrics share no criterion, so the runs do not measure the same behaviour"
		return cmp
	}
	for _, id := range shared {
		switch {
		case len(base[id]) == 0:
			cmp.dropped = append(cmp.dropped, id+": no pass or fail for it in the base runs")
		case len(cand.units[id]) == 0:
			cmp.dropped = append(cmp.dropped, id+": no pass or fail for it in the candidate")
		}
	}
	cmp.res = compare.Decide(baseScored, cand.scored, shared, alpha)
	cmp.undecided = cmp.res.Undecided
	return cmp
}

// droppedCriteria names each criterion not in every run's rubric, with the
// runs that lack it.
func droppedCriteria(all []comparedRun, shared []string) []string {
	var ids []string
	for _, r := range all {
		for _, id := range r.criteria {
			if !slices.Contains(shared, id) && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		var lacking []string
		for _, r := range all {
			if !slices.Contains(r.criteria, id) {
				lacking = append(lacking, r.dir)
			}
		}
		out = append(out, fmt.Sprintf("%s: not in the rubric of %s", id, strings.Join(lacking, ", ")))
	}
	return out
}

// failures are the measures that dropped significantly, for the error line.
func (cmp *comparison) failures() []string {
	var out []string
	for _, m := range cmp.res.Measures {
		if m.Reject {
			out = append(out, fmt.Sprintf("%s %.3f vs base %.3f, adjusted p = %.3g <= %.3g", m.Name, m.Test.Diluted.Mean, m.Test.Fresh.Mean, m.Adjusted, cmp.res.Alpha))
		}
	}
	return out
}

// write prints the runs, the table and the verdict.
func (cmp *comparison) write(w io.Writer) {
	fmt.Fprintf(w, "Compare: candidate %s against %s\n", cmp.cand.dir, plural(len(cmp.bases), "base run", "base runs"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(role string, r comparedRun) {
		total := r.units[compare.Total]
		mean := "-"
		if len(total) > 0 {
			sum := 0.0
			for _, u := range total {
				sum += u.Share()
			}
			mean = fmt.Sprintf("%.3f", sum/float64(len(total)))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\tskill %s\t%s scored\tmean total %s\n",
			role, r.dir, term.Line(r.run.Skill.Name), short(r.run.Skill.Hash), plural(len(total), "conversation", "conversations"), mean)
	}
	for _, b := range cmp.bases {
		line("base", b)
	}
	line("candidate", cmp.cand)
	tw.Flush()

	if len(cmp.res.Measures) > 0 {
		fmt.Fprintf(w, "\nEach measure is a share per conversation (the conversations are the units). A permutation test of which run each conversation came from (%d relabellings) compares the versions; each measure's p is adjusted for all %d measures (maxT), and a measure fails at adjusted p <= alpha %.2g.\n\n",
			compare.Permutations, len(cmp.res.Measures), cmp.res.Alpha)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\tbase\tcandidate\tdrop\tadjusted p\tresult")
		for _, m := range cmp.res.Measures {
			t := m.Test
			p, res := "-", "not testable"
			if t.Testable {
				p, res = fmt.Sprintf("%.3g", m.Adjusted), passWord(!m.Reject)
			}
			label := m.Name
			if m.Name == compare.Total {
				label = "total (turns passed)"
			}
			fmt.Fprintf(tw, "%s\t%.3f (n=%d)\t%.3f (n=%d)\t%+.3f\t%s\t%s\n", label, t.Fresh.Mean, t.Fresh.Units, t.Diluted.Mean, t.Diluted.Units, t.Drop, p, res)
		}
		tw.Flush()
		fmt.Fprintln(w, "n counts conversations. A drop is base minus candidate.")
		if len(cmp.bases) == 1 {
			fmt.Fprintln(w, "One base run: run-to-run variation (different days, API drift) is not in its spread. A second base run (vibe-test compare BASE1 BASE2 CANDIDATE) measures it.")
		}
	}
	if len(cmp.dropped) > 0 {
		fmt.Fprintln(w, "\nCriteria not compared (a rubric that differs also changes what a turn's pass means, so read the totals with care):")
		for _, d := range cmp.dropped {
			fmt.Fprintf(w, "  %s\n", term.Line(d))
		}
	}
	if len(cmp.notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range cmp.notes {
			fmt.Fprintln(w, term.Clean(n))
		}
	}
	fmt.Fprintln(w)
	switch {
	case cmp.undecided != "":
		fmt.Fprintf(w, "CANNOT DECIDE: %s.\n", cmp.undecided)
	case !cmp.res.Reject:
		fmt.Fprintln(w, "ACCEPT: no measure dropped significantly. This is not proof of no change: a small real drop can hide in the noise of this many conversations.")
	default:
		fmt.Fprintf(w, "REJECT: the candidate dropped significantly: %s.\n", strings.Join(cmp.failures(), "; "))
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
