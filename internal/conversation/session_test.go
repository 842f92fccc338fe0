package conversation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/sandbox"
)

func TestRewindSession(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	done := "{\"type\":\"user\",\"n\":1}\n{\"type\":\"assistant\",\"n\":1}\n"
	for _, c := range []struct {
		name, added string
		lines       int
	}{
		{"nothing added", "", 0},
		{"whole lines", "{\"type\":\"user\",\"n\":2}\n{\"type\":\"assistant\",\"n\":2}\n", 2},
		{"a line cut by a kill", "{\"type\":\"user\",\"n\":2}\n{\"type\":\"assis", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(done+c.added), 0o600); err != nil {
				t.Fatal(err)
			}
			removed, lines, err := rewindSession(path, int64(len(done)))
			if err != nil {
				t.Fatal(err)
			}
			if removed != int64(len(c.added)) || lines != c.lines {
				t.Errorf("removed %d bytes, %d lines; want %d, %d", removed, lines, len(c.added), c.lines)
			}
			b, _ := os.ReadFile(path)
			if string(b) != done {
				t.Errorf("file after the rewind: %q", b)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*rewind*")); len(left) != 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestRewindSessionRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	for _, c := range []struct {
		name, content string
		keep          int64
		want          string
	}{
		{"shorter than recorded", "{}\n", 10, "fewer than"},
		{"cut inside a line", "{\"a\":1}\n{\"b\":2}\n", 5, "no longer ends a line"},
		{"missing", "", 3, "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(path)
			if c.content != "" {
				if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := rewindSession(path, c.keep)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if c.content != "" {
				if b, _ := os.ReadFile(path); string(b) != c.content {
					t.Errorf("file changed to %q", b)
				}
			}
		})
	}
	// A link is never followed: the cut would land outside the config dir.
	target := filepath.Join(dir, "elsewhere")
	os.WriteFile(target, []byte("{}\n{}\n"), 0o600)
	link := filepath.Join(dir, "l.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rewindSession(link, 3); err == nil {
		t.Error("a symlinked session file was rewound")
	}
}

func TestSessionFileStaysInOwnedConfigDir(t *testing.T) {
	sb := &sandbox.Sandbox{Dir: "/tmp/ws-1/repo-2", ConfigDir: "/elsewhere/recorded", Home: "/tmp/ws-1/home-3"}
	author := &Driver{AuthorConfigDir: "/home/a/.claude"}
	p, err := author.sessionFile(sb, "0b6f5e1c-8f7a-4d2e-9c1b-2a3b4c5d6e7f")
	if err != nil || p != "/home/a/.claude/projects/-tmp-ws-1-repo-2/0b6f5e1c-8f7a-4d2e-9c1b-2a3b4c5d6e7f.jsonl" {
		t.Errorf("author config: %q, %v", p, err)
	}
	sb.ConfigDir, sb.Hermetic = "/tmp/ws-1/home-3/.claude", true
	hermetic := &Driver{Hermetic: true, AuthorConfigDir: "/home/a/.claude"}
	if p, err := hermetic.sessionFile(sb, "abc-1"); err != nil || p != "/tmp/ws-1/home-3/.claude/projects/-tmp-ws-1-repo-2/abc-1.jsonl" {
		t.Errorf("hermetic: %q, %v", p, err)
	}
	for _, id := range []string{"../../x", "", "a/b", "x.jsonl"} {
		if _, err := hermetic.sessionFile(sb, id); err == nil {
			t.Errorf("session id %q names a file", id)
		}
	}
}
