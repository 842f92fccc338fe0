package codex

import (
	"bytes"
	"io"
	"strings"
)

// watch passes writes to w and calls fire once what was written holds on.
type watch struct {
	w    io.Writer
	on   string
	seen bytes.Buffer
	fire func()
	done bool
}

func (w *watch) Write(p []byte) (int, error) {
	w.seen.Write(p)
	if !w.done && strings.Contains(w.seen.String(), w.on) {
		w.done = true
		w.fire()
	}
	return w.w.Write(p)
}
