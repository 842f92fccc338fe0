// Package redact keeps secrets out of everything vibe-test saves: the values
// of the credential variables passed to the agent, and strings shaped like
// API keys or tokens wherever they appear.
package redact

import (
	"bytes"
	"io"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces a secret.
const Mask = "[REDACTED]"

// keyShapes are strings that look like credentials whatever variable they
// came from.
var keyShapes = regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[baprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}`)

// Redactor removes known secret values and key-shaped strings.
type Redactor struct {
	values []string // longest first, so a value containing another goes whole
}

// New makes a redactor for the given secret values (short values, under 8
// characters, are ignored: masking them would shred ordinary text).
func New(values ...string) *Redactor {
	r := &Redactor{}
	for _, v := range values {
		if len(v) >= 8 {
			r.values = append(r.values, v)
		}
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	return r
}

// FromEnv collects the values of the named variables from env (KEY=VALUE).
func FromEnv(env []string, names []string) *Redactor {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var vals []string
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && want[k] {
			vals = append(vals, v)
		}
	}
	return New(vals...)
}

// String redacts s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return keyShapes.ReplaceAllString(s, Mask)
	}
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, Mask)
	}
	return keyShapes.ReplaceAllString(s, Mask)
}

// Bytes redacts b.
func (r *Redactor) Bytes(b []byte) []byte {
	return []byte(r.String(string(b)))
}

// Writer redacts whole lines on their way to w, so a secret split across two
// writes is still caught. Close flushes a last unterminated line.
type Writer struct {
	r   *Redactor
	w   io.Writer
	buf []byte
}

// NewWriter wraps w.
func (r *Redactor) NewWriter(w io.Writer) *Writer { return &Writer{r: r, w: w} }

func (lw *Writer) Write(p []byte) (int, error) {
	lw.buf = append(lw.buf, p...)
	for {
		i := bytes.IndexByte(lw.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		if _, err := lw.w.Write(lw.r.Bytes(lw.buf[:i+1])); err != nil {
			return len(p), err
		}
		lw.buf = lw.buf[i+1:]
	}
}

// Flush writes a pending partial line (a stream cut mid-line is kept).
func (lw *Writer) Flush() error {
	if len(lw.buf) == 0 {
		return nil
	}
	_, err := lw.w.Write(lw.r.Bytes(lw.buf))
	lw.buf = nil
	return err
}
