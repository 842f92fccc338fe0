package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The recorded folders are found, and a copy is the folder's own files,
// which the test may change without touching the committed ones.
func TestCopyOfRun(t *testing.T) {
	names := RecordedRuns(t)
	name := names[0]
	orig, err := os.ReadFile(filepath.Join(RecordedRun(t, name), "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := CopyOfRun(t, name)
	copied, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil || !bytes.Equal(orig, copied) {
		t.Fatalf("the copy's run.json differs (%v)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(RecordedRun(t, name), "run.json")); !bytes.Equal(again, orig) {
		t.Error("changing the copy changed the recorded folder")
	}
}
