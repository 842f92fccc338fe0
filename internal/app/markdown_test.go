package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// --markdown writes the run's Markdown summary on the run command and on
// report, the same text both ways; the bypass stamp is in it.
func TestMarkdownFlag(t *testing.T) {
	t.Parallel()
	md := filepath.Join(t.TempDir(), "summary.md")
	s := runScenario(t, fastCLI(t), []string{"never"}, false, "--no-baseline-gate", "--markdown", md)
	if s.code != exit.Indeterminate {
		t.Fatalf("exit %d, want %d", s.code, exit.Indeterminate)
	}
	// The bypassed gate let every turn run past the failed baseline.
	if n := len(s.run.Conversations[0].Turns); n != 10 || !s.run.GateBypassed {
		t.Errorf("%d turns, bypassed %v; want all 10 run with the gate bypassed", n, s.run.GateBypassed)
	}
	got, err := os.ReadFile(md)
	if err != nil {
		t.Fatalf("--markdown wrote nothing: %v", err)
	}
	text := string(got)
	for _, want := range []string{
		"| skill | verdict |",
		"| stock\\-ledger | **BASELINE GATE BYPASSED** **baseline\\-failed** (exit 2) |",
		"> [!CAUTION]",
		"- run folder: ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, text)
		}
	}
	var want bytes.Buffer
	if err := summary.Markdown(&want, []summary.MarkdownEntry{{Dir: s.dir, Run: s.run}}); err != nil {
		t.Fatal(err)
	}
	if text != want.String() {
		t.Errorf("the file is not summary.Markdown of the run:\n%s\nwant:\n%s", text, want.String())
	}

	again := filepath.Join(t.TempDir(), "again.md")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "report", s.dir, "--markdown", again}, IO{Env: os.Environ(), Stdout: &stdout, Stderr: &stderr})
	if code != exit.Indeterminate {
		t.Fatalf("report: exit %d\n%s", code, stderr.String())
	}
	if b, _ := os.ReadFile(again); !bytes.Equal(b, got) {
		t.Errorf("report --markdown differs from the run's:\n%s", b)
	}
}

// A --markdown file that cannot be written is a tool error naming the flag.
func TestMarkdownUnwritable(t *testing.T) {
	t.Parallel()
	dir := testenv.CopyOfRun(t, "baseline-failed")
	bad := filepath.Join(t.TempDir(), "no-such-folder", "summary.md")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "report", dir, "--markdown", bad}, IO{Env: os.Environ(), Stdout: &stdout, Stderr: &stderr})
	if code != exit.Tool || !strings.Contains(stderr.String(), "--markdown "+bad) {
		t.Errorf("exit %d, stderr %q; want %d and a line naming --markdown", code, stderr.String(), exit.Tool)
	}
}
