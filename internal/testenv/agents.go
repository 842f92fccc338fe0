package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Gemini returns the pinned Gemini CLI: $VIBE_TEST_GEMINI, then
// tools/node_modules/.bin/gemini (installed by `make tools`), then PATH.
// Missing, it skips the test locally and fails it where CI=true.
func Gemini(t testing.TB) string {
	t.Helper()
	return pinnedCLI(t, "gemini", "VIBE_TEST_GEMINI")
}

// Codex is Gemini for the Codex CLI ($VIBE_TEST_CODEX): its npm
// launcher, which vibe-test resolves to the native binary itself.
func Codex(t testing.TB) string {
	t.Helper()
	return pinnedCLI(t, "codex", "VIBE_TEST_CODEX")
}

func pinnedCLI(t testing.TB, name, envVar string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		return p
	}
	local := filepath.Join(RepoRoot(t), "tools", "node_modules", ".bin", name)
	if _, err := os.Stat(local); err == nil {
		return local
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	Missing(t, "the "+name+" CLI is not installed: run `make tools`")
	return ""
}
