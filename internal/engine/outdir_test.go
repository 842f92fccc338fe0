package engine

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// A skill is named after its folder as it is: eighty CJK characters (240
// bytes) or a newline. The default run folder's name holds it: it failed
// with "file name too long" past 238 bytes.
func TestDefaultRunFolderFitsAnyName(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, name := range []string{strings.Repeat("库", 80), strings.Repeat("a", 250), "new\nline", "Odd Folder"} {
		dir, err := MakeOutDir("", name)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		base := filepath.Base(dir)
		if !utf8.ValidString(base) || strings.ContainsRune(base, '\n') || len(base) > 17+maxFolderPart {
			t.Errorf("%q: folder %q", name, base)
		}
	}
}
