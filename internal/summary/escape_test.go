package summary

import (
	"strings"
	"testing"
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
	r.Outcome.Notes = append(r.Outcome.Notes, "note\x1b]0;x\x1b\\")
	r.Outcome.Sentence += "\r\x1b[2K"
	for _, styled := range []bool{false, true} {
		out := summary(r, styled)
		for _, bad := range []string{"\x1b]", "\x07", "\r", "\x1b[2K", "\u009b", "\x1b\\"} {
			if strings.Contains(out, bad) {
				t.Errorf("styled=%v: summary carries %q:\n%q", styled, bad, out)
			}
		}
		if !strings.Contains(out, "memory]52;c;cm0gLXJmIH4=2K") {
			t.Errorf("styled=%v: the reason's printable text should stay:\n%s", styled, out)
		}
	}
}
