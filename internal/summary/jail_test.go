package summary

import (
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/jail"
)

// The summary says where claude ran: in the jail, or loudly, with the
// reason, in none; a run from before the jail says neither.
func TestSummarySaysJail(t *testing.T) {
	r := decayRun()
	if s := summary(r, false); strings.Contains(s, "jail") || strings.Contains(s, "JAIL") {
		t.Errorf("a run without the jail field talks about one:\n%s", s)
	}
	r.Jail = jail.Bubblewrap
	if s := summary(r, false); !strings.Contains(s, "isolation: hermetic, each conversation in a bubblewrap jail\n") || strings.Contains(s, "NO JAIL") {
		t.Errorf("jailed run:\n%s", s)
	}
	r.Jail, r.JailNote = jail.None, "bubblewrap (bwrap) is not installed"
	s := summary(r, false)
	if !strings.Contains(s, "isolation: hermetic, no jail\n!! NO JAIL: bubblewrap (bwrap) is not installed\n") {
		t.Errorf("unjailed run not loud:\n%s", s)
	}
	if d := ChartData(r); d.Facts == nil || d.Facts.Jail != jail.None || d.Facts.JailNote != r.JailNote {
		t.Errorf("the chart's facts lack the jail: %+v", d.Facts)
	}
}
