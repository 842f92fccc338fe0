// Package yamlerr turns a YAML decoding error into one line that names the
// file and line, the way a compiler would: "path:LINE: message".
package yamlerr

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
)

// Format renders err as "file:line: message". lineOffset is added to the
// parser's line (frontmatter starts below the opening "---").
func Format(file string, lineOffset int, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		msg := oneLine(ye.GetMessage())
		if line > 0 {
			return fmt.Errorf("%s:%d: %s", file, line+lineOffset, msg)
		}
		return fmt.Errorf("%s: %s", file, msg)
	}
	return fmt.Errorf("%s: %s", file, oneLine(err.Error()))
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
