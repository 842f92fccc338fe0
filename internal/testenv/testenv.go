// Package testenv finds what tests need beyond their own package: the
// module root, the pinned claude binary and the fast stand-in for it. Where CI=true a missing piece
// fails the test instead of skipping it.
package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/execpath"
	"github.com/vibe-test/vibe-test/internal/jail"
)

// InCI reports whether the tests run in CI, where nothing may skip.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing skips the test locally and fails it in CI.
func Missing(t testing.TB, what string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s (CI=true: tests never skip)", what)
	}
	t.Skip(what)
}

// RepoRoot is the module root (the folder holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// Claude returns the pinned claude binary: $VIBE_TEST_CLAUDE, then
// tools/node_modules/.bin/claude (installed by `make tools`), then PATH.
func Claude(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("VIBE_TEST_CLAUDE"); p != "" {
		return p
	}
	local := filepath.Join(RepoRoot(t), "tools", "node_modules", ".bin", "claude")
	if _, err := os.Stat(local); err == nil {
		return local
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p
	}
	Missing(t, "the claude CLI is not installed: run `make tools`")
	return ""
}

// FakeClaude returns the fast stand-in for the claude CLI
// (internal/fakeclaude), built once per test binary into
// $TMPDIR/cli-<hash of its sources>/claude, where every package's tests
// share it. The folder's name says nothing of tests: the agent can see
// the path. VIBE_TEST_FAST_CLAUDE=real runs the fast tier on the real CLI
// instead (Claude), to check the stand-in against it.
func FakeClaude(t testing.TB) string {
	t.Helper()
	if os.Getenv("VIBE_TEST_FAST_CLAUDE") == "real" {
		return Claude(t)
	}
	fakeOnce.Do(func() { fakePath, fakeErr = buildFake(RepoRoot(t)) })
	if fakeErr != nil {
		t.Fatalf("building the claude stand-in: %v", fakeErr)
	}
	return fakePath
}

var (
	fakeOnce sync.Once
	fakePath string
	fakeErr  error
)

func buildFake(root string) (string, error) {
	src := filepath.Join(root, "internal", "fakeclaude")
	var files []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, p := range append(files, filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")) {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		h.Write([]byte(p))
		h.Write(b)
	}
	h.Write([]byte(runtime.Version()))
	dir := filepath.Join(os.TempDir(), "cli-"+hex.EncodeToString(h.Sum(nil))[:16])
	bin := filepath.Join(dir, "claude")
	if execpath.IsExecutable(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// One build at a time across the test binaries (go test runs two
	// packages at once): the second waits for the first's binary instead
	// of compiling every dependency of the stand-in beside it, twice over
	// from an empty Go cache (claude.test's build beside fakeclaude.test's
	// took 31.1 CPU-seconds, its own 20.6).
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // closing releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	if execpath.IsExecutable(bin) {
		return bin, nil // built while this one waited
	}
	// Build beside the target and rename: a test binary that found it
	// before the lock never sees a half-written one.
	tmp, err := os.CreateTemp(dir, ".claude-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if p, err := exec.LookPath("go"); err == nil {
		goBin = p
	}
	// Never with -race, though the tests have it: a race-built binary
	// sleeps a second as it exits unless GORACE says otherwise, and the
	// stand-in runs with the agent's allowlisted environment, which has no
	// GORACE: every call would last a second longer (TestDemoCases went
	// from 2 s to 38).
	cmd := exec.Command(goBin, "build", "-o", tmp.Name(), "./internal/fakeclaude/cmd/fakeclaude")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// HybridClaude is the real-CLI tier's binary: agent turns run the pinned
// claude (Claude), while the cold calls around them (rubric, judge, plan:
// --json-schema) and the model lookup run the stand-in, whose cold calls
// internal/fakeclaude's fidelity test checks against the real CLI. That
// keeps what only the real binary proves (its agent session, signals,
// jail, skill loader) real at some half the cost. It is the stand-in's
// binary beside a file naming the real one (fakeclaude.AgentCLIFile), in
// $TMPDIR/cli-<hash>. The jail shows the agent only the binary's own
// install folder; where it would hide the real CLI's install (under a home
// or temp folder, as on most CI runners), the hybrid goes inside the real
// CLI's npm tree (node_modules/.cli-<hash>), which the jail shows whole;
// a real CLI outside any npm tree is then returned itself.
func HybridClaude(t testing.TB) string {
	t.Helper()
	return hybrid(t, false)
}

// HybridLiveClaude is HybridClaude with only live sessions (a conversation
// in interactive mode, --input-format stream-json) on the real binary: the
// fresh probes' one-shot sessions go to the stand-in as well
// (fakeclaude.LiveOnlyFile). Where the jail would hide the pinned install,
// it is the real binary, as HybridClaude is.
func HybridLiveClaude(t testing.TB) string {
	t.Helper()
	return hybrid(t, true)
}

func hybrid(t testing.TB, liveOnly bool) string {
	t.Helper()
	real := Claude(t)
	fake := FakeClaude(t)
	if real == fake {
		return real
	}
	resolved, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	key := fake + "\x00" + resolved
	if liveOnly {
		key += "\x00live-only"
	}
	sum := sha256.Sum256([]byte(key))
	name := "cli-" + hex.EncodeToString(sum[:])[:16]
	dir := filepath.Join(os.TempDir(), name)
	if hiddenInJail(resolved) {
		// The jail shows the agent its CLI's whole npm tree (the outermost
		// node_modules above the binary): a hybrid made inside the real
		// CLI's tree is shown with it, wherever the clone lies.
		root := nodeModulesRoot(resolved)
		if root == "" {
			return real
		}
		dir = filepath.Join(root, "."+name)
	}
	bin := filepath.Join(dir, "claude")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The real CLI's path from the hybrid's folder when both are in one
	// npm tree: the jail shows that tree elsewhere (jail.CLIMount), where
	// the host path names a hidden folder and the hybrid fell back to the
	// stand-in for every agent turn.
	target := resolved
	if rel, err := filepath.Rel(dir, resolved); err == nil && strings.HasPrefix(dir, nodeModulesRoot(resolved)+string(filepath.Separator)) {
		target = rel
	}
	if err := os.WriteFile(filepath.Join(dir, "agent-cli"), []byte(target+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if liveOnly {
		if err := os.WriteFile(filepath.Join(dir, "agent-cli-live-only"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	// Atomically: packages whose tests run at once never see half of it.
	if err := atomicfile.Write(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// nodeModulesRoot is the outermost node_modules folder above p, or "".
func nodeModulesRoot(p string) string {
	root := ""
	for d := filepath.Dir(p); d != filepath.Dir(d); d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			root = d
		}
	}
	return root
}

// hiddenInJail: whether the jail (package jail) hides p: it lies under a
// home, /tmp, /run, /mnt, /media, /var/tmp, the temp dir, or the
// outermost folder of the working folder (/work for /work/me/vibe-test).
func hiddenInJail(p string) bool {
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	// What a run started from here hides: the usual places, and by its
	// outermost folder the working folder the test runs in.
	for _, h := range jail.HideList(home, os.Getenv("TMPDIR"), os.TempDir(), wd) {
		if p == h || strings.HasPrefix(p, h+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// TempDir is a fresh folder, removed after the test, whose path names
// nothing the sandbox refuses in a TMPDIR (t.TempDir's holds the test's
// name, "Test..."): a test that points TMPDIR at a folder of its own.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
