package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseTurn: any bytes parse without a panic or an error, and a turn
// the parser calls successful has seen its last line.
func FuzzParseTurn(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "transcripts", "*.jsonl"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		turn, err := ParseTurn(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("ParseTurn: %v", err)
		}
		if Failure(turn, 0) == "" && (!turn.HasResult || turn.IsError) {
			t.Fatalf("a turn without a completed last line passed: %+v", turn)
		}
		for _, c := range turn.Calls {
			if len(c.Input) == 0 {
				t.Fatalf("a call without input: %+v", c)
			}
		}
	})
}
