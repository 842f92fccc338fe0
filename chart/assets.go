package chart

import (
	"bytes"
	"embed"
	"errors"
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
// "</script", and "<!--" changes how it looks for that end. The pinned
// echarts has neither; this guards a future upgrade.
func checkInlineable(script []byte) error {
	lower := bytes.ToLower(script)
	if bytes.Contains(lower, []byte("</script")) || bytes.Contains(lower, []byte("<!--")) {
		return errors.New(`the embedded echarts script contains "</script" or "<!--" and cannot be inlined in chart.html`)
	}
	return nil
}
