// Package jsonerr turns a JSON decoding error into one line in the terms of
// the file a person reads, as yamlerr does for YAML: "path:LINE: not a run
// record: field "conversations" is a string, expected an array". It names
// the line, the field by its JSON name and the kind of JSON value expected;
// encoding/json's own message names Go types instead ("Go struct field
// Run.conversations of type []record.Conversation"), which say nothing to
// someone who did not write vibe-test.
package jsonerr

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// Format renders err, returned by decoding data into a value, as one line
// naming file, the line of the fault and what the file was expected to be
// (what: "a run record"). file "" (bytes that came from a model, not a
// file) gives "not WHAT: line N: ...".
func Format(file string, data []byte, err error, what string) error {
	line, detail := Describe(data, err)
	if file == "" {
		return fmt.Errorf("not %s: line %d: %s", what, line, detail)
	}
	return fmt.Errorf("%s:%d: not %s: %s", file, line, what, detail)
}

// Describe is the line of data at which decoding failed and what was wrong
// there.
func Describe(data []byte, err error) (line int, detail string) {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		// A json.Decoder's report of a document cut short (Unmarshal
		// gives a SyntaxError).
		return LineAt(data, int64(len(data))), "invalid JSON (unexpected end of JSON input)"
	case errors.As(err, &syntax):
		return LineAt(data, syntax.Offset), "invalid JSON (" + syntax.Error() + ")"
	case errors.As(err, &typ):
		got, want := Kinds(typ)
		if typ.Field == "" {
			return LineAt(data, typ.Offset), fmt.Sprintf("the document is %s, expected %s", got, want)
		}
		return LineAt(data, typ.Offset), fmt.Sprintf("field %q is %s, expected %s", typ.Field, got, want)
	}
	msg := strings.TrimPrefix(firstLine(err.Error()), "json: ")
	// DisallowUnknownFields' error carries no offset: the field's first
	// appearance as a key is the best guess of its line.
	if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
		if i := bytes.Index(data, []byte(name+":")); i >= 0 {
			return LineAt(data, int64(i)), msg
		}
		if i := bytes.Index(data, []byte(name)); i >= 0 {
			return LineAt(data, int64(i)), msg
		}
	}
	return 1, msg
}

// FieldLine is the 1-based line of the top-level object's field in data,
// or 1 where there is none (data not an object, or no such field).
func FieldLine(data []byte, field string) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 1
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 1
		}
		if k, _ := t.(string); k == field {
			return LineAt(data, dec.InputOffset())
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return 1
		}
	}
	return 1
}

// LineAt is the 1-based line of data that byte offset off falls on.
func LineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// Kinds names, as a person reading the file would, the value a type error
// found ("a number") and the one its field takes ("a string").
func Kinds(te *json.UnmarshalTypeError) (got, want string) {
	return valueKind(te.Value), Expected(te.Type)
}

// valueKind names the JSON value encoding/json found ("string", "number",
// "number -1", "bool", "array", "object").
func valueKind(v string) string {
	switch {
	case v == "string":
		return "a string"
	case v == "number":
		return "a number"
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	case v == "bool":
		return "true or false"
	case v == "array":
		return "an array"
	case v == "object":
		return "an object"
	}
	return v
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// Expected is the JSON value a Go type decodes from, as a person reading
// the file would name it.
func Expected(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return fmt.Sprintf("an array of %d", t.Len())
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a whole number of at least 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another kind of value"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// UnknownField finds, in a document that a decoder with
// DisallowUnknownFields refused, the first key that the Go value into has
// no field for: its path ("criteria[2].extra") and the keys expected in its
// object, as the message of DisallowUnknownFields has neither. ok is false
// when no such key is found.
func UnknownField(data []byte, into any) (path string, expected []string, ok bool) {
	var doc any
	if json.Unmarshal(data, &doc) != nil {
		return "", nil, false
	}
	return unknownIn(doc, reflect.TypeOf(into), "")
}

func unknownIn(v any, t reflect.Type, path string) (string, []string, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "", nil, false
	}
	switch v := v.(type) {
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return "", nil, false
		}
		for i, e := range v {
			if p, exp, ok := unknownIn(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, exp, true
			}
		}
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return "", nil, false
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fields[name] = f.Type
			names = append(names, name)
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ft, known := fields[k]
			if !known {
				// encoding/json matches a key to a field case-insensitively.
				for name, t := range fields {
					if strings.EqualFold(name, k) {
						ft, known = t, true
					}
				}
			}
			if !known {
				return join(path, k), names, true
			}
			if p, exp, ok := unknownIn(v[k], ft, join(path, k)); ok {
				return p, exp, true
			}
		}
	}
	return "", nil, false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// DuplicateKey finds the first key that one JSON object of data holds
// twice: its path ("correct", "criteria[2].id") and the line of its second
// appearance. encoding/json keeps the last value without a word, so a
// hand-edited file (an answer key, a reviewed rubric) that repeats a key
// loses the first silently. Not ok for data without one, or that is not
// JSON (its decoding says so).
func DuplicateKey(data []byte) (path string, line int, ok bool) {
	return duplicateKey(data, false)
}

// DuplicateField is DuplicateKey for data decoded into a struct, whose
// fields encoding/json matches without regard to case: "text" and "Text"
// fill one field, the last kept.
func DuplicateField(data []byte) (path string, line int, ok bool) {
	return duplicateKey(data, true)
}

func duplicateKey(data []byte, fold bool) (path string, line int, ok bool) {
	type frame struct {
		keys   map[string]bool // an object's keys so far; nil for an array
		path   string
		index  int    // an array's next element
		key    string // an object's key whose value comes next
		expect bool   // an object's next token is a key
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*frame
	// child is the path of the value about to start in the top frame.
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.keys == nil {
			p := fmt.Sprintf("%s[%d]", top.path, top.index)
			top.index++
			return p
		}
		top.expect = true
		return join(top.path, top.key)
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", 0, false
		}
		if len(stack) > 0 {
			if top := stack[len(stack)-1]; top.keys != nil && top.expect {
				if key, isKey := tok.(string); isKey {
					seen := key
					if fold {
						seen = strings.ToLower(key)
					}
					if top.keys[seen] {
						return join(top.path, key), LineAt(data, dec.InputOffset()), true
					}
					top.keys[seen], top.key, top.expect = true, key, false
					continue
				}
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, path: child(), expect: true})
		case json.Delim('['):
			stack = append(stack, &frame{path: child()})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", 0, false
			}
		default:
			child()
		}
	}
}
