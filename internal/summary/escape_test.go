package summary

import (
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/record"
)

// Escape sequences planted in a judge reason, an error, a note and the
// skill's name never reach the terminal: OSC 0 (title), OSC 52 (clipboard)
// and "\r\x1b[2K" (erase the line) once did.
func TestSummaryStripsTerminalEscapes(t *testing.T) {
	forceColour(t)
	r := decayRun()
	r.Skill.Name = "runs\x1b]0;owned\x07"
	c := &r.Conversations[0]
	c.Error = "boom\r\x1b[2Kall passed"
	for i := range c.Turns {
		if v := c.Turns[i].Verdict; v != nil && v.EscapeHatch {
			v.EscapeReason = "memory\x1b]52;c;cm0gLXJmIH4=\x07\u009b2K"
		}
	}
	r.Outcome.Notes = append(r.Outcome.Notes, "note\x1b]0;x\x1b\\ \u202eliaf\u202c")
	r.Outcome.Sentence += "\r\x1b[2K"
	// The alerts under a conversation: a model change, a set-up problem
	// quoting a failed Bash call's output, a hook's name and outcome.
	c.ModelChange = "model change \x1b]0;PWNED\x07\r\x1b[2K"
	base := &c.Turns[0]
	base.Verdict.SetupProblem = "set-up problem: census.sh failed: Exit code 3 \x1b]0;PWNED\x07\x1b[2Kfine"
	base.Hooks = []record.Hook{{Name: "PreToolUse:Bash\x1b]0;PWNED\x07", Outcome: "error\x1b[31m", ExitCode: 2}}
	for _, styled := range []bool{false, true} {
		out := summary(r, styled)
		if !strings.Contains(out, "census.sh failed") || !strings.Contains(out, "PreToolUse:Bash]0;PWNED") || !strings.Contains(out, "MODEL CHANGED") {
			t.Fatalf("styled=%v: the alerts are not in the summary:\n%s", styled, out)
		}
		for _, bad := range []string{"\x1b]", "\x07", "\r", "\x1b[2K", "\x1b[31m", "\u009b", "\x1b\\", "\u202e"} {
			if strings.Contains(out, bad) {
				t.Errorf("styled=%v: summary carries %q:\n%q", styled, bad, out)
			}
		}
		if !strings.Contains(out, "memory]52;c;cm0gLXJmIH4=2K") {
			t.Errorf("styled=%v: the reason's printable text should stay:\n%s", styled, out)
		}
	}
}
