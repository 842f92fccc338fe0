package sandbox

import (
	"strings"
	"testing"
)

func TestSubjectWordFindsWordsNotLetters(t *testing.T) {
	for path, want := range map[string]string{
		"/tmp":                             "",
		"/home/latest/contest/tmp":         "",
		"/work/ci/vibe-test-tmp":           "vibe",
		"/var/lib/jenkins/skill-tests@tmp": "tests",
		"/runner/_temp/Evaluation":         "evaluation",
		"/data/probes":                     "probes",
		"/x/benchmarks2/tmp":               "benchmarks",
	} {
		if got := subjectWord(path); got != want {
			t.Errorf("subjectWord(%q) = %q, want %q", path, got, want)
		}
	}
}

// A TMPDIR that names the experiment is refused before a sandbox is made
// in it: the agent's working directory would carry the word.
func TestNewRefusesATempDirThatNamesTheExperiment(t *testing.T) {
	// Not under t.TempDir(), whose path has the test's name: it is never
	// made, the refusal comes first.
	dir := "/nonexistent/ci/skill-tests"
	t.Setenv("TMPDIR", dir)
	_, err := New(Options{})
	if err == nil || !strings.Contains(err.Error(), `names "tests"`) || !strings.Contains(err.Error(), "set TMPDIR") {
		t.Fatalf("New under TMPDIR=%s: %v, want the refusal naming the word", dir, err)
	}
}
