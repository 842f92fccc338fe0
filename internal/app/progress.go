package app

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	xterm "github.com/charmbracelet/x/term"

	"github.com/vibe-test/vibe-test/internal/conversation"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/term"
)

// progress shows what every conversation is doing while a run goes. On a
// terminal it redraws one line per conversation in place; elsewhere (CI
// logs) it prints one plain line per event, so logs stay readable.
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	live   bool
	width  int // the terminal's columns; a live line never wraps
	start  time.Time
	rows   map[string]*progressRow
	drawn  int
	closed bool
}

// progressRow is one conversation's live line. A probe is judged while the
// next turn runs, so the agent's turn and the judging are kept apart and
// both shown: neither hides the other.
type progressRow struct {
	order   [2]int       // conversations, then fresh sessions, then controls; by index
	agent   string       // the turn the agent is on, or last finished
	judging map[int]bool // turns being judged now
	judged  string       // the last verdict
	spent   float64
}

func newProgress(w io.Writer, live bool) *progress {
	return &progress{w: w, live: live, width: termWidth(w), start: time.Now(), rows: map[string]*progressRow{}}
}

// termWidth is the width of w's terminal, or 80 when it cannot be read.
func termWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := xterm.GetSize(f.Fd()); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

func (p *progress) Event(ev conversation.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	name := fmt.Sprintf("conv %d", ev.Conv)
	switch ev.Control {
	case "":
	case record.ArmFresh:
		name = fmt.Sprintf("fresh %d", ev.Conv)
	default:
		name = fmt.Sprintf("%s control %d", ev.Control, ev.Conv)
	}
	turn := fmt.Sprintf("turn %2d/%d", ev.Turn, ev.Of)
	if ev.Of == 0 {
		turn = fmt.Sprintf("turn %2d", ev.Turn) // a diluted-to schedule has no fixed length
	}
	if !p.live {
		what := ""
		switch ev.Phase {
		case "agent":
			what = fmt.Sprintf("%s %-6s agent running", turn, ev.Kind)
		case "done":
			what = fmt.Sprintf("%s %-6s agent done (%s), context %.1fk", turn, ev.Kind, ev.Result, float64(ev.Context)/1000)
		case "judge":
			what = fmt.Sprintf("%s %-6s judging", turn, ev.Kind)
		case "judged":
			what = fmt.Sprintf("%s %-6s judged: %s", turn, ev.Kind, ev.Result)
		}
		// A verdict or status is model-derived text: no escape may reach
		// the terminal but ours.
		fmt.Fprintln(p.w, term.Line(fmt.Sprintf("%-22s %s  [%s, $%.2f so far]", name, what, p.elapsed(), ev.Spent)))
		return
	}
	row := p.rows[name]
	if row == nil {
		row = &progressRow{judging: map[int]bool{}, order: [2]int{2, ev.Conv}}
		switch ev.Control {
		case "":
			row.order[0] = 0
		case record.ArmFresh:
			row.order[0] = 1
		}
		p.rows[name] = row
	}
	row.spent = max(row.spent, ev.Spent)
	switch ev.Phase {
	case "agent":
		row.agent = fmt.Sprintf("%s %s running", turn, ev.Kind)
	case "done":
		row.agent = fmt.Sprintf("%s %s %s, %.1fk", turn, ev.Kind, ev.Result, float64(ev.Context)/1000)
	case "judge":
		row.judging[ev.Turn] = true
	case "judged":
		delete(row.judging, ev.Turn)
		row.judged = fmt.Sprintf("turn %d %s", ev.Turn, ev.Result)
	}
	p.redraw()
}

func (p *progress) elapsed() time.Duration { return time.Since(p.start).Round(time.Second) }

// line renders a row, cut to the terminal's width: a wrapped line would
// take two rows, and the redraw, moving up one row per line, would then
// leave a copy of the block's first line behind on every redraw.
func (p *progress) line(name string, row *progressRow) string {
	parts := []string{row.agent}
	var turns []int
	for t := range row.judging {
		turns = append(turns, t)
	}
	sort.Ints(turns)
	for _, t := range turns {
		parts = append(parts, fmt.Sprintf("judging turn %d", t))
	}
	if row.judged != "" {
		parts = append(parts, row.judged)
	}
	s := fmt.Sprintf("%-10s %s  [%s, $%.2f]", name, strings.Join(nonEmpty(parts), "; "), p.elapsed(), row.spent)
	s = term.Line(s)
	if limit := p.width - 1; limit > 1 && utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit-1]) + "…"
	}
	return s
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// redraw rewrites the block of conversation lines in place.
func (p *progress) redraw() {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn) // back to the block's first line
	}
	names := make([]string, 0, len(p.rows))
	for n := range p.rows {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := p.rows[names[i]].order, p.rows[names[j]].order
		if a != b {
			return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		b.WriteString("\x1b[2K" + p.line(n, p.rows[n]) + "\n")
	}
	p.drawn = len(names)
	io.WriteString(p.w, b.String())
}

// close stops drawing before the summary is printed.
func (p *progress) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}
