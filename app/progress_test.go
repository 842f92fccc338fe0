package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/probe"
)

func TestProgressRenderings(t *testing.T) {
	events := []probe.Event{
		{Conv: 1, Turn: 1, Kind: "base", Phase: "agent"},
		{Conv: 2, Turn: 1, Kind: "base", Phase: "agent"},
		{Conv: 1, Turn: 1, Kind: "base", Phase: "done", Result: "ok", Context: 13800, Spent: 0.12},
		{Conv: 1, Turn: 1, Kind: "base", Phase: "judged", Result: "pass", Spent: 0.13},
	}
	var plain, live bytes.Buffer
	p, l := newProgress(&plain, false), newProgress(&live, true)
	for _, ev := range events {
		p.event(ev)
		l.event(ev)
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
	l.close()
	l.event(events[0])
	if strings.Count(live.String(), "\x1b[2K") != 7 {
		t.Error("progress drew after close")
	}
}

// A result text with terminal escapes is printed without them, live or not.
func TestProgressStripsEscapes(t *testing.T) {
	ev := probe.Event{Conv: 1, Turn: 6, Kind: "probe", Phase: "judged", Result: "pass\r\x1b[2K\x1b]0;t\x07"}
	for _, live := range []bool{false, true} {
		var b bytes.Buffer
		newProgress(&b, live).event(ev)
		out := strings.ReplaceAll(b.String(), "\x1b[2K", "") // the live redraw's own erase
		if live && strings.Count(b.String(), "\x1b[2K") != 1 || strings.ContainsAny(out, "\r\x07\x1b") {
			t.Errorf("live=%v: %q", live, b.String())
		}
	}
}
