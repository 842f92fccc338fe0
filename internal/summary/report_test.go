package summary

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// golden compares got with testdata/name (go test -update rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", name), got)
}

// forceColour makes lipgloss emit 256-colour escapes even though a test's
// output is not a terminal, and restores the detected profile afterwards.
func forceColour(t *testing.T) {
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI256)
	t.Cleanup(func() { lipgloss.SetColorProfile(prev) })
}

func summary(r *record.Run, styled bool) string {
	var b bytes.Buffer
	Summary(&b, r, styled)
	return b.String()
}

var goldenRuns = []struct {
	name string
	run  func() *record.Run
}{
	{"decay", decayRun},
	{"bypass", bypassRun},
	{"gate", gateRun},
}

func TestSummaryGolden(t *testing.T) {
	forceColour(t)
	for _, g := range goldenRuns {
		t.Run(g.name, func(t *testing.T) {
			plain := summary(g.run(), false)
			golden(t, "summary-"+g.name+".plain.golden", []byte(plain))
			styled := summary(g.run(), true)
			golden(t, "summary-"+g.name+".styled.golden", []byte(styled))

			for i, r := range plain {
				if r > 0x7e && !strings.ContainsRune(plainNonASCII, r) || r < 0x20 && r != '\n' {
					t.Errorf("plain summary has a non-ASCII or control character %q at byte %d", r, i)
					break
				}
			}
			if !strings.Contains(styled, "\x1b[") {
				t.Error("styled summary has no escape codes: the colour profile was not forced")
			}
			if ansi.ReplaceAllString(styled, "") == styled {
				t.Error("styled summary is not styled")
			}
		})
	}
}

// plainNonASCII are the non-ASCII characters the plain summary may hold:
// none. A box-drawing border, an escape code or a typographic arrow in a CI
// log is a regression.
const plainNonASCII = ""

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// The plain rendering is what CI logs show: no escape codes at all.
func TestPlainHasNoEscapes(t *testing.T) {
	forceColour(t)
	for _, g := range goldenRuns {
		if s := summary(g.run(), false); strings.Contains(s, "\x1b") {
			t.Errorf("%s: plain summary contains an escape code:\n%q", g.name, s)
		}
	}
}

func TestBypassBannerFirstLine(t *testing.T) {
	forceColour(t)
	for _, styled := range []bool{false, true} {
		out := summary(bypassRun(), styled)
		first, _, _ := strings.Cut(ansi.ReplaceAllString(out, ""), "\n")
		if first != "!! "+BypassBanner {
			t.Errorf("styled=%v: first line %q, want the bypass banner", styled, first)
		}
		if n := strings.Count(out, BypassBanner); n != 1 {
			t.Errorf("styled=%v: banner appears %d times, want once (the outcome note is not repeated)", styled, n)
		}
	}
	for _, styled := range []bool{false, true} {
		if out := summary(decayRun(), styled); strings.Contains(out, "BYPASSED") {
			t.Errorf("styled=%v: banner on a run whose gate held", styled)
		}
	}
}

// Each conversation's context range is on its own line, with its own
// numbers; no line carries numbers from two conversations.
func TestContextRangesNeverJoined(t *testing.T) {
	forceColour(t)
	for _, g := range goldenRuns {
		for _, styled := range []bool{false, true} {
			r := g.run()
			out := ansi.ReplaceAllString(summary(r, styled), "")
			lines := strings.Split(out, "\n")
			for i := range r.Conversations {
				c := &r.Conversations[i]
				first, last := contextRange(c)
				arrow := "->"
				if styled {
					arrow = "→"
				}
				want := fmt.Sprintf("context %s %s %s tokens", commas(first), arrow, commas(last))
				var own []string
				for _, l := range lines {
					if strings.HasPrefix(l, fmt.Sprintf("conversation %d:", c.Index)) {
						own = append(own, l)
					}
				}
				if len(own) != 1 {
					t.Fatalf("%s styled=%v: %d lines for conversation %d, want 1", g.name, styled, len(own), c.Index)
				}
				if !strings.Contains(own[0], want) {
					t.Errorf("%s styled=%v: %q lacks %q", g.name, styled, own[0], want)
				}
				if strings.Count(own[0], arrow) != 1 {
					t.Errorf("%s styled=%v: %q holds more than one range", g.name, styled, own[0])
				}
				for k := range r.Conversations {
					if k == i {
						continue
					}
					of, ol := contextRange(&r.Conversations[k])
					for _, n := range []int64{of, ol} {
						if n > 0 && strings.Contains(own[0], commas(n)) {
							t.Errorf("%s styled=%v: conversation %d's line %q carries conversation %d's %s", g.name, styled, c.Index, own[0], r.Conversations[k].Index, commas(n))
						}
					}
				}
			}
			for _, l := range lines {
				if strings.Count(l, "→") > 1 || strings.Count(l, "context ") > 1 {
					t.Errorf("%s styled=%v: a line joins ranges: %q", g.name, styled, l)
				}
			}
		}
	}
}

func TestCell(t *testing.T) {
	r := decayRun()
	c1, c2 := &r.Conversations[0], &r.Conversations[1]
	g := gateRun()
	cases := []struct {
		turn *record.Turn
		want string
	}{
		{nil, "-"},
		{c1.TurnAt(1), "PASS"},
		{c1.TurnAt(2), "filler"},
		{c1.TurnAt(8), "FAIL"},
		{c1.TurnAt(10), "ESCAPE"},
		{c2.TurnAt(6), "PASS*"},
		{g.Conversations[1].TurnAt(6), "JUDGE-ERROR"},
		{&record.Turn{Kind: "probe", Status: record.TurnTimedOut}, "TIMEOUT"},
		{&record.Turn{Kind: "probe", Status: record.TurnError}, "ERROR"},
		{&record.Turn{Kind: "probe", Status: record.TurnOK}, "not judged"},
	}
	for _, c := range cases {
		if got := Cell(c.turn); got != c.want {
			t.Errorf("Cell(%+v) = %q, want %q", c.turn, got, c.want)
		}
	}
}

func TestRewindsShown(t *testing.T) {
	r := decayRun()
	r.Conversations[0].Rewinds = []record.Rewind{{Turn: 4, RemovedBytes: 2113, RemovedLines: 3, Reason: "resume"}}
	want := "  note: turn 4 ran again (resume); the session was cut back to the end of turn 3 first (3 lines, 2113 bytes of the stopped try), so the model saw its prompt once\n"
	if got := summary(r, false); !strings.Contains(got, want) {
		t.Errorf("summary lacks the rewind line %q:\n%s", want, got)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 conversations", 1: "1 conversation", 2: "2 conversations"} {
		if got := Count(n, "conversation"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
