package skill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFolderAndFile(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "SKILL.md", "---\nname: stock-check\ndescription: Checks stock.\n---\n# Steps\nRun the script.\n")
	write(t, dir, "scripts/census.sh", "echo 1\n")
	a, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "stock-check" || a.Description != "Checks stock." || !strings.HasPrefix(a.Body, "# Steps") || a.Hash != b.Hash {
		t.Fatalf("%+v", a)
	}
	// A change to a script beside SKILL.md changes the hash.
	write(t, dir, "scripts/census.sh", "echo 2\n")
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Hash == a.Hash {
		t.Error("hash ignores the skill's scripts")
	}
	// vibe-test's own files beside SKILL.md are not part of the skill.
	write(t, dir, "vibe-test.yaml", "base_task: x\n")
	write(t, dir, "vibe-runs/run/run.json", "{}")
	d, err := Load(dir)
	if err != nil || d.Hash != c.Hash {
		t.Errorf("the config or run folder changed the skill hash (%v)", err)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name, content, want string
	}{
		{"no frontmatter", "# Just text\n", "SKILL.md:1: no YAML frontmatter"},
		{"unclosed", "---\nname: a\n", "frontmatter is not closed"},
		{"no name", "---\ndescription: d\n---\nbody\n", `SKILL.md:1: frontmatter field "name" is missing`},
		{"no description", "---\nname: a\n---\nbody\n", `SKILL.md:1: frontmatter field "description" is missing`},
		{"empty description", "---\nname: a\ndescription: \"\"\n---\nbody\n", `SKILL.md:3: frontmatter field "description" is empty`},
		{"bad name", "---\nname: My Skill\ndescription: d\n---\nbody\n", `SKILL.md:2: frontmatter field "name": "My Skill"`},
		{"name not string", "---\nname: [a, b]\ndescription: d\n---\nbody\n", `SKILL.md:2: frontmatter field "name" is a`},
		{"broken yaml", "---\nname: a\ndescription: d\n  bad: [\n---\nbody\n", "SKILL.md:"},
		{"empty body", "---\nname: a\ndescription: d\n---\n\n  \n", "empty body"},
		{"binary", "---\nname: a\x00\n", "binary content"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := write(t, dir, "SKILL.md", c.content)
			_, err := Load(p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing path: %v", err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "folder has no SKILL.md") {
		t.Errorf("folder without SKILL.md: %v", err)
	}
	big := t.TempDir()
	write(t, big, "SKILL.md", "---\nname: a\ndescription: d\n---\n"+strings.Repeat("x", MaxSize))
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("oversized: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\n---\nbody\n"))
	f.Add([]byte("---\nname: [\n---\n"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse("SKILL.md", b)
		if err == nil && (s.Name == "" || s.Description == "") {
			t.Fatal("parsed without name or description")
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error: %q", err)
		}
	})
}
