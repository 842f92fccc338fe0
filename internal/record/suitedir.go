package record

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is the entry's run folder in the suite folder suiteDir, kept inside
// it whatever suite.json says (an entry's run_dir of "../x" or "/x" still
// names a folder below suiteDir).
func (e SuiteEntry) Dir(suiteDir string) string {
	return filepath.Join(suiteDir, filepath.Clean("/" + e.RunDir)[1:])
}

// SkillRun loads the run of a suite's skill. It is nil, with no error,
// when the skill stopped before its run began (no run.json, or one with no
// plan yet): suite.json says why. A run.json that cannot be read (cut
// short, a newer schema) is an error, as is one missing though suite.json
// records judged probes of it: read as "stopped before it began", both
// kept suite.json's old verdict and exit code without a word.
func SkillRun(suiteDir string, e SuiteEntry) (*Run, error) {
	rd := e.Dir(suiteDir)
	if _, err := os.Stat(filepath.Join(rd, "run.json")); errors.Is(err, fs.ErrNotExist) {
		if n := e.Diluted.Probes + e.Fresh.Probes; n > 0 {
			return nil, fmt.Errorf("%s: no run.json, though %s records %d judged probes of skill %s: its run folder lost its record", rd, filepath.Join(suiteDir, SuiteFile), n, e.Name)
		}
		return nil, nil
	}
	r, err := Load(rd)
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", e.Name, err)
	}
	if r.Plan == nil {
		return nil, nil
	}
	return r, nil
}
