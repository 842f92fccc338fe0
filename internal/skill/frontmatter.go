package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/goccy/go-yaml"
)

// This file reads frontmatter as the pinned CLI (2.1.328) reads it, step
// by step, from its source (the minified names are the binary's; FINDINGS
// §3 of the skills study has the evidence): where the CLI drops the block,
// vibe-test must see the skill as the model will, not as a kinder reader
// would.

// jsSpace is JavaScript's \s (Go's \s is ASCII only).
const jsSpace = `[\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]`

// frontRE is the CLI's KO, /^---\s*\n([\s\S]*?)---\s*\n?/: the closing
// "---" is found lazily anywhere, not only at the start of a line, so
// "description: a---b" ends the block after "a". Go's regexp picks the
// submatch a backtracking engine would, so the lazy group agrees.
var frontRE = regexp.MustCompile(`^---` + jsSpace + `*\n([\s\S]*?)---` + jsSpace + `*\n?`)

// frontmatter is one SKILL.md split and parsed as the CLI does it.
type frontmatter struct {
	found  bool           // a block matched frontRE
	text   string         // the block's text
	line   int            // the file line the block's text starts on
	body   string         // what follows the block (the whole file without one)
	fields map[string]any // the parsed block; empty when it was dropped
	// firstErr is the first parse's error when a retry was needed; dropErr
	// the retry's error when the block was dropped (fields is then empty).
	firstErr, dropErr error
	notMap            bool // it parsed to a list or a scalar, which the CLI drops
}

// splitFrontmatter is the CLI's qc: a BOM stripped, the block tried only
// when a "---" follows the first three characters, parsed by parseYAML.
func splitFrontmatter(text string) frontmatter {
	text = strings.TrimPrefix(text, "\ufeff")
	fm := frontmatter{body: text, fields: map[string]any{}}
	if len(text) < 3 || !strings.Contains(text[3:], "---") {
		return fm
	}
	m := frontRE.FindStringSubmatchIndex(text)
	if m == nil {
		return fm
	}
	fm.found = true
	fm.text, fm.body = text[m[2]:m[3]], text[m[1]:]
	fm.line = 1 + strings.Count(text[:m[2]], "\n")
	v, first, err := parseFrontmatter(fm.text)
	fm.firstErr = first
	if err != nil {
		fm.dropErr = err
		return fm
	}
	// The CLI's Ws: anything but a mapping is no fields at all.
	switch x := v.(type) {
	case map[string]any:
		fm.fields = x
	case nil:
	default:
		fm.notMap = true
	}
	return fm
}

// parseFrontmatter is the CLI's Bar: parse; on an error, parse once more
// after nu() and with leading tabs as two spaces each; a second error
// drops the block. first is the first parse's error when the retry
// succeeded or failed.
func parseFrontmatter(text string) (v any, first, err error) {
	if v, err = parseYAML(text); err == nil {
		return v, nil, nil
	}
	first = err
	retry := leadingTabs.ReplaceAllStringFunc(quoteSpecial(text), func(t string) string {
		return strings.Repeat("  ", len(t))
	})
	if v, err = parseYAML(retry); err != nil {
		return nil, first, err
	}
	return v, first, nil
}

var leadingTabs = regexp.MustCompile(`(?m)^\t+`)

// parseYAML stands in for Bun.YAML.parse: YAML 1.2 scalars (yes and on
// are text), a duplicate key keeps the last value. goccy/go-yaml agrees
// with it on every case the study probed (fm-* and dmi-*: the same errors
// and values); a Go reader cannot be byte-exact with Bun's in general.
func parseYAML(text string) (any, error) { return decodeYAML(text, yaml.AllowDuplicateMapKey()) }

// parseYAMLStrict is parseYAML refusing a key given twice, as js-yaml
// (the Gemini CLI's reader) does.
func parseYAMLStrict(text string) (any, error) { return decodeYAML(text) }

// decodeYAML decodes text with opts, refusing a block nested past
// maxFlowDepth; an empty or comment-only block has no fields.
func decodeYAML(text string, opts ...yaml.DecodeOption) (any, error) {
	if flowDepth(text) > maxFlowDepth {
		return nil, errTooDeep
	}
	var v any
	err := yaml.NewDecoder(strings.NewReader(text), opts...).Decode(&v)
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	return v, err
}

// maxFlowDepth bounds the nesting of [ and { parseYAML decodes: the YAML
// reader's memory grows with the square of the depth (20,000 levels, a
// 40 KB SKILL.md, took 674 MB; 50,000 ran the process out of memory, a
// crash no recover catches). No frontmatter field nests more than a few
// levels; a block nested past this is dropped as one the reader rejects.
const maxFlowDepth = 512

// errTooDeep is parseYAML's refusal of a block nested past maxFlowDepth.
var errTooDeep = fmt.Errorf("values nested more than %d deep ([ or { inside one another)", maxFlowDepth)

// flowDepth is the deepest nesting of [ and { in text, quotes or not (a
// bracket inside a string counts too: it can only overstate).
func flowDepth(text string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// The CLI's nu(): a line "key: value" whose key is letters, "_" and "-"
// (no digits) and whose value holds one of tu's characters gets the value
// double-quoted, unless it is already quoted or a [...] that parses as a
// list. JavaScript's "." stops at \r too, so a CRLF line is left as it is.
var (
	nuLine    = regexp.MustCompile(`^([a-zA-Z_-]+):` + jsSpace + `+([^\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}][^\n\r\x{2028}\x{2029}]*)$`)
	nuSpecial = regexp.MustCompile("[{}\\[\\]*&#!|>%@`]|: ")
)

func quoteSpecial(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		m := nuLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		key, v := m[1], m[2]
		switch {
		case strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`), strings.HasPrefix(v, `'`) && strings.HasSuffix(v, `'`):
			continue
		case strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]"):
			if list, err := parseYAML(v); err == nil {
				if _, ok := list.([]any); ok {
					continue
				}
			}
		}
		if nuSpecial.MatchString(v) {
			v = strings.ReplaceAll(v, `\`, `\\`)
			v = strings.ReplaceAll(v, `"`, `\"`)
			lines[i] = key + `: "` + v + `"`
		}
	}
	return strings.Join(lines, "\n")
}

// jsString is JavaScript's String() of a YAML scalar, for the fields the
// CLI reads that way (a number description, disable-model-invocation).
func jsString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN", true
		case math.IsInf(x, 1):
			return "Infinity", true
		case math.IsInf(x, -1):
			return "-Infinity", true
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}

// isNumber reports whether v is a YAML number.
func isNumber(v any) bool {
	switch v.(type) {
	case uint64, int64, int, float64:
		return true
	}
	return false
}

// cliTrue is the CLI's Xke as jar() reads it: a bool, or a string or
// number whose lowercased, trimmed text is 1, true, yes or on. So "yes",
// "On", '1' and 1.0 are true; "y", 2 and "enabled" are not.
func cliTrue(v any) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	if _, ok := v.(string); !ok && !isNumber(v) {
		return false
	}
	s, _ := jsString(v)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// cliTruthy is JavaScript's truthiness of a YAML value (the CLI's
// `if(!e.hooks)`): not null, false, 0 or "".
func cliTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	}
	if isNumber(v) {
		s, _ := jsString(v)
		return s != "0" && s != "NaN"
	}
	return true
}

// cliDescription is the CLI's Yke: a string trimmed (empty is none), a
// number or bool as text, anything else none; ok is false when the field
// is there but of a type the CLI omits.
func cliDescription(v any) (desc string, ok bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return strings.TrimSpace(x), true
	case bool:
		return strconv.FormatBool(x), true
	}
	if isNumber(v) {
		s, _ := jsString(v)
		return s, true
	}
	return "", false
}

// firstLine is the CLI's xdt, its description when there is none: the
// first non-empty line of the body, a Markdown heading's "#"s stripped,
// over 100 characters (UTF-16 units, as JavaScript counts) cut to 97 and
// "...". An empty body gives "Skill".
func firstLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		h := strings.TrimFunc(l, isJSSpace)
		if h == "" {
			continue
		}
		if m := headingRE.FindStringSubmatch(h); m != nil {
			h = m[1]
		}
		if u := utf16.Encode([]rune(h)); len(u) > 100 {
			h = string(utf16.Decode(u[:97])) + "..."
		}
		return h
	}
	return "Skill"
}

var headingRE = regexp.MustCompile(`^#+` + jsSpace + `+([^\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}][^\n\r\x{2028}\x{2029}]*)$`)

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// maxListing is the CLI's cap on one skill's listing text (jEs=1536):
// longer, it shows 1,535 characters and "…".
const maxListing = 1536

// listingText is what the CLI lists after the skill's name (s5t, y3n):
// the description, " - " and when_to_use when set, cut to maxListing.
func listingText(desc, whenToUse string) string {
	s := listed(desc)
	if whenToUse != "" {
		s += " - " + listed(whenToUse)
	}
	if u := utf16.Encode([]rune(s)); len(u) > maxListing {
		s = string(utf16.Decode(u[:maxListing-1])) + "…"
	}
	return s
}

// listed is a field as the CLI puts it in the listing (2.1.328, recorded
// in testdata/cli): each run of line breaks, tabs or other control
// characters one space, the ends trimmed, and < and > escaped as &lt; and
// &gt; (& is left as it is). A multi-line description was shown whole
// before, in vibe-test's "the model sees the skill listed as" lines.
func listed(s string) string {
	var b strings.Builder
	run := false
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			run = true
			continue
		}
		if run {
			b.WriteByte(' ')
			run = false
		}
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}

// cliPaths is the CLI's mpo over Cxn: the globs of a paths: field (a
// string split on commas outside braces, or a list of them, braces
// expanded), "/**" dropped from each end; none, or only "**", is no
// condition at all (nil).
func cliPaths(v any) []string {
	var out []string
	for _, p := range splitGlobs(v) {
		p = strings.TrimSuffix(p, "/**")
		if p != "" {
			out = append(out, p)
		}
	}
	for _, p := range out {
		if p != "**" {
			return out
		}
	}
	return nil
}

func splitGlobs(v any) []string {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, splitGlobs(e)...)
		}
		return out
	case string:
		var parts []string
		var cur strings.Builder
		depth := 0
		for _, r := range x {
			switch {
			case r == '{':
				depth++
			case r == '}':
				depth--
			case r == ',' && depth == 0:
				if t := strings.TrimSpace(cur.String()); t != "" {
					parts = append(parts, t)
				}
				cur.Reset()
				continue
			}
			cur.WriteRune(r)
		}
		if t := strings.TrimSpace(cur.String()); t != "" {
			parts = append(parts, t)
		}
		var out []string
		for _, p := range parts {
			out = append(out, expandBraces(p)...)
		}
		return out
	}
	return nil
}

// braceRE is the CLI's /^([^{]*)\{([^}]+)\}(.*)$/.
var braceRE = regexp.MustCompile(`^([^{]*)\{([^}]+)\}(.*)$`)

// expandBraces expands {a,b} alternatives as the CLI's au() does, within
// its budget of 1,000 results (over it, the pattern stays as written).
func expandBraces(p string) []string {
	if !strings.Contains(p, "{") {
		return []string{p}
	}
	var out []string
	stack := []string{p}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		m := braceRE.FindStringSubmatch(h)
		if m == nil {
			out = append(out, h)
			continue
		}
		alts := strings.Split(m[2], ",")
		if len(out)+len(stack)+len(alts) > 1000 {
			return []string{p}
		}
		for i := len(alts) - 1; i >= 0; i-- {
			stack = append(stack, m[1]+strings.TrimSpace(alts[i])+m[3])
		}
	}
	return out
}

// topKeys are the keys written at the top of a frontmatter block, in
// order, for the message that says which fields the CLI dropped.
func topKeys(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		m := topKeyRE.FindStringSubmatch(l)
		if m != nil && !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

var topKeyRE = regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9_.-]*):`)

// quoted joins names as "a", "b".
func quoted(names []string) string {
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", n)
	}
	return b.String()
}
