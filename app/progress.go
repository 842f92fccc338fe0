package app

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vibe-test/vibe-test/internal/term"
	"github.com/vibe-test/vibe-test/probe"
	"github.com/vibe-test/vibe-test/result"
)

// progress shows what every conversation is doing while a run goes. On a
// terminal it redraws one line per conversation in place; elsewhere (CI
// logs) it prints one plain line per event, so logs stay readable.
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	live   bool
	start  time.Time
	lines  map[string]string
	drawn  int
	closed bool
}

func newProgress(w io.Writer, live bool) *progress {
	return &progress{w: w, live: live, start: time.Now(), lines: map[string]string{}}
}

func (p *progress) event(ev probe.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	name := fmt.Sprintf("conv %d", ev.Conv)
	switch ev.Control {
	case "":
	case result.ArmFresh:
		name = fmt.Sprintf("fresh %d", ev.Conv)
	default:
		name = fmt.Sprintf("%s control %d", ev.Control, ev.Conv)
	}
	what := ""
	switch ev.Phase {
	case "agent":
		what = fmt.Sprintf("turn %2d/10 %-6s agent running", ev.Turn, ev.Kind)
	case "done":
		what = fmt.Sprintf("turn %2d/10 %-6s agent done (%s), context %.1fk", ev.Turn, ev.Kind, ev.Result, float64(ev.Context)/1000)
	case "judge":
		what = fmt.Sprintf("turn %2d/10 %-6s judging", ev.Turn, ev.Kind)
	case "judged":
		what = fmt.Sprintf("turn %2d/10 %-6s judged: %s", ev.Turn, ev.Kind, ev.Result)
	}
	line := fmt.Sprintf("%-22s %s  [%s, $%.2f so far]", name, what, time.Since(p.start).Round(time.Second), ev.Spent)
	// A verdict or status is model-derived text: no escape may redraw the
	// terminal but ours.
	line = term.Line(line)
	if !p.live {
		fmt.Fprintln(p.w, line)
		return
	}
	p.lines[name] = line
	p.redraw()
}

// redraw rewrites the block of conversation lines in place.
func (p *progress) redraw() {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn) // back to the block's first line
	}
	names := make([]string, 0, len(p.lines))
	for n := range p.lines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString("\x1b[2K" + p.lines[n] + "\n")
	}
	p.drawn = len(names)
	io.WriteString(p.w, b.String())
}

// close stops drawing before the summary is printed.
func (p *progress) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}
