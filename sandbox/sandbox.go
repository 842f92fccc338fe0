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
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/vibe-test/vibe-test/skill"
)

// Options describe one sandbox.
type Options struct {
	// Skill is installed as .claude/skills/<name>/; nil installs none (the
	// no-skill control).
	Skill *skill.Skill
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
}

// Sandbox is a created workspace.
type Sandbox struct {
	Dir  string `json:"dir"`            // the agent's working folder
	Home string `json:"home,omitempty"` // a fresh HOME (hermetic only)
	// ConfigDir is the agent's CLAUDE_CONFIG_DIR when hermetic; otherwise the
	// author's own, kept as it is (a fresh HOME would hide their login).
	ConfigDir string `json:"config_dir"`
	Hermetic  bool   `json:"hermetic"`
}

// New creates the workspace. On error nothing is left behind.
func New(o Options) (sb *Sandbox, err error) {
	dir, err := os.MkdirTemp("", "repo-")
	if err != nil {
		return nil, fmt.Errorf("creating sandbox: %w", err)
	}
	sb = &Sandbox{Dir: dir, Hermetic: o.Hermetic}
	defer func() {
		if err != nil {
			sb.Remove()
			sb = nil
		}
	}()
	// Resolve symlinks (a /tmp that is a link) so the paths the CLI reports
	// and the one we check agree.
	if sb.Dir, err = filepath.EvalSymlinks(dir); err != nil {
		return sb, fmt.Errorf("resolving sandbox path: %w", err)
	}
	if err := checkOutside(sb.Dir); err != nil {
		return sb, err
	}
	if o.Hermetic {
		if sb.Home, err = os.MkdirTemp("", "home-"); err != nil {
			return sb, fmt.Errorf("creating sandbox home: %w", err)
		}
		sb.ConfigDir = filepath.Join(sb.Home, ".claude")
		if err := os.MkdirAll(sb.ConfigDir, 0o700); err != nil {
			return sb, fmt.Errorf("creating sandbox config dir: %w", err)
		}
	} else {
		sb.ConfigDir = o.AuthorConfigDir
	}
	if o.Fixture != "" {
		if err := CopyDir(o.Fixture, sb.Dir, nil); err != nil {
			return sb, fmt.Errorf("copying fixture %s: %w", o.Fixture, err)
		}
	}
	if err := sb.WriteFiles(o.Files); err != nil {
		return sb, err
	}
	if o.Skill != nil {
		// Install the files skill.Load hashed, symlinks resolved: the agent
		// gets what was measured, never a link that dangles in the sandbox.
		dst := filepath.Join(sb.Dir, ".claude", "skills", o.Skill.Name)
		for _, f := range o.Skill.Files {
			target := filepath.Join(dst, filepath.FromSlash(f.Rel))
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return sb, fmt.Errorf("installing skill %s: %w", o.Skill.Name, err)
			}
			if err := copyFile(f.Src, target, f.Mode); err != nil {
				return sb, fmt.Errorf("installing skill %s: %w", o.Skill.Name, err)
			}
		}
	}
	return sb, nil
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
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return fmt.Errorf("sandbox %s is inside the git repository %s: set TMPDIR to a folder outside any repository", dir, d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// WriteFiles writes files (relative path → content) into the workspace.
// Paths that would leave the workspace are refused.
func (s *Sandbox) WriteFiles(files map[string]string) error {
	for rel, content := range files {
		p, err := s.Path(rel)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", rel, err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", rel, err)
		}
	}
	return nil
}

// Path resolves a relative path inside the workspace.
func (s *Sandbox) Path(rel string) (string, error) {
	clean := filepath.Clean(rel)
	if rel == "" || filepath.IsAbs(rel) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("file %q: expected a relative path inside the sandbox", rel)
	}
	return filepath.Join(s.Dir, clean), nil
}

// Remove deletes the workspace and home, and, when the author's own config
// dir was used, this conversation's session files in it, so no sandbox
// session stays in the author's history.
func (s *Sandbox) Remove() error {
	var first error
	for _, p := range []string{s.Dir, s.Home} {
		if p == "" {
			continue
		}
		if err := os.RemoveAll(p); err != nil && first == nil {
			first = err
		}
	}
	if !s.Hermetic && s.ConfigDir != "" && s.Dir != "" {
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

// CopyDir copies a folder tree; symlinks are copied as links. skip, when
// set, leaves out entries by their path relative to src.
func CopyDir(src, dst string, skip func(rel string) bool) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", src)
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if skip != nil && rel != "." && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // sockets, devices: not part of a skill or fixture
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// KillStrays kills processes still running inside the workspace: the CLI's
// Bash tool runs its commands in their own session, which survives a
// SIGKILL of the CLI (PROTOCOL.md §5). Linux only (it reads /proc); a no-op
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
