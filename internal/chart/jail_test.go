package chart

import (
	"strings"
	"testing"
)

// chart.html shows the jail in the run facts, and a run without one gets a
// red banner at the top, its reason escaped.
func TestChartSaysJail(t *testing.T) {
	withScript(t, stubScript)
	d := run(false)
	d.Facts.Jail = "bubblewrap"
	if page := renderPageT(t, d); !strings.Contains(page, "<tr><th>jail</th><td>bubblewrap") || strings.Contains(page, "no-jail") {
		t.Error("a jailed run's page does not say bubblewrap")
	}
	d.Facts.Jail, d.Facts.JailNote = "none", "--isolation none <b>"
	page := renderPageT(t, d)
	if !strings.Contains(page, `<p class="banner" id="no-jail" role="alert">NO JAIL: --isolation none &lt;b&gt;</p>`) {
		t.Error("an unjailed run's page has no NO JAIL banner")
	}
}
