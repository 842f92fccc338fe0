package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/conversation"
)

func TestProgressRenderings(t *testing.T) {
	events := []conversation.Event{
		{Conv: 1, Turn: 1, Kind: "base", Phase: "agent"},
		{Conv: 2, Turn: 1, Kind: "base", Phase: "agent"},
		{Conv: 1, Turn: 1, Kind: "base", Phase: "done", Result: "ok", Context: 13800, Spent: 0.12},
		{Conv: 1, Turn: 1, Kind: "base", Phase: "judged", Result: "pass", Spent: 0.13},
	}
	var plain, live bytes.Buffer
	p, l := newProgress(&plain, false), newProgress(&live, true)
	for _, ev := range events {
		p.Event(ev)
		l.Event(ev)
	}
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	if len(lines) != 4 || strings.Contains(plain.String(), "\x1b") {
		t.Fatalf("plain progress: one line per event, no escape codes:\n%q", plain.String())
	}
	if !strings.Contains(lines[2], "context 13.8k") || !strings.Contains(lines[3], "judged: pass") || !strings.Contains(lines[3], "$0.13 so far") {
		t.Errorf("plain lines: %q", lines)
	}
	// Live: a block of one line per conversation, redrawn in place.
	if !strings.Contains(live.String(), "\x1b[2A") || strings.Count(live.String(), "\x1b[2K") != 1+2+2+2 {
		t.Errorf("live progress does not redraw its block: %q", live.String())
	}
	l.Close()
	l.Event(events[0])
	if strings.Count(live.String(), "\x1b[2K") != 7 {
		t.Error("progress drew after close")
	}
}

// A result text with terminal escapes is printed without them, live or not.
func TestProgressStripsEscapes(t *testing.T) {
	ev := conversation.Event{Conv: 1, Turn: 6, Kind: "probe", Phase: "judged", Result: "pass\r\x1b[2K\x1b]0;t\x07"}
	for _, live := range []bool{false, true} {
		var b bytes.Buffer
		newProgress(&b, live).Event(ev)
		out := strings.ReplaceAll(b.String(), "\x1b[2K", "") // the live redraw's own erase
		if live && strings.Count(b.String(), "\x1b[2K") != 1 || strings.ContainsAny(out, "\r\x07\x1b") {
			t.Errorf("live=%v: %q", live, b.String())
		}
	}
}

// lastFrame is the live block as the terminal shows it after the last redraw.
func lastFrame(s string) []string {
	if i := strings.LastIndex(s, "A\x1b[2K"); i >= 0 {
		s = s[i+1:]
	}
	return strings.Split(strings.TrimSuffix(strings.ReplaceAll(s, "\x1b[2K", ""), "\n"), "\n")
}

// A probe is judged while the next turn runs: the live line shows both, and
// the verdict when it comes, without hiding the running turn. Lines never
// reach the terminal's width (a wrapped line would be left behind by the
// redraw, repeated), and conversation 2 comes before 10.
func TestProgressLiveBlock(t *testing.T) {
	var live bytes.Buffer
	p := newProgress(&live, true)
	p.width = 60
	for _, ev := range []conversation.Event{
		{Conv: 10, Turn: 1, Kind: "base", Phase: "agent"},
		{Conv: 2, Turn: 6, Of: 10, Kind: "probe", Phase: "done", Result: "ok", Context: 17300},
		{Conv: 2, Turn: 6, Of: 10, Kind: "probe", Phase: "judge"},
		{Conv: 2, Turn: 7, Of: 10, Kind: "filler", Phase: "agent", Spent: 1.5},
		{Conv: 1, Control: "fresh", Turn: 8, Of: 10, Kind: "probe", Phase: "agent"},
	} {
		p.Event(ev)
	}
	frame := lastFrame(live.String())
	if len(frame) != 3 || !strings.HasPrefix(frame[0], "conv 2 ") || !strings.HasPrefix(frame[1], "conv 10 ") || !strings.HasPrefix(frame[2], "fresh 1 ") {
		t.Fatalf("block order: %q", frame)
	}
	if !strings.Contains(frame[0], "turn  7/10 filler running") || !strings.Contains(frame[0], "judging turn 6") {
		t.Errorf("the running turn and the judging both shown: %q", frame[0])
	}
	p.Event(conversation.Event{Conv: 2, Turn: 6, Kind: "probe", Phase: "judged", Result: "pass", Spent: 1.6})
	frame = lastFrame(live.String())
	if !strings.Contains(frame[0], "turn  7/10 filler running") || strings.Contains(frame[0], "judging") || !strings.Contains(frame[0], "turn 6 pass") {
		t.Errorf("after the verdict: %q", frame[0])
	}
	for _, l := range frame {
		if n := len([]rune(l)); n >= p.width {
			t.Errorf("line of %d runes on a %d-column terminal: %q", n, p.width, l)
		}
	}
	if len(frame[0]) > 0 && !strings.Contains(frame[0], "…") {
		t.Errorf("a long line is cut with an ellipsis: %q", frame[0])
	}
}
