package readfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRegular(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.md")
	os.WriteFile(ok, []byte("hello"), 0o600)
	big := filepath.Join(dir, "big.md")
	os.WriteFile(big, make([]byte, 101), 0o600)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.md")
	os.Symlink(ok, link)

	for _, tc := range []struct {
		name, path string
		is         error  // the error wrapped, nil for success
		msg        string // a part of the message
	}{
		{"regular", ok, nil, ""},
		{"symlink to regular", link, nil, ""},
		{"missing", filepath.Join(dir, "nope"), fs.ErrNotExist, "no such file"},
		{"folder", dir, ErrNotRegular, "is a folder, expected a file"},
		{"fifo", fifo, ErrNotRegular, "is a FIFO"},
		{"dev zero", "/dev/zero", ErrNotRegular, "character device"},
		{"dev null", "/dev/null", ErrNotRegular, "character device"},
		{"over the cap", big, ErrTooLarge, "101 bytes, expected at most 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Regular(tc.path, 100)
			if tc.is == nil {
				if err != nil || string(b) != "hello" {
					t.Fatalf("got %q, %v", b, err)
				}
				return
			}
			if !errors.Is(err, tc.is) {
				t.Fatalf("error %v, expected one wrapping %v", err, tc.is)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.path+":") || !strings.Contains(msg, tc.msg) || strings.Contains(msg, "\n") {
				t.Fatalf("message %q: expected one line starting with the path and saying %q", msg, tc.msg)
			}
		})
	}
}

// Open, for a stream read whole (a saved transcript), refuses what Regular
// refuses but a size: a FIFO blocked the reader for ever.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "turn.jsonl")
	os.WriteFile(ok, []byte("{}\n"), 0o600)
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(ok)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for path, want := range map[string]string{fifo: "is a FIFO, expected a regular file", dir: "is a folder", filepath.Join(dir, "none"): "no such file"} {
		done := make(chan error, 1)
		go func() {
			f, err := Open(path)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("%s: %v, want %q", path, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still opening after 10 s", path)
		}
	}
}
