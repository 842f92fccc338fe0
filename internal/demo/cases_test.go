package demo

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/cases"
)

// The bundled case set is clean, and the scripted model's table of it
// says what its files say.
func TestBundledCases(t *testing.T) {
	paths, err := MaterializeCases(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	set, err := cases.Load(paths.Cases)
	if err != nil {
		t.Fatal(err)
	}
	if problems, _ := cases.Hygiene(context.Background(), set, os.Environ()); len(problems) > 0 {
		t.Errorf("the bundled case set has problems: %v", problems)
	}
	if len(set.Cases) != 6 || len(set.Holdout) != 4 {
		t.Errorf("%d main and %d holdout cases", len(set.Cases), len(set.Holdout))
	}
	for _, rc := range rulingCases {
		c := set.ByID(rc.id)
		if c == nil {
			t.Errorf("case %s of the script is not in the set", rc.id)
			continue
		}
		if c.Prompt != rc.prompt {
			t.Errorf("%s: prompt %q, the script routes %q", rc.id, c.Prompt, rc.prompt)
		}
		want := "HOLD"
		if rc.reorder() {
			want = "REORDER"
		}
		if !strings.Contains(string(c.Key["correct"]), want) {
			t.Errorf("%s: key %s, the script plays %s right", rc.id, c.Key["correct"], want)
		}
		if _, ok := c.Content(rc.leadFile); !ok {
			t.Errorf("%s: no %s in the workspace", rc.id, rc.leadFile)
		}
	}
	// Each version's marker is in its own SKILL.md and no other.
	for version, marker := range markers {
		for other, path := range paths.Skills {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(b), marker); got != (other == version) {
				t.Errorf("marker of %s in %s's SKILL.md: %v", version, other, got)
			}
		}
	}
	if _, err := CasesScript(); err != nil {
		t.Error(err)
	}
}
