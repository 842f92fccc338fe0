package yamlerr

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Strict decodes src into dst (a pointer), refusing keys dst has no field
// for, and formats an error as Format does. An unknown key also says what
// was expected there: the keys of the mapping it sits in ("unknown field
// "conversation", expected one of: base_task, probes, ..."), found by
// walking dst's type along the document to that mapping.
//
// It also refuses what the decoder would accept without a word: a second
// document (the decoder reads the first and drops the rest), and a value
// that the decoder converts into its field's kind rather than refuse
// (7.9 and "7" both read as 7 by a whole-number field).
func Strict(file string, src []byte, dst any) error {
	err := yaml.UnmarshalWithOptions(src, dst, yaml.Strict())
	if err == nil {
		return checkDocument(file, src, reflect.TypeOf(dst))
	}
	var unknown *yaml.UnknownFieldError
	if errors.As(err, &unknown) && unknown.Token != nil && unknown.Token.Position != nil {
		if keys := expectedKeys(src, unknown.Token.Position, reflect.TypeOf(dst)); len(keys) > 0 {
			return fmt.Errorf("%s:%d: %s, expected one of: %s", file, unknown.Token.Position.Line, oneLine(unknown.Message), strings.Join(keys, ", "))
		}
	}
	return format(file, 0, err, src)
}

// expectedKeys are the keys the struct type of the mapping holding the key
// at pos has, or nil when the walk cannot tell.
func expectedKeys(src []byte, pos *token.Position, t reflect.Type) []string {
	f, err := parser.ParseBytes(src, 0)
	if err != nil || len(f.Docs) == 0 {
		return nil
	}
	return walk(f.Docs[0].Body, t, pos)
}

// walk descends node and t together until it finds the mapping whose key
// sits at pos.
func walk(node ast.Node, t reflect.Type, pos *token.Position) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if node == nil || t == nil {
		return nil
	}
	switch n := node.(type) {
	case *ast.TagNode:
		return walk(n.Value, t, pos)
	case *ast.AnchorNode:
		return walk(n.Value, t, pos)
	case *ast.SequenceNode:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return nil
		}
		for _, v := range n.Values {
			if keys := walk(v, t.Elem(), pos); keys != nil {
				return keys
			}
		}
	case *ast.MappingNode:
		for _, v := range n.Values {
			if keys := walkPair(v, t, pos); keys != nil {
				return keys
			}
		}
	case *ast.MappingValueNode:
		return walkPair(n, t, pos)
	}
	return nil
}

// walkPair is walk for one key and its value in a mapping of type t.
func walkPair(v *ast.MappingValueNode, t reflect.Type, pos *token.Position) []string {
	key := v.Key.GetToken()
	if key != nil && key.Position != nil && key.Position.Line == pos.Line && key.Position.Column == pos.Column {
		if t.Kind() == reflect.Struct {
			return fieldKeys(t)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if ft, ok := fieldType(t, v.Key.String()); ok {
			return walk(v.Value, ft, pos)
		}
	case reflect.Map:
		return walk(v.Value, t.Elem(), pos)
	}
	return nil
}

// yamlField is one key a struct type decodes and the type of its value.
type yamlField struct {
	key string
	typ reflect.Type
}

// fields are the keys struct type t decodes, in order, inline fields'
// keys in their place.
func fields(t reflect.Type) []yamlField {
	var out []yamlField
	for i := range t.NumField() {
		f := t.Field(i)
		name, inline, ok := yamlName(f)
		switch {
		case !ok:
		case inline:
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, fields(ft)...)
			}
		default:
			out = append(out, yamlField{name, f.Type})
		}
	}
	return out
}

// fieldKeys are the YAML keys of struct type t.
func fieldKeys(t reflect.Type) []string {
	var keys []string
	for _, f := range fields(t) {
		keys = append(keys, f.key)
	}
	return keys
}

// fieldType is the type of t's field whose YAML key is key.
func fieldType(t reflect.Type, key string) (reflect.Type, bool) {
	for _, f := range fields(t) {
		if f.key == key {
			return f.typ, true
		}
	}
	return nil, false
}

// yamlName is the key goccy/go-yaml decodes field f from (its yaml tag's
// name, else its json tag's, else the field's name in lower case), whether
// f is inlined, and whether f is decoded at all.
func yamlName(f reflect.StructField) (name string, inline, ok bool) {
	if !f.IsExported() {
		return "", false, false
	}
	tag := f.Tag.Get("yaml")
	if tag == "" {
		tag = f.Tag.Get("json")
	}
	if tag == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	for _, o := range strings.Split(opts, ",") {
		if o == "inline" {
			return "", true, true
		}
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name, false, true
}

// checkDocument refuses, in a document the decoder accepted into type t, a
// second document and a value of the wrong kind (see Strict).
func checkDocument(file string, src []byte, t reflect.Type) error {
	f, err := parser.ParseBytes(src, 0)
	if err != nil || len(f.Docs) == 0 {
		return nil // the decoder read it: nothing more the parser can say
	}
	// The document the decoder read is the first with content: a %YAML
	// directive ahead of "---" is a document of its own to the parser, and
	// was refused as a first one.
	first := -1
	for i, doc := range f.Docs {
		// An empty document ("---" at the end, a comment after it) drops
		// nothing.
		if !hasContent(doc) {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		line := 0
		switch {
		case doc.Start != nil && doc.Start.Position != nil:
			line = doc.Start.Position.Line // its "---"
		case f.Docs[i-1].End != nil && f.Docs[i-1].End.Position != nil:
			line = f.Docs[i-1].End.Position.Line // the "..." ending the one before
		}
		return fmt.Errorf("%s:%d: a second YAML document, expected one (everything after this \"---\" or \"...\" would be ignored)", file, line)
	}
	if first < 0 {
		return nil
	}
	if tk, msg := wrongScalar(f.Docs[first].Body, t, ""); tk != nil {
		line := 0
		if tk.Position != nil {
			line = tk.Position.Line
		}
		return fmt.Errorf("%s:%d: %s", file, line, msg)
	}
	return nil
}

// hasContent says whether a parsed document holds more than directives
// and comments.
func hasContent(doc *ast.DocumentNode) bool {
	if doc == nil || doc.Body == nil {
		return false
	}
	_, directive := doc.Body.(*ast.DirectiveNode)
	return !directive
}

// wrongScalar finds, walking node and t together, the first scalar the
// decoder converts rather than refuses: anything but a whole number where
// t holds one (a decimal number is truncated, text parsed). It returns
// the scalar's token and what to say, naming the field by its place
// (path: "schedule.max_fillers", "probes[0].task"); nil when all is well.
func wrongScalar(node ast.Node, t reflect.Type, path string) (*token.Token, string) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if node == nil || t == nil || decodesItself(t) {
		return nil, ""
	}
	switch n := node.(type) {
	case *ast.TagNode:
		return wrongScalar(n.Value, t, path)
	case *ast.AnchorNode:
		return wrongScalar(n.Value, t, path)
	case *ast.AliasNode, *ast.NullNode:
		return nil, ""
	case *ast.SequenceNode:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return nil, ""
		}
		for i, v := range n.Values {
			if tk, msg := wrongScalar(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); tk != nil {
				return tk, msg
			}
		}
		return nil, ""
	case *ast.MappingNode:
		for _, v := range n.Values {
			if tk, msg := wrongScalarPair(v, t, path); tk != nil {
				return tk, msg
			}
		}
		return nil, ""
	case *ast.MappingValueNode:
		return wrongScalarPair(n, t, path)
	}
	// Only whole numbers need this: the decoder itself refuses anything
	// but true or false for a bool, and text fields take any scalar.
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return nil, ""
	}
	if _, ok := node.(*ast.IntegerNode); ok {
		return nil, ""
	}
	kind := nodeKind(node.Type())
	if node.Type() == ast.FloatType {
		kind = "a decimal number"
	}
	return node.GetToken(), fmt.Sprintf("field %q is %s, expected %s", path, kind, expected(t))
}

// wrongScalarPair is wrongScalar for one key and its value in a mapping of
// type t.
func wrongScalarPair(v *ast.MappingValueNode, t reflect.Type, path string) (*token.Token, string) {
	key := v.Key.String()
	if path != "" {
		key = path + "." + key
	}
	switch t.Kind() {
	case reflect.Struct:
		if ft, ok := fieldType(t, v.Key.String()); ok {
			return wrongScalar(v.Value, ft, key)
		}
	case reflect.Map:
		return wrongScalar(v.Value, t.Elem(), key)
	}
	return nil, ""
}

// unmarshalers are the interfaces through which the decoder lets a type
// read its own value.
var unmarshalers = []reflect.Type{
	reflect.TypeFor[yaml.BytesUnmarshaler](), reflect.TypeFor[yaml.BytesUnmarshalerContext](),
	reflect.TypeFor[yaml.InterfaceUnmarshaler](), reflect.TypeFor[yaml.InterfaceUnmarshalerContext](),
	reflect.TypeFor[yaml.NodeUnmarshaler](), reflect.TypeFor[yaml.NodeUnmarshalerContext](),
	reflect.TypeFor[encoding.TextUnmarshaler](),
}

// decodesItself reports whether values of t are read by their own code
// (plan.Tokens reads "120k") or as text (a time.Duration reads "10s"),
// which decides for itself what it accepts.
func decodesItself(t reflect.Type) bool {
	if t == reflect.TypeFor[time.Duration]() {
		return true
	}
	for _, u := range unmarshalers {
		if reflect.PointerTo(t).Implements(u) || t.Implements(u) {
			return true
		}
	}
	return false
}
