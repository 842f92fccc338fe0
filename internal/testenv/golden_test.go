package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	want := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n"
	got := "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\nl\nm\n"
	// Each change with three lines around it; lines further from any
	// change are left out, and a gap is marked.
	wantDiff := "  b\n  c\n  d\n- e\n+ E\n  f\n  g\n  h\n@@\n  j\n  k\n  l\n+ m\n"
	if d := Diff(want, got); d != wantDiff {
		t.Errorf("Diff:\n%s\nwant:\n%s", d, wantDiff)
	}
	if d := Diff("same\n", "same\n"); d != "" {
		t.Errorf("Diff of equal texts: %q", d)
	}
	// Escape codes are shown, and a missing final newline is said.
	if d := Diff("\x1b[1mx\x1b[0m\n", "\x1b[1mx\x1b[0m"); !strings.Contains(d, `- \x1b[1mx\x1b[0m`) || !strings.Contains(d, `+ \x1b[1mx\x1b[0m (no newline at the end)`) {
		t.Errorf("Diff does not show the escapes or the missing newline:\n%s", d)
	}
	// A long diff is cut.
	var a, b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	if d := Diff(a.String(), b.String()); strings.Count(d, "\n") > 202 || !strings.HasSuffix(d, "(the diff goes on)\n") {
		t.Errorf("a 1000-line diff is %d lines, ending %q", strings.Count(d, "\n"), d[len(d)-40:])
	}
}

func TestFixups(t *testing.T) {
	dir := t.TempDir()
	in := fmt.Sprintf("vibe-test 1.2.3 at %s/run, started 2026-11-30T10:15:00.123Z, cost $0.0123, took 1.5s", dir)
	got := in
	for _, f := range []Fixup{MaskVersion("1.2.3"), MaskPath(dir, "<tmp>"), MaskTimes, MaskCosts, MaskDurations, Replace("", "x")} {
		got = f(got)
	}
	if want := "vibe-test <version> at <tmp>/run, started <time>, cost $<cost>, took <duration>"; got != want {
		t.Errorf("fixed up:\n%s\nwant:\n%s", got, want)
	}
}

// TestGoldenFails: Golden passes on the same text after the fixups, and
// fails with a diff otherwise.
func TestGoldenFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("run at <tmp>\nexit 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if *update {
		return // with -update Golden writes instead of comparing
	}
	var ok, bad recorder
	Golden(&ok, path, []byte("run at "+dir+"\nexit 1\n"), MaskPath(dir, "<tmp>"))
	Golden(&bad, path, []byte("run at "+dir+"\nexit 2\n"), MaskPath(dir, "<tmp>"))
	if ok.failed || !bad.failed || !strings.Contains(bad.msg, "- exit 1\n+ exit 2\n") || !strings.Contains(bad.msg, "go test -update") {
		t.Errorf("same text failed %v (%s); a changed one failed %v with:\n%s", ok.failed, ok.msg, bad.failed, bad.msg)
	}
}

// recorder is a testing.TB that keeps what a failure said.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}
