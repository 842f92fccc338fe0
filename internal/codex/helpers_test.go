package codex

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// codexBinary is the pinned codex: $VIBE_TEST_CODEX, else the npm
// install in tools/ (make tools), resolved to its native binary. Missing,
// it skips locally and fails where CI=true.
func codexBinary(t testing.TB) string {
	t.Helper()
	p := os.Getenv("VIBE_TEST_CODEX")
	if p == "" {
		p = filepath.Join(testenv.RepoRoot(t), "tools", "node_modules", ".bin", "codex")
	}
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, "the codex CLI is not installed: run `make tools`")
	}
	bin, err := Native(p)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func startServer(t testing.TB, s scripted.Script) *scripted.Server {
	t.Helper()
	srv, err := scripted.Start(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// skillName and skillBody: a skill installed where codex finds it.
const (
	skillName = "release-notes"
	skillBody = "---\nname: release-notes\ndescription: Writes release notes. Use when the user asks for release notes.\n---\n# Release notes\nRun `git log --oneline` first, then write the notes.\n"
)

// conv is one conversation's folders: a sandbox with the skill installed
// and a fresh home.
type conv struct {
	dir, home, tmp string
}

func newConv(t testing.TB) conv {
	t.Helper()
	// Not t.TempDir(): the agent sees its folder's path, which must not
	// name a test.
	root, err := os.MkdirTemp("", "session-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	c := conv{dir: filepath.Join(root, "work"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{c.dir, c.home, c.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sk := filepath.Join(c.dir, Agent{}.SkillDir(skillName))
	if err := os.MkdirAll(sk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sk, "SKILL.md"), []byte(skillBody), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("first note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

// spec is a turn of the conversation against srv, jailed when jailed.
func (c conv) spec(t testing.TB, bin string, srv *scripted.Server, jailed bool, prompt string) agent.TurnSpec {
	t.Helper()
	s := agent.TurnSpec{
		Binary:  bin,
		Prompt:  prompt,
		Dir:     c.dir,
		Home:    c.home,
		BaseEnv: os.Environ(),
		Timeout: 60 * time.Second,
		Grace:   2 * time.Second,
		BaseURL: srv.URL(),
	}
	if jailed {
		j := testJail(t, bin).With(c.tmp, c.dir, []string{c.dir, c.home}, nil)
		s.Jail = &j
	}
	return s
}

// testJail is a run's jail as the engine makes it: the homes, temp dirs
// and this package's folder hidden, the codex install put back.
func testJail(t testing.TB, bin string) jail.Spec {
	t.Helper()
	bwrap := jail.Find(os.Getenv("PATH"))
	if bwrap == "" {
		testenv.Missing(t, "bubblewrap (bwrap) is not installed")
	}
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	return jail.Spec{
		Bwrap:   bwrap,
		Hide:    jail.HideList(home, os.Getenv("TMPDIR"), wd, os.TempDir()),
		CLIRoot: jail.CLIRootOf(bin),
		Expose:  jail.ExposeList(os.Getenv("PATH")),
	}
}
