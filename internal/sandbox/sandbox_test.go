package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/testenv"
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

// A fixture that is the skill's own project holds the skill where it is
// installed: the skill measured replaces that copy (every install failed
// with "file exists").
func TestSkillReplacesTheFixturesCopy(t *testing.T) {
	fixture := t.TempDir()
	skillDir := filepath.Join(fixture, ".claude", "skills", "deploy")
	os.MkdirAll(skillDir, 0o755)
	os.WriteFile(filepath.Join(skillDir, "SKILL.md"), []byte("---\nname: deploy\ndescription: d\n---\nnew body\n"), 0o644)
	os.WriteFile(filepath.Join(fixture, "app.go"), []byte("package app\n"), 0o644)
	sk, err := skill.Load(skillDir)
	if err != nil {
		t.Fatal(err)
	}
	// The version measured is another folder's (a candidate), not the
	// project's: the project's copy, with a file the candidate dropped,
	// must not survive.
	os.WriteFile(filepath.Join(skillDir, "old.md"), []byte("old"), 0o644)
	candidate := t.TempDir()
	os.WriteFile(filepath.Join(candidate, "SKILL.md"), []byte("---\nname: deploy\ndescription: d\n---\ncandidate body\n"), 0o644)
	if sk, err = skill.Load(candidate); err != nil {
		t.Fatal(err)
	}
	sb, err := New(Options{Skill: sk, Fixture: fixture, Hermetic: true})
	if err != nil {
		t.Fatalf("the skill's own project as fixture: %v", err)
	}
	defer sb.Remove()
	b, err := os.ReadFile(filepath.Join(sb.Dir, ".claude/skills/deploy/SKILL.md"))
	if err != nil || !strings.Contains(string(b), "candidate body") {
		t.Errorf("installed SKILL.md %q (%v), want the candidate's", b, err)
	}
	if _, err := os.Stat(filepath.Join(sb.Dir, ".claude/skills/deploy/old.md")); err == nil {
		t.Error("the project's copy of the skill survived beside the one measured")
	}
	if _, err := os.Stat(filepath.Join(sb.Dir, "app.go")); err != nil {
		t.Errorf("the rest of the fixture: %v", err)
	}
}

func TestRefusesGitRepository(t *testing.T) {
	parent := testenv.TempDir(t)
	os.Mkdir(filepath.Join(parent, ".git"), 0o755)
	t.Setenv("TMPDIR", parent)
	// An empty .git folder is no repository to git (a bind mount can leave
	// one in a shared temp folder): the sandbox is made.
	sb, err := New(Options{})
	if err != nil {
		t.Fatalf("an empty .git folder refused the sandbox: %v", err)
	}
	sb.Remove()
	if err := os.WriteFile(filepath.Join(parent, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "git repository") {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// A sandbox inside the author's home folder is refused (the agent would
// work beside the author's own files), a link to the home folder
// resolved; one beside it is made.
func TestRefusesHomeFolder(t *testing.T) {
	root := testenv.TempDir(t)
	home := filepath.Join(root, "home")
	os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	os.Symlink(home, filepath.Join(root, "home-link"))
	os.MkdirAll(filepath.Join(root, "elsewhere"), 0o755)
	t.Setenv("HOME", filepath.Join(root, "home-link"))
	t.Setenv("TMPDIR", filepath.Join(home, "tmp"))
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "inside your home folder") {
		t.Fatalf("a sandbox under the home folder: err = %v, want a refusal", err)
	}
	if names := leftIn(t, filepath.Join(home, "tmp")); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
	t.Setenv("TMPDIR", filepath.Join(root, "elsewhere"))
	sb, err := New(Options{})
	if err != nil {
		t.Fatalf("a sandbox beside the home folder: %v", err)
	}
	sb.Remove()
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

// isolatedTemp points TMPDIR at a fresh folder, so a test can see every
// sandbox made and left.
func isolatedTemp(t *testing.T) string {
	t.Helper()
	tmp := testenv.TempDir(t)
	t.Setenv("TMPDIR", tmp)
	return tmp
}

func leftIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "Test") {
			continue // the test's own temp folders (t.TempDir under TMPDIR)
		}
		names = append(names, e.Name())
	}
	return names
}

// Writes into the sandbox never leave it: not through a link the agent (or
// anyone) planted, not through a dangling link, not by "..", and a link as
// the file itself is refused, not written through.
func TestWriteFilesStaysInside(t *testing.T) {
	isolatedTemp(t)
	outside := t.TempDir()
	victim := filepath.Join(outside, "bashrc")
	os.WriteFile(victim, []byte("keep me\n"), 0o600)
	sb, err := New(Options{Hermetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove()
	os.Symlink(outside, filepath.Join(sb.Dir, "tmpdir"))
	os.Symlink(filepath.Join(outside, "created.txt"), filepath.Join(sb.Dir, "dangling"))
	os.Symlink(victim, filepath.Join(sb.Dir, ".bashrc"))
	os.WriteFile(filepath.Join(sb.Dir, "inside.txt"), []byte("x"), 0o600)
	os.Symlink("inside.txt", filepath.Join(sb.Dir, "inner-link"))

	for _, tc := range []struct{ rel, says string }{
		{"tmpdir/pwned.txt", "escapes"},
		{"dangling", "symbolic link"},
		{".bashrc", "symbolic link"},
		{"inner-link", "symbolic link"},
		{"../up.txt", "relative path inside"},
		{"/abs.txt", "relative path inside"},
		{"a/../../up.txt", "relative path inside"},
	} {
		err := sb.WriteFiles(map[string]string{tc.rel: "owned\n"})
		if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), tc.rel) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, expected one line naming the file and saying %q", tc.rel, err, tc.says)
		}
	}
	if names := leftIn(t, outside); len(names) != 1 {
		t.Errorf("a write left the sandbox: %v", names)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me\n" {
		t.Errorf("the linked file was written through: %q", b)
	}
	// A link to a folder inside is followed: it stays inside.
	os.Mkdir(filepath.Join(sb.Dir, "real"), 0o700)
	os.Symlink("real", filepath.Join(sb.Dir, "alias"))
	if err := sb.WriteFiles(map[string]string{"alias/ok.txt": "fine", "new/deep/ok.txt": "fine"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sb.Dir, "real", "ok.txt")); err != nil {
		t.Error(err)
	}
}

// A fixture link that leaves the fixture is refused, naming the fixture and
// the link, and nothing is left behind; links inside are kept as links.
func TestFixtureLinks(t *testing.T) {
	tmp := isolatedTemp(t)
	outside := t.TempDir()
	for _, tc := range []struct{ name, link string }{
		{"absolute", outside},
		{"up and out", "../../" + filepath.Base(outside)},
		{"dot then up", "self/../x"}, // self -> . makes the kernel leave
		// The author's own file by its absolute path: copied as it is,
		// the sandbox's link would lead back out to it.
		{"absolute inside", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fixture := t.TempDir()
			if tc.link == "" {
				tc.link = filepath.Join(fixture, "a.txt")
			}
			os.WriteFile(filepath.Join(fixture, "a.txt"), []byte("a"), 0o600)
			os.Symlink(".", filepath.Join(fixture, "self-ok")) // "." alone stays inside
			if tc.name == "dot then up" {
				os.Symlink(".", filepath.Join(fixture, "self"))
			}
			os.Symlink(tc.link, filepath.Join(fixture, "zz-escape"))
			_, err := New(Options{Fixture: fixture, Hermetic: true})
			if err == nil || !strings.Contains(err.Error(), fixture) || !strings.Contains(err.Error(), "zz-escape") || !strings.Contains(err.Error(), "outside the folder") {
				t.Fatalf("error %v, expected one naming the fixture and the link", err)
			}
			if names := leftIn(t, tmp); len(names) != 0 {
				t.Errorf("left behind: %v", names)
			}
		})
	}
	fixture := t.TempDir()
	os.MkdirAll(filepath.Join(fixture, "lib"), 0o700)
	os.WriteFile(filepath.Join(fixture, "lib", "x.sh"), []byte("x"), 0o700)
	os.Symlink("lib/x.sh", filepath.Join(fixture, "run"))
	os.Symlink("missing.txt", filepath.Join(fixture, "dangling-inside"))
	sb, err := New(Options{Fixture: fixture, Hermetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove()
	if l, err := os.Readlink(filepath.Join(sb.Dir, "run")); err != nil || l != "lib/x.sh" {
		t.Errorf("inside link: %q %v", l, err)
	}
}

// A fixture holding the temp dir, a run folder, the config and the rubric:
// none of vibe-test's own files is copied, and the copy does not copy
// itself.
func TestFixtureLeavesOutOwnFiles(t *testing.T) {
	fixture := testenv.TempDir(t)
	tmp := filepath.Join(fixture, "tmp")
	os.Mkdir(tmp, 0o700)
	t.Setenv("TMPDIR", tmp)
	os.WriteFile(filepath.Join(fixture, "main.go"), []byte("package main\n"), 0o600)
	os.WriteFile(filepath.Join(fixture, "my-config.yaml"), []byte("base_task: x\n"), 0o600)
	os.WriteFile(filepath.Join(fixture, "strict.json"), []byte("{}"), 0o600)
	old := filepath.Join(fixture, "old-runs", "run-1")
	os.MkdirAll(old, 0o700)
	os.WriteFile(filepath.Join(old, "run.json"), []byte("{}"), 0o600)
	os.WriteFile(filepath.Join(old, "plan.json"), []byte("{}"), 0o600)
	current := filepath.Join(fixture, "out")
	os.Mkdir(current, 0o700)
	os.WriteFile(filepath.Join(current, "conv-1.jsonl"), []byte("{}"), 0o600)

	exclude := []string{filepath.Join(fixture, "my-config.yaml"), filepath.Join(fixture, "strict.json"), current}
	var sbs []*Sandbox
	for range 2 { // the second sees the first sandbox inside the fixture
		sb, err := New(Options{Fixture: fixture, Hermetic: true, Exclude: exclude})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Remove()
		sbs = append(sbs, sb)
	}
	for _, sb := range sbs {
		got := leftIn(t, sb.Dir)
		if strings.Join(got, ",") != "main.go,old-runs" {
			t.Errorf("sandbox holds %v, expected only main.go and an empty old-runs", got)
		}
		if names := leftIn(t, filepath.Join(sb.Dir, "old-runs")); len(names) != 0 {
			t.Errorf("an earlier run folder was copied: %v", names)
		}
	}
}

// A fixture that is the author's project holds what vibe-test wrote there
// besides run folders: an eval's folder, a suite's, the JUnit and Markdown
// reports a CI job writes at the root, other skills' configs. None reaches
// the agent (each names vibe-test, an eval, probes); the author's own
// files of the same names and kinds do.
func TestFixtureLeavesOutEveryOutput(t *testing.T) {
	isolatedTemp(t)
	fixture := t.TempDir()
	put := func(rel, body string) {
		t.Helper()
		p := filepath.Join(fixture, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("main.go", "package main\n")
	put("vibe-runs/20261207T150000Z-eval-ledger/eval.json", `{"schema_version": 1, "kind": "eval", "mode": "baseline"}`)
	put("vibe-runs/20261207T150000Z-eval-ledger/base-1/bolts/1.generator.jsonl", "{}")
	put("vibe-runs/20261207T150000Z-suite/suite.json", `{"schema_version": 1, "seed": 3, "skills": []}`)
	put("junit.xml", `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<testsuites name="vibe-test stock-ledger" tests="4">`)
	put("summary.md", "## vibe-test\n\n| skill | verdict |\n")
	put("skills/other/vibe-test.yaml", "base_task: x\n")
	put("skills/other/SKILL.md", "---\nname: other\n---\nbody\n")
	// The author's: an ML project's eval.json and suite.json, a pytest
	// report, notes.
	put("metrics/eval.json", `{"accuracy": 0.91}`)
	put("tests/suite.json", `{"tests": ["a"]}`)
	put("reports/pytest.xml", `<?xml version="1.0"?><testsuites name="pytest">`)
	put("NOTES.md", "## vibe-testing notes\n")
	sb, err := New(Options{Fixture: fixture, Hermetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove()
	var got []string
	filepath.WalkDir(sb.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(sb.Dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(got)
	want := []string{"NOTES.md", "main.go", "metrics/eval.json", "reports/pytest.xml", "skills/other/SKILL.md", "tests/suite.json"}
	if !slices.Equal(got, want) {
		t.Errorf("the sandbox holds %v\nwant %v", got, want)
	}
}

// TestFixtureCaps: a fixture past either cap is refused, by the walk that
// both New's copy and CheckFixture (what a run checks before it starts)
// go through. The file cap is checked by CheckFixture: New would first
// copy the 10,000 files allowed, seconds of a test's time for the same
// error; New's error names the fixture, shown with the byte cap.
func TestFixtureCaps(t *testing.T) {
	isolatedTemp(t)
	many := memDir(t)
	for i := range MaxFixtureFiles + 1 {
		os.WriteFile(filepath.Join(many, fmt.Sprintf("f%05d", i)), nil, 0o600)
	}
	if err := CheckFixture(many, nil); err == nil || !strings.Contains(err.Error(), "files, expected at most") {
		t.Errorf("too many files: %v", err)
	}
	os.Remove(filepath.Join(many, fmt.Sprintf("f%05d", MaxFixtureFiles)))
	if err := CheckFixture(many, nil); err != nil {
		t.Errorf("exactly %d files: %v", MaxFixtureFiles, err)
	}
	big := t.TempDir()
	f, _ := os.Create(filepath.Join(big, "data.bin"))
	f.Truncate(MaxFixtureBytes + 1) // sparse: costs no disk
	f.Close()
	if _, err := New(Options{Fixture: big}); err == nil || !strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), "bytes, expected at most") {
		t.Errorf("too many bytes: %v", err)
	}
}

// memDir is a new empty folder in memory (/dev/shm) where the system has
// one, else in the test's temp dir: 10,001 files made and removed on a
// disk's file system cost seconds of system time, on a loaded machine more.
func memDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "fixture-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Only a sandbox vibe-test made is reused or removed: a record edited to
// name another folder (as a shared run.json can be) touches nothing.
func TestOpenAndRemoveRefuseForeignFolders(t *testing.T) {
	isolatedTemp(t)
	victim := t.TempDir()
	os.WriteFile(filepath.Join(victim, "precious.txt"), []byte("x"), 0o600)
	victimHome := filepath.Join(t.TempDir(), "alice")
	os.Mkdir(victimHome, 0o700)
	sb, err := New(Options{Hermetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove()

	for _, forged := range []*Sandbox{
		{Dir: victim, Hermetic: true},
		{Dir: victim, Home: victimHome, Hermetic: true},
		{Dir: sb.Dir, Home: victimHome, Hermetic: true},
		{Dir: victimHome, Home: sb.Home, Hermetic: true},
		{Dir: sb.Dir + "/../../" + filepath.Base(victim), Hermetic: true},
	} {
		if _, err := Open(forged.Dir, forged.Home, "", true); err == nil {
			t.Errorf("Open accepted %+v", forged)
		}
		if err := forged.Remove(); err == nil || !strings.Contains(err.Error(), "left alone") {
			t.Errorf("Remove of %+v: %v", forged, err)
		}
	}
	for _, p := range []string{filepath.Join(victim, "precious.txt"), victimHome, sb.Dir, sb.Home} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
	// A sandbox as vibe-test makes it, marker and all, but another user's
	// (a shared temp folder): left alone. Only root can give it away, as
	// CI runs the tests.
	if os.Getuid() == 0 {
		other, err := New(Options{Hermetic: true})
		if err != nil {
			t.Fatal(err)
		}
		root := filepath.Dir(other.Dir)
		if err := os.Chown(root, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(other.Dir, other.Home, "", true); err == nil {
			t.Errorf("Open accepted another user's sandbox %s", other.Dir)
		}
		if err := other.Remove(); err == nil || !strings.Contains(err.Error(), "left alone") {
			t.Errorf("Remove of another user's sandbox: %v", err)
		}
		if _, err := os.Stat(other.Dir); err != nil {
			t.Errorf("another user's sandbox was removed: %v", err)
		}
		os.Chown(root, 0, 0)
		if err := other.Remove(); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Log("not root: another user's sandbox is not tried (CI runs as root)")
	}

	got, err := Open(sb.Dir, sb.Home, "/forged/config", true)
	if err != nil || got.ConfigDir != sb.ConfigDir {
		t.Fatalf("Open of a real sandbox: %+v %v", got, err)
	}
	if err := got.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(sb.Dir)); !os.IsNotExist(err) {
		t.Error("the sandbox root stayed")
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

// A skill whose links lead outside its folder, or nowhere, installs what
// the CLI would read (FINDINGS §1): each outside link's content as a
// regular file (a write to it stays in the sandbox, never reaches the
// target), no file for a dangling link, whatever temp dir the targets
// live in.
func TestInstallCopiesLinksLeavingTheSkill(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "ref.md"), []byte("OUTSIDE-FILE"), 0o644)
	os.MkdirAll(filepath.Join(outside, "docs"), 0o755)
	os.WriteFile(filepath.Join(outside, "docs", "a.md"), []byte("OUTSIDE-DIR"), 0o644)
	os.WriteFile(filepath.Join(outside, "real-skill.md"), []byte("---\nname: linked\ndescription: d\n---\nthe outside body\n"), 0o644)
	skillDir := filepath.Join(t.TempDir(), "linked")
	os.Mkdir(skillDir, 0o755)
	for name, target := range map[string]string{
		"SKILL.md": filepath.Join(outside, "real-skill.md"),
		"ref.md":   filepath.Join(outside, "ref.md"),
		"docs":     filepath.Join(outside, "docs"),
		"gone.md":  filepath.Join(outside, "none.md"),
	} {
		if err := os.Symlink(target, filepath.Join(skillDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	sk, err := skill.Load(skillDir)
	if err != nil {
		t.Fatalf("refused a skill the CLI loads: %v", err)
	}
	if len(sk.Warnings) != 4 {
		t.Errorf("warnings %q, want one per link", sk.Warnings)
	}
	sb, err := New(Options{Skill: sk, Hermetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove()
	inst := filepath.Join(sb.Dir, ".claude/skills/linked")
	for rel, want := range map[string]string{"SKILL.md": "the outside body", "ref.md": "OUTSIDE-FILE", "docs/a.md": "OUTSIDE-DIR"} {
		p := filepath.Join(inst, rel)
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s in the sandbox: %v (%v), want a regular file", rel, err, st)
			continue
		}
		if b, _ := os.ReadFile(p); !strings.Contains(string(b), want) {
			t.Errorf("%s holds %q, want %q", rel, b, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(inst, "gone.md")); !os.IsNotExist(err) {
		t.Errorf("the dangling link was installed: %v", err)
	}
	// The agent's write to the copy stays in the sandbox.
	if err := os.WriteFile(filepath.Join(inst, "ref.md"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "ref.md")); string(b) != "OUTSIDE-FILE" {
		t.Errorf("a write in the sandbox reached the link's target: %q", b)
	}
}

// SkillDir installs the skill where another agent's CLI finds it (and
// only there); a folder outside the sandbox is refused.
func TestSkillDirInstallsElsewhere(t *testing.T) {
	skillDir := t.TempDir()
	os.WriteFile(filepath.Join(skillDir, "SKILL.md"), []byte("---\nname: demo-skill\ndescription: d\n---\nbody\n"), 0o644)
	sk, err := skill.Load(skillDir)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := New(Options{Skill: sk, SkillDir: filepath.Join(".agents", "skills", "demo-skill"), Hermetic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove()
	if _, err := os.Stat(filepath.Join(sb.Dir, ".agents/skills/demo-skill/SKILL.md")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(sb.Dir, ".claude")); err == nil {
		t.Error("the skill went to .claude/ as well")
	}
	if _, err := New(Options{Skill: sk, SkillDir: "../outside", Hermetic: true}); err == nil || !strings.Contains(err.Error(), "not a folder inside the sandbox") {
		t.Errorf("a skill folder outside the sandbox: %v", err)
	}
}

// A .git file (a worktree's or a submodule's "gitdir: …") makes a
// repository as a .git folder does: the sandbox is refused there too.
func TestRefusesGitWorktree(t *testing.T) {
	parent := testenv.TempDir(t)
	if err := os.WriteFile(filepath.Join(parent, ".git"), []byte("gitdir: /elsewhere/.git/worktrees/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", parent)
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "git repository") {
		t.Fatalf("a .git file: err = %v", err)
	}
}

// KillStrays kills what runs in the sandbox's folder, and nothing in a
// folder whose name merely starts with it (repo-1 and repo-10).
func TestKillStraysStaysInItsFolder(t *testing.T) {
	sb, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove()
	sibling := sb.Dir + "0"
	if err := os.Mkdir(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sibling)
	start := func(dir string) *exec.Cmd {
		cmd := exec.Command("sleep", "30")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	inside, beside := start(sb.Dir), start(sibling)
	defer beside.Process.Kill()
	if n := sb.KillStrays(); n != 1 {
		t.Errorf("KillStrays killed %d processes, want 1 (the one in the sandbox)", n)
	}
	if err := inside.Wait(); err == nil {
		t.Error("the process in the sandbox was not killed")
	}
	// Killed, it would be a zombie until waited for: its state says.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", beside.Process.Pid))
	if f := strings.Fields(string(stat)); err != nil || len(f) < 3 || f[2] == "Z" {
		t.Errorf("the process in %s was killed: %v %q", sibling, err, stat)
	}
}

// FixtureHash tells a fixture's contents apart, not its path: the same
// files elsewhere hash alike, and under another umask; a byte, an
// executable bit or a link's target changed does not; vibe-test's own outputs, which no sandbox gets (a run folder
// written into the project), change nothing.
func TestFixtureHash(t *testing.T) {
	isolatedTemp(t)
	newFixture := func() string {
		t.Helper()
		dir := t.TempDir()
		for rel, body := range map[string]string{"stock.csv": "item,count\nbolts,12\n", "docs/README": "read me\n"} {
			p := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("stock.csv", filepath.Join(dir, "current.csv")); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	hash := func(dir string) string {
		t.Helper()
		h, err := FixtureHash(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	a, b := newFixture(), newFixture()
	base := hash(a)
	if got := hash(b); got != base {
		t.Errorf("the same fixture at another path: %s, not %s", got, base)
	}
	run := filepath.Join(b, "runs", "20261207T150000Z-stock-ledger")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"run.json", "plan.json"} {
		if err := os.WriteFile(filepath.Join(run, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := hash(b); got != base {
		t.Errorf("a run folder written into the fixture changed its hash")
	}
	// A checkout under another umask: git keeps the executable bit only.
	if err := os.Chmod(filepath.Join(b, "stock.csv"), 0o664); err != nil {
		t.Fatal(err)
	}
	if got := hash(b); got != base {
		t.Errorf("a file made group-writable changed the hash")
	}
	for what, change := range map[string]func(dir string) error{
		"a byte": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "stock.csv"), []byte("item,count\nbolts,13\n"), 0o644)
		},
		"a mode": func(dir string) error { return os.Chmod(filepath.Join(dir, "docs", "README"), 0o755) },
		"a link": func(dir string) error {
			os.Remove(filepath.Join(dir, "current.csv"))
			return os.Symlink("docs/README", filepath.Join(dir, "current.csv"))
		},
		"a file":   func(dir string) error { return os.WriteFile(filepath.Join(dir, "new.txt"), nil, 0o644) },
		"a rename": func(dir string) error { return os.Rename(filepath.Join(dir, "docs"), filepath.Join(dir, "doc")) },
	} {
		dir := newFixture()
		if err := change(dir); err != nil {
			t.Fatal(err)
		}
		if hash(dir) == base {
			t.Errorf("%s changed: the same hash", what)
		}
	}
}
