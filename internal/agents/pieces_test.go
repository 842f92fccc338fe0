package agents

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/vibe-test/vibe-test/internal/redact"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// The CLIs' recorded transcripts through their stream writers: every piece
// of a streamed text is found as one, the transcripts are written as they
// were when no secret is in them, and a value spanning two pieces is
// masked in both. Codex and gemini stream their messages in pieces, and a
// secret split across two was whole in neither line (a security review
// joined a planted --pass-env value back from codex's and gemini's).
func TestPiecesOfTheRecordedTranscripts(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, name := range []string{Codex, Gemini} {
		files, err := filepath.Glob(filepath.Join(root, "internal", name, "testdata", "transcripts", "*.jsonl"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no transcripts (%v)", name, err)
		}
		split := 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			type piece struct {
				line         int
				stream, path string
				text         string
			}
			var pieces []piece
			lines := bytes.SplitAfter(b, []byte("\n"))
			for i, line := range lines {
				stream, path, ok := Pieces(name)(line)
				ok = ok && path != "" // not a line that ends a stream
				looks := bytes.Contains(line, []byte(`Delta"`)) || bytes.Contains(line, []byte(`/delta"`)) ||
					bytes.Contains(line, []byte(`_chunk"`)) || bytes.Contains(line, []byte(`"delta":true`))
				if ok != looks {
					t.Errorf("%s: piece %v: %s", f, ok, line)
				}
				if ok {
					pieces = append(pieces, piece{i, stream, path, gjson.GetBytes(line, path).String()})
				}
			}
			if got := write(t, redact.New("not-in-any-transcript"), name, b); got != string(b) {
				t.Errorf("%s: changed with no secret in it:\n%s", f, got)
			}
			// A value spanning two pieces of one stream, each long enough.
			for i := 0; i+1 < len(pieces); i++ {
				p, q := pieces[i], pieces[i+1]
				if p.stream != q.stream || len(p.text) < 4 || len(q.text) < 4 {
					continue
				}
				secret := p.text[len(p.text)-4:] + q.text[:4]
				out := bytes.SplitAfter([]byte(write(t, redact.New(secret), name, b)), []byte("\n"))
				if len(out) != len(lines) {
					t.Fatalf("%s: %d lines written of %d", f, len(out), len(lines))
				}
				pt, qt := gjson.GetBytes(out[p.line], p.path).String(), gjson.GetBytes(out[q.line], q.path).String()
				if strings.HasSuffix(pt, secret[:4]) || strings.HasPrefix(qt, secret[4:]) || !strings.HasSuffix(pt, redact.Mask) || !strings.HasPrefix(qt, redact.Mask) {
					t.Errorf("%s: a value split across two pieces (%q) was written as %q and %q", f, secret, pt, qt)
				}
				split++
				break
			}
		}
		if split == 0 && name == Gemini {
			t.Errorf("%s: no transcript has two pieces to split a value across", name)
		}
	}
}

func write(t *testing.T, r *redact.Redactor, name string, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	w := r.NewStreamWriter(&out, Pieces(name))
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// Codex's recorded messages came in one piece each: one of its real delta
// lines, cut in two as codex cuts longer ones, carries a value across the
// cut.
func TestCodexPiecesSplitAValue(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "internal", "codex", "testdata", "transcripts", "live-turn1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var line []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if bytes.Contains(l, []byte(`"item/agentMessage/delta"`)) {
			line = l
			break
		}
	}
	_, path, ok := Pieces(Codex)(line)
	v := gjson.GetBytes(line, path)
	if !ok || path == "" || len(v.String()) < 8 {
		t.Fatalf("no agent message piece to cut: %s", line)
	}
	text := v.String()
	half := func(s string) []byte {
		q, _ := json.Marshal(s)
		return append(append(append([]byte{}, line[:v.Index]...), q...), line[v.Index+len(v.Raw):]...)
	}
	mid := len(text) / 2
	in := append(half(text[:mid]), half(text[mid:])...)
	secret := text[mid-4 : mid+4]
	out := write(t, redact.New(secret), Codex, in)
	if strings.Contains(out, text[mid-4:mid]) || strings.Contains(out, text[mid:mid+4]) || strings.Count(out, redact.Mask) != 2 {
		t.Errorf("a value cut in two (%q):\n%s", secret, out)
	}
}
