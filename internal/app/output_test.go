package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A report named as the record's own files inside a --out not made yet is
// refused however the folder is reached: through a link to the working
// folder (filepath.Abs keeps $PWD's spelling), the report's folder could
// not be resolved, the --out's could, and the two no longer compared.
func TestCheckOutsideThroughALink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "lnk")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(link, "newrun")
	for _, o := range []Output{{Markdown: filepath.Join(out, "chart.html")}, {JUnit: filepath.Join(out, "run.json")}} {
		if err := o.checkOutside(out); err == nil || !strings.Contains(err.Error(), "where the record is written") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if err := (Output{Markdown: filepath.Join(dir, "summary.md")}).checkOutside(out); err != nil {
		t.Errorf("a report outside: %v", err)
	}
	if got, want := resolvedPath(filepath.Join(link, "a", "b")), filepath.Join(real, "a", "b"); got != want {
		t.Errorf("resolvedPath through a link: %s, want %s", got, want)
	}
}
