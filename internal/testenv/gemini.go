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
	if p := os.Getenv("VIBE_TEST_GEMINI"); p != "" {
		return p
	}
	local := filepath.Join(RepoRoot(t), "tools", "node_modules", ".bin", "gemini")
	if _, err := os.Stat(local); err == nil {
		return local
	}
	if p, err := exec.LookPath("gemini"); err == nil {
		return p
	}
	Missing(t, "the gemini CLI is not installed: run `make tools`")
	return ""
}
