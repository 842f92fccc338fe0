package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// A skill's hooks under another agent: one line saying that agent does not
// run them, where the run printed Claude Code's line too ("vibe-test runs
// them as the CLI does") and, without a jail, that they run with the
// author's rights.
func TestHooksWarnedOnceUnderAnotherAgent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ledger")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: ledger\ndescription: Keeps the ledger.\nhooks:\n  PostToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: echo done\n---\nAppend to the ledger.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	sk, err := skill.Load(dir)
	if err != nil || len(sk.Hooks) == 0 || sk.HooksWarning == "" {
		t.Fatalf("the skill's hooks: %v, %q (%v)", sk.Hooks, sk.HooksWarning, err)
	}
	for _, driven := range []string{agents.Codex, agents.Gemini} {
		warnings, _ := skillWarnings(sk, nil, Settings{}, agents.For(driven, 0), driven, jail.None, "")
		all := strings.Join(warnings, "\n")
		if strings.Count(all, "hooks") != 1 || !strings.Contains(all, "are Claude Code's; --agent "+driven+" does not run them") {
			t.Errorf("%s: %q", driven, warnings)
		}
	}
	warnings, _ := skillWarnings(sk, nil, Settings{}, nil, agents.Claude, jail.None, "")
	if all := strings.Join(warnings, "\n"); !strings.Contains(all, "vibe-test runs them as the CLI does") || !strings.Contains(all, "run with no jail") {
		t.Errorf("claude: %q", warnings)
	}
}
