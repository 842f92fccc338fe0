package redact

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWriter redacts the recorded transcripts of the pinned CLI
// (internal/claude/testdata/transcripts) line by line, as a run saves
// them, with a redactor holding two secret values.
func BenchmarkWriter(b *testing.B) {
	paths, err := filepath.Glob("../claude/testdata/transcripts/*.jsonl")
	if err != nil || len(paths) == 0 {
		b.Fatalf("no transcripts: %v", err)
	}
	var all []byte
	for _, p := range paths {
		t, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, t...)
	}
	r := New("sk-offline-value-1234", "tok-plain-value-5678")
	b.SetBytes(int64(len(all)))
	for b.Loop() {
		w := r.NewWriter(io.Discard)
		w.Write(all)
		w.Flush()
	}
}
