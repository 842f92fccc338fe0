package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// The pinned install's version is read from its package.json (that it is
// what the running CLI says of itself, TestStructured checks in its
// requests' User-Agent); without node it is asked for, which fails.
func TestVersion(t *testing.T) {
	t.Parallel()
	bin := testenv.Gemini(t)
	if v := packageVersion(bin, baseEnv()); v != VerifiedVersion {
		t.Errorf("the package's version %q, want %q", v, VerifiedVersion)
	}
	if v := packageVersion(bin, []string{"PATH=" + t.TempDir()}); v != "" {
		t.Errorf("without node: %q", v)
	}
	if v, err := Version(t.Context(), bin, []string{"PATH=" + t.TempDir()}); err == nil {
		t.Errorf("without node the version was found: %q", v)
	}
}

// AskVersion takes the version from what the binary prints.
func TestAskVersion(t *testing.T) {
	dir := t.TempDir()
	for out, want := range map[string]string{"0.61.0": "0.61.0", "gemini 0.62.0-preview.1": "0.62.0", "no version here": ""} {
		bin := filepath.Join(dir, "gemini")
		if err := os.WriteFile(bin, []byte("#!/bin/sh\necho '"+out+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := AskVersion(t.Context(), bin, nil)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("%q: %q, %v; want %q", out, got, err, want)
		}
	}
	// It runs outside the jail: with the allowlisted environment and a
	// home of its own, removed after. It had the author's whole
	// environment, and the CLI left files in the author's ~/.gemini.
	bin := filepath.Join(dir, "gemini")
	dump := filepath.Join(dir, "env")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nenv > "+dump+"\necho 0.61.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if _, err := AskVersion(t.Context(), bin, []string{"PATH=/usr/bin:/bin", "HOME=" + home, "MY_SECRET_TOKEN=planted-3f9c1e", "GEMINI_API_KEY=planted-key-77a0"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	used := ""
	for _, kv := range strings.Split(got, "\n") {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			used = v
		}
	}
	if strings.Contains(got, "planted") || used == "" || used == home {
		t.Errorf("the version check's environment:\n%s", got)
	}
	if _, err := os.Stat(used); err == nil {
		t.Errorf("its home %s was left behind", used)
	}
}

func TestPackageVersion(t *testing.T) {
	root := t.TempDir()
	nodeDir := filepath.Join(root, "node-bin")
	write := func(rel, content string, mode os.FileMode) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("node-bin/node", "#!/bin/sh\n", 0o755)
	env := []string{"PATH=/nowhere:" + nodeDir}
	script := write("pkg/bundle/gemini.js", "#!/usr/bin/env node\n", 0o755)
	write("pkg/package.json", `{"name": "@google/gemini-cli", "version": "0.61.0"}`, 0o644)
	link := filepath.Join(root, ".bin", "gemini")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../pkg/bundle/gemini.js", link); err != nil {
		t.Fatal(err)
	}
	other := write("other/bundle/gemini.js", "#!/usr/bin/env node\n", 0o755)
	write("other/package.json", `{"name": "gemini-fork", "version": "9.9.9"}`, 0o644)
	preview := write("preview/bundle/gemini.js", "#!/usr/bin/env node\n", 0o755)
	write("preview/package.json", `{"name": "@google/gemini-cli", "version": "0.62.0-preview.1"}`, 0o644)
	wrapper := write("wrapper/gemini", "#!/bin/sh\nexec node /somewhere/gemini.js \"$@\"\n", 0o755)
	for _, c := range []struct {
		name, binary string
		env          []string
		want         string
	}{
		{"the script", script, env, "0.61.0"},
		{"the npm link", link, env, "0.61.0"},
		{"another package", other, env, ""},
		{"a preview's version, which the CLI prints otherwise", preview, env, ""},
		{"a wrapper", wrapper, env, ""},
		{"no node", script, []string{"PATH=/nowhere"}, ""},
		{"no PATH", script, []string{"HOME=/"}, ""},
		{"missing", filepath.Join(root, "none", "bundle", "gemini.js"), env, ""},
	} {
		if got := packageVersion(c.binary, c.env); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
