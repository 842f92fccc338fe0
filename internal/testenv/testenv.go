// Package testenv finds what tests need beyond their own package: the
// module root and the pinned claude binary. Where CI=true a missing piece
// fails the test instead of skipping it.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InCI reports whether the tests run in CI, where nothing may skip.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing skips the test locally and fails it in CI.
func Missing(t testing.TB, what string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s (CI=true: tests never skip)", what)
	}
	t.Skip(what)
}

// RepoRoot is the module root (the folder holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// Claude returns the pinned claude binary: $VIBE_TEST_CLAUDE, then
// tools/node_modules/.bin/claude (installed by `make tools`), then PATH.
func Claude(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("VIBE_TEST_CLAUDE"); p != "" {
		return p
	}
	local := filepath.Join(RepoRoot(t), "tools", "node_modules", ".bin", "claude")
	if _, err := os.Stat(local); err == nil {
		return local
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p
	}
	Missing(t, "the claude CLI is not installed: run `make tools`")
	return ""
}
