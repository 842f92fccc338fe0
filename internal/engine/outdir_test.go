package engine

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// A skill is named after its folder as it is: eighty CJK characters (240
// bytes) or a newline. The default run folder's name holds it: it failed
// with "file name too long" past 238 bytes.
func TestDefaultRunFolderFitsAnyName(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, name := range []string{strings.Repeat("库", 80), strings.Repeat("a", 250), "new\nline", "Odd Folder"} {
		dir, err := MakeOutDir("", name)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		base := filepath.Base(dir)
		if !utf8.ValidString(base) || strings.ContainsRune(base, '\n') || len(base) > 17+maxFolderPart {
			t.Errorf("%q: folder %q", name, base)
		}
	}
}

// Runs started in the same second never share a folder, and the message
// for a taken default name never speaks of an --out nobody gave.
func TestRunFolderCreatedAtomically(t *testing.T) {
	t.Chdir(t.TempDir())
	const n = 12
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dirs[i], errs[i] = MakeOutDir("", "my-skill") })
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, d := range dirs {
		if errs[i] != nil {
			if strings.Contains(errs[i].Error(), "--out") {
				t.Errorf("message mentions an --out never given: %v", errs[i])
			}
			t.Fatal(errs[i])
		}
		if seen[d] {
			t.Fatalf("two runs got %s", d)
		}
		seen[d] = true
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, %v: expected an owner-only folder", d, st.Mode().Perm(), err)
		}
		if st, err := os.Stat(filepath.Join(d, "run.json")); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: run.json not claimed owner-only: %v", d, err)
		}
	}

	// --out: an empty folder is taken once; a second run is refused.
	out := filepath.Join(t.TempDir(), "given")
	os.Mkdir(out, 0o755)
	if _, err := MakeOutDir(out, "my-skill"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o700 {
		t.Errorf("--out folder mode %v, expected 0700", st.Mode().Perm())
	}
	if _, err := MakeOutDir(out, "my-skill"); err == nil || !strings.Contains(err.Error(), "--out "+out) {
		t.Errorf("second run into the same --out: %v", err)
	}
}

// A folder locked by one run or resume refuses a second until the first
// lets it go; the lock is the folder's, not the path's spelling.
func TestLockFolder(t *testing.T) {
	dir := t.TempDir()
	release, err := LockFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockFolder(filepath.Join(dir, ".")); err == nil || !strings.Contains(err.Error(), "another vibe-test process is running or resuming it") {
		t.Fatalf("a second lock of a locked folder: %v", err)
	}
	release()
	again, err := LockFolder(dir)
	if err != nil {
		t.Fatalf("a lock after the release: %v", err)
	}
	again()
}
