package record

import "path/filepath"

// Dir is the entry's run folder in the suite folder suiteDir, kept inside
// it whatever suite.json says (an entry's run_dir of "../x" or "/x" still
// names a folder below suiteDir).
func (e SuiteEntry) Dir(suiteDir string) string {
	return filepath.Join(suiteDir, filepath.Clean("/" + e.RunDir)[1:])
}
