package codex

import (
	"os"
	"testing"
)

// TestSkillLoadFailureReadsTheCLIsLine reads the stderr codex 0.171.0
// wrote at a session's start with skills it could not load (recorded
// against the stand-in): each skill's reason, none for one it loaded or
// one that is not there.
func TestSkillLoadFailureReadsTheCLIsLine(t *testing.T) {
	b, err := os.ReadFile("testdata/stderr/failed-to-load-skills.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"bom-skill":  "missing YAML frontmatter delimited by ---",
		"empty-desc": "missing field `description`",
		"long-name":  "invalid name: exceeds maximum length of 64 characters",
		"ok-basic":   "",
		"skill":      "",
		"bom":        "",
	} {
		if got := SkillLoadFailure(string(b), name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
