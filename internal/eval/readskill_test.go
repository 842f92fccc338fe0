package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// readSkill reads an installed skill as its generator's CLI does (an
// eval's resume calls it with the record's settings): a skill only Claude
// Code hides runs under gemini and codex, is refused under claude (an
// agent left unset is claude), and delivered in the system prompt is read
// as text under any.
func TestReadSkillReadsAsTheGeneratorsCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dmi")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "SKILL.md")
	if err := os.WriteFile(p, []byte("---\nname: dmi\ndescription: d\ndisable-model-invocation: true\n---\nRun the census.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := skill.LoadAs(p, skill.AsText)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		agent, deliver string
		refused        bool
	}{
		{"gemini", cases.DeliverSkill, false},
		{"codex", cases.DeliverSkill, false},
		{"claude", cases.DeliverSkill, true},
		{"", cases.DeliverSkill, true},
		{"claude", cases.DeliverSystemPrompt, false},
	} {
		var stderr bytes.Buffer
		sk, err := readSkill(text, Settings{Agent: c.agent, Deliver: c.deliver}, IO{Stderr: &stderr})
		if (err != nil) != c.refused {
			t.Errorf("%s, %s: %v, want refused %v", c.agent, c.deliver, err, c.refused)
			continue
		}
		if err == nil && c.deliver == cases.DeliverSkill && !strings.Contains(stderr.String(), "disable-model-invocation") {
			t.Errorf("%s: no warning of the field the CLI ignores: %q (read as %q)", c.agent, stderr.String(), sk.ReadAs)
		}
	}
}

// A SKILL.md over skill.MaxSize is refused in the system prompt, where
// it would fill the context of every generation; installed under codex,
// whose CLI reads a SKILL.md of any size, it runs.
func TestReadSkillCapsTheSystemPrompt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "SKILL.md")
	if err := os.WriteFile(p, []byte("---\nname: big\ndescription: d\n---\n"+strings.Repeat("Run the census.\n", 70_000)), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := skill.LoadAs(p, skill.AsText)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if _, err := readSkill(text, Settings{Agent: "codex", Deliver: cases.DeliverSystemPrompt}, IO{Stderr: &stderr}); err == nil || !strings.Contains(err.Error(), "over the 1000000 bytes vibe-test appends to an agent's system prompt") {
		t.Errorf("system prompt: %v", err)
	}
	if _, err := readSkill(text, Settings{Agent: "codex", Deliver: cases.DeliverSkill}, IO{Stderr: &stderr}); err != nil {
		t.Errorf("installed under codex: %v", err)
	}
}
