package testenv

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// The recorded run folders: real run folders (run.json, rubric.json,
// plan.json and the transcripts), made by vibe-test on the stand-in CLI
// against the scripted model and committed under internal/testdata/runs,
// one per outcome (internal/testdata/runs/README.md lists them and how they
// are made again). Tests whose subject is only what a run folder says (the
// outputs, the statistics, the sentences) read these instead of running
// vibe-test.

// RunsDir is the folder of the recorded run folders.
func RunsDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(RepoRoot(t), "internal", "testdata", "runs")
}

// RecordedRuns names every recorded run folder (a suite's folder among
// them), sorted.
func RecordedRuns(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(RunsDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatalf("no recorded run folders in %s", RunsDir(t))
	}
	return names
}

// RecordedRun is the committed folder of the recorded run name, to read
// only: a test that changes a run folder takes a CopyOfRun.
func RecordedRun(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(RunsDir(t), name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("recorded run %q: %v", name, err)
	}
	return dir
}

// CopyOfRun copies the recorded run name into a new temporary folder and
// returns the copy's path, which the test may change.
func CopyOfRun(t testing.TB, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(RecordedRun(t, name))); err != nil {
		t.Fatal(err)
	}
	return dst
}
