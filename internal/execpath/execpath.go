// Package execpath finds programs on a PATH list that need not be the
// process's own: vibe-test looks for the agents' CLIs, node and bwrap on
// the environment a run is given.
package execpath

import (
	"os"
	"path/filepath"
)

// IsExecutable reports whether p is a file (not a folder) with an execute
// bit.
func IsExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Find returns the first executable called name in the folders of path
// (a PATH list), or "". An empty entry is the working folder, as in a
// shell.
func Find(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if p := filepath.Join(dir, name); IsExecutable(p) {
			return p
		}
	}
	return ""
}
