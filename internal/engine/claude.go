package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/estimate"
	"github.com/vibe-test/vibe-test/internal/execpath"
	"github.com/vibe-test/vibe-test/internal/rubric"
)

// FindClaude looks for the CLI the way the author's shell would, then in
// the repository's pinned install (tools/node_modules/.bin, where `make
// tools` puts it) beside the vibe-test binary or in the working folder
// when that is the repository, so
// `./vibe-test` works after `make build` without changing PATH.
func FindClaude(env []string) (string, error) {
	p, _, err := LocateClaude(env, PinnedDirs())
	return p, err
}

// PinnedDir is where `make tools` installs the CLI, relative to the repo.
var PinnedDir = filepath.Join("tools", "node_modules", ".bin")

// PinnedDirs are the folders that may hold tools/: the binary's, and the
// working folder when it is the vibe-test repository (a skill's own
// checkout could hold a tools/ of its own, which is not run).
func PinnedDirs() []string {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dirs = append(dirs, filepath.Dir(exe))
	}
	if wd, err := os.Getwd(); err == nil && IsVibeTestRepo(wd) {
		dirs = append(dirs, wd)
	}
	return dirs
}

// IsVibeTestRepo says whether dir holds vibe-test's go.mod.
func IsVibeTestRepo(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && strings.HasPrefix(string(b), "module github.com/vibe-test/vibe-test\n")
}

// LocateClaude is FindClaude with the folders to try for tools/; how says
// where the CLI was found, for the demo's next step.
func LocateClaude(env []string, roots []string) (path, how string, err error) {
	if p := EnvValue(env, "VIBE_TEST_CLAUDE"); p != "" {
		return p, "VIBE_TEST_CLAUDE", nil
	}
	if p := execpath.Find("claude", EnvValue(env, "PATH")); p != "" {
		return p, "PATH", nil
	}
	if p, err := exec.LookPath("claude"); err == nil && EnvValue(env, "PATH") == "" {
		return p, "PATH", nil
	}
	for _, root := range roots {
		if p := filepath.Join(root, PinnedDir, "claude"); execpath.IsExecutable(p) {
			return p, "the pinned install in " + filepath.Join(root, "tools"), nil
		}
	}
	return "", "", fmt.Errorf("claude not found on PATH nor in %s (beside vibe-test, or in the vibe-test repository as the working folder): run `make tools` there, or `npm install -g @anthropic-ai/claude-code@%s`, or set VIBE_TEST_CLAUDE to its path", filepath.Join(PinnedDir, "claude"), claude.VerifiedVersion)
}

// ColdCaller makes rubric, plan and judge calls.
func ColdCaller(binary string, env []string, hermetic bool, maxRetries int, timeout, grace time.Duration) claude.Caller {
	return claude.Caller{Binary: binary, Env: coldEnv(env, hermetic, maxRetries), Timeout: timeout, Grace: grace, Price: estimate.SpentCost}
}

// coldEnv builds the environment of rubric, plan and judge calls: hermetic
// runs get a fresh HOME and config dir inside the call's own folder.
func coldEnv(base []string, hermetic bool, maxRetries int) func(dir string) []string {
	return func(dir string) []string {
		o := claude.EnvOptions{Extra: []string{fmt.Sprintf("CLAUDE_CODE_MAX_RETRIES=%d", maxRetries)}}
		// The CLI's temp files go into the call's folder and leave with it
		// (in the jail /tmp is in memory anyway).
		if tmp := filepath.Join(dir, ".tmp"); os.MkdirAll(tmp, 0o700) == nil {
			o.Extra = append(o.Extra, "TMPDIR="+tmp)
		}
		if hermetic {
			o.Home = filepath.Join(dir, ".home")
			o.ConfigDir = filepath.Join(o.Home, ".claude")
			_ = os.MkdirAll(o.ConfigDir, 0o700)
		}
		return claude.Env(base, o)
	}
}

// CacheDir is where rubrics are cached: override, else
// $VIBE_TEST_CACHE_DIR, else the user's cache folder.
func CacheDir(override string, env []string) string {
	if override != "" {
		return override
	}
	if d := EnvValue(env, "VIBE_TEST_CACHE_DIR"); d != "" {
		return d
	}
	return rubric.DefaultCacheDir()
}

// RubricCache is where a run whose judge is judgeAgent caches its rubric
// (cacheDir as CacheDir gives it), and what an unnamed judge model is
// keyed by there. Another judge agent's rubrics are cached apart: claude's
// cache (and so its calibrated runs) never gets one extracted elsewhere;
// so are those a stand-in server wrote.
// Claude's default model follows ANTHROPIC_MODEL, which the CLI is passed,
// and whether it signs in with a key or the author's login (whose plan
// sets it): a rubric haiku wrote was reused by a run whose CLI answered
// with opus, and run.json could not say which model wrote it.
func RubricCache(cacheDir, judgeAgent string, env []string) rubric.Cache {
	c := rubric.Cache{Dir: cacheDir}
	if judgeAgent != agents.Claude && c.Dir != "" {
		c.Dir = filepath.Join(c.Dir, judgeAgent)
	}
	// A stand-in server's rubrics too (a base URL points the judge's CLI
	// elsewhere than its vendor's API): one a scripted model wrote was
	// reused by a run against the real one. Stand-ins share a folder: a
	// scripted server's port changes from run to run.
	if EnvValue(env, agents.BaseURLVar[judgeAgent]) != "" && c.Dir != "" {
		c.Dir = filepath.Join(c.Dir, "stand-in")
	}
	c.Unnamed = fmt.Sprintf("ANTHROPIC_MODEL=%s key=%v", EnvValue(env, "ANTHROPIC_MODEL"), claude.HasCredentials(env))
	return c
}

// DefaultGrace is how long a stopped claude gets between SIGTERM and
// SIGKILL.
const DefaultGrace = 3 * time.Second
