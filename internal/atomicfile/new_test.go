package atomicfile

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestWriteFirstFree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := func(n int) string { return "verdicts-" + strconv.Itoa(n+2) + ".json" }
	os.WriteFile(filepath.Join(dir, "verdicts-2.json"), []byte("old"), 0o644)
	p, err := WriteFirstFree(dir, name, []byte("new"), 0o600)
	if err != nil || filepath.Base(p) != "verdicts-3.json" {
		t.Fatalf("%s, %v", p, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "verdicts-2.json")); string(b) != "old" {
		t.Errorf("verdicts-2.json: %q, want it untouched", b)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("%s: %q", p, b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temp file left behind: %d entries", len(entries))
	}
}
