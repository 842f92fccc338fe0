// Package atomicfile replaces a file in one step: the new content goes to a
// temporary file in the same folder (a unique name, so two writers never
// share one), is synced, and is renamed over the old file. A crash at any
// point leaves the old file or the new one, never half of either.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data, with the given mode.
func Write(path string, data []byte, mode fs.FileMode) error {
	return WriteFunc(path, mode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc replaces path with what write writes, with the given mode. When
// write fails the old file is left as it was.
func WriteFunc(path string, mode fs.FileMode, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}

// CanCreateIn says whether dir takes the temporary file WriteFunc writes
// through: one is made and removed at once, so that a command finds a
// folder it cannot write in (read-only, another user's) before the work
// whose result goes there. The error is the cause alone ("permission
// denied"): the caller names the folder.
func CanCreateIn(dir string) error {
	f, err := os.CreateTemp(dir, ".vibe-test-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
