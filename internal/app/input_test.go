package app

import (
	"strings"
	"testing"
)

func TestReorderFlagsAfterPath(t *testing.T) {
	a := newApp(IO{}, &chosen{})
	got := reorder(a, []string{"vibe-test", "./SKILL.md", "--no-baseline-gate", "--conversations", "3", "--out=x"})
	want := "vibe-test --no-baseline-gate --conversations 3 --out=x ./SKILL.md"
	if strings.Join(got, " ") != want {
		t.Fatalf("%v", got)
	}
	got = reorder(a, []string{"vibe-test", "demo", "--personas", "steady"})
	if strings.Join(got, " ") != "vibe-test demo --personas steady" {
		t.Fatalf("%v", got)
	}
}

// --allowed-tools values may hold several tools; urfave/cli has already
// cut them at commas, even inside a pattern's parentheses.
func TestSplitTools(t *testing.T) {
	got := splitTools([]string{"Bash(git add", "commit:*) WebFetch", "Read"})
	if strings.Join(got, "|") != "Bash(git add,commit:*)|WebFetch|Read" {
		t.Errorf("%q", got)
	}
}
