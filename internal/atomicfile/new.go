package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A file that must never replace another (verdicts-N.json beside a run, a
// drafted vibe-test.yaml) is written whole to a temp file first, then given
// its name only if the name is free: a hard link fails when the name
// exists, even when a concurrent writer took it a moment ago.

// WriteFirstFree writes data under dir with the first of name(0), name(1),
// ... that does not exist yet, and returns its path. An existing file is
// never written over, even by a concurrent writer.
func WriteFirstFree(dir string, name func(int) string, data []byte, mode fs.FileMode) (string, error) {
	tmp, err := WriteTemp(dir, "."+name(0)+".*", data)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	for i := 0; i < 10000; i++ {
		path := filepath.Join(dir, name(i))
		err := LinkNew(tmp, path, data, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("writing %s: %w", path, err)
		}
		return path, nil
	}
	return "", fmt.Errorf("writing into %s: no free name after %s", dir, name(9999))
}

// WriteTemp writes data to a new synced temp file in dir, named by pattern
// as os.CreateTemp names it, and returns its path.
func WriteTemp(dir, pattern string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", fmt.Errorf("writing into %s: %w", dir, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("writing %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("syncing %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// LinkNew gives the finished temp file tmp (holding data) the name path,
// failing with fs.ErrExist when path exists.
func LinkNew(tmp, path string, data []byte, mode fs.FileMode) error {
	err := os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	// No hard links here (some network and FUSE file systems): create the
	// file exclusively and write it in place.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, bytes.NewReader(data)); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
