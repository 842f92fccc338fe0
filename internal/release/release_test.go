//go:build linux && release

package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// artifact is the part of an entry of GoReleaser's dist/artifacts.json the
// check reads.
type artifact struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
	Type   string `json:"type"`
}

// TestReleaseArchive checks the GoReleaser output folder
// VIBE_TEST_RELEASE_DIST: four archives named for their platform, each in
// the checksums file and carrying the pinned echarts script. It extracts
// the linux/amd64 archive to a temporary folder and runs the binary there on
// the demo (the pinned claude CLI on PATH, no credentials): the demo must
// run as designed and write a chart.html with the pinned echarts script
// inlined, which headless Chromium draws with no network.
func TestReleaseArchive(t *testing.T) {
	// Built only with -tags release (make release-check), so make test
	// holds no test that skips: asked for, a missing piece is a failure.
	dist := os.Getenv("VIBE_TEST_RELEASE_DIST")
	if dist == "" {
		t.Fatal("VIBE_TEST_RELEASE_DIST is unset: make release-check builds the release snapshot and sets it")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the check runs the linux/amd64 binary; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	// From here on a missing piece is a failure: someone asked for the check.
	if _, err := os.Stat(testenv.ChromiumPath); err != nil {
		t.Fatalf("%s is missing (apt-get install -y chromium): the check opens chart.html in it", testenv.ChromiumPath)
	}
	root := testenv.RepoRoot(t)
	claudeBin := filepath.Join(root, "tools", "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(claudeBin, "claude")); err != nil && os.Getenv("VIBE_TEST_CLAUDE") == "" {
		t.Fatalf("the pinned claude CLI is not in %s: run make tools (or set VIBE_TEST_CLAUDE)", claudeBin)
	}
	script, err := os.ReadFile(filepath.Join(root, "tools", "node_modules", "echarts", "dist", "echarts.common.min.js"))
	if err != nil {
		t.Fatalf("the pinned echarts script, to compare the chart's with: %v", err)
	}

	version, archives, sums := releaseFiles(t, dist)
	// Every archive is in the checksums file and its binary carries the
	// pinned script; only linux/amd64 can run here.
	for _, platform := range platforms {
		archive := archives[platform]
		if archive == "" {
			t.Errorf("%s names no %s archive", filepath.Join(dist, "artifacts.json"), platform)
			continue
		}
		checkSum(t, archive, sums)
		if !bytes.Contains(readMember(t, archive, "vibe-test"), script) {
			t.Errorf("%s: its vibe-test does not carry the pinned echarts script", archive)
		}
	}
	archive := archives["linux/amd64"]
	if archive == "" {
		t.FailNow()
	}
	dir := t.TempDir()
	extract(t, archive, dir)
	bin := filepath.Join(dir, "vibe-test")
	for _, name := range []string{"vibe-test", "README.md", "docs/architecture.md", "licenses/echarts/LICENSE", "licenses/echarts/NOTICE"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("the archive lacks %s", name)
		}
	}

	// The version comes from GoReleaser's ldflags, not the source's default.
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("vibe-test --version: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "vibe-test version "+version {
		t.Errorf("vibe-test --version = %q, want %q (the release's version, set by ldflags)", got, "vibe-test version "+version)
	}

	// The demo, run from a folder that is not the repository: the binary
	// finds claude on PATH, as a user's would.
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(work, "run")
	cmd := exec.CommandContext(t.Context(), bin, "demo", "--out", runDir)
	cmd.Dir = work
	cmd.Env = demoEnv(claudeBin)
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("vibe-test demo: %v\nstdout:\n%s\nstderr:\n%s", err, testenv.Tail(stdout.String(), 3000), testenv.Tail(stderr.String(), 3000))
	}
	t.Logf("the release binary ran the demo in %s", time.Since(start).Round(time.Second))
	if !strings.Contains(stdout.String(), "The demo ran as designed.") {
		t.Errorf("the demo did not say it ran as designed; stdout:\n%s", testenv.Tail(stdout.String(), 3000))
	}
	if strings.Contains(stderr.String(), "chart.html needs the echarts script") {
		t.Errorf("the release binary has no echarts script; stderr:\n%s", testenv.Tail(stderr.String(), 3000))
	}

	page, err := os.ReadFile(filepath.Join(runDir, "chart.html"))
	if err != nil {
		t.Fatalf("the demo wrote no chart.html: %v\nstderr:\n%s", err, testenv.Tail(stderr.String(), 3000))
	}
	if !bytes.Contains(page, script) {
		t.Error("chart.html does not inline the pinned echarts script (tools/node_modules/echarts/dist/echarts.common.min.js)")
	}
	dom := testenv.Chromium(t, dir, "--dump-dom", "file://"+filepath.Join(runDir, "chart.html"))
	svg := testenv.ChartSVG(dom)
	if svg == "" {
		t.Fatalf("no SVG drawn in chart.html's chart div; DOM:\n%s", testenv.Tail(dom, 3000))
	}
	// The demo's two conversations: a drawn line chart has many shapes and
	// labels, the pass rates and the filler shading among them.
	if paths, texts := strings.Count(svg, "<path"), strings.Count(svg, "<text"); paths < 30 || texts < 20 {
		t.Errorf("the SVG is nearly empty: %d paths, %d texts", paths, texts)
	}
	for _, want := range []string{">diluted pass rate</text>", ">fresh pass rate (same probe, new session)</text>", ">fillers</text>", ">context tokens</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	shot := filepath.Join(dir, "chart.png")
	if artifacts := os.Getenv("VIBE_TEST_ARTIFACTS"); artifacts != "" {
		if err := os.MkdirAll(artifacts, 0o755); err != nil {
			t.Fatal(err)
		}
		shot = filepath.Join(artifacts, "release-chart.png")
	}
	testenv.Chromium(t, dir, "--window-size=1100,1300", "--screenshot="+shot, "file://"+filepath.Join(runDir, "chart.html"))
	t.Logf("the release binary's demo chart: %s", shot)
}

// platforms are the release's os/arch pairs (.goreleaser.yaml's builds).
var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// releaseFiles reads GoReleaser's metadata.json and artifacts.json in dist
// and returns the release's version, its archives by os/arch, and the
// checksums file.
func releaseFiles(t *testing.T, dist string) (version string, archives map[string]string, sums string) {
	t.Helper()
	var meta struct {
		Version string `json:"version"`
	}
	readJSON(t, filepath.Join(dist, "metadata.json"), &meta)
	if meta.Version == "" {
		t.Fatalf("%s: no version", filepath.Join(dist, "metadata.json"))
	}
	var arts []artifact
	readJSON(t, filepath.Join(dist, "artifacts.json"), &arts)
	archives = map[string]string{}
	for _, a := range arts {
		// artifacts.json's paths are relative to the folder GoReleaser
		// ran in, dist's parent.
		path := filepath.Join(filepath.Dir(dist), a.Path)
		switch a.Type {
		case "Archive":
			platform := a.Goos + "/" + a.Goarch
			archives[platform] = path
			if want := "vibe-test_" + meta.Version + "_" + a.Goos + "_" + a.Goarch + ".tar.gz"; filepath.Base(path) != want {
				t.Errorf("the %s archive is %s, want %s", platform, filepath.Base(path), want)
			}
		case "Checksum":
			sums = path
		}
	}
	if sums == "" {
		t.Fatalf("%s names no checksums file", filepath.Join(dist, "artifacts.json"))
	}
	if len(archives) != len(platforms) {
		t.Errorf("%s names %d archives, want %d (%s)", filepath.Join(dist, "artifacts.json"), len(archives), len(platforms), strings.Join(platforms, ", "))
	}
	return meta.Version, archives, sums
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run make release-snapshot first)", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkSum checks the archive against its line in the checksums file, as
// the README tells a user to (sha256sum --check).
func checkSum(t *testing.T, archive, sums string) {
	t.Helper()
	f, err := os.Open(sums)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sum, name, ok := strings.Cut(sc.Text(), "  "); ok && name == filepath.Base(archive) {
			want = sum
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if want == "" {
		t.Fatalf("%s has no line for %s", sums, filepath.Base(archive))
	}
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.Sum256(b)
	if hex.EncodeToString(got[:]) != want {
		t.Fatalf("%s: sha256 %x, want %s from %s", archive, got, want, sums)
	}
}

// readMember returns the content of the archive's file name.
func readMember(t *testing.T, archive, name string) []byte {
	t.Helper()
	var b []byte
	walk(t, archive, func(h *tar.Header, r io.Reader) {
		if h.Name == name {
			var err error
			if b, err = io.ReadAll(r); err != nil {
				t.Fatalf("%s: %v", archive, err)
			}
		}
	})
	if b == nil {
		t.Errorf("%s has no %s", archive, name)
	}
	return b
}

// walk calls fn for each entry of the gzipped tar archive.
func walk(t *testing.T, archive string, fn func(*tar.Header, io.Reader)) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", archive, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		fn(h, tr)
	}
}

// extract unpacks the archive's regular files into dir, refusing any name
// that would land outside it.
func extract(t *testing.T, archive, dir string) {
	t.Helper()
	walk(t, archive, func(h *tar.Header, r io.Reader) {
		if !filepath.IsLocal(h.Name) {
			t.Fatalf("%s: entry %q leaves the folder it is extracted to", archive, h.Name)
		}
		if h.Typeflag != tar.TypeReg {
			return
		}
		path := filepath.Join(dir, h.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, h.FileInfo().Mode().Perm())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, r); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// demoEnv is this process's environment with the pinned CLI's folder first
// on PATH and no credentials: the demo must need none.
func demoEnv(claudeBin string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN":
			continue
		case "PATH":
			kv = "PATH=" + claudeBin + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
		env = append(env, kv)
	}
	return env
}
