package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/testenv"
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

// The path checked is the one the agent sees: a link's target.
func TestTempDirProblemReadsThroughALink(t *testing.T) {
	root := testenv.TempDir(t)
	named := filepath.Join(root, "skill-tests")
	plain := filepath.Join(root, "plain")
	for _, d := range []string{named, plain} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(named, filepath.Join(root, "link-to-named")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(plain, filepath.Join(root, "vibe-link")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(root, "link-to-named"))
	if p := TempDirProblem(); !strings.Contains(p, `names "tests"`) || !strings.Contains(p, "link-to-named, a link to it)") {
		t.Errorf("a link to .../skill-tests: %q, want it refused, the link named", p)
	}
	if err := os.Mkdir(filepath.Join(named, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(root, "link-to-named", "sub"))
	if p := TempDirProblem(); !strings.Contains(p, "sub, through a link on its path)") {
		t.Errorf("a folder below a link: %q", p)
	}
	t.Setenv("TMPDIR", filepath.Join(root, "vibe-link"))
	if p := TempDirProblem(); p != "" {
		t.Errorf("a vibe-link to a plain folder: %q, want it taken", p)
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
