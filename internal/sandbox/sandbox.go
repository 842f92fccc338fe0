// Package sandbox makes the throwaway workspace one conversation runs in.
//
// The agent can read everything it is given, so every name here is one a real
// project could have: the working folder is "repo-" plus random characters
// (an early harness called it after itself, and the agent noticed). The
// folder lives under the temp dir, outside any git repository and outside the
// author's home, with the fixture copied in, the declared files written, and
// the skill installed where Claude Code loads project skills.
package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/vibe-test/vibe-test/internal/ownfile"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// Options describe one sandbox.
type Options struct {
	// Skill is installed as .claude/skills/<name>/; nil installs none (the
	// no-skill control).
	Skill *skill.Skill
	// SkillDir, when set, is where the skill is installed instead,
	// relative to the working folder (another agent's project skill
	// folder, agent.Agent.SkillDir).
	SkillDir string
	// Fixture is a folder copied into the workspace ("" for none).
	Fixture string
	// Files are written after the fixture: what a fixture folder cannot
	// carry (an ignored .env, say). Keys are relative paths.
	Files map[string]string
	// Hermetic gives the conversation its own empty CLAUDE_CONFIG_DIR.
	// Without it the author's config dir (and login) is used and only the
	// conversation's session files are removed afterwards.
	Hermetic bool
	// AuthorConfigDir is the author's config dir, used when not Hermetic.
	AuthorConfigDir string
	// Exclude are vibe-test's own files and folders (the run folder, the
	// config, a rubric file): never copied from a fixture or skill folder,
	// wherever they lie in it.
	Exclude []string
}

// Limits of a fixture (and a skill folder) copied into every sandbox: a
// fixture is a small project, not a data set, and a copy that never ends
// (a fixture holding the temp dir once copied itself) must stop.
const (
	MaxFixtureFiles = 10000
	MaxFixtureBytes = 256 << 20
)

// Sandbox is a created workspace. Its folders share one parent, the
// sandbox's root, which holds the marker that says vibe-test made it; the
// agent is given the working folder and home, never the root.
type Sandbox struct {
	Dir  string `json:"dir"`            // the agent's working folder
	Home string `json:"home,omitempty"` // a fresh HOME (hermetic only)
	// ConfigDir is the agent's CLAUDE_CONFIG_DIR when hermetic; otherwise the
	// author's own, kept as it is (a fresh HOME would hide their login).
	ConfigDir string `json:"config_dir"`
	Hermetic  bool   `json:"hermetic"`
	// Tmp is the conversation's own TMPDIR (the jail's /tmp): the CLI's
	// leftovers and the agent's temp files go there and leave with the
	// sandbox instead of piling up in the author's temp dir.
	Tmp string `json:"tmp,omitempty"`
}

// marker is the empty file New writes in a sandbox's root. Resume and
// Remove act only on a folder whose parent holds it (owned by this user):
// run.json can be edited, and must never make vibe-test reuse or delete
// another folder. The name says nothing about what made it.
const marker = ".workspace"

// ErrForeign is wrapped by the error for a folder vibe-test did not make.
var ErrForeign = errors.New("not made by vibe-test")

// New creates the workspace. On error nothing is left behind.
func New(o Options) (sb *Sandbox, err error) {
	if p := TempDirProblem(); p != "" {
		return nil, fmt.Errorf("creating sandbox: %s", p)
	}
	root, err := os.MkdirTemp("", "ws-")
	if err != nil {
		return nil, fmt.Errorf("creating sandbox: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(root)
			sb = nil
		}
	}()
	// Resolve symlinks (a /tmp that is a link) so the paths the CLI reports
	// and the one we check agree.
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, fmt.Errorf("resolving sandbox path: %w", err)
	}
	if err := os.WriteFile(filepath.Join(root, marker), nil, 0o600); err != nil {
		return nil, fmt.Errorf("creating sandbox: %w", err)
	}
	sb = &Sandbox{Hermetic: o.Hermetic}
	if sb.Dir, err = os.MkdirTemp(root, "repo-"); err != nil {
		return nil, fmt.Errorf("creating sandbox: %w", err)
	}
	if err := checkOutside(sb.Dir); err != nil {
		return nil, err
	}
	if err := sb.EnsureTmp(); err != nil {
		return nil, err
	}
	if o.Hermetic {
		if sb.Home, err = os.MkdirTemp(root, "home-"); err != nil {
			return nil, fmt.Errorf("creating sandbox home: %w", err)
		}
		sb.ConfigDir = filepath.Join(sb.Home, ".claude")
		if err := os.Mkdir(sb.ConfigDir, 0o700); err != nil {
			return nil, fmt.Errorf("creating sandbox config dir: %w", err)
		}
	} else {
		sb.ConfigDir = o.AuthorConfigDir
	}
	dst, err := os.OpenRoot(sb.Dir)
	if err != nil {
		return nil, fmt.Errorf("opening sandbox: %w", err)
	}
	defer dst.Close()
	excl := newExclusions(o.Exclude, root)
	if o.Fixture != "" {
		if err := copyTree(o.Fixture, dst, ".", nil, excl, nil); err != nil {
			return nil, fmt.Errorf("copying fixture %s: %w", o.Fixture, err)
		}
	}
	if err := writeFiles(dst, o.Files); err != nil {
		return nil, err
	}
	if o.Skill != nil {
		// Install the files skill.Load hashed, symlinks resolved: the agent
		// gets what was measured (a link's target's content, even one
		// outside the skill folder, as the CLI reads it), never a link: a
		// write through one would land outside the sandbox. Written through
		// the root like everything else (O_EXCL, O_NOFOLLOW), minus
		// vibe-test's own files wherever they lie, looked for from the
		// folder each file was reached from (a link's target itself too).
		to := filepath.Join(".claude", "skills", o.Skill.Name)
		if o.SkillDir != "" {
			to = filepath.Clean(o.SkillDir)
			if !filepath.IsLocal(to) {
				return nil, fmt.Errorf("installing skill %s: %q is not a folder inside the sandbox", o.Skill.Name, o.SkillDir)
			}
		}
		// A fixture that is the skill's own project holds the skill where
		// it is installed (.claude/skills/<name>, the usual layout): the
		// skill measured replaces that copy, which every install refused
		// as "file exists".
		if err := dst.RemoveAll(to); err != nil {
			return nil, fmt.Errorf("installing skill %s: %w", o.Skill.Name, err)
		}
		for _, f := range o.Skill.Files {
			stop := f.Root
			if stop == "" {
				stop = o.Skill.Dir
			}
			if f.Outside {
				stop = filepath.Dir(stop)
			}
			if excl.covers(f.Src, stop) {
				continue
			}
			target := filepath.Join(to, filepath.FromSlash(f.Rel))
			if err := dst.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return nil, fmt.Errorf("installing skill %s: %w", o.Skill.Name, err)
			}
			if err := copyFile(f.Src, dst, target, f.Mode.Perm()); err != nil {
				return nil, fmt.Errorf("installing skill %s: %w", o.Skill.Name, err)
			}
		}
	}
	return sb, nil
}

// Open returns the sandbox recorded for a conversation (resume), if
// vibe-test made it: dir and home must lie in one root holding the marker.
// A hermetic sandbox's config dir is always home/.claude, whatever the
// record says; otherwise configDir is the author's.
func Open(dir, home, configDir string, hermetic bool) (*Sandbox, error) {
	sb := &Sandbox{Dir: dir, Home: home, ConfigDir: configDir, Hermetic: hermetic}
	// A root that no longer exists is a sandbox gone (removed, or the
	// machine's temp folder cleared), not one vibe-test did not make.
	if filepath.IsAbs(dir) {
		if _, err := os.Lstat(filepath.Dir(dir)); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sandbox %s is gone", dir)
		}
	}
	if err := sb.check(); err != nil {
		return nil, err
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("sandbox %s is gone", dir)
	}
	if hermetic {
		if home == "" {
			return nil, fmt.Errorf("sandbox %s has no home, expected one for a hermetic run", dir)
		}
		sb.ConfigDir = filepath.Join(home, ".claude")
	}
	// The sandbox's own temp dir, found in its root (or made again).
	if err := sb.EnsureTmp(); err != nil {
		return nil, err
	}
	return sb, nil
}

// check refuses a sandbox vibe-test did not make: the working folder's
// parent must be a folder of this user holding the marker, and the home
// (if any) a sibling of the working folder.
func (s *Sandbox) check() error {
	if s.Dir == "" || !filepath.IsAbs(s.Dir) || filepath.Clean(s.Dir) != s.Dir {
		return fmt.Errorf("sandbox %q: not a clean absolute path, so %w: left alone", s.Dir, ErrForeign)
	}
	root := filepath.Dir(s.Dir)
	if s.Home != "" && (filepath.Clean(s.Home) != s.Home || filepath.Dir(s.Home) != root || s.Home == s.Dir) {
		return fmt.Errorf("sandbox home %s: not beside its working folder %s, so %w: left alone", s.Home, s.Dir, ErrForeign)
	}
	for _, p := range []string{root, filepath.Join(root, marker)} {
		st, err := os.Lstat(p)
		if err != nil || !ownedByMe(st) || (p == root) != st.IsDir() || (p != root && !st.Mode().IsRegular()) {
			return fmt.Errorf("sandbox %s: %w (no marker in %s): left alone", s.Dir, ErrForeign, root)
		}
	}
	return nil
}

func ownedByMe(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}

// checkOutside refuses a workspace inside a git repository or the author's
// home: the agent must not see or touch the author's own project.
func checkOutside(dir string) error {
	home, _ := os.UserHomeDir()
	if home != "" && home != "/" {
		if h, err := filepath.EvalSymlinks(home); err == nil {
			home = h
		}
		if dir == home || strings.HasPrefix(dir, home+string(filepath.Separator)) {
			return fmt.Errorf("sandbox %s is inside your home folder (%s): set TMPDIR to a folder outside it", dir, home)
		}
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if isRepository(d) {
			return fmt.Errorf("sandbox %s is inside the git repository %s: set TMPDIR to a folder outside any repository", dir, d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// isRepository says whether d is the top of a git work tree as git sees it:
// a .git folder holding HEAD, or a .git file (a worktree's or submodule's
// link). An empty .git folder, which a tool's bind mount can leave behind
// in a shared temp folder, is not a repository to git and hides nothing.
func isRepository(d string) bool {
	st, err := os.Stat(filepath.Join(d, ".git"))
	if err != nil {
		return false
	}
	if !st.IsDir() {
		return true
	}
	_, err = os.Stat(filepath.Join(d, ".git", "HEAD"))
	return err == nil
}

// EnsureTmp gives the sandbox its own TMPDIR, made inside the sandbox's
// marked root beside the working folder (so Remove takes it too and resume
// trusts it no more than the sandbox): the one already there, or a new one.
func (s *Sandbox) EnsureTmp() error {
	root := filepath.Dir(s.Dir)
	if s.Tmp != "" && filepath.Dir(s.Tmp) == root && strings.HasPrefix(filepath.Base(s.Tmp), "tmp-") {
		if st, err := os.Lstat(s.Tmp); err == nil && st.IsDir() {
			return nil
		}
	}
	if found, _ := filepath.Glob(filepath.Join(root, "tmp-*")); len(found) > 0 {
		if st, err := os.Lstat(found[0]); err == nil && st.IsDir() {
			s.Tmp = found[0]
			return nil
		}
	}
	dir, err := os.MkdirTemp(root, "tmp-")
	if err != nil {
		return fmt.Errorf("creating sandbox temp dir: %w", err)
	}
	s.Tmp = dir
	return nil
}

// WriteFiles writes files (relative path → content) into the workspace.
// Every write goes through os.Root: no "..", absolute path or symlink
// (planted by the fixture or the agent) takes it outside, and an existing
// symlink as the file itself is refused rather than written through.
func (s *Sandbox) WriteFiles(files map[string]string) error {
	if len(files) == 0 {
		return nil
	}
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return fmt.Errorf("opening sandbox: %w", err)
	}
	defer root.Close()
	return writeFiles(root, files)
}

func writeFiles(root *os.Root, files map[string]string) error {
	names := make([]string, 0, len(files))
	for rel := range files {
		names = append(names, rel)
	}
	sort.Strings(names) // a stable order, so the same error every time
	for _, rel := range names {
		if err := writeFile(root, rel, files[rel]); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(root *os.Root, rel, content string) error {
	clean, err := relPath(rel)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(clean); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("file %q: %v", rel, unwrap(err))
		}
	}
	if st, err := root.Lstat(clean); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("file %q: is a symbolic link in the sandbox, expected a plain file (not written through)", rel)
	}
	// O_NOFOLLOW: a link planted since the Lstat is refused too.
	f, err := root.OpenFile(clean, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("file %q: %v", rel, unwrap(err))
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return fmt.Errorf("file %q: %v", rel, unwrap(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("file %q: %v", rel, unwrap(err))
	}
	return nil
}

// relPath checks a path lexically, for a clear message (os.Root would
// refuse it anyway).
func relPath(rel string) (string, error) {
	clean := filepath.Clean(rel)
	if rel == "" || filepath.IsAbs(rel) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("file %q: expected a relative path inside the sandbox", rel)
	}
	return clean, nil
}

// Path resolves a relative path inside the workspace (lexically: use it to
// name a file, never to write one).
func (s *Sandbox) Path(rel string) (string, error) {
	clean, err := relPath(rel)
	if err != nil {
		return "", err
	}
	return filepath.Join(s.Dir, clean), nil
}

// Remove deletes the sandbox's root (workspace, home and temp dir) and,
// when the author's own config dir was used, this conversation's session
// files in it, so no sandbox session stays in the author's history. A
// sandbox vibe-test did not make is left alone, with an error.
func (s *Sandbox) Remove() error {
	if s.Dir == "" {
		return nil
	}
	if err := s.check(); err != nil {
		return err
	}
	first := os.RemoveAll(filepath.Dir(s.Dir))
	if !s.Hermetic && s.ConfigDir != "" {
		if err := os.RemoveAll(SessionDir(s.ConfigDir, s.Dir)); err != nil && first == nil {
			first = err
		}
	}
	return first
}

var nonAlnum = regexp.MustCompile(`[^a-zA-Z0-9]`)

// SessionDir is where the CLI keeps the sessions of a working folder:
// $CLAUDE_CONFIG_DIR/projects/<cwd with every other character as "-">.
func SessionDir(configDir, cwd string) string {
	return filepath.Join(configDir, "projects", nonAlnum.ReplaceAllString(cwd, "-"))
}

// CopyDir copies a folder tree into dst (created if need be), with the
// fixture's rules: links that stay inside are copied as links, others are
// refused. skip, when set, leaves out entries by their path relative to src.
func CopyDir(src, dst string, skip func(rel string) bool) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer root.Close()
	return copyTree(src, root, ".", skip, newExclusions(nil, ""), nil)
}

// CheckFixture applies the copy's rules to a fixture without copying it
// (links that leave it, the caps), so a bad fixture is refused before any
// conversation starts. exclude are vibe-test's own files, as for New.
func CheckFixture(dir string, exclude []string) error {
	return copyTree(dir, nil, ".", nil, newExclusions(exclude, ""), nil)
}

// FixtureHash is CheckFixture that also hashes what a sandbox would get of
// the fixture: each file's path, whether it is executable, and its
// content, each link's path and target. A run records it, so that a
// resume or a shard merge can tell a fixture whose contents changed from
// one at another path.
func FixtureHash(dir string, exclude []string) (string, error) {
	h := sha256.New()
	if err := copyTree(dir, nil, ".", nil, newExclusions(exclude, ""), h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// exclusions are what a copy leaves out wherever it lies in the source:
// vibe-test's own files, the temp dir (a fixture holding it would copy the
// sandbox being filled, without end), other sandboxes and run folders.
type exclusions struct {
	paths map[string]bool
}

func newExclusions(own []string, sandboxRoot string) exclusions {
	e := exclusions{paths: map[string]bool{}}
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			e.paths[abs] = true
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				e.paths[real] = true
			}
		}
	}
	for _, p := range own {
		add(p)
	}
	add(sandboxRoot)
	add(os.TempDir())
	return e
}

// covers reports whether p, or a folder it lies in below stop, is one of
// vibe-test's own (an excluded path, a folder skip leaves out). The file
// itself is not read again: the skill's file list (skill.Load) has left
// out vibe-test's reports and configs already (ownfile), links judged by
// what they lead to.
func (e exclusions) covers(p, stop string) bool {
	stop = filepath.Clean(stop)
	for dir := p; dir != stop && dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if e.paths[dir] {
			return true
		}
		if dir != p {
			if st, err := os.Lstat(dir); err == nil && e.skip(dir, fs.FileInfoToDirEntry(st)) {
				return true
			}
		}
	}
	return false
}

// skip reports whether the entry at p (a real path) is left out.
func (e exclusions) skip(p string, d fs.DirEntry) bool {
	if e.paths[p] {
		return true
	}
	// Another sandbox (it holds the marker), wherever it was put.
	if d.IsDir() {
		if st, err := os.Lstat(filepath.Join(p, marker)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	// A run's, suite's or eval's folder, a JUnit or Markdown report, a
	// skill's config: a fixture that is the author's project holds them
	// (a CI job writes junit.xml at its root), and they name vibe-test.
	return ownfile.LeftOut(p, d)
}

// copyTree copies the folder src to to (relative to dst). Symlinks whose
// target stays inside src, by its text and in fact, are copied as links;
// any other link is refused with an error naming it, since a link out of
// the sandbox would let a write (ours or the agent's) land outside.
// FIFOs, sockets and devices are left out. A nil dst only checks. sum,
// when set, is given each file and link copied, in the walk's (lexical)
// order.
func copyTree(src string, dst *os.Root, to string, skip func(rel string) bool, excl exclusions, sum io.Writer) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", src)
	}
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	files, bytes := 0, int64(0)
	return filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(real, p)
		if err != nil {
			return err
		}
		if rel != "." && (excl.skip(p, d) || skip != nil && skip(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if files++; files > MaxFixtureFiles {
				return fmt.Errorf("more than %d files, expected at most %d (it is copied into every sandbox)", MaxFixtureFiles, MaxFixtureFiles)
			}
		}
		link := ""
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			if link, err = os.Readlink(p); err != nil {
				return err
			}
			if !linkInside(real, p, rel, link) {
				return fmt.Errorf("%s: a symbolic link to %s, outside the folder: expected links that stay inside it (or a copy of the file)", rel, link)
			}
		case d.Type().IsRegular():
			if bytes += info.Size(); bytes > MaxFixtureBytes {
				return fmt.Errorf("more than %d bytes, expected at most %d (it is copied into every sandbox)", MaxFixtureBytes, MaxFixtureBytes)
			}
		}
		if sum != nil {
			if err := hashEntry(sum, p, filepath.ToSlash(rel), link, d, info); err != nil {
				return err
			}
		}
		switch {
		case dst == nil:
			return nil // only checking
		case d.IsDir():
			return dst.MkdirAll(target, info.Mode().Perm()|0o700)
		case link != "":
			return dst.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(p, dst, target, info.Mode().Perm())
		}
		return nil // sockets, devices, FIFOs: not part of a skill or fixture
	})
}

// hashEntry writes a file's or a link's part of FixtureHash to sum.
func hashEntry(sum io.Writer, p, rel, link string, d fs.DirEntry, info fs.FileInfo) error {
	switch {
	case link != "":
		fmt.Fprintf(sum, "link\x00%s\x00%s\x00", rel, link)
	case d.Type().IsRegular():
		// As copyFile opens it: a FIFO swapped in must not hang us.
		in, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			return err
		}
		defer in.Close()
		// The executable bit alone of the mode: what git keeps, and what
		// differs in a sandbox's copy whatever the umask (0644 and 0664
		// checkouts of one commit hashed apart, and merge refused them).
		fmt.Fprintf(sum, "file\x00%s\x00%t\x00%d\x00", rel, info.Mode().Perm()&0o111 != 0, info.Size())
		if n, err := io.Copy(sum, in); err != nil || n != info.Size() {
			return fmt.Errorf("%s: changed while being read", p)
		}
	}
	return nil
}

// linkInside: the link's text points inside src, and the kernel's resolution
// does too (after a link to ".", "self/../x" leaves). A dangling link is
// kept only without "..": its resolution cannot be checked.
func linkInside(src, p, rel, link string) bool {
	if filepath.IsAbs(link) {
		return false
	}
	lexical := filepath.Join(filepath.Dir(rel), link)
	if lexical == ".." || strings.HasPrefix(lexical, ".."+string(filepath.Separator)) {
		return false
	}
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) && !slices.Contains(strings.Split(filepath.ToSlash(link), "/"), "..")
	}
	return resolved == src || strings.HasPrefix(resolved, src+string(filepath.Separator))
}

func copyFile(src string, dst *os.Root, target string, mode fs.FileMode) error {
	// O_NONBLOCK: a file swapped for a FIFO mid-copy must not hang us.
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s: changed while being copied", src)
	}
	out, err := dst.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// unwrap drops the *PathError's operation and path: the message names the
// file already.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// KillStrays kills processes still running inside the workspace: the CLI's
// Bash tool runs its commands in their own session, which survives a
// SIGKILL of the CLI (the CLI starts it with setsid, so a signal to the
// CLI's process group does not reach it). Linux only (it reads /proc); a no-op
// elsewhere.
func (s *Sandbox) KillStrays() int {
	if s.Dir == "" {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	killed := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil {
			continue
		}
		if cwd == s.Dir || strings.HasPrefix(cwd, s.Dir+string(filepath.Separator)) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	return killed
}
