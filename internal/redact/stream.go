package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/tidwall/gjson"
)

// Delta says whether a transcript line carries one piece of a text the CLI
// streams in pieces (codex's message and command-output deltas, gemini's
// message chunks), and where: the stream the piece belongs to and the
// gjson path of its text in the line. A secret the CLI split across two
// pieces is whole in neither line, and a line-by-line redaction let its
// halves through. A line that ends a stream (codex's item/completed) says
// so with its stream and no path; EveryStream ends them all (gemini's
// other lines: a message's chunks come together).
type Delta func(line []byte) (stream, path string, ok bool)

// EveryStream is the stream a Delta names for a line that ends them all.
const EveryStream = "*"

// Lookahead is how much of a stream's text must follow a piece before the
// piece is written, unless its stream ends first: a secret that begins in
// the piece and is at most this long is then seen whole. A longer one
// split across pieces (a PEM private key, whose pattern needs its BEGIN
// and END lines) is not recognised.
const Lookahead = 512

// maxHeld bounds what a stream writer holds: past it, every held line is
// written (a stream that never ends, a CLI that sends no end line).
const maxHeld = 1 << 20

// pending is a line held back: its original bytes and, for a piece, its
// stream, path and text.
type pending struct {
	line         []byte
	stream, path string
	text         string
	piece        bool
	// cut is where a cut line's unterminated text starts (its opening
	// quote), 0 for a whole line.
	cut int
}

// NewStreamWriter is NewWriter for a CLI that streams texts in pieces
// (delta says which lines are pieces): a piece is held until Lookahead
// characters of its stream follow it, a line of another kind comes, or
// Flush, then written with every secret that overlaps it masked, found in
// the stream's text joined across pieces. Lines keep their order: a piece
// after a held piece waits too.
func (r *Redactor) NewStreamWriter(w io.Writer, delta Delta) *Writer {
	return &Writer{r: r, w: w, delta: delta, held: map[string]int{}, tails: map[string]string{}, ended: map[string]bool{}}
}

// hold queues a complete line and writes what may go.
func (lw *Writer) hold(line []byte) error {
	p := pending{line: append([]byte(nil), line...)}
	all := false
	if stream, path, ok := lw.delta(line); ok {
		switch v := gjson.GetBytes(line, path); {
		case path == "" && stream == EveryStream:
			all = true
		case path == "":
			lw.ended[stream] = true
		case v.Type == gjson.String && v.Index > 0:
			p.stream, p.path, p.text, p.piece = stream, path, v.String(), true
			lw.held[stream] += len(p.text)
			delete(lw.ended, stream)
		}
	}
	lw.queue = append(lw.queue, p)
	lw.bytes += len(p.line)
	// A stream's end lets its pieces go (held for their stream's next 512
	// characters alone, a message's last piece kept every line after it
	// in memory to the turn's end); another item's line does not: codex
	// cuts a command's output anywhere, and another item may come
	// between two of its pieces.
	return lw.release(all || lw.bytes > maxHeld)
}

// release writes the queued lines from the front, up to the first piece
// whose stream has not yet Lookahead characters after it (all of them
// when all is set).
func (lw *Writer) release(all bool) error {
	for len(lw.queue) > 0 {
		p := lw.queue[0]
		if p.piece && !all && !lw.ended[p.stream] && lw.held[p.stream]-len(p.text) < Lookahead {
			return nil
		}
		lw.queue = lw.queue[1:]
		lw.bytes -= len(p.line)
		line := p.line
		if p.piece {
			line = lw.maskPiece(p)
			lw.held[p.stream] -= len(p.text)
			tail := lw.tails[p.stream] + p.text
			lw.tails[p.stream] = tail[max(0, len(tail)-Lookahead):]
		}
		if _, err := lw.w.Write(lw.r.Bytes(line)); err != nil {
			return err
		}
	}
	return nil
}

// maskPiece is p's line with every secret that overlaps its text masked:
// the secrets are found in the stream's text around it, from the end of
// what was written before to what is queued after.
func (lw *Writer) maskPiece(p pending) []byte {
	before := lw.tails[p.stream]
	window := before + p.text
	for _, q := range lw.queue {
		if len(window) >= len(before)+len(p.text)+Lookahead {
			break
		}
		if q.piece && q.stream == p.stream {
			window += q.text
		}
	}
	start, end := len(before), len(before)+len(p.text)
	var masked []byte
	last := start
	for _, s := range merge(lw.r.spans(window)) {
		a, b := max(s[0], start), min(s[1], end)
		if a >= b {
			continue
		}
		masked = append(append(masked, window[last:a]...), Mask...)
		last = b
	}
	if masked == nil {
		return p.line
	}
	masked = append(masked, window[last:end]...)
	text := `"` + jsonEscaped(string(masked))
	if p.cut > 0 {
		// Cut where the text was: it stays unterminated.
		return append(append([]byte(nil), p.line[:p.cut]...), text...)
	}
	v := gjson.GetBytes(p.line, p.path)
	out := append(append([]byte(nil), p.line[:v.Index]...), text+`"`...)
	return append(out, p.line[v.Index+len(v.Raw):]...)
}

// cutPiece reads a piece's text from a line cut inside it (a CLI killed
// while it wrote): the rest of the line after the path's last key, an
// unterminated JSON string, decoded as far as it goes; at is its opening
// quote.
func cutPiece(line []byte, path string) (text string, at int, ok bool) {
	key := path[strings.LastIndexByte(path, '.')+1:]
	i := bytes.LastIndex(line, []byte(`"`+key+`":"`))
	if i < 0 {
		return "", 0, false
	}
	at = i + len(key) + 3
	raw := line[at:]
	// A cut escape (\u00, a lone backslash) is dropped.
	for trim := 0; trim <= 6 && trim < len(raw); trim++ {
		if json.Unmarshal(append(append([]byte(nil), raw[:len(raw)-trim]...), '"'), &text) == nil {
			return text, at, true
		}
	}
	return "", 0, false
}

// spans are where in s String would mask: every secret value, URL
// password, AWS secret and key-shaped string, as [start, end) pairs.
func (r *Redactor) spans(s string) [][2]int {
	var out [][2]int
	if r != nil {
		for _, v := range r.values {
			for i := 0; ; {
				j := strings.Index(s[i:], v)
				if j < 0 {
					break
				}
				out = append(out, [2]int{i + j, i + j + len(v)})
				i += j + 1
			}
		}
	}
	if mayHoldAWSSecret(s) {
		for _, m := range awsSecret.FindAllStringSubmatchIndex(s, -1) {
			out = append(out, [2]int{m[3], m[1]})
		}
	}
	if i := strings.Index(s, "://"); i >= 0 && strings.IndexByte(s[i:], '@') >= 0 {
		for _, m := range urlPassword.FindAllStringSubmatchIndex(s, -1) {
			out = append(out, [2]int{m[3], m[4]})
		}
	}
	if mayHoldKeyShape(s) {
		for _, m := range keyShapes.FindAllStringIndex(s, -1) {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	return out
}

// merge sorts spans and joins those that overlap or touch.
func merge(spans [][2]int) [][2]int {
	for i := 1; i < len(spans); i++ { // insertion sort: a handful at most
		for j := i; j > 0 && spans[j][0] < spans[j-1][0]; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	var out [][2]int
	for _, s := range spans {
		if n := len(out); n > 0 && s[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}
