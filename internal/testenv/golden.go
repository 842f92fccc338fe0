package testenv

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// update is the -update flag of every test binary that imports testenv:
// Golden writes what it got instead of comparing.
var update = flag.Bool("update", false, "rewrite the golden files with what the tests got, instead of comparing")

// Updating reports whether the test binary was given -update, for what
// rewrites its expected output by other means (testscript's UpdateScripts).
func Updating() bool { return *update }

// A Fixup rewrites what would churn between runs or machines (a version, a
// temporary path, a time, a cost) into a fixed placeholder, before Golden
// compares or writes.
type Fixup func(string) string

// Replace is the Fixup that replaces every old with new; an empty old
// changes nothing.
func Replace(old, new string) Fixup {
	return func(s string) string {
		if old == "" {
			return s
		}
		return strings.ReplaceAll(s, old, new)
	}
}

// ReplaceRegexp is the Fixup that replaces every match of expr with repl
// (regexp.ReplaceAllString's $1 expansions apply).
func ReplaceRegexp(expr, repl string) Fixup {
	re := regexp.MustCompile(expr)
	return func(s string) string { return re.ReplaceAllString(s, repl) }
}

// MaskTimes replaces RFC 3339 times (run.json's, --json's) with <time>.
var MaskTimes = ReplaceRegexp(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`, "<time>")

// MaskCosts replaces dollar amounts ($0.0123) with $<cost>: the scripted
// model prices its calls by their tokens, which move with any prompt.
var MaskCosts = ReplaceRegexp(`\$\d+(\.\d+)?`, "$$<cost>")

// MaskDurations replaces Go durations as the summary prints them (1.2s,
// 350ms, 2m3s) with <duration>.
var MaskDurations = ReplaceRegexp(`\b\d+(\.\d+)?(ms|s|m\d+(\.\d+)?s)\b`, "<duration>")

// MaskVersion replaces the version v (vibe-test's, the CLI's) with
// <version>.
func MaskVersion(v string) Fixup { return Replace(v, "<version>") }

// MaskPath replaces the folder dir, as given and with its symlinks
// resolved, with name (a placeholder such as <run>).
func MaskPath(dir, name string) Fixup {
	resolved, _ := filepath.EvalSymlinks(dir)
	return func(s string) string {
		// The longer first: a resolved path may hold the given one.
		for _, p := range []string{resolved, dir} {
			if p != "" {
				s = strings.ReplaceAll(s, p, name)
			}
		}
		return s
	}
}

// Golden compares got, after the fixups, with the golden file at path
// (relative to the test's package folder, by convention
// testdata/<name>.golden). With -update it writes the file instead. A
// difference fails the test with a line diff, control characters (a
// styled summary's escape codes) shown escaped.
func Golden(t testing.TB, path string, got []byte, fix ...Fixup) {
	t.Helper()
	s := string(got)
	for _, f := range fix {
		s = f(s)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v (go test -update writes it: review it before committing)", err)
		return
	}
	if s == string(want) {
		return
	}
	t.Errorf("%s differs from what the test got (-want +got; after a deliberate change, go test -update rewrites it):\n%s", path, Diff(string(want), s))
}

// Diff is a line diff of want and got: lines only in want start with "-",
// only in got with "+", with up to three unchanged lines around each
// change; control characters are shown escaped. It is for failure
// messages: one long enough to bury the change is cut at 200 lines.
func Diff(want, got string) string {
	a, b := splitLines(want), splitLines(got)
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:]. Golden files are a few hundred lines: quadratic is fine.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte // ' ', '-' or '+'
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', a[i]})
			i++
		default:
			lines = append(lines, line{'+', b[j]})
			j++
		}
	}
	const context, limit = 3, 200
	var out strings.Builder
	shown, last := 0, -1
	for k, l := range lines {
		near := false
		for d := max(0, k-context); d <= min(len(lines)-1, k+context); d++ {
			if lines[d].op != ' ' {
				near = true
				break
			}
		}
		if !near {
			continue
		}
		if last >= 0 && k > last+1 {
			out.WriteString("@@\n")
		}
		last = k
		if shown++; shown > limit {
			fmt.Fprintf(&out, "… (the diff goes on)\n")
			break
		}
		out.WriteByte(l.op)
		out.WriteByte(' ')
		out.WriteString(visible(l.text))
		out.WriteByte('\n')
	}
	return out.String()
}

// splitLines splits s after each newline; a last line without one is
// marked, so a missing final newline shows in the diff.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if t, ok := strings.CutSuffix(l, "\n"); ok {
			lines[i] = t
		} else {
			lines[i] = l + " (no newline at the end)"
		}
	}
	return lines
}

// visible shows a line's control characters (escape codes, tabs, carriage
// returns) as Go escapes and leaves the rest as it is.
func visible(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	var b bytes.Buffer
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
