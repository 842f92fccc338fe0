package chart

import (
	"bytes"
	"embed"
	"errors"
	"sync"
)

// assets embeds the whole directory, not the script by name, so that the
// package compiles before scripts/fetch-echarts.sh has run: the committed
// README.md keeps the directory non-empty.
//
//go:embed assets
var assets embed.FS

// echartsScript is echarts@5.6.0's dist/echarts.common.min.js, or nil when
// the binary was built without it. It is a variable so that tests can blank
// it to exercise ErrNoScript.
var echartsScript = readScript()

func readScript() []byte {
	b, err := assets.ReadFile("assets/echarts.min.js")
	if err != nil {
		return nil
	}
	return b
}

// checkInlineable refuses a script that would not survive being inlined in
// a <script> element: the HTML parser ends the element at the first
// "</script", and "<!--" changes how it looks for that end. It also refuses
// "__f__", which go-echarts deletes from its pages: the script goes in after
// go-echarts has rendered (see Render), so a script holding it would differ
// from what go-echarts would have made of it. The pinned echarts has none of
// the three; this guards a future upgrade.
func checkInlineable(script []byte) error {
	lower := bytes.ToLower(script)
	if bytes.Contains(lower, []byte("</script")) || bytes.Contains(lower, []byte("<!--")) {
		return errors.New(`the embedded echarts script contains "</script" or "<!--" and cannot be inlined in chart.html`)
	}
	if bytes.Contains(script, []byte("__f__")) {
		return errors.New(`the embedded echarts script contains "__f__", which go-echarts deletes from a page, and cannot be inlined in chart.html`)
	}
	return nil
}

// checkedScript is checkInlineable's answer for the script it was last
// asked about: Render checks the script it inlines every time, and
// lowering 650 KB was a tenth of a chart's cost (most of it under -race).
// The embedded script never changes; a test that swaps it (withScript)
// puts in another slice, which is checked afresh.
var checkedScript struct {
	sync.Mutex
	script []byte
	err    error
}

// checkScript is checkInlineable(script), remembered for the same slice.
func checkScript(script []byte) error {
	checkedScript.Lock()
	defer checkedScript.Unlock()
	if c := checkedScript.script; len(c) > 0 && len(c) == len(script) && &c[0] == &script[0] {
		return checkedScript.err
	}
	checkedScript.script, checkedScript.err = script, checkInlineable(script)
	return checkedScript.err
}

// scriptSlot stands in the page for the echarts script while go-echarts
// renders: its template pass runs a regular expression over the whole page,
// and over the 650 KB script that pass was most of a chart's cost. It holds
// no "__f__", so go-echarts leaves it as it is.
const scriptSlot = "/* vibe-chart: the echarts script goes here */"
