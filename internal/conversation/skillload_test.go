package conversation

import (
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/redact"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// A codex turn whose stderr says the CLI could not load the skill under
// test is named so, with the CLI's reason; another skill's line, or
// claude's stderr, is not.
func TestSkillLoadFailureNamesTheCLIsReason(t *testing.T) {
	stderr := "2026-12-07T22:59:53.688897Z ERROR codex_core::session::session: failed to load skill /tmp/session-1/work/.agents/skills/ledger/SKILL.md: duplicate field `description`\n" +
		"2026-12-07T22:59:53.688899Z ERROR codex_core::session::session: failed to load skill /tmp/session-1/work/.agents/skills/other/SKILL.md: missing field `description`\n"
	d := &Driver{Agent: agents.For(agents.Codex, 0), Skill: &skill.Skill{Name: "ledger"}, Redactor: redact.New()}
	got := d.skillLoadFailure(stderr)
	if !strings.Contains(got, "the codex CLI did not load the skill (\"duplicate field `description`\" on its stderr)") {
		t.Errorf("codex: %q", got)
	}
	d.Skill.Name = "third"
	if got := d.skillLoadFailure(stderr); got != "" {
		t.Errorf("another skill's line: %q", got)
	}
	d.Agent, d.Skill.Name = nil, "ledger"
	if got := d.skillLoadFailure(stderr); got != "" {
		t.Errorf("claude: %q", got)
	}
}
