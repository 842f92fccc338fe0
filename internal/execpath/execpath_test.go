package execpath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	// In a: a folder and a file without the execute bit of that name; in b
	// the program.
	if err := os.Mkdir(filepath.Join(a, "tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a, "other"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tool", "other"} {
		if err := os.WriteFile(filepath.Join(b, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := a + string(filepath.ListSeparator) + b
	for name, want := range map[string]string{"tool": filepath.Join(b, "tool"), "other": filepath.Join(b, "other"), "none": ""} {
		if got := Find(name, path); got != want {
			t.Errorf("Find(%q) = %q, want %q", name, got, want)
		}
	}
	if got := Find("tool", ""); got != "" {
		t.Errorf("Find on an empty PATH = %q", got)
	}
}
