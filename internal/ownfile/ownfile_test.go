package ownfile_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/ownfile"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
)

// The names this package knows are the ones the writers use.
func TestNamesAreTheWritersNames(t *testing.T) {
	if ownfile.Config != plan.ConfigName {
		t.Errorf("config %q, plan reads %q", ownfile.Config, plan.ConfigName)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, eval.RecordFile), `{"schema_version": 1, "kind": "`+eval.Kind+`", "status": "completed"}`)
	if !ownfile.IsOutputFolder(dir) {
		t.Errorf("an eval folder (%s, kind %s) is not recognised", eval.RecordFile, eval.Kind)
	}
	dir = t.TempDir()
	write(t, filepath.Join(dir, eval.ManifestFile), `{"schema_version": 1, "kind": "baseline", "name": "v1"}`)
	if !ownfile.IsOutputFolder(dir) {
		t.Errorf("a stored baseline (%s, kind baseline) is not recognised", eval.ManifestFile)
	}
	dir = t.TempDir()
	write(t, filepath.Join(dir, cases.SetFile), "goal: x\n")
	write(t, filepath.Join(dir, "a", cases.CaseFile), "prompt: x\n")
	write(t, filepath.Join(dir, "a", cases.KeyFile), "{}")
	if !ownfile.IsCaseSet(dir) {
		t.Errorf("a case set (%s, %s, %s) is not recognised", cases.SetFile, cases.CaseFile, cases.KeyFile)
	}
	dir = t.TempDir()
	write(t, filepath.Join(dir, record.SuiteFile), `{"schema_version": 1, "status": "completed", "seed": 7, "skills": []}`)
	if !ownfile.IsOutputFolder(dir) {
		t.Errorf("a suite folder (%s) is not recognised", record.SuiteFile)
	}
}

func TestOutputFolders(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		own   bool
	}{
		{"run", map[string]string{"run.json": "{}", "plan.json": "{}"}, true},
		{"run.json alone", map[string]string{"run.json": "{}"}, false},
		{"eval", map[string]string{"eval.json": `{"schema_version":1,"kind":"eval"}`}, true},
		{"a user's eval.json", map[string]string{"eval.json": `{"accuracy": 0.9, "kind": "eval"}`}, false},
		{"a user's eval.json list", map[string]string{"eval.json": `[{"kind":"eval"}]`}, false},
		{"suite", map[string]string{"suite.json": `{"schema_version":1,"seed":1,"skills":[{"name":"a"}]}`}, true},
		{"a user's suite.json", map[string]string{"suite.json": `{"tests": ["a"], "seed": 1}`}, false},
		{"baseline", map[string]string{"manifest.json": `{"schema_version":1,"kind":"baseline","name":"v1"}`}, true},
		{"a user's manifest.json", map[string]string{"manifest.json": `{"name":"app","version":"1.0"}`}, false},
		{"empty", nil, false},
	} {
		dir := t.TempDir()
		for name, body := range c.files {
			write(t, filepath.Join(dir, name), body)
		}
		if got := ownfile.IsOutputFolder(dir); got != c.own {
			t.Errorf("%s: IsOutputFolder %v, want %v", c.name, got, c.own)
		}
	}
}

func TestLeftOut(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"junit.xml":        `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<testsuites name="vibe-test stock-ledger" tests="4">`,
		"summary.md":       "## vibe-test\n\n| skill | verdict |\n",
		"eval.md":          "## vibe-test eval: reorder-ruling\n",
		"vibe-test.yaml":   "base_task: x\n",
		"other.xml":        `<?xml version="1.0"?><testsuites name="pytest">`,
		"notes.md":         "## vibe-testing notes\n",
		"README.md":        "vibe-test is mentioned here, not at the start\n",
		"vibe-test.yaml.d": "",
	}
	own := map[string]bool{"junit.xml": true, "summary.md": true, "eval.md": true, "vibe-test.yaml": true}
	for name, body := range files {
		write(t, filepath.Join(dir, name), body)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if got := ownfile.LeftOut(filepath.Join(dir, e.Name()), e); got != own[e.Name()] {
			t.Errorf("%s: LeftOut %v, want %v", e.Name(), got, own[e.Name()])
		}
	}
	// A folder is judged by what it holds.
	sub := filepath.Join(dir, "runs")
	write(t, filepath.Join(sub, "run.json"), "{}")
	write(t, filepath.Join(sub, "plan.json"), "{}")
	if !ownfile.LeftOut(sub, fs.FileInfoToDirEntry(mustStat(t, sub))) {
		t.Error("a run folder is not left out")
	}
	// A case set, or one case, holds answer keys: left out; a user's
	// cases.yaml or key.json alone is theirs.
	set := filepath.Join(dir, "cases")
	write(t, filepath.Join(set, "cases.yaml"), "goal: x\n")
	write(t, filepath.Join(set, "reorder", "case.yaml"), "prompt: x\n")
	write(t, filepath.Join(set, "reorder", "key.json"), "{}")
	mine := filepath.Join(dir, "mine")
	write(t, filepath.Join(mine, "cases.yaml"), "- a\n")
	write(t, filepath.Join(mine, "key.json"), "{}")
	for p, want := range map[string]bool{set: true, filepath.Join(set, "reorder"): true, mine: false} {
		if got := ownfile.LeftOut(p, fs.FileInfoToDirEntry(mustStat(t, p))); got != want {
			t.Errorf("%s: LeftOut %v, want %v", p, got, want)
		}
	}
}

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustStat(t *testing.T, p string) fs.FileInfo {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A FIFO is not opened (the open blocks until a writer comes): `vibe-test
// report RUN --junit fifo` hung, deaf to SIGTERM.
func TestIsReportDoesNotOpenAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "j.xml")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	done := make(chan bool)
	go func() { done <- ownfile.IsReport(p) }()
	select {
	case got := <-done:
		if got {
			t.Error("a FIFO is a report")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("IsReport blocked on a FIFO")
	}
}
