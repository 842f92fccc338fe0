package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/skill"
)

func TestNewInstallsSkillAndFixture(t *testing.T) {
	skillDir := t.TempDir()
	os.WriteFile(filepath.Join(skillDir, "SKILL.md"), []byte("---\nname: demo-skill\ndescription: d\n---\nbody\n"), 0o644)
	os.MkdirAll(filepath.Join(skillDir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(skillDir, "scripts", "run.sh"), []byte("echo hi\n"), 0o755)
	os.WriteFile(filepath.Join(skillDir, "vibe-test.yaml"), []byte("base_task: x\n"), 0o644)
	os.WriteFile(filepath.Join(skillDir, "rubric.json"), []byte("{}"), 0o644)
	sk, err := skill.Load(skillDir)
	if err != nil {
		t.Fatal(err)
	}
	fixture := t.TempDir()
	os.WriteFile(filepath.Join(fixture, "data.csv"), []byte("a,b\n"), 0o644)

	sb, err := New(Options{Skill: sk, Fixture: fixture, Files: map[string]string{".env": "X=1"}, Hermetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove()
	if !strings.HasPrefix(filepath.Base(sb.Dir), "repo-") {
		t.Errorf("sandbox name %q", sb.Dir)
	}
	for _, rel := range []string{".claude/skills/demo-skill/SKILL.md", ".claude/skills/demo-skill/scripts/run.sh", "data.csv", ".env"} {
		if _, err := os.Stat(filepath.Join(sb.Dir, rel)); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	for _, rel := range []string{".claude/skills/demo-skill/vibe-test.yaml", ".claude/skills/demo-skill/rubric.json"} {
		if _, err := os.Stat(filepath.Join(sb.Dir, rel)); err == nil {
			t.Errorf("%s reached the sandbox: the agent would read the experiment's own files", rel)
		}
	}
	st, _ := os.Stat(filepath.Join(sb.Dir, ".claude/skills/demo-skill/scripts/run.sh"))
	if st == nil || st.Mode()&0o100 == 0 {
		t.Error("the skill's script lost its executable bit")
	}
	if sb.ConfigDir == "" || !strings.HasPrefix(sb.ConfigDir, sb.Home) {
		t.Errorf("config dir %q home %q", sb.ConfigDir, sb.Home)
	}
	for _, word := range []string{"test", "eval", "probe", "vibe", "bench"} {
		if strings.Contains(strings.ToLower(filepath.Base(sb.Dir)), word) {
			t.Errorf("the agent can read %q in its path %s", word, sb.Dir)
		}
	}
	if _, err := sb.Path("../escape"); err == nil {
		t.Error("a path outside the sandbox was accepted")
	}
	if err := sb.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sb.Dir); !os.IsNotExist(err) {
		t.Error("sandbox not removed")
	}
}

func TestRefusesGitRepository(t *testing.T) {
	parent := t.TempDir()
	os.Mkdir(filepath.Join(parent, ".git"), 0o755)
	t.Setenv("TMPDIR", parent)
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "git repository") {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestAuthorConfigSessionsRemoved(t *testing.T) {
	cfg := t.TempDir()
	sb, err := New(Options{AuthorConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	sessions := SessionDir(cfg, sb.Dir)
	os.MkdirAll(sessions, 0o755)
	os.WriteFile(filepath.Join(sessions, "abc.jsonl"), []byte("{}\n"), 0o644)
	if sb.Home != "" {
		t.Error("author-config mode must keep the author's HOME")
	}
	sb.Remove()
	if _, err := os.Stat(sessions); !os.IsNotExist(err) {
		t.Error("the sandbox session stayed in the author's history")
	}
}

// A symlinked SKILL.md is installed as its target's content, not as a link
// that would dangle in the sandbox; the install goes under the name the CLI
// lists (the folder name when the frontmatter's name breaks the spec).
func TestInstallResolvesSkillLinks(t *testing.T) {
	skillDir := filepath.Join(t.TempDir(), "odd-skill")
	os.MkdirAll(filepath.Join(skillDir, "docs"), 0o755)
	os.WriteFile(filepath.Join(skillDir, "docs", "real.md"), []byte("---\nname: Odd Skill\ndescription: d\n---\nthe body\n"), 0o644)
	if err := os.Symlink("docs/real.md", filepath.Join(skillDir, "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	sk, err := skill.Load(skillDir)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := New(Options{Skill: sk, Hermetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove()
	p := filepath.Join(sb.Dir, ".claude/skills/odd-skill/SKILL.md")
	st, err := os.Lstat(p)
	if err != nil || st.Mode()&os.ModeSymlink != 0 {
		t.Fatalf("SKILL.md in the sandbox: %v (mode %v), want a regular file", err, st)
	}
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), "the body") {
		t.Errorf("installed SKILL.md holds %q", b)
	}
}
