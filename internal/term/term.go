// Package term makes text safe to print on the author's terminal. Anything
// that came from a model, a tool or a file may carry escape sequences: OSC 0
// retitles the window, OSC 52 writes the clipboard, and "\r\x1b[2K" erases
// the line it lands on (a "failed" line, say). Clean removes every control
// character that could start one.
package term

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Clean drops C0 control characters (except newline and tab), DEL, C1
// control characters (U+0080 to U+009F) and the bidirectional formatting
// characters (U+202E turns "fail" printed after it into "liaf", and can make
// a line read as something it is not), and replaces bytes that are not UTF-8
// with U+FFFD, so a raw 0x9b (an 8-bit CSI to some terminals) cannot pass
// either. Text without any of them is returned as it is.
func Clean(s string) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case control(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Line is Clean for a text shown on one line: newlines and tabs become
// spaces as well.
func Line(s string) string {
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(Clean(s))
}

func control(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case bidi(r):
		return true
	}
	return false
}

// bidi says whether r is a bidirectional formatting character: the Arabic
// letter mark, the left-to-right and right-to-left marks, the embeddings
// and overrides (U+202A to U+202E) and the isolates (U+2066 to U+2069).
func bidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func needsCleaning(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 {
			// Bytes >= 0x80 may be fine UTF-8; the slow path tells.
			if c >= 0x80 {
				return hasC1OrInvalid(s[i:])
			}
			return true
		}
	}
	return false
}

func hasC1OrInvalid(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || control(r) {
			return true
		}
		i += size
	}
	return false
}

// Arg is s as one word of a shell command the author may copy from a hint
// (`vibe-test resume DIR`), which survives Line: as it is when it holds
// only characters no shell treats specially, else single-quoted, or, when
// it holds what Line would change (a newline, a control or bidi character,
// a byte that is not UTF-8: a folder's name may hold any), in bash's
// $'...' with those escaped byte by byte. A word that would begin with a
// dash, read as a flag, is given as ./-x.
func Arg(s string) string {
	if strings.HasPrefix(s, "-") {
		s = "./" + s
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !plainArg(r) }) < 0 {
		return s
	}
	if Line(s) == s {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && size == 1, control(r):
			for _, c := range []byte(s[i : i+size]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteString("'")
	return b.String()
}

// plainArg says whether r needs no quoting in a shell word.
func plainArg(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)
}
