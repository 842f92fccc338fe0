package mdtext

import (
	"strings"
	"testing"

	"github.com/russross/blackfriday/v2"
)

// Text from outside makes no link, tag or emphasis, whichever report it
// lands in: the eval report's own escaping once left ':', '.' and '-', and
// a case set's goal "see https://evil.example/login" rendered as a link.
func TestEscapeMakesNoLinkNorTag(t *testing.T) {
	for _, in := range []string{
		"see https://evil.example/login and www.evil.example",
		"mail me: a@evil.example",
		"<script>alert(1)</script> [x](http://e.example) *em* `c`",
		"a\u202eb\x1b]0;t\x07",
	} {
		r := blackfriday.NewHTMLRenderer(blackfriday.HTMLRendererParameters{Flags: blackfriday.UseXHTML})
		page := string(blackfriday.Run([]byte(Escape(in)), blackfriday.WithRenderer(r)))
		for _, bad := range []string{"<a ", "<script", "<em>", "<code>", "\u202e", "\x1b"} {
			if strings.Contains(page, bad) {
				t.Errorf("%q made %q: %s", in, bad, page)
			}
		}
	}
}
