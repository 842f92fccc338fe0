package summary

import (
	"fmt"
	"strings"

	"github.com/vibe-test/vibe-test/internal/record"
)

// Confound is the reason a model change is flagged on every artifact.
const Confound = "a confound: a different model is a decay that is not dilution"

// agentLine says which model and tools the agent had.
func agentLine(r *record.Run) string {
	if r.Config.Model == "" && len(r.Config.AllowedTools) == 0 {
		return "" // a run recorded before either was
	}
	model := r.Config.Model
	switch {
	case model == "":
		// The run's first session never said which model its CLI chose
		// (no turn ran, or none got an answer): nothing was pinned.
		model = "the CLI's default (not pinned: no turn reported it)"
	case r.Config.ModelSource == "cli-default":
		if r.Config.Agent != "" {
			model += " (vibe-test's default for " + r.Config.Agent + ", pinned for the run)"
		} else {
			model += " (the CLI's default, pinned for the run)"
		}
	case r.Config.ModelSource == "config":
		model += " (from vibe-test.yaml)"
	}
	if r.Config.ModelAsked != "" {
		model += " (asked as " + r.Config.ModelAsked + ")"
	}
	line := "agent: model " + model
	if a := r.Config.Agent; a != "" {
		// Another CLI than claude: its name and version lead the line.
		line = "agent: " + a + " " + r.Versions.Agent + ", model " + model
		if j := record.JudgeAgentOf(r.Config); j != a {
			line += " (judge: " + j + ")"
		}
	}
	if len(r.Config.AllowedTools) > 0 {
		line += "; tools " + strings.Join(r.Config.AllowedTools, " ")
	}
	if r.Config.SessionMode != "" {
		line += "; session " + SessionModeText(r.Config)
	}
	return line
}

// skillAlerts are the skill's spec warnings and the tools it will not get.
func skillAlerts(r *record.Run) []string {
	var out []string
	for _, w := range r.Skill.Warnings {
		out = append(out, "skill warning: "+w)
	}
	for _, t := range r.Skill.ToolsNotGranted {
		out = append(out, "the agent did not have the tool "+t)
	}
	if len(r.Config.SessionWideTools) > 0 {
		out = append(out, grantCaveat(r))
	}
	return out
}

// grantCaveat says which of the skill's allowed-tools the run granted for
// the whole session, which the CLI grants only while the skill runs, and
// how many calls of the measured and fresh conversations ran on that.
func grantCaveat(r *record.Run) string {
	calls, turns := 0, 0
	for _, group := range [][]record.Conversation{r.Conversations, r.Fresh} {
		for i := range group {
			for _, t := range group[i].Turns {
				if n := len(t.OutsideSkillGrant); n > 0 {
					calls, turns = calls+n, turns+1
				}
			}
		}
	}
	used := "no call ran on it outside that window"
	if calls > 0 {
		used = fmt.Sprintf("%d %s in %d %s ran on it outside that window, which the CLI would have refused under -p (outside_skill_grant in run.json)", calls, plural(calls, "call", "calls"), turns, plural(turns, "turn", "turns"))
	}
	return fmt.Sprintf("caveat: the skill's allowed-tools %s were granted for the whole session; the CLI grants them only from the skill's Skill call to the end of that turn: %s", strings.Join(r.Config.SessionWideTools, " "), used)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// convAlerts are what a conversation's record says that no verdict does:
// a model change (a confound), the skill denied to the agent, a required
// step that failed for want of a set-up.
func convAlerts(c *record.Conversation) []string {
	var out []string
	if c.ModelChange != "" {
		out = append(out, fmt.Sprintf("MODEL CHANGED in conversation %d: %s (%s)", c.Index, c.ModelChange, Confound))
	}
	for k := range c.Turns {
		t := &c.Turns[k]
		if t.SkillDenied {
			out = append(out, fmt.Sprintf("the agent was refused the skill at turn %d (its Skill call was denied permission; the skill never loaded)", t.Turn))
		}
		if t.Verdict != nil && t.Verdict.SetupProblem != "" {
			out = append(out, fmt.Sprintf("turn %d %s", t.Turn, t.Verdict.SetupProblem))
		}
		for _, h := range t.Hooks {
			if h.Outcome != "success" {
				// A hook that blocks or fails changes what the agent could do.
				out = append(out, fmt.Sprintf("turn %d: the skill's hook %s ended %s (exit %d); the transcript has its output", t.Turn, h.Name, h.Outcome, h.ExitCode))
				break
			}
		}
	}
	return out
}

// SessionModeText names a run's session mode with what it means.
func SessionModeText(c record.Config) string {
	switch m := record.SessionModeOf(c); {
	case c.Agent != "" && m == "interactive":
		return m + " (one " + c.Agent + " process per conversation, each turn one message)"
	case c.Agent != "" && m == "resume":
		return m + " (one " + c.Agent + " process per turn, resuming the session)"
	case m == "interactive":
		return m + " (one claude process per conversation, each turn one message)"
	case m == "resume":
		return m + " (one claude -p --resume process per turn)"
	default:
		return m
	}
}
