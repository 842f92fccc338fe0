package redact

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// deltaLines is a codex-like delta: method ".../delta", text at
// params.delta, stream params.itemId; item/completed ends its item.
func deltaLines(line []byte) (string, string, bool) {
	switch m := gjson.GetBytes(line, "method").String(); {
	case strings.HasSuffix(m, "delta"):
		return gjson.GetBytes(line, "params.itemId").String(), "params.delta", true
	case m == "item/completed":
		return gjson.GetBytes(line, "params.item.id").String(), "", true
	}
	return "", "", false
}

func piece(item, text string) string {
	b, _ := json.Marshal(map[string]any{"method": "item/delta", "params": map[string]any{"itemId": item, "delta": text}})
	return string(b) + "\n"
}

// A secret the CLI streamed in pieces, tiny ones among them, is masked in
// every piece it overlaps, in either of two interleaved streams; the text
// around it and the lines' order are kept. A line-by-line redaction let
// each piece through.
func TestStreamWriterMasksSecretsSplitAcrossPieces(t *testing.T) {
	const secret = "Zq9XvK2mW8pLr4Tn" // a --pass-env value
	r := New(secret)
	text := strings.Repeat("plain words before; ", 40) + "token=" + secret + " and after; " + strings.Repeat("more plain words; ", 40) + "key " + secret + "."
	var in []string
	// Pieces of 1 to 7 bytes in stream a, a whole message in stream b
	// between them, and a line of another kind.
	for i, n := 0, 1; i < len(text); n = n%7 + 1 {
		j := min(i+n, len(text))
		in = append(in, piece("a", text[i:j]))
		if i < 30 && j >= 30 {
			in = append(in, piece("b", "other item: "+secret), `{"method":"thread/tokenUsage/updated"}`+"\n")
		}
		i = j
	}
	var out bytes.Buffer
	w := r.NewStreamWriter(&out, deltaLines)
	for _, l := range in {
		// In bits, as a pipe delivers them.
		for k := 0; k < len(l); k += 5 {
			if _, err := w.Write([]byte(l[k:min(k+5, len(l))])); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(out.String(), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) != len(in) {
		t.Fatalf("%d lines written, %d given", len(lines), len(in))
	}
	joined := map[string]string{}
	for i, l := range lines {
		m := gjson.Get(l, "method").String()
		if m != gjson.Get(in[i], "method").String() {
			t.Fatalf("line %d is %s, was %s: the order changed", i, m, gjson.Get(in[i], "method"))
		}
		item := gjson.Get(l, "params.itemId").String()
		joined[item] += gjson.Get(l, "params.delta").String()
	}
	for k := 4; k <= len(secret); k++ {
		for i := 0; i+k <= len(secret); i++ {
			if frag := secret[i : i+k]; strings.Contains(out.String(), frag) {
				t.Fatalf("a piece of the secret, %q, was written:\n%s", frag, out.String())
			}
		}
	}
	if got, want := strings.ReplaceAll(joined["a"], Mask, ""), strings.ReplaceAll(text, secret, ""); got != want {
		t.Errorf("the stream's other text changed:\n%s\nwant\n%s", got, want)
	}
	if joined["b"] != "other item: "+Mask {
		t.Errorf("stream b: %q", joined["b"])
	}
}

// A stream writer without pieces is the line writer: the same bytes.
func TestStreamWriterWithoutPieces(t *testing.T) {
	r := New("Zq9XvK2mW8pLr4Tn")
	in := `{"type":"x","text":"Zq9XvK2mW8pLr4Tn"}` + "\n" + `{"type":"y"}` + "\n" + `{"cut`
	var a, b bytes.Buffer
	for _, w := range []*Writer{r.NewWriter(&a), r.NewStreamWriter(&b, deltaLines)} {
		if _, err := w.Write([]byte(in)); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if a.String() != b.String() {
		t.Errorf("line writer %q, stream writer %q", a.String(), b.String())
	}
}

// A message's last piece is written when its item ends, not at the
// turn's end: held for 512 more characters of its stream, it kept every
// line after it in memory until Flush (a turn killed meanwhile lost
// them).
func TestStreamWriterReleasesAtTheNextLine(t *testing.T) {
	var out bytes.Buffer
	w := New("Zq9XvK2mW8pLr4Tn").NewStreamWriter(&out, deltaLines)
	in := piece("a", "Running the census ") + piece("a", "first.") + `{"method":"item/completed","params":{"item":{"id":"a"}}}` + "\n"
	if _, err := w.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Errorf("before Flush, written:\n%s\nwant\n%s", out.String(), in)
	}
	if err := w.Flush(); err != nil || out.String() != in {
		t.Errorf("after Flush (%v):\n%s", err, out.String())
	}
}

// Another item's line between two pieces of one stream ends nothing: the
// secret across them is masked in both. Written at that line, the first
// piece went out with the secret's first half (codex cuts a command's
// output anywhere).
func TestStreamWriterAcrossAnotherItemsLine(t *testing.T) {
	const secret = "Zq9XvK2mW8pLr4Tn"
	var out bytes.Buffer
	w := New(secret).NewStreamWriter(&out, deltaLines)
	in := piece("a", "TOKEN="+secret[:8]) + `{"method":"item/started","params":{"item":{"id":"b"}}}` + "\n" + piece("a", secret[8:]+" ok") +
		`{"method":"item/completed","params":{"item":{"id":"a"}}}` + "\n"
	if _, err := w.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), secret[:4]) || strings.Contains(out.String(), secret[12:]) || strings.Count(out.String(), Mask) != 2 {
		t.Errorf("written:\n%s", out.String())
	}
}

// What a stream writer holds is bounded: a stream that never ends is
// written once a megabyte waits behind its piece.
func TestStreamWriterBoundsWhatItHolds(t *testing.T) {
	var out bytes.Buffer
	w := New("Zq9XvK2mW8pLr4Tn").NewStreamWriter(&out, deltaLines)
	big := `{"method":"item/started","params":{"text":"` + strings.Repeat("x", 4096) + `"}}` + "\n"
	if _, err := w.Write([]byte(piece("a", "short"))); err != nil {
		t.Fatal(err)
	}
	for range 300 {
		if _, err := w.Write([]byte(big)); err != nil {
			t.Fatal(err)
		}
	}
	if out.Len() < 1<<20 {
		t.Errorf("%d bytes written of %d", out.Len(), 300*len(big))
	}
}

// A piece cut by a kill (the turn's last, unterminated line) is joined
// with the pieces before it: a secret they began is masked in both. The
// cut line was written as it was, and a secret across it went out whole
// in two halves.
func TestStreamWriterCutPiece(t *testing.T) {
	const secret = "Zq9XvK2mW8pLr4Tn"
	var out bytes.Buffer
	w := New(secret).NewStreamWriter(&out, deltaLines)
	in := piece("a", "TOKEN="+secret[:8]) + `{"method":"item/delta","params":{"itemId":"a","delta":"` + secret[8:] + ` and on\u00`
	if _, err := w.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, secret[:4]) || strings.Contains(got, secret[12:]) || strings.Count(got, Mask) != 2 || !strings.HasSuffix(got, `"delta":"`+Mask+` and on`) {
		t.Errorf("written:\n%s", got)
	}
}
