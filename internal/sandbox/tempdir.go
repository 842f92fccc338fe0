package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// subjectWords are what nothing the agent sees may say (the brief: "no
// mention of the experiment to its subject"): the agent reads its working
// directory (Claude Code's system prompt names it, codex's environment
// context too) and its home, both folders in the temp folder at their host
// paths.
var subjectWords = []string{"test", "eval", "probe", "vibe", "benchmark"}

// TempDirProblem says why the temp folder (TMPDIR) cannot hold the
// agent's sandboxes, "" when it can: its path has a word that begins with
// one of subjectWords ("vibe-test-tmp", "skill-tests@tmp"; "latest" is no
// such word), and every sandbox and home made in it would show the agent
// that word.
func TempDirProblem() string {
	dir := os.TempDir()
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	// New makes the sandbox at the temp folder's real path, links
	// resolved: that is the path the agent sees.
	shown := abs + " (TMPDIR)"
	if os.Getenv("TMPDIR") == "" {
		shown = abs + " (TMPDIR unset)"
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		how := "through a link on its path"
		if st, err := os.Lstat(abs); err == nil && st.Mode()&os.ModeSymlink != 0 {
			how = "a link to it"
		}
		shown = fmt.Sprintf("%s (TMPDIR %s, %s)", real, abs, how)
		abs = real
	}
	if w := subjectWord(abs); w != "" {
		return fmt.Sprintf("the temp folder %s names %q: the agent works in a folder made there and sees its path, so it would read that it is being measured; set TMPDIR to a folder whose path does not name test, eval, probe, vibe or benchmark", shown, w)
	}
	return ""
}

// subjectWord is the first word of path that begins with one of
// subjectWords, "" when none does. Words are runs of letters, lowercased.
func subjectWord(path string) string {
	for _, w := range strings.FieldsFunc(strings.ToLower(path), func(r rune) bool { return !unicode.IsLetter(r) }) {
		for _, s := range subjectWords {
			if strings.HasPrefix(w, s) {
				return w
			}
		}
	}
	return ""
}
