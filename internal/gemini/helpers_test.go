package gemini

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// skillName and skillBody are the skill the real-CLI tests install.
const (
	skillName = "notes"
	skillBody = "Append every note to notes.log with >>, one per line; never rewrite the file."
)

// cliDirs are one conversation's folders: the sandbox, its home and its
// /tmp in the jail. Their names say nothing of tests (t.TempDir's would):
// the agent sees its paths.
type cliDirs struct{ work, home, tmp string }

func newDirs(t testing.TB) cliDirs {
	t.Helper()
	root, err := os.MkdirTemp("", "conv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	d := cliDirs{work: filepath.Join(root, "work"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	for _, p := range []string{d.work, d.home, d.tmp} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func installSkill(t testing.TB, work string) {
	t.Helper()
	dir := filepath.Join(work, Agent{}.SkillDir(skillName))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: " + skillName + "\ndescription: Keeps the notes file.\n---\n\n" + skillBody + "\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
}

// jailFor is the jail a run would use, with the conversation's folders
// writable; missing bwrap skips the test locally and fails it in CI.
func jailFor(t testing.TB, bin string, d cliDirs) *jail.Spec {
	t.Helper()
	path := os.Getenv("PATH")
	bw := jail.Find(path)
	if bw == "" {
		testenv.Missing(t, "bubblewrap (bwrap) is not installed")
	}
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	base := jail.Spec{Bwrap: bw, Hide: jail.HideList(home, os.Getenv("TMPDIR"), wd, os.TempDir()), CLIRoot: jail.CLIRootOf(bin), Expose: jail.ExposeList(path)}
	j := base.With(d.tmp, d.work, []string{d.work, d.home}, nil)
	return &j
}

// startScript starts the scripted server.
func startScript(t testing.TB, rules ...scripted.Rule) *scripted.Server {
	t.Helper()
	srv, err := scripted.Start(scripted.Script{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// turnSpec is a jailed turn against srv with the base tools and the home
// prepared.
func turnSpec(t testing.TB, a Agent, bin string, d cliDirs, srv *scripted.Server, env []string) agent.TurnSpec {
	t.Helper()
	spec := agent.TurnSpec{Binary: bin, Dir: d.work, Home: d.home, BaseURL: srv.URL(),
		BaseEnv: env, Timeout: 2 * time.Minute, Grace: 2 * time.Second}
	spec.Jail = jailFor(t, bin, d)
	if err := a.PrepareHome(spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// baseEnv is a small author environment: PATH, and a secret that must
// never reach the agent.
func baseEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", secretVar + "=" + secretValue,
		"GEMINI_API_KEY=" + authorKey}
}

const (
	secretVar   = "AWS_SECRET_ACCESS_KEY"
	secretValue = "aws-secret-value-4f1c"
	authorKey   = "author-gemini-key-9d2e"
)

// watchWriter is a transcript that closes seen once a line containing
// mark was written.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	mark string
	seen chan struct{}
	once sync.Once
}

func newWatch(mark string) *watchWriter { return &watchWriter{mark: mark, seen: make(chan struct{})} }

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.mark) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
