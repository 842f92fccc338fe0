// Package summary turns a run record into what people read: the terminal
// summary and the chart's data. It reads only run.json, so an old run can be
// redrawn with the current code.
package summary

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/vibe-test/vibe-test/internal/chart"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
	"github.com/vibe-test/vibe-test/internal/term"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// BypassBanner is the first line of every artifact of a run whose gate was
// bypassed.
const BypassBanner = record.BypassBanner

// Cell is what a turn shows in the summary: PASS, FAIL, ESCAPE, JUDGE-ERROR,
// filler, ERROR, or "-" when not run.
func Cell(t *record.Turn) string {
	switch {
	case t == nil:
		return "-"
	case t.Status == record.TurnTimedOut:
		return "TIMEOUT"
	case t.Status != record.TurnOK:
		return "ERROR"
	case t.Kind == plan.KindFiller:
		return "filler"
	case t.Verdict == nil:
		return "not judged"
	case t.Verdict.EscapeHatch:
		return "ESCAPE"
	case t.Verdict.Result == judge.Pass && t.Verdict.Partial:
		return "PASS*"
	case t.Verdict.Result == judge.Pass:
		return "PASS"
	case t.Verdict.Result == judge.Fail:
		return "FAIL"
	}
	return strings.ToUpper(t.Verdict.Result)
}

// Summary writes the terminal summary. styled=false gives plain ASCII for
// logs and pipes (CI).
func Summary(w io.Writer, r *record.Run, styled bool) {
	var b strings.Builder
	red := lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("9"))
	bold := lipgloss.NewStyle().Bold(true)
	paint := func(s lipgloss.Style, text string) string {
		if !styled {
			return text
		}
		return s.Render(text)
	}
	if r.GateBypassed {
		b.WriteString(paint(red, "!! "+BypassBanner) + "\n")
	}
	// Text from the skill, the CLI, the judge or a tool goes through
	// term.Line: it may carry escape sequences.
	clean := term.Line
	for i := range r.Conversations {
		if c := &r.Conversations[i]; c.ModelChange != "" {
			b.WriteString(paint(red, fmt.Sprintf("!! MODEL CHANGED in conversation %d: %s (%s)", c.Index, clean(c.ModelChange), Confound)) + "\n")
		}
	}
	dot, arrow := "·", "→"
	if !styled {
		dot, arrow = "-", "->" // logs and pipes stay ASCII
	}
	fmt.Fprintf(&b, "%s  %s %s %s %s status %s\n", paint(bold, "vibe-test"), clean(r.Skill.Name), dot, Count(len(r.Conversations), "conversation"), dot, r.Status)
	for _, cli := range r.Versions.CLIs(r.Config) {
		if cli.Mismatch {
			fmt.Fprintf(&b, "warning: %s %s differs from the version the parser was verified on (%s)\n", cli.Name, clean(cli.Version), clean(cli.Verified))
		}
	}
	fmt.Fprintf(&b, "isolation: %s%s\n", clean(r.Isolation), jailWords(r.Jail))
	if r.Jail == jail.None {
		b.WriteString(paint(red, "!! NO JAIL: "+clean(r.JailNote)) + "\n")
	}
	if l := agentLine(r); l != "" {
		b.WriteString(clean(l) + "\n")
	}
	for _, a := range skillAlerts(r) {
		b.WriteString(paint(red, clean(a)) + "\n")
	}
	b.WriteString("\n")

	headers, rows := turnTable(r, clean)
	if r.Plan != nil && !r.Plan.Schedule.Default() {
		b.WriteString("schedule: " + ScheduleWords(r) + "\n")
	}
	tbl := table.New().Headers(headers...).Rows(rows...)
	if !styled {
		tbl = tbl.Border(lipgloss.ASCIIBorder())
	} else {
		tbl = tbl.Border(lipgloss.RoundedBorder())
	}
	b.WriteString(tbl.Render() + "\n")
	b.WriteString("PASS* = passed, with a judge escape-hatch flag downgraded (a required step's check passed); skill = the skill under test loaded (yes) or its Skill call was refused (DENIED)\n\n")

	for i := range r.Conversations {
		c := &r.Conversations[i]
		first, last := contextRange(c)
		line := fmt.Sprintf("conversation %d: %s", c.Index, clean(c.Status))
		if c.Shape != "" {
			line += ", shape " + clean(c.Shape)
		}
		if first > 0 {
			line += fmt.Sprintf(", context %s %s %s tokens", commas(first), arrow, commas(last))
		}
		b.WriteString(line + "\n")
		if c.Error != "" {
			fmt.Fprintf(&b, "  %s\n", clean(c.Error))
		}
		for _, a := range convAlerts(c) {
			// A set-up problem quotes a tool's output; a hook's name and
			// outcome are the CLI's.
			b.WriteString("  " + paint(red, clean(a)) + "\n")
		}
		for _, rw := range c.Rewinds {
			fmt.Fprintf(&b, "  note: turn %d ran again (%s); the session was cut back to the end of turn %d first (%d lines, %d bytes of the stopped try), so the model saw its prompt once\n",
				rw.Turn, clean(rw.Reason), rw.Turn-1, rw.RemovedLines, rw.RemovedBytes)
		}
		for k := range c.Turns {
			t := &c.Turns[k]
			for _, cp := range t.Compactions {
				fmt.Fprintf(&b, "  turn %d: %s\n", t.Turn, CompactionWords(cp))
			}
			if t.LevelNotReached {
				fmt.Fprintf(&b, "  probe %d (turn %d) was asked short of its level: the context reached %s of %s tokens before the filler cap\n", t.ProbeNumber(), t.Turn, commas(t.ContextBefore), commas(t.Level))
			}
			if t.Verdict == nil {
				continue
			}
			if t.Verdict.EscapeHatch {
				fmt.Fprintf(&b, "  turn %d escape hatch: %s\n", t.Turn, clean(t.Verdict.EscapeReason))
			}
			if t.Verdict.OverCall {
				fmt.Fprintf(&b, "  turn %d: judge flagged an escape hatch (%s) but a required step ran: downgraded to partial compliance\n", t.Turn, clean(t.Verdict.EscapeReason))
			}
			if t.Verdict.Result == judge.JudgeError {
				fmt.Fprintf(&b, "  turn %d judge error (neither pass nor fail): %s\n", t.Turn, clean(t.Verdict.Error))
			}
			if t.Verdict.Result == judge.Uncertain {
				fmt.Fprintf(&b, "  turn %d uncertain (neither pass nor fail): the judge's %d verdicts disagree\n", t.Turn, len(t.Verdict.Repeats))
			}
			for _, f := range t.Verdict.Failed(r.Rubric) {
				fmt.Fprintf(&b, "  turn %d failed %s\n", t.Turn, clean(f))
			}
		}
	}
	o := r.Outcome
	writeStats(&b, o.Stats, r.Plan != nil && !r.Plan.Schedule.Default())
	writeControls(&b, o.Controls)
	if sq := r.Sequential; sq != nil {
		fmt.Fprintf(&b, "sequential looks (--until-decided: alpha %.2g spent over the looks, %.3g at each look before the cap of %d, %.3g at the cap; batches of %d):\n", sq.Alpha, verdict.InterimLevel(sq), sq.Max, verdict.FinalLevel(sq), sq.Batch)
		for _, l := range sq.Looks {
			p := fmt.Sprintf("p = %.3g", l.P)
			if l.DilutedUnits < stats.MinUnitsPerArm || l.FreshUnits < stats.MinUnitsPerArm {
				p = "too few units to test" // the test needs stats.MinUnitsPerArm a side; its p of 1 says nothing
			}
			fmt.Fprintf(&b, "  after %s: %d diluted and %d fresh units, drop %+.0f points, %s (level %.3g): %s\n", Count(l.Conversations, "conversation"), l.DilutedUnits, l.FreshUnits, 100*l.Drop, p, l.Level, clean(l.Decision))
		}
		fmt.Fprintf(&b, "  stopped: %s\n", clean(sq.Reason))
	}
	for _, s := range o.StoppedConsulting {
		fmt.Fprintf(&b, "stopped consulting (from the raw trace, judge-free): %s\n", clean(s))
	}
	fmt.Fprintf(&b, "\n%s: %s (%s%s)\n", costWord(r), chart.USD(r.Costs.Total), costs(r).Breakdown(chart.USD), stoppedSpend(r, chart.USD))
	for _, n := range o.Notes {
		if n == BypassBanner {
			continue // already the first line
		}
		fmt.Fprintf(&b, "note: %s\n", clean(n))
	}
	fmt.Fprintf(&b, "%s (exit %d)\n", paint(bold, clean(o.Sentence)), o.Exit)
	io.WriteString(w, b.String())
}

// turnTable is the per-conversation table: a column per turn on the seed's
// ten-turn schedule; on a diluted-to schedule, which may run to many
// turns, a column per judged turn (the baseline and each probe) with the
// turn it fell on.
func turnTable(r *record.Run, clean func(string) string) (headers []string, rows [][]string) {
	fixed := r.Plan == nil || r.Plan.Schedule.Fixed()
	if fixed {
		headers = []string{"conv", "turn"}
		for t := 1; t <= plan.Turns; t++ {
			headers = append(headers, strconv.Itoa(t))
		}
	} else {
		headers = []string{"conv", "", "base"}
		for k := 1; k <= len(plan.ProbeTurns); k++ {
			headers = append(headers, fmt.Sprintf("probe %d", k))
		}
	}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		var shown []*record.Turn
		if fixed {
			for t := 1; t <= plan.Turns; t++ {
				shown = append(shown, c.Shown(t))
			}
		} else {
			shown = append(shown, c.Shown(1))
			for k := 1; k <= len(plan.ProbeTurns); k++ {
				shown = append(shown, c.ShownProbe(k))
			}
		}
		res := []string{strconv.Itoa(c.Index), "result"}
		turnRow := []string{"", "turn"}
		calls := []string{"", "calls"}
		skillRow := []string{"", "skill"}
		ctx := []string{"", "ctx k"}
		compacted := []string{"", "compacted"}
		anyCompacted := false
		for _, tr := range shown {
			res = append(res, clean(Cell(tr)))
			if tr == nil {
				turnRow, calls, ctx, skillRow, compacted = append(turnRow, ""), append(calls, ""), append(ctx, ""), append(skillRow, ""), append(compacted, "")
				continue
			}
			turnRow = append(turnRow, strconv.Itoa(tr.Turn))
			calls = append(calls, strconv.Itoa(tr.ToolCallCount))
			skillRow = append(skillRow, skillCell(tr))
			ctx = append(ctx, kTokens(tr.ContextTokens))
			cell := ""
			if tr.AfterCompaction {
				cell, anyCompacted = "yes", true
			}
			compacted = append(compacted, cell)
		}
		if fixed {
			rows = append(rows, res, calls, skillRow, ctx)
		} else {
			rows = append(rows, res, turnRow, calls, skillRow, ctx)
		}
		if anyCompacted {
			rows = append(rows, compacted)
		}
	}
	return headers, rows
}

// ScheduleWords describes the run's schedule, and says when a compaction
// it asked for at a context level never happened: the schedule line named
// the /compact of a run whose sessions never reached its level, and
// nothing said it had not fired.
func ScheduleWords(r *record.Run) string {
	s := r.Plan.Schedule
	words := s.Describe()
	if s.CompactAt <= 0 {
		return words
	}
	for i := range r.Conversations {
		for k := range r.Conversations[i].Turns {
			if len(r.Conversations[i].Turns[k].Compactions) > 0 {
				return words
			}
		}
	}
	return words + " (it never happened: no conversation's context passed " + plan.FormatTokens(s.CompactAt) + ")"
}

// ProbeLabel names a probe's row: its number, the (median) turn and
// context it was asked at, and how many of its askings came after a
// compaction. A fresh probe has neither turn nor dilution to tell.
func ProbeLabel(probe, turn int, ctx int64, afterCompaction int, fresh bool) string {
	if fresh {
		return fmt.Sprintf("probe %d", probe)
	}
	l := fmt.Sprintf("probe %d (turn %d", probe, turn)
	if ctx > 0 {
		// Rounded to the hundred, as the table and the chart round it
		// (12,792 was "12.7k" here and 12.8 there).
		l += ", " + plan.FormatTokens((ctx+50)/100*100) + " context"
	}
	if afterCompaction > 0 {
		l += fmt.Sprintf(", %d after compaction", afterCompaction)
	}
	return l + ")"
}

// CompactionWords says what one compaction did.
func CompactionWords(c record.Compaction) string {
	who := "the CLI compacted the session on its own"
	if c.Trigger == "manual" {
		who = "the CLI's /compact ran before it"
	}
	return fmt.Sprintf("%s: context %s -> about %s tokens (summary plus the latest messages)", who, commas(c.PreTokens), commas(c.PostTokens))
}

// skillCell is a turn's skill signal: yes when the skill under test loaded,
// DENIED when the agent asked for it and was refused.
func skillCell(t *record.Turn) string {
	switch {
	case t.SkillInvoked:
		return "yes"
	case t.SkillDenied:
		return "DENIED"
	}
	return ""
}

// contextRange is a conversation's first and last known context size; it is
// never joined with another conversation's numbers.
func contextRange(c *record.Conversation) (first, last int64) {
	for k := range c.Turns {
		if n := c.Turns[k].ContextTokens; n > 0 {
			if first == 0 {
				first = n
			}
			last = n
		}
	}
	return first, last
}

func kTokens(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", float64(n)/1000)
}

func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// writeStats prints what the numbers may claim, in plain words, each rate
// with the population it is over.
// With byProbe (any schedule but the seed's), the probes are named by
// number, with the turn they fell on, the context they were answered in
// and how many came after a compaction.
func writeStats(b *strings.Builder, s record.Stats, byProbe bool) {
	if len(s.PerTurn) == 0 {
		return
	}
	b.WriteString("\npass rate per judged turn (95% Wilson interval):\n")
	for _, t := range s.PerTurn {
		arm := t.Arm
		if arm == "" {
			arm = "diluted"
		}
		if t.Turn == 1 {
			arm = "baseline"
		}
		label := fmt.Sprintf("turn %2d", t.Turn)
		if byProbe && t.Probe > 0 {
			label = ProbeLabel(t.Probe, t.Turn, t.ContextTokens, t.AfterCompaction, t.Arm == "fresh")
		}
		if t.N == 0 {
			fmt.Fprintf(b, "  %s %-9s not judged (%s)\n", label, arm+":", t.Population)
			continue
		}
		fmt.Fprintf(b, "  %s %-9s %d/%d passed (%s, %s-%s) over %s\n", label, arm+":", t.Passes, t.N, Percent(t.Rate), Percent(t.Lo), Percent(t.Hi), t.Population)
	}
	if len(s.Probes) > 0 {
		b.WriteString("each probe diluted vs fresh (for reading, not the exit code; Fisher's exact test, one-sided):\n")
		for _, p := range s.Probes {
			label := fmt.Sprintf("turn %2d", p.Turn)
			if byProbe {
				label = ProbeLabel(p.Probe, p.Turn, p.ContextTokens, p.AfterCompaction, false)
			}
			fmt.Fprintf(b, "  %s: diluted %d/%d, fresh %d/%d, %s\n", label, p.DilutedPass, p.DilutedN, p.FreshPass, p.FreshN, probeTest(p))
		}
	}
	if c := s.Comparison; c.Diluted.Units > 0 || c.Fresh.Units > 0 {
		fmt.Fprintf(b, "diluted vs fresh (the exit code's test: units are conversations and fresh triples; each probe against itself, Welch one-sided on the mean of the per-probe pass rates):\n")
		fmt.Fprintf(b, "  diluted: %s (%s), %s; fresh: %s (%s), %s\n",
			Count(c.Diluted.Units, "unit"), s.DilutedPopulation, unitRate(c.Diluted), Count(c.Fresh.Units, "unit"), record.PopFresh, unitRate(c.Fresh))
		if c.Testable {
			fmt.Fprintf(b, "  drop %+.0f points, p = %.3g (alpha %.2g)", 100*c.Drop, c.P, s.Alpha)
			if s.MinDetectableDrop > 0 {
				fmt.Fprintf(b, "; simulated on runs like this one, the rule catches a drop of %.0f points in 80%% of them", 100*s.MinDetectableDrop)
			}
			b.WriteString("\n")
		} else {
			fmt.Fprintf(b, "  not testable: each arm needs at least %d units with a judged probe\n", stats.MinUnitsPerArm)
		}
	}
	if s.EffectiveTurn > 0 {
		ctx := ""
		if byProbe && s.EffectiveContext > 0 {
			ctx = fmt.Sprintf(", context %s tokens", commas(s.EffectiveContext))
		}
		fmt.Fprintf(b, "effective turn: %d%s (the last probe whose diluted pass rate is still >= 85%% of its fresh rate)\n", s.EffectiveTurn, ctx)
	} else if len(s.PerTurn) > 0 {
		// Said, as Markdown and the chart say "-": the line was left out.
		why := "no conversation's baseline passed"
		if s.PerTurn[0].Passes > 0 {
			why = "the first probe was not judged both diluted and fresh"
		}
		fmt.Fprintf(b, "effective turn: none (%s, so no turn is known to hold)\n", why)
	}
	if s.CheckTotal > 0 {
		fmt.Fprintf(b, "judge agreed with the deterministic checks on %d of %d criteria\n", s.CheckAgreed, s.CheckTotal)
	}
	if len(s.NonDiscriminating) > 0 {
		fmt.Fprintf(b, "criteria that passed everywhere and cannot tell decay apart: %s\n", term.Line(strings.Join(s.NonDiscriminating, ", ")))
	}
}

func writeControls(b *strings.Builder, cs []record.ControlStat) {
	for i, c := range cs {
		if i == 0 || cs[i-1].Control != c.Control {
			switch c.Control {
			case record.ControlNoSkill:
				b.WriteString("no-skill control (same turns, no skill installed; Fisher's exact test, one-sided; with the skill: turn 1 over all conversations, the probes over those that reached them (whose baseline passed, or all with the gate bypassed); without: all no-skill conversations, which have no gate):\n")
			}
		}
		fmt.Fprintf(b, "  turn %2d: %d/%d with vs %d/%d control, lift %+.0f points, p = %.3g: %s\n",
			c.Turn, c.Passes, c.N, c.ControlPass, c.ControlN, 100*c.Lift, c.P, term.Line(c.Reading))
	}
}

// jailWords completes the isolation line: where every claude process ran.
func jailWords(kind string) string {
	switch kind {
	case jail.Bubblewrap:
		return ", each conversation in a bubblewrap jail"
	case jail.None:
		return ", no jail"
	}
	return "" // a run from before the jail
}

// probeTest is a probe's comparison: its drop and Fisher's p, or why it
// has none. With no probe judged on one side there is nothing to test,
// and the p the record holds (0) would read as a certain drop.
func probeTest(p record.ProbeComparison) string {
	switch {
	case p.DilutedN == 0:
		return "not compared: no probe judged diluted"
	case p.FreshN == 0:
		return "not compared: no probe judged fresh"
	}
	return fmt.Sprintf("drop %+.0f points, p = %.3g; %d failed diluted but passed fresh, %d failed both", 100*p.Drop, p.P, p.Decayed, p.NeverHandled)
}

// Count is "1 conversation", "2 conversations": n and a noun whose plural
// adds an s.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// stoppedSpend is the part of a claude run's cost priced from token counts
// (record.Turn.CostEstimated: agent tries stopped before the CLI's result
// line, the only place it says a cost; judge.Verdict.CostEstimated: judge
// calls so stopped), and how many: "" when none. A judgement's estimated
// part is not kept apart from the rest of its cost, which is counted
// whole (an upper bound, said so).
func stoppedSpend(r *record.Run, usd func(float64) string) string {
	if r.Config.CostEstimated {
		return "" // all of it is, and costWord says so
	}
	var spent float64
	tries, judged := 0, 0
	for t := range r.EveryTurn() {
		if t.CostEstimated {
			spent += t.CostUSD
			tries++
		}
		for _, a := range t.Attempts {
			if a.CostEstimated {
				spent += a.CostUSD
				tries++
			}
		}
		if t.Verdict != nil && t.Verdict.CostEstimated {
			spent += t.Verdict.CostUSD
			judged++
		}
		if t.EarlierJudgeEstimated {
			// A judging replaced on resume, or stopped by an interrupt.
			spent += t.EarlierJudgeUSD
			judged++
		}
	}
	if tries+judged == 0 {
		return ""
	}
	var what []string
	if tries > 0 {
		what = append(what, fmt.Sprintf("%d %s", tries, plural(tries, "try", "tries")))
	}
	if judged > 0 {
		what = append(what, fmt.Sprintf("%d %s", judged, plural(judged, "judgement", "judgements")))
	}
	upTo := ""
	if judged > 0 {
		upTo = "up to "
	}
	return fmt.Sprintf("; %s%s of it estimated from token counts for %s stopped before the CLI said their cost", upTo, usd(spent), strings.Join(what, " and "))
}

// costWord labels a run's cost: "cost", or "cost (estimated)" when the
// agent's figures come from token counts at a pinned price table.
func costWord(r *record.Run) string {
	if r.Config.CostEstimated {
		return "cost (estimated)"
	}
	return "cost"
}
