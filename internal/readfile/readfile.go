// Package readfile reads the author's input files (SKILL.md, the config, a
// rubric, filler passages) safely: only regular files, and never more than a
// cap. A FIFO would block a read forever and /dev/zero never ends; both are
// refused before a byte is read.
package readfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the error for a folder, FIFO, device or socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for a file over the cap.
var ErrTooLarge = errors.New("file too large")

// Regular reads the regular file at path (a symlink is followed) if it
// holds at most max bytes. Errors name the file and say what was expected;
// a missing file's error wraps fs.ErrNotExist.
func Regular(path string, max int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file: %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	if err := check(path, st, max); err != nil {
		return nil, err
	}
	// O_NONBLOCK: if the file was swapped for a FIFO since the Stat, opening
	// it must not wait for a writer; Fstat below then refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	if err := check(path, st, max); err != nil {
		return nil, err
	}
	// Read one byte past the cap: a file that grew since the Stat is caught.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: more than %d bytes, expected at most %d: %w", path, max, max, ErrTooLarge)
	}
	return b, nil
}

// Open opens the regular file at path to be read as a stream (a saved
// transcript), with no cap: a folder, FIFO, device or socket is refused
// before a byte is read, where a FIFO blocked the reader for ever.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	st, err := f.Stat()
	if err == nil {
		err = check(path, st, math.MaxInt64)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func check(path string, st fs.FileInfo, max int64) error {
	switch {
	case st.IsDir():
		return fmt.Errorf("%s: is a folder, expected a file: %w", path, ErrNotRegular)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s: is a %s, expected a regular file: %w", path, kind(st.Mode()), ErrNotRegular)
	case st.Size() > max:
		return fmt.Errorf("%s: %d bytes, expected at most %d: %w", path, st.Size(), max, ErrTooLarge)
	}
	return nil
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// unwrap drops the *PathError's own copy of the path (the message already
// starts with it).
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
