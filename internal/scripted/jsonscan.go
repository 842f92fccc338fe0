package scripted

// A reader of the few fields classification needs, over the request body
// as a string. encoding/json decodes every byte of a body that carries a
// whole conversation, several times (validation, then decoding, then the
// raw parts again), and in a -race build each byte it reads from a []byte
// is an instrumented access; reads from a string are not instrumented, and
// most of a body (tools' schemas, tool results, assistant turns) is only
// skipped here. The fast classifiers built on it decline (ok false) any
// body they cannot read exactly as encoding/json would, which then goes
// the decoding way; FuzzClassify and its kin hold the two to the same
// answers.

import (
	"iter"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// validJSON reports whether s is one JSON value with optional white space
// around it, as json.Valid does.
func validJSON(s string) bool {
	i, ok := validValue(s, skipSpace(s, 0), 0)
	return ok && skipSpace(s, i) == len(s)
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// validValue checks the value at s[i:] and returns the index past it.
func validValue(s string, i, depth int) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	switch c := s[i]; {
	case c == '{' || c == '[':
		if depth++; depth > maxDepth {
			return i, false
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i = skipSpace(s, i+1)
		if i < len(s) && s[i] == end {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i >= len(s) || s[i] != '"' {
					return i, false
				}
				if i, ok = validString(s, i); !ok {
					return i, false
				}
				if i = skipSpace(s, i); i >= len(s) || s[i] != ':' {
					return i, false
				}
				i = skipSpace(s, i+1)
			}
			if i, ok = validValue(s, i, depth); !ok {
				return i, false
			}
			if i = skipSpace(s, i); i >= len(s) {
				return i, false
			}
			if s[i] == end {
				return i + 1, true
			}
			if s[i] != ',' {
				return i, false
			}
			i = skipSpace(s, i+1)
		}
	case c == '"':
		return validString(s, i)
	case c == '-' || '0' <= c && c <= '9':
		return validNumber(s, i)
	case strings.HasPrefix(s[i:], "true"):
		return i + 4, true
	case strings.HasPrefix(s[i:], "false"):
		return i + 5, true
	case strings.HasPrefix(s[i:], "null"):
		return i + 4, true
	}
	return i, false
}

func validString(s string, i int) (int, bool) {
	for i++; i < len(s); i++ {
		// Eight bytes at a time while none ends the string, escapes or
		// must not be in it: most of a body is text inside strings.
		for i+8 <= len(s) && !special(le64(s[i:i+8])) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		switch c := s[i]; {
		case c == '"':
			return i + 1, true
		case c < ' ':
			return i, false
		case c == '\\':
			if i++; i >= len(s) {
				return i, false
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s) {
					return i, false
				}
				for _, h := range []byte(s[i+1 : i+5]) {
					if !isHex(h) {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

// le64 is the eight bytes of s as a little-endian word.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// special tells whether a byte of x is a quote, a backslash or below
// 0x20 (the word tricks of "Bit Twiddling Hacks": a byte is zero, a byte
// is less than n; both are exact about whether there is one).
func special(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - lo) & ^v & hi }
	return (zero(x^(lo*'"')) | zero(x^(lo*'\\')) | (x-lo*' ')&^x&hi) != 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func digits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// validNumber: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s string, i int) (int, bool) {
	if s[i] == '-' {
		if i++; i >= len(s) {
			return i, false
		}
	}
	switch {
	case s[i] == '0':
		i++
	case '1' <= s[i] && s[i] <= '9':
		i = digits(s, i+1)
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// The readers below take valid JSON (validJSON) and a value's raw text,
// without white space around it.

// skipValue returns the index past the value at s[i:].
func skipValue(s string, i int) int {
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				i = skipString(s, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(s) && !strings.ContainsRune(",}] \t\r\n", rune(s[i])) {
		i++
	}
	return i
}

// skipString returns the index past the string at s[i:]: its closing quote
// is the first one after it that an even number of backslashes precede.
func skipString(s string, i int) int {
	for i++; ; i++ {
		j := strings.IndexByte(s[i:], '"')
		if j < 0 {
			return len(s)
		}
		i += j
		k := i
		for s[k-1] == '\\' { // the opening quote stops it
			k--
		}
		if (i-k)%2 == 0 {
			return i + 1
		}
	}
}

// topValue is the raw value of a valid JSON text: s without the white
// space around it.
func topValue(s string) string {
	end := len(s)
	for end > 0 && (s[end-1] == ' ' || s[end-1] == '\t' || s[end-1] == '\n' || s[end-1] == '\r') {
		end--
	}
	return s[skipSpace(s, 0):end]
}

// members yields an object's keys (raw, quoted) and values (raw).
func members(obj string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		i := skipSpace(obj, 1)
		for i < len(obj) && obj[i] == '"' {
			k := skipString(obj, i)
			key := obj[i:k]
			i = skipSpace(obj, skipSpace(obj, k)+1) // past the colon
			v := skipValue(obj, i)
			if !yield(key, obj[i:v]) {
				return
			}
			i = skipSpace(obj, v)
			if i < len(obj) && obj[i] == ',' {
				i = skipSpace(obj, i+1)
			}
		}
	}
}

// elements yields an array's elements (raw).
func elements(arr string) iter.Seq[string] {
	return func(yield func(string) bool) {
		i := skipSpace(arr, 1)
		for i < len(arr) && arr[i] != ']' {
			v := skipValue(arr, i)
			if !yield(arr[i:v]) {
				return
			}
			i = skipSpace(arr, v)
			if i < len(arr) && arr[i] == ',' {
				i = skipSpace(arr, i+1)
			}
		}
	}
}

// unquote is the string a raw JSON string decodes to, as encoding/json
// decodes it: escapes resolved, a lone or broken surrogate and each byte of
// malformed UTF-8 replaced by U+FFFD.
func unquote(raw string) string {
	s := raw[1 : len(raw)-1]
	plain := 0
	for plain < len(s) {
		c := s[plain]
		if c == '\\' {
			break
		}
		if c < utf8.RuneSelf {
			plain++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[plain:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		plain += size
	}
	if plain == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:plain])
	for i := plain; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			i++
			switch e := s[i]; e {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(s[i+1:])
				i += 5
				if utf16.IsSurrogate(r) {
					if strings.HasPrefix(s[i:], `\u`) && len(s) >= i+6 {
						if d := utf16.DecodeRune(r, hex4(s[i+2:])); d != utf8.RuneError {
							b.WriteRune(d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
				continue
			default: // '"', '\\', '/'
				b.WriteByte(e)
			}
			i++
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && s[j] != '\\' {
				j++
			}
			b.WriteString(s[i:j])
			i = j
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
		}
	}
	return b.String()
}

// hex4 reads the four hex digits at the start of s (valid JSON has them
// after \u; a second \u of a surrogate pair may be cut short).
func hex4(s string) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// The helpers below read a raw value as encoding/json decodes it into a
// field of a fresh struct; "" stands for a field the body does not have.
// ok false means the decoder would fail, or decode in a way they do not
// follow (see fields).

// stringOrNull reads a string field: a string, or "" for null or none.
func stringOrNull(raw string) (s string, ok bool) {
	switch {
	case raw == "" || raw == "null":
		return "", true
	case raw[0] == '"':
		return unquote(raw), true
	}
	return "", false
}

// stringsOrNull tells whether each value would decode into a string field.
func stringsOrNull(raws ...string) bool {
	for _, r := range raws {
		if r != "" && r != "null" && r[0] != '"' {
			return false
		}
	}
	return true
}

// boolOrNull reads a bool field.
func boolOrNull(raw string) (b, ok bool) {
	switch raw {
	case "", "null", "false":
		return false, true
	case "true":
		return true, true
	}
	return false, false
}

// fields maps an object's members onto the names a struct decodes, as
// encoding/json does (a key sets the field of its name, or else of a name
// that equals it but for case). ok is false when a name is set twice or by a
// key that differs from it in case, whose decoding the fast path leaves to
// encoding/json; vals[i] is "" for a name no key set.
func fields(obj string, names []string, vals []string) bool {
	for k, v := range members(obj) {
		key := unquote(k)
		found := false
		for i, n := range names {
			if key == n {
				if vals[i] != "" {
					return false
				}
				vals[i], found = v, true
				break
			}
		}
		if found {
			continue
		}
		for _, n := range names {
			if strings.EqualFold(key, n) {
				return false
			}
		}
	}
	return true
}

// inObject reads a struct field: fn gets the values of names in the
// object (fields); an absent or null field leaves the struct as it is.
func inObject(raw string, names []string, fn func(vals []string) bool) bool {
	switch {
	case raw == "" || raw == "null":
		return true
	case raw[0] != '{':
		return false
	}
	vals := make([]string, len(names))
	return fields(raw, names, vals) && fn(vals)
}

// forObjects reads a slice-of-structs field: fn gets each element, "{}"
// for a null one (which leaves a fresh element as {} does).
func forObjects(raw string, fn func(elem string) bool) bool {
	switch {
	case raw == "" || raw == "null":
		return true
	case raw[0] != '[':
		return false
	}
	for e := range elements(raw) {
		switch {
		case e == "null":
			e = "{}"
		case e[0] != '{':
			return false
		}
		if !fn(e) {
			return false
		}
	}
	return true
}
