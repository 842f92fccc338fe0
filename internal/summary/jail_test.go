package summary

import (
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/record"
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

// Another agent's CLI at a version its parser was not verified on is
// said in the summary and the chart's facts, as claude's is (it was said
// once, on stderr, as the run started); a codex run judged by codex shows
// no claude row ("claude: unknown").
func TestSummarySaysAgentVersion(t *testing.T) {
	r := decayRun()
	r.Config.Agent, r.Config.JudgeAgent = "codex", "codex"
	r.Versions = record.Versions{Agent: "0.150.0", AgentVerified: "0.171.0"}
	if s := summary(r, false); !strings.Contains(s, "warning: codex 0.150.0 differs from the version the parser was verified on (0.171.0)\n") || strings.Contains(s, "warning: claude") {
		t.Errorf("summary:\n%s", s)
	}
	d := ChartData(r)
	if d.Facts == nil || len(d.Facts.CLIs) != 1 || d.Facts.CLIs[0].Name != "codex" || !d.Facts.CLIs[0].Mismatch {
		t.Errorf("the chart's CLIs: %+v", d.Facts.CLIs)
	}
}
