package readfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/fillers"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// Every input loader refuses a folder, a FIFO, a device and an oversized
// file with one line naming the file, and returns at once (a FIFO or
// /dev/zero once hung or grew without end).
func TestInputLoadersRefuseBadFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	if err := os.WriteFile(huge, make([]byte, 2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	// A folder whose SKILL.md is a FIFO: the loader must not open it blocking.
	fifoSkill := filepath.Join(dir, "fifo-skill")
	os.Mkdir(fifoSkill, 0o700)
	syscall.Mkfifo(filepath.Join(fifoSkill, "SKILL.md"), 0o600)
	// A fillers folder with an oversized passage.
	bigFillers := filepath.Join(dir, "fillers")
	os.Mkdir(bigFillers, 0o700)
	os.WriteFile(filepath.Join(bigFillers, "long.md"), []byte(strings.Repeat("word ", fillers.MaxFileSize)), 0o600)

	loaders := map[string]func(string) error{
		"skill":  func(p string) error { _, err := skill.Load(p); return err },
		"config": func(p string) error { _, err := plan.LoadConfig(p); return err },
		"rubric": func(p string) error { _, err := rubric.Load(p); return err },
	}
	for name, load := range loaders {
		for _, tc := range []struct{ input, named, says string }{
			{fifo, fifo, "FIFO"},
			{"/dev/zero", "/dev/zero", "device"},
			{huge, huge, "expected"},
		} {
			t.Run(name+" "+filepath.Base(tc.input), func(t *testing.T) {
				done := make(chan error, 1)
				go func() { done <- load(tc.input) }()
				var err error
				select {
				case err = <-done:
				case <-time.After(20 * time.Second): // a hang, not a speed target
					t.Fatalf("%s loader still reading %s", name, tc.input)
				}
				if err == nil {
					t.Fatalf("%s loader accepted %s", name, tc.input)
				}
				msg := err.Error()
				if !strings.Contains(msg, tc.named) || !strings.Contains(msg, tc.says) || strings.Contains(msg, "\n") {
					t.Fatalf("%s loader: %q: expected one line naming %s and saying %q", name, msg, tc.named, tc.says)
				}
			})
		}
	}
	for _, tc := range []struct {
		name, named string
		load        func() error
	}{
		{"config folder", sub, func() error { _, err := plan.LoadConfig(sub); return err }},
		{"rubric folder", sub, func() error { _, err := rubric.Load(sub); return err }},
		{"skill FIFO in folder", "SKILL.md", func() error { _, err := skill.Load(fifoSkill); return err }},
		{"oversized filler", "long.md", func() error { _, err := fillers.LoadDir(bigFillers); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.load()
			if err == nil || !strings.Contains(err.Error(), tc.named) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, expected one line naming %s", err, tc.named)
			}
		})
	}
}
