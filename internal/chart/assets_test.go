package chart

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

func TestCheckInlineable(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   string // "" = accepted
	}{
		{"var a = 1;", ""},
		{"var a = '</SCRIPT>';", "</script"},
		{"var a = '<!-- x';", "<!--"},
		{"var __f__ = 1;", "__f__"},
	} {
		err := checkInlineable([]byte(tc.script))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q refused: %v", tc.script, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want one naming %q", tc.script, err, tc.want)
		}
	}
}

// TestScriptInlinedOnce: the echarts script goes into the page whole, once,
// in place of its slot, before the option that draws the chart.
func TestScriptInlinedOnce(t *testing.T) {
	if !HasScript() {
		testenv.Missing(t, "chart/assets/echarts.min.js is absent: "+fetchHint)
	}
	page := []byte(renderPageT(t, run(false)))
	if n := bytes.Count(page, echartsScript); n != 1 {
		t.Fatalf("the script is in the page %d times, want once", n)
	}
	if bytes.Contains(page, []byte(scriptSlot)) {
		t.Error("the script's slot is still in the page")
	}
	if bytes.Contains(page, []byte(optionSlot)) {
		t.Error("the option's slot is still in the page")
	}
	at, option := bytes.Index(page, echartsScript), bytes.Index(page, []byte("let option_decay"))
	if option < 0 || at > option {
		t.Errorf("the script (at %d) must come before the option (at %d)", at, option)
	}
}

// The option goes into its one slot; a page without one, or with two,
// is an error rather than a page without a chart.
func TestWithOption(t *testing.T) {
	got, err := withOption([]byte("let o = "+optionSlot+";"), []byte(`{"a":1}`))
	if err != nil || string(got) != `let o = {"a":1};` {
		t.Errorf("withOption = %q, %v", got, err)
	}
	for _, page := range []string{"let o = ;", optionSlot + optionSlot} {
		if _, err := withOption([]byte(page), []byte(`{}`)); err == nil {
			t.Errorf("%q: no error", page)
		}
	}
}

// BenchmarkRender is one chart.html of the tests' sample run (run(false)).
func BenchmarkRender(b *testing.B) {
	if !HasScript() {
		b.Skip("built without the echarts script (make assets)")
	}
	d := run(false)
	for b.Loop() {
		if err := Render(io.Discard, d); err != nil {
			b.Fatal(err)
		}
	}
}
