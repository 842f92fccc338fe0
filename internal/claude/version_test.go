package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// The CLI pinned for tests and the demo is the one the parser was verified on.
func TestPinnedVersionMatches(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "tools", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if got := pkg.Dependencies["@anthropic-ai/claude-code"]; got != VerifiedVersion {
		t.Fatalf("tools/package.json pins %q, VerifiedVersion is %q", got, VerifiedVersion)
	}
}

func TestEnvAllowlist(t *testing.T) {
	base := []string{"PATH=/bin", "AWS_SECRET_ACCESS_KEY=nope", "ANTHROPIC_BASE_URL=http://x", "HOME=/home/me", "MY_TOKEN=t", "KEEP=1"}
	env := Env(base, EnvOptions{Home: "/tmp/h", ConfigDir: "/tmp/c", PassEnv: []string{"KEEP"}})
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := cut(kv)
		got[k] = v
	}
	if _, ok := got["AWS_SECRET_ACCESS_KEY"]; ok {
		t.Error("a secret outside the allowlist reached the agent")
	}
	if _, ok := got["MY_TOKEN"]; ok {
		t.Error("MY_TOKEN passed")
	}
	if got["HOME"] != "/tmp/h" || got["CLAUDE_CONFIG_DIR"] != "/tmp/c" || got["ANTHROPIC_BASE_URL"] != "http://x" || got["KEEP"] != "1" {
		t.Errorf("%v", got)
	}
	// Without a fresh home, the author's HOME (and login) is kept.
	env = Env(base, EnvOptions{})
	for _, kv := range env {
		if kv == "HOME=/home/me" {
			return
		}
	}
	t.Error("author HOME not kept in author-config mode")
}

func cut(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}
