package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/vibe-test/vibe-test/internal/record"
)

// MakeOutDir creates the run folder (owner-only) and claims it by creating
// run.json exclusively, so two runs never share a folder: an existing
// non-empty folder is never written into, and a default name taken by a
// run started in the same second gets a suffix.
func MakeOutDir(out, name string) (string, error) {
	return MakeFolder(out, name, "run.json")
}

// maxFolderPart bounds a skill's name in a folder name: a file name is at
// most 255 bytes, and a skill is named after its folder as it is (eighty
// CJK characters are 240 bytes).
const maxFolderPart = 64

// FolderPart is a skill's name as part of a folder name: control
// characters (a folder name may hold a newline) made "-", cut to
// maxFolderPart bytes at a character's start.
func FolderPart(name string) string {
	b := []byte(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '-'
		}
		return r
	}, name))
	if len(b) <= maxFolderPart {
		return string(b)
	}
	cut := maxFolderPart
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut])
}

// MakeFolder is MakeOutDir for any record: the folder is claimed by
// creating marker in it exclusively (run.json for a run, suite.json for a
// suite).
func MakeFolder(out, name, marker string) (string, error) {
	if out != "" {
		if err := CheckOutDir(out); err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return "", fmt.Errorf("creating run folder %s: %w", out, err)
		}
		if err := claimOutDir(out, marker); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return "", fmt.Errorf("--out %s: another run took the folder just now, expected a new folder", out)
			}
			return "", fmt.Errorf("creating run folder %s: %w", out, err)
		}
		return filepath.Abs(out)
	}
	base := filepath.Join("vibe-runs", time.Now().UTC().Format("20060102T150405Z")+"-"+FolderPart(name))
	if err := os.MkdirAll("vibe-runs", 0o755); err != nil {
		return "", fmt.Errorf("creating run folder %s: %w", base, err)
	}
	for n := 1; n <= 100; n++ {
		dir := base
		if n > 1 {
			dir = fmt.Sprintf("%s-%d", base, n)
		}
		err := claimOutDir(dir, marker)
		if errors.Is(err, fs.ErrExist) {
			continue // a run started in the same second
		}
		if err != nil {
			return "", fmt.Errorf("creating run folder %s: %w", dir, err)
		}
		return filepath.Abs(dir)
	}
	return "", fmt.Errorf("creating run folder %s: 100 runs of this skill started this second already hold its names", base)
}

// claimOutDir makes dir (or takes an existing empty one) and creates its
// marker (run.json) exclusively: whoever creates it owns the folder. The
// error wraps fs.ErrExist when another run got there first.
func claimOutDir(dir, marker string) error {
	if err := os.Mkdir(dir, record.DirMode); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		entries, rerr := os.ReadDir(dir)
		if rerr != nil {
			// Not a folder, or one that cannot be read: said as it is,
			// not as another run's claim.
			return rerr
		}
		if len(entries) > 0 {
			return err // taken
		}
		if err := os.Chmod(dir, record.DirMode); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, marker), os.O_WRONLY|os.O_CREATE|os.O_EXCL, record.FileMode)
	if err != nil {
		return err
	}
	return f.Close()
}

// CheckOutDir refuses a run folder that holds anything: an earlier run is
// never written over.
func CheckOutDir(out string) error {
	if out == "" {
		return nil
	}
	st, err := os.Stat(out)
	if err != nil {
		// A link to nothing: the folder cannot be made there, and it was
		// refused as "another run took the folder".
		if target, lerr := os.Readlink(out); lerr == nil {
			return fmt.Errorf("--out %s: a link to %s, which does not exist, expected a new folder", out, target)
		}
		return nil
	}
	if !st.IsDir() {
		return fmt.Errorf("--out %s: is a file, expected a new folder", out)
	}
	entries, err := os.ReadDir(out)
	switch {
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("--out %s: the folder cannot be read (%v), expected a new folder", out, err)
	case len(entries) > 0:
		return fmt.Errorf("--out %s: folder exists and is not empty, expected a new folder (a run is never written over another)", out)
	}
	return nil
}

// LockFolder takes dir (a run's or an eval's folder) for this process
// until release: a second vibe-test that runs or resumes it meanwhile is
// refused. Neither was: a resume beside the live run ran its turns again
// on the same sessions, and two resumes collided on transcript names,
// each paying for the same turns. The lock is flock(2) on the folder,
// which the kernel drops when the process ends, however it ends; the
// descriptor is not inherited by the CLIs the run starts (O_CLOEXEC).
func LockFolder(dir string) (release func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: another vibe-test process is running or resuming it, expected none: let it end (or stop it), then resume", dir)
		}
		return nil, fmt.Errorf("%s: locking the folder: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
