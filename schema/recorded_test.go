package schema

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// TestRecordedRunsValidate: every recorded run folder (real runs, see
// internal/testdata/runs) follows the schemas: each run.json, a suite's
// suite.json and its skills' run.json.
func TestRecordedRunsValidate(t *testing.T) {
	runs, suites := compile(t), compileSuite(t)
	for _, name := range testenv.RecordedRuns(t) {
		dir := testenv.RecordedRun(t, name)
		var files []string
		if record.IsSuite(dir) {
			b, err := os.ReadFile(filepath.Join(dir, record.SuiteFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(suites, b); err != nil {
				t.Errorf("%s/%s: %v", name, record.SuiteFile, err)
			}
			s, err := record.LoadSuite(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range s.Skills {
				files = append(files, filepath.Join(dir, e.RunDir, "run.json"))
			}
		} else {
			files = append(files, filepath.Join(dir, "run.json"))
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(runs, b); err != nil {
				rel, _ := filepath.Rel(testenv.RunsDir(t), f)
				t.Errorf("%s: %v", rel, err)
			}
		}
	}
}
