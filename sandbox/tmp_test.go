package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// Each sandbox has its own temp dir, made beside it and removed with it.
func TestOwnTmpRemovedWithSandbox(t *testing.T) {
	sb, err := New(Options{Hermetic: true})
	if err != nil {
		t.Fatal(err)
	}
	if !InTempDir(sb.Tmp, "tmp-") || !InTempDir(sb.Dir, "repo-") {
		t.Fatalf("tmp %q, dir %q: not vibe-test's shape", sb.Tmp, sb.Dir)
	}
	if err := os.WriteFile(filepath.Join(sb.Tmp, "left-over"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sb.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sb.Tmp); !os.IsNotExist(err) {
		t.Errorf("the sandbox's temp dir outlived it: %v", err)
	}
}

// Paths read back from run.json are trusted only in vibe-test's shape.
func TestInTempDir(t *testing.T) {
	own, err := os.MkdirTemp("", "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(own)
	link := filepath.Join(os.TempDir(), "tmp-link-"+filepath.Base(own))
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(link)
	home, _ := os.UserHomeDir()
	for p, want := range map[string]bool{
		own:                     true,
		"":                      false,
		"/":                     false,
		home:                    false,
		os.TempDir():            false,
		link:                    false, // a link, not a folder
		filepath.Join(own, "x"): false, // not directly in the temp dir
		filepath.Join(os.TempDir(), "tmp-missing-1a2b"): false,
	} {
		if got := InTempDir(p, "tmp-"); got != want {
			t.Errorf("InTempDir(%q) = %v, want %v", p, got, want)
		}
	}
}
