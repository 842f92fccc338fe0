package summary

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"

	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/term"
)

// SuiteTable writes a suite's table: one row per skill (verdict, exit
// code, the probes passed diluted and fresh, the effective turn, cost and
// its chart), then the suite's exit code. dir is the suite folder, so each
// chart's path can be opened from where the command ran.
func SuiteTable(w io.Writer, s *record.Suite, dir string, styled bool) {
	var b strings.Builder
	clean := term.Line
	// A bypassed gate is stamped first on every artifact, as on a run's.
	var bypassed []string
	for _, e := range s.Skills {
		if e.GateBypassed {
			bypassed = append(bypassed, clean(e.Name))
		}
	}
	// So is a skill whose agent ran unjailed (its own summary says NO JAIL;
	// the suite's said nothing).
	for _, stamp := range []struct {
		banner string
		skills []string
	}{{BypassBanner, bypassed}, {NoJailBanner, UnjailedSkills(s)}} {
		if len(stamp.skills) == 0 {
			continue
		}
		line := fmt.Sprintf("!! %s (%s)", stamp.banner, strings.Join(stamp.skills, ", "))
		if styled {
			line = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("9")).Render(line)
		}
		b.WriteString(line + "\n")
	}
	title := fmt.Sprintf("vibe-test suite  %s, status %s", Count(len(s.Skills), "skill"), term.Line(s.Status))
	if s.Shard != nil {
		title += fmt.Sprintf(", shard %d/%d (%s of the suite's %s; verdicts here are partial: merge the shards to decide)",
			s.Shard.Index, s.Shard.Count, Count(len(s.Shard.Units), "conversation"), Count(totalUnits(s.Shard), "conversation"))
	}
	if len(s.Merged) > 0 {
		title += fmt.Sprintf(", merged from %s", Count(len(s.Merged), "shard"))
	}
	b.WriteString(title + "\n")
	var rows [][]string
	var total float64
	estimated := false
	for _, e := range s.Skills {
		estimated = estimated || e.CostEstimated
		verdict := e.Verdict
		if verdict == "" {
			verdict = e.Status
		}
		if e.GateBypassed {
			verdict += " (gate bypassed)"
		}
		turn := "-" // no turn known to hold, as in the run's own summary
		if e.EffectiveTurn > 0 {
			turn = strconv.Itoa(e.EffectiveTurn)
		}
		chart := "-" // the skill's run never began: no chart
		if e.Verdict != "" {
			chart = clean(filepath.Join(dir, e.RunDir, "chart.html"))
		}
		rows = append(rows, []string{clean(e.Name), clean(verdict), strconv.Itoa(e.ExitCode),
			e.Diluted.String(), e.Fresh.String(), turn, fmt.Sprintf("$%.4f", e.CostUSD), chart})
		total += e.CostUSD
	}
	tbl := table.New().Headers("skill", "verdict", "exit", "diluted", "fresh", "eff. turn", "cost", "chart").Rows(rows...)
	if styled {
		tbl = tbl.Border(lipgloss.RoundedBorder())
	} else {
		tbl = tbl.Border(lipgloss.ASCIIBorder())
	}
	b.WriteString(tbl.Render() + "\n")
	population := "in conversations whose baseline passed"
	for _, e := range s.Skills {
		if e.GateBypassed {
			// A bypassed gate let every conversation go on: its skill's
			// diluted count is over all of them.
			population += " (in all, where the gate was bypassed)"
			break
		}
	}
	b.WriteString("diluted = probes passed " + population + "; fresh = the same probes, each the first message of a new session\n")
	for _, e := range s.Skills {
		if e.Error != "" {
			fmt.Fprintf(&b, "%s: %s\n", clean(e.Name), clean(e.Error))
		}
	}
	if estimated {
		fmt.Fprintf(&b, "cost (estimated): $%.4f in all\n", total)
	} else {
		fmt.Fprintf(&b, "cost: $%.4f in all\n", total)
	}
	if s.Shard != nil {
		fmt.Fprintf(&b, "shard exit code %d (3 or 130 only when the shard could not finish: `vibe-test merge` decides)\n", s.ExitCode)
	} else {
		fmt.Fprintf(&b, "suite exit code %d (the worst of the skills': 130 interrupted, then 3 tool error, 1 decay, 2 does not work fresh, 0)\n", s.ExitCode)
	}
	fmt.Fprintf(&b, "suite folder: %s\n", clean(dir))
	io.WriteString(w, b.String())
}

func totalUnits(p *record.ShardPlan) int {
	n := 0
	for _, s := range p.Skills {
		n += s.Conversations
	}
	return n
}

// NoJailBanner heads a suite's artifacts when a skill's agent ran without
// the jail.
const NoJailBanner = "NO JAIL: the agent ran with your user's view of this machine"

// UnjailedSkills names the suite's skills whose runs had no jail.
func UnjailedSkills(s *record.Suite) []string {
	var out []string
	for _, e := range s.Skills {
		if e.Jail == jail.None {
			out = append(out, term.Line(e.Name))
		}
	}
	return out
}
