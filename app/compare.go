package app

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/term"
	"github.com/vibe-test/vibe-test/judge"
	"github.com/vibe-test/vibe-test/result"
	"github.com/vibe-test/vibe-test/stats"
)

// compareCommand applies seed 000's noise-based acceptance rule between
// skill versions: the last argument is the candidate run, the others are
// base runs whose pooled per-conversation totals measure the noise. Exit 0
// accepts, 1 rejects, 2 cannot decide, 3 bad input.
func compareCommand(c *cli.Context, stdio IO) error {
	args := c.Args().Slice()
	if len(args) < 2 {
		return exit.Errorf(exit.Tool, "compare: expected BASE_RUN [BASE_RUN2 ...] CANDIDATE_RUN, got %d arguments", len(args))
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
		r, err := result.Load(dir)
		if err != nil {
			return exit.With(exit.Tool, fmt.Errorf("compare: %w", err))
		}
		runs = append(runs, sampleRun(dir, r))
	}
	cmp := compareRuns(runs[:len(runs)-1], runs[len(runs)-1])
	cmp.write(stdio.Stdout)
	switch {
	case cmp.undecided != "":
		return exit.Errorf(exit.Indeterminate, "compare: cannot decide: %s", cmp.undecided)
	case !cmp.acc.Pass:
		return exit.Errorf(exit.Decay, "compare: candidate rejected: %s", strings.Join(cmp.failures(), "; "))
	}
	return nil
}

// compareJudgedTurns are the turns a conversation's total is taken over:
// the baseline and the three probes.
var compareJudgedTurns = []int{1, 6, 8, 10}

// comparedRun is one run reduced to what the acceptance rule reads.
type comparedRun struct {
	dir string
	run *result.Run
	// totals: per conversation with at least one pass/fail judged turn, the
	// fraction of those turns that passed.
	totals []float64
	// rates: per criterion, one outcome per judged turn that has a
	// pass/fail verdict (pass true, fail false; n/a skipped).
	rates map[string][]bool
	// criteria are the rubric's ids (or, without a rubric in run.json, the
	// ids seen in verdicts).
	criteria  []string
	unscored  int // conversations with no pass/fail judged turn
	gateStops int // conversations the baseline gate stopped after turn 1
}

// sampleRun scores a run: each conversation's total and each criterion's
// outcomes. Judge errors count as neither pass nor fail, so a turn the
// judge could not decide leaves the total and every criterion alone.
func sampleRun(dir string, r *result.Run) comparedRun {
	cr := comparedRun{dir: dir, run: r, rates: map[string][]bool{}}
	ids := map[string]bool{}
	if r.Rubric != nil {
		for _, c := range r.Rubric.Criteria {
			ids[c.ID] = true
		}
	}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		if c.Status == result.StatusBaselineFailed {
			cr.gateStops++
		}
		passed, judged := 0, 0
		for _, n := range compareJudgedTurns {
			t := c.TurnAt(n)
			if t == nil || t.Verdict == nil {
				continue
			}
			switch t.Verdict.Result {
			case judge.Pass:
				passed++
			case judge.Fail:
			default:
				continue
			}
			judged++
			for _, cv := range t.Verdict.Criteria {
				if r.Rubric == nil {
					ids[cv.ID] = true
				}
				switch cv.Result {
				case judge.Pass:
					cr.rates[cv.ID] = append(cr.rates[cv.ID], true)
				case judge.Fail:
					cr.rates[cv.ID] = append(cr.rates[cv.ID], false)
				}
			}
		}
		if judged == 0 {
			cr.unscored++
			continue
		}
		cr.totals = append(cr.totals, float64(passed)/float64(judged))
	}
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
	// sd is the noise: the SD of every base conversation's total, pooled
	// over the base runs.
	sd  float64
	acc stats.Acceptance
	// undecided, when set, is why no verdict can be given (exit 2).
	undecided string
	// dropped lists criteria left out of the per-criterion rule, with why.
	dropped []string
	notes   []string
}

// compareRuns applies the rule. Base runs are pooled: their conversations
// together form the base sample and the spread of their totals is the
// noise. Criteria are compared on the ids every run's rubric shares.
func compareRuns(bases []comparedRun, cand comparedRun) *comparison {
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
			cmp.notes = append(cmp.notes, fmt.Sprintf("WARNING: the base runs measure different contents of the skill (%s has hash %s, %s has %s): the difference between them is counted as noise, which widens the margin.",
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
		get  func(*result.Run) string
	}{
		{"agent model", func(r *result.Run) string { return r.Config.Model }},
		{"judge model", func(r *result.Run) string { return r.Config.JudgeModel }},
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
		if r.run.Status != result.StatusCompleted && r.run.Status != result.StatusBaselineFailed {
			cmp.notes = append(cmp.notes, fmt.Sprintf("WARNING: %s has status %q: only what it finished is compared.", r.dir, r.run.Status))
		}
		if r.gateStops > 0 {
			cmp.notes = append(cmp.notes, fmt.Sprintf("%s: the baseline gate stopped %d conversations after turn 1; their totals come from turn 1 alone.", r.dir, r.gateStops))
		}
		if r.unscored > 0 {
			cmp.notes = append(cmp.notes, fmt.Sprintf("%s: %d conversations have no judged turn with a pass or fail and are left out.", r.dir, r.unscored))
		}
	}

	// The samples: base runs pooled, criteria on the shared ids.
	shared := slices.Clone(bases[0].criteria)
	for _, r := range all[1:] {
		shared = slices.DeleteFunc(shared, func(id string) bool { return !slices.Contains(r.criteria, id) })
	}
	cmp.dropped = droppedCriteria(all, shared)
	base := stats.Sample{Rates: map[string][]bool{}}
	for _, b := range bases {
		base.Totals = append(base.Totals, b.totals...)
		for _, id := range shared {
			base.Rates[id] = append(base.Rates[id], b.rates[id]...)
		}
	}
	candSample := stats.Sample{Totals: cand.totals, Rates: map[string][]bool{}}
	for _, id := range shared {
		switch {
		case len(base.Rates[id]) == 0:
			cmp.dropped = append(cmp.dropped, id+": no pass or fail for it in the base runs")
			delete(base.Rates, id)
		case len(cand.rates[id]) == 0:
			cmp.dropped = append(cmp.dropped, id+": no pass or fail for it in the candidate")
			delete(base.Rates, id)
		default:
			candSample.Rates[id] = cand.rates[id]
		}
	}

	n := len(base.Totals)
	switch {
	case n < 2:
		cmp.undecided = fmt.Sprintf("the base runs have %s; the noise SD is undefined with fewer than 2 (run more conversations or a second base run)", plural(n, "scored conversation", "scored conversations"))
		return cmp
	case len(cand.totals) == 0:
		cmp.undecided = fmt.Sprintf("the candidate %s has no scored conversation", cand.dir)
		return cmp
	case len(shared) == 0:
		cmp.undecided = "the rubrics share no criterion, so the runs do not measure the same behaviour"
		return cmp
	}
	cmp.sd = stats.SD(base.Totals)
	cmp.acc = stats.Accept(base, candSample, cmp.sd)
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

// failures are the parts of the rule the candidate failed, for the error line.
func (cmp *comparison) failures() []string {
	var out []string
	a := cmp.acc
	if !a.TotalPass {
		out = append(out, fmt.Sprintf("total %.3f < bar %.3f", a.CandMean, a.BaseMean-a.Margin))
	}
	for _, c := range a.Criteria {
		if !c.Pass {
			out = append(out, fmt.Sprintf("%s %.3f < bar %.3f", c.Name, c.CandRate, c.BaseRate-c.Margin))
		}
	}
	return out
}

// write prints the runs, the noise, the table and the verdict.
func (cmp *comparison) write(w io.Writer) {
	fmt.Fprintf(w, "Compare: candidate %s against %s\n", cmp.cand.dir, plural(len(cmp.bases), "base run", "base runs"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(role string, r comparedRun) {
		mean := "-"
		if len(r.totals) > 0 {
			mean = fmt.Sprintf("%.3f", meanOf(r.totals))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\tskill %s\t%s scored\tmean total %s\n",
			role, r.dir, term.Line(r.run.Skill.Name), short(r.run.Skill.Hash), plural(len(r.totals), "conversation", "conversations"), mean)
	}
	for _, b := range cmp.bases {
		line("base", b)
	}
	line("candidate", cmp.cand)
	tw.Flush()

	if cmp.undecided == "" {
		var baseN int
		for _, b := range cmp.bases {
			baseN += len(b.totals)
		}
		fmt.Fprintf(w, "\nNoise: SD of the %d base conversation totals = %.3f; total margin = 2 x %.3f x sqrt(1/%d + 1/%d) = %.3f\n",
			baseN, cmp.sd, cmp.sd, len(cmp.cand.totals), baseN, cmp.acc.Margin)
		if len(cmp.bases) == 1 {
			fmt.Fprintln(w, "  One base run: the noise is estimated from within-run repeats only, so run-to-run variation (different days, API drift) is not in it and the margin may be too narrow. A second base run (vibe-test compare BASE1 BASE2 CANDIDATE) measures it.")
		}
		if cmp.sd == 0 {
			fmt.Fprintln(w, "  The base totals do not vary (SD 0): the margin is 0, so a candidate passes the total only by matching the base mean or better. Any drop fails; more base conversations would show whether that is noise.")
		}
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\tbase\tcandidate\tmargin\tbar\tresult")
		a := cmp.acc
		fmt.Fprintf(tw, "total (mean per conversation)\t%.3f (n=%d)\t%.3f (n=%d)\t%.3f\t%.3f\t%s\n",
			a.BaseMean, baseN, a.CandMean, len(cmp.cand.totals), a.Margin, a.BaseMean-a.Margin, passWord(a.TotalPass))
		zeroMargin := 0
		for _, c := range a.Criteria {
			var nb int
			for _, b := range cmp.bases {
				nb += len(b.rates[c.Name])
			}
			nc := len(cmp.cand.rates[c.Name])
			fmt.Fprintf(tw, "%s\t%.3f (n=%d)\t%.3f (n=%d)\t%.3f\t%.3f\t%s\n",
				c.Name, c.BaseRate, nb, c.CandRate, nc, c.Margin, c.BaseRate-c.Margin, passWord(c.Pass))
			if c.Margin == 0 {
				zeroMargin++
			}
		}
		tw.Flush()
		fmt.Fprintln(w, "Total: the candidate's mean must reach base mean - margin. Criteria: each rate must reach base rate - 2 binomial standard errors of the base rate; n counts judged turns.")
		switch {
		case zeroMargin == 1:
			fmt.Fprintln(w, "1 criterion has a base rate of 0 or 1, so its margin is 0: any drop fails it.")
		case zeroMargin > 1:
			fmt.Fprintf(w, "%d criteria have a base rate of 0 or 1, so their margin is 0: any drop fails them.\n", zeroMargin)
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
	case cmp.acc.Pass:
		fmt.Fprintln(w, "ACCEPT: the candidate stays within the measured noise of the base on the total and on every compared criterion. This is a non-inferiority bar, not proof of no change: a small real drop can hide in the noise.")
	default:
		fmt.Fprintf(w, "REJECT: the candidate fell below the bar: %s.\n", strings.Join(cmp.failures(), "; "))
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

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
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
