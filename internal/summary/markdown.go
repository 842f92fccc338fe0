package summary

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/vibe-test/vibe-test/internal/chart"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/mdtext"
	"github.com/vibe-test/vibe-test/internal/record"
	statpkg "github.com/vibe-test/vibe-test/internal/stats"
)

// MarkdownEntry is one skill's run for Markdown: Name is what its row
// shows (the skill's name when empty), Dir its run folder, Run its record
// (nil when the skill has none, as a suite's skill that never started).
type MarkdownEntry struct {
	Name string
	Dir  string
	Run  *record.Run
}

// Markdown writes a GitHub-flavoured Markdown summary of one or more runs,
// for $GITHUB_STEP_SUMMARY, a pull-request comment or any CI that renders
// Markdown: one table row per entry, then each entry's details. Every
// verdict word and sentence is the run's own Outcome (verdict.Decide's);
// nothing here judges. Text that came from a user or a model (skill names,
// sentences that quote tool output, notes, paths) is stripped of control
// characters and escaped, so it can neither inject Markdown or HTML nor
// break the table.
func Markdown(w io.Writer, entries []MarkdownEntry) error {
	var b strings.Builder
	b.WriteString("## vibe-test\n\n")
	b.WriteString("| skill | verdict | diluted | fresh | drop | effective turn | conversations | cost | isolation |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, e := range entries {
		b.WriteString(markdownRow(e) + "\n")
	}
	for _, e := range entries {
		b.WriteString("\n")
		markdownDetails(&b, e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func entryName(e MarkdownEntry) string {
	if e.Name == "" && e.Run != nil {
		return e.Run.Skill.Name
	}
	return e.Name
}

// markdownRow is the entry's table row; every cell is one line.
func markdownRow(e MarkdownEntry) string {
	name := md(entryName(e))
	r := e.Run
	if r == nil {
		return "| " + name + " | no run record | - | - | - | - | - | - | - |"
	}
	o := r.Outcome
	verdict := fmt.Sprintf("**%s** (exit %d)", md(o.Verdict), o.Exit)
	if r.GateBypassed {
		verdict = "**BASELINE GATE BYPASSED** " + verdict
	}
	c := o.Stats.Comparison
	drop := "-"
	if c.Testable {
		drop = fmt.Sprintf("%+.0f points, p = %.3g", 100*c.Drop, c.P)
	}
	eff := "-"
	if o.Stats.EffectiveTurn > 0 {
		eff = fmt.Sprint(o.Stats.EffectiveTurn)
	}
	cost := usd(r.Costs.Total)
	if r.Config.CostEstimated {
		// codex, gemini: priced from token counts, as the bullet below
		// says; the table's cell read as the CLI's own figure.
		cost += " (estimated)"
	}
	cells := []string{
		name, verdict, armCell(c.Diluted), armCell(c.Fresh), drop, eff,
		fmt.Sprintf("%d (%d in the diluted arm)", len(r.Conversations), c.Diluted.Units),
		cost, isolationCell(r),
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

// armCell is an arm's judged probes: "4/6 (67%)".
func armCell(a statpkg.ArmSummary) string {
	if a.Probes == 0 {
		return "none judged"
	}
	return fmt.Sprintf("%d/%d (%s)", a.Passed, a.Probes, Percent(float64(a.Passed)/float64(a.Probes)))
}

func isolationCell(r *record.Run) string {
	switch r.Jail {
	case jail.Bubblewrap:
		return "jail (bubblewrap)"
	case jail.None:
		return "**NO JAIL**"
	}
	return md(r.Isolation) // a run from before the jail
}

// usd is a cost as chart.USD writes it, with the sign escaped: two
// unescaped dollar signs on a line are inline maths to GitHub.
func usd(v float64) string {
	return `\` + chart.USD(v)
}

func markdownDetails(b *strings.Builder, e MarkdownEntry) {
	fmt.Fprintf(b, "### %s\n\n", md(entryName(e)))
	r := e.Run
	if r == nil {
		b.WriteString("No run record.\n")
		if e.Dir != "" {
			fmt.Fprintf(b, "\n- run folder: %s\n", md(e.Dir))
		}
		return
	}
	if r.GateBypassed {
		// A GitHub alert box; elsewhere a bold block quote: loud either way.
		fmt.Fprintf(b, "> [!CAUTION]\n> **%s**\n\n", md(BypassBanner))
	}
	for i := range r.Conversations {
		if c := &r.Conversations[i]; c.ModelChange != "" {
			fmt.Fprintf(b, "> [!WARNING]\n> **MODEL CHANGED in conversation %d:** %s (%s)\n\n", c.Index, md(c.ModelChange), md(Confound))
		}
	}
	o := r.Outcome
	fmt.Fprintf(b, "**%s** (exit %d)\n\n", md(o.Sentence), o.Exit)

	s := o.Stats
	c := s.Comparison
	fmt.Fprintf(b, "- diluted: %s over %s, %s, %s\n", armWords(c.Diluted), md(s.DilutedPopulation), Count(c.Diluted.Units, "unit"), unitRate(c.Diluted))
	fmt.Fprintf(b, "- fresh: %s over %s, %s, %s\n", armWords(c.Fresh), record.PopFresh, Count(c.Fresh.Units, "unit"), unitRate(c.Fresh))
	if c.Testable {
		fmt.Fprintf(b, "- diluted vs fresh (each probe against itself, Welch one-sided on the mean of the per-probe pass rates): drop %+.0f points, p = %.3g, alpha %.2g", 100*c.Drop, c.P, s.Alpha)
		if s.MinDetectableDrop > 0 {
			fmt.Fprintf(b, "; simulated on runs like this one, the rule catches a drop of %.0f points in 80%% of them", 100*s.MinDetectableDrop)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(b, "- diluted vs fresh: not testable (each arm needs at least %d units with a judged probe)\n", statpkg.MinUnitsPerArm)
	}
	byProbe := r.Plan != nil && !r.Plan.Schedule.Default()
	if byProbe {
		fmt.Fprintf(b, "- schedule: %s\n", md(ScheduleWords(r)))
	}
	for _, p := range s.Probes {
		if byProbe {
			// The label is numbers and fixed words: nothing to escape.
			fmt.Fprintf(b, "  - %s: diluted %d/%d, fresh %d/%d\n", ProbeLabel(p.Probe, p.Turn, p.ContextTokens, p.AfterCompaction, false), p.DilutedPass, p.DilutedN, p.FreshPass, p.FreshN)
			continue
		}
		fmt.Fprintf(b, "  - turn %d: diluted %d/%d, fresh %d/%d\n", p.Turn, p.DilutedPass, p.DilutedN, p.FreshPass, p.FreshN)
	}
	if s.EffectiveTurn > 0 {
		fmt.Fprintf(b, "- effective turn: %d (the last probe whose diluted pass rate is still at least 85%% of its fresh rate)\n", s.EffectiveTurn)
	}
	fmt.Fprintf(b, "- conversations: %d run, %d in the diluted arm (%s); %s\n", len(r.Conversations), c.Diluted.Units, md(s.DilutedPopulation), Count(len(r.Fresh), "fresh triple"))
	fmt.Fprintf(b, "- %s: %s (%s%s)\n", costWord(r), usd(r.Costs.Total), costs(r).Breakdown(usd), stoppedSpend(r, usd))
	fmt.Fprintf(b, "- isolation: %s%s\n", md(r.Isolation), jailWords(r.Jail))
	if r.Jail == jail.None {
		fmt.Fprintf(b, "- **NO JAIL:** %s\n", md(r.JailNote))
	}
	if l := agentLine(r); l != "" {
		fmt.Fprintf(b, "- %s\n", md(l))
	}
	for _, n := range o.Notes {
		if n == BypassBanner {
			continue // already the alert above
		}
		fmt.Fprintf(b, "- note: %s\n", md(n))
	}
	if e.Dir != "" {
		fmt.Fprintf(b, "- run folder: %s\n", md(e.Dir))
	}
}

// Percent is a share in whole percent, but never 100% for a share below
// 1 nor 0% for one above 0: there it shows tenths, rounded away from the
// end (299 of 300 is 99.6%, not "100%" beside an interval that says
// otherwise).
func Percent(x float64) string {
	whole := fmt.Sprintf("%.0f%%", 100*x)
	switch {
	case whole == "100%" && x < 1:
		return fmt.Sprintf("%.1f%%", math.Min(math.Floor(1000*x)/10, 99.9))
	case whole == "0%" && x > 0:
		return fmt.Sprintf("%.1f%%", math.Max(math.Ceil(1000*x)/10, 0.1))
	}
	return whole
}

// unitRate is an arm's mean per-unit pass rate, the test's figure; an arm
// with no unit has none (its mean of 0 is no measurement).
func unitRate(a statpkg.ArmSummary) string {
	if a.Units == 0 {
		return "no pass rate"
	}
	return "pass rate " + Percent(a.Mean)
}

func armWords(a statpkg.ArmSummary) string {
	if a.Probes == 0 {
		return "no probe judged"
	}
	return fmt.Sprintf("%d of %d probes passed (%s)", a.Passed, a.Probes, Percent(float64(a.Passed)/float64(a.Probes)))
}

// md makes text safe inside a Markdown line or table cell (mdtext.Escape).
func md(s string) string { return mdtext.Escape(s) }
