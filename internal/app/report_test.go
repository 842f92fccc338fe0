package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// A run folder made by an older vibe-test (kept as a fixture: no rubric, no
// statistics, no traces in run.json, no transcripts) is redrawn, and the
// report says what it cannot show.
func TestReportOlderRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := sandbox.CopyDir(filepath.Join(testenv.RepoRoot(t), "internal", "app", "testdata", "run-0.0.9"), dir, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "report", dir, "--junit", filepath.Join(dir, "junit.xml")}, IO{Env: os.Environ(), Stdout: &stdout, Stderr: &stderr})
	if code != 2 {
		t.Fatalf("exit %d, want 2: a run with no fresh arm cannot be given a decay verdict today\n%s\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"made by vibe-test 0.0.9", "cannot be shown: the rubric's criterion texts", "cannot be shown: the condensed tool-call traces", "cannot be shown: a decay verdict", "rejudge"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "pass rate per judged turn") || !strings.Contains(stdout.String(), "Not comparable:") {
		t.Errorf("the statistics were not recomputed:\n%s", stdout.String())
	}
	for _, f := range []string{"chart.html", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil && testenv.InCI() {
			t.Errorf("%s: %v", f, err)
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if !bytes.Equal(before, after) {
		t.Error("report modified run.json")
	}
}
