package junit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// TestRecordedValidate: the report of every recorded run folder (real
// runs, see internal/testdata/runs; their reports' text is golden-tested in
// internal/summary) validates against testdata/junit.xsd, a suite's as
// well. One xmllint process checks them all.
func TestRecordedValidate(t *testing.T) {
	xmllint := needXmllintBin(t)
	tmp := t.TempDir()
	args := []string{"--noout", "--schema", filepath.Join("testdata", "junit.xsd")}
	for _, name := range testenv.RecordedRuns(t) {
		dir := testenv.RecordedRun(t, name)
		var b bytes.Buffer
		if record.IsSuite(dir) {
			s, err := record.LoadSuite(dir)
			if err != nil {
				t.Fatal(err)
			}
			var runs []*record.Run
			var names []string
			for _, e := range s.Skills {
				runs, names = append(runs, load(t, filepath.Join(dir, e.RunDir))), append(names, e.Name)
			}
			if err := WriteSuite(&b, names, runs); err != nil {
				t.Fatal(err)
			}
		} else if err := Write(&b, load(t, dir)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(tmp, name+".xml")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	if out, err := exec.Command(xmllint, args...).CombinedOutput(); err != nil {
		t.Errorf("the recorded runs' reports do not all validate: %v\n%s", err, out)
	}
}

func load(t *testing.T, dir string) *record.Run {
	t.Helper()
	r, err := record.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
