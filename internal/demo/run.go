package demo

import (
	"strings"

	"github.com/vibe-test/vibe-test/internal/record"
)

// Args is what a demo run records as its arguments; IsRun reads it back,
// so resume and rejudge can say why a demo run cannot be continued: its
// skill and scripted model existed only while it ran.
func Args(personas []string) []string {
	return []string{"demo", "--personas", strings.Join(personas, ",")}
}

// IsRun says whether r was made by `vibe-test demo`.
func IsRun(r *record.Run) bool {
	return len(r.Config.Args) > 0 && r.Config.Args[0] == "demo"
}
