package codex

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// isNative tells a native binary from the npm launcher's script and from
// files that are not programs at all.
func TestIsNative(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, body []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		path string
		want bool
	}{
		{"this test binary", self, true},
		{"a script", write("launcher.js", []byte("#!/usr/bin/env node\n"), 0o755), false},
		{"not executable", write("data", []byte("\x7fELF\x02\x01\x01"), 0o644), false},
		{"shorter than the magic", write("tiny", []byte("\x7fE"), 0o755), false},
		{"a folder", dir, false},
		{"missing", filepath.Join(dir, "absent"), false},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, struct {
			name string
			path string
			want bool
		}{"executable, not ELF", write("blob", []byte("MZ\x90\x00 not a Linux binary"), 0o755), false})
	}
	for _, c := range cases {
		if got := isNative(c.path); got != c.want {
			t.Errorf("%s: isNative(%s) = %v, want %v", c.name, c.path, got, c.want)
		}
	}
}
