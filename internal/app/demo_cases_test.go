package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/eval"
)

// `vibe-test demo --cases`: the control below the baseline, the shorter
// version accepted, the broken one rejected, no credentials. On the
// stand-in: its forty generator calls on the real CLI proved nothing that
// internal/eval's TestDemoPersonasOnTheRealCLI (the demo's personas answer
// the real CLI's generator requests as the stand-in's) does not.
func TestDemoCases(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "demo")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "CLAUDE_CODE_OAUTH") {
			env = append(env, kv)
		}
	}
	env = append(env, "VIBE_TEST_CLAUDE="+fastCLI(t))
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "demo", "--cases", "--out", out}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	if code != 0 {
		t.Fatalf("demo --cases exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	// The set's counts, as the summary gives them (it said 2 holdout cases
	// of 4).
	if !strings.Contains(stderr.String(), "(6 main cases, 4 holdout)") || !strings.Contains(stdout.String(), "6 main and 4 holdout cases") {
		t.Errorf("the case set's counts:\n%s\n%s", stderr.String(), stdout.String())
	}
	s := stdout.String()
	for _, want := range []string{"INSTRUMENT OK (exit 0)", "The eval demo ran as designed", "REJECT (exit 1)", "regressed"} {
		if !strings.Contains(s, want) {
			t.Errorf("stdout lacks %q:\n%s", want, s)
		}
	}
	for _, name := range []string{"baseline", "shorter", "broken"} {
		dir := filepath.Join(out, name)
		if !eval.IsEvalDir(dir) {
			t.Errorf("%s: no eval folder", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// report redraws a saved eval without a model call and exits as it did.
	stdout.Reset()
	if code := Main(context.Background(), []string{"vibe-test", "report", filepath.Join(out, "broken")}, IO{Env: []string{"PATH=" + t.TempDir()}, Stdout: &stdout, Stderr: &stderr}); code != 1 {
		t.Errorf("report of the broken version: exit %d, want 1\n%s", code, stdout.String())
	}
}
