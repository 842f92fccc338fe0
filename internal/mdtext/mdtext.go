// Package mdtext escapes text from outside (a skill's name, a model's
// words, a tool's output, a folder) for Markdown: the run summary's and the
// eval report's, which a CI system posts on a pull request.
package mdtext

import (
	"strings"

	"github.com/vibe-test/vibe-test/internal/term"
)

// Escape makes text safe inside a Markdown line or table cell: control
// characters go (newlines and tabs become spaces, so the text stays on its
// line and in its cell), &, < and > become entities (no HTML gets through),
// and the punctuation Markdown gives meaning to is backslash-escaped (no
// emphasis, link, image, code span, heading, list, table pipe, inline maths
// or autolink can be made of it; GitHub's docs give \$ for a literal
// dollar). CommonMark lets any ASCII punctuation be escaped, so the
// rendered text reads as written. Quotes and = are left alone: without
// HTML they mean nothing, and no escaped text starts a line.
func Escape(s string) string {
	s = term.Line(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '-', '.', '!', '|', '~', '$', '@', ':':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
