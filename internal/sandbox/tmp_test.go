package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// Each sandbox has its own temp dir, made in its marked root beside the
// working folder, found again on resume, and removed with it.
func TestOwnTmpRemovedWithSandbox(t *testing.T) {
	sb, err := New(Options{Hermetic: true})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(sb.Tmp) != filepath.Dir(sb.Dir) || filepath.Base(sb.Tmp)[:4] != "tmp-" {
		t.Fatalf("tmp %q, dir %q: the temp dir is not beside the working folder", sb.Tmp, sb.Dir)
	}
	again, err := Open(sb.Dir, sb.Home, "", true)
	if err != nil || again.Tmp != sb.Tmp {
		t.Fatalf("resume found temp dir %q (%v), want %q", again.Tmp, err, sb.Tmp)
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
