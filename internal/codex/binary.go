package codex

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/vibe-test/vibe-test/internal/execpath"
	"github.com/vibe-test/vibe-test/internal/proc"
)

// VerifiedVersion is the Codex CLI version whose exec stream, app-server
// protocol, rollout files and signals this package was verified against
// (docs/agents.md; its recordings are in testdata/). The same version is
// pinned in tools/package.json; a test keeps the two in step.
const VerifiedVersion = "0.171.0"

// nativeTriples are the platform packages' vendor folders the npm launcher
// (bin/codex.js) picks from, by GOOS/GOARCH.
var nativeTriples = map[string]struct{ pkg, triple string }{
	"linux/amd64":  {"codex-linux-x64", "x86_64-unknown-linux-musl"},
	"linux/arm64":  {"codex-linux-arm64", "aarch64-unknown-linux-musl"},
	"darwin/amd64": {"codex-darwin-x64", "x86_64-apple-darwin"},
	"darwin/arm64": {"codex-darwin-arm64", "aarch64-apple-darwin"},
}

// Native returns the native codex binary behind path: path itself when it
// is one, else, for npm's launcher (node_modules/.bin/codex or
// @openai/codex/bin/codex.js), the binary of the platform package it would
// start. vibe-test runs that binary directly: on Node 20 the launcher
// cannot exec it and stays its parent, and a SIGKILL to the launcher
// leaves codex running as an orphan (PROTOCOL.md §0).
func Native(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("codex binary %s: %w", path, err)
	}
	if isNative(real) {
		return real, nil
	}
	nt, ok := nativeTriples[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		return "", fmt.Errorf("codex binary %s: no native codex package for %s/%s", path, runtime.GOOS, runtime.GOARCH)
	}
	// …/node_modules/@openai/codex/bin/codex.js: the platform package is
	// a sibling (npm's flat install) or nested under the launcher's own
	// node_modules.
	pkgRoot := filepath.Dir(filepath.Dir(real))
	rel := filepath.Join("vendor", nt.triple, "bin", "codex")
	for _, cand := range []string{
		filepath.Join(filepath.Dir(pkgRoot), nt.pkg, rel),
		filepath.Join(pkgRoot, "node_modules", "@openai", nt.pkg, rel),
	} {
		if isNative(cand) {
			return cand, nil
		}
	}
	return "", fmt.Errorf("codex binary %s is the npm launcher, but its platform package @openai/%s is not installed beside it (run `make tools`)", path, nt.pkg)
}

// isNative: an executable file that is not a script; on Linux, one that
// starts with the ELF magic. The magic alone, not debug/elf: that package
// (with debug/dwarf and the decompressors it imports) was the only reason
// every binary and test binary above this one compiled them.
func isNative(p string) bool {
	if !execpath.IsExecutable(p) {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4)
	if _, err := io.ReadFull(f, head); err != nil {
		return false
	}
	if runtime.GOOS == "linux" {
		return string(head) == "\x7fELF"
	}
	return string(head[:2]) != "#!"
}

// Version asks the binary for its version ("0.171.0"), with a bare PATH
// and a home of its own: without HOME codex takes the account's from the
// user database, and makes ~/.codex/tmp/arg0 there on every run.
func Version(ctx context.Context, binary string) (string, error) {
	home, err := os.MkdirTemp("", "home-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	codexHome := filepath.Join(home, ".codex")
	if err := os.Mkdir(codexHome, 0o700); err != nil {
		return "", err
	}
	return proc.Version(ctx, binary, []string{"PATH=/usr/local/bin:/usr/bin:/bin", "TERM=dumb", "HOME=" + home, "CODEX_HOME=" + codexHome})
}
