// Package yamlerr turns a YAML decoding error into one line that names the
// file and line, the way a compiler would: "path:LINE: message". A value of
// the wrong kind is named by its key and in YAML's terms ("field "task" is
// a list, expected text"), not by the Go field and types the decoder
// reports ("cannot unmarshal []interface {} into Go struct field
// Config.Probes of type string", which also names the wrong field).
package yamlerr

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/vibe-test/vibe-test/internal/jsonerr"
)

// Format renders err as "file:line: message". lineOffset is added to the
// parser's line (frontmatter starts below the opening "---").
func Format(file string, lineOffset int, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		msg := wrongKind(err)
		if msg == "" {
			msg = oneLine(ye.GetMessage())
		}
		if line > 0 {
			return fmt.Errorf("%s:%d: %s", file, line+lineOffset, msg)
		}
		return fmt.Errorf("%s: %s", file, msg)
	}
	return fmt.Errorf("%s: %s", file, oneLine(err.Error()))
}

// wrongKind describes a value of the wrong kind by its key, or "" for any
// other error.
func wrongKind(err error) string {
	var typ *yaml.TypeError
	var node *yaml.UnexpectedNodeTypeError
	var overflow *yaml.OverflowError
	switch {
	case errors.As(err, &typ):
		return field(typ.Token) + fmt.Sprintf("is %s, expected %s", sourceKind(typ.SrcType), expected(typ.DstType))
	case errors.As(err, &node):
		return field(node.Token) + fmt.Sprintf("is %s, expected %s", nodeKind(node.Actual), nodeKind(node.Expected))
	case errors.As(err, &overflow):
		return field(overflow.Token) + fmt.Sprintf("is %s, too large for %s", overflow.SrcNum, expected(overflow.DstType))
	}
	return ""
}

// field is `field "KEY" ` for the key the value at tk belongs to ("task"
// in "- task: [x]"), or "the value " when tk is not a key's value.
func field(tk *token.Token) string {
	for tk != nil && tk.Prev != nil && tk.Prev.Type != token.MappingValueType {
		// A block sequence's value starts at its first "-", a line or
		// more below its key.
		if tk.Type != token.SequenceEntryType {
			return "the value "
		}
		tk = tk.Prev
	}
	if tk == nil || tk.Prev == nil || tk.Prev.Prev == nil {
		return "the value "
	}
	return fmt.Sprintf("field %q ", tk.Prev.Prev.Value)
}

// yamlWords are YAML's names for what JSON calls an array, an object and a
// string.
var yamlWords = strings.NewReplacer("an array", "a list", "an object", "a mapping", "a base64 string", "base64 text", "a string", "text")

// expected is the YAML value a Go type decodes from.
func expected(t reflect.Type) string {
	return yamlWords.Replace(jsonerr.Expected(t))
}

// sourceKind names the value the decoder read, by the Go type it read it
// as ([]interface{} for a list, uint64 for 3): a number without the
// bounds of the type it was read into.
func sourceKind(t reflect.Type) string {
	if t == nil {
		return "empty"
	}
	if k := expected(t); !strings.HasPrefix(k, "a whole number") {
		return k
	}
	return "a number"
}

// nodeKind names a YAML node type as sourceKind and expected do.
func nodeKind(t ast.NodeType) string {
	switch t {
	case ast.SequenceType, ast.SequenceEntryType:
		return "a list"
	case ast.MappingType, ast.MappingValueType, ast.MappingKeyType:
		return "a mapping"
	case ast.StringType, ast.LiteralType:
		return "text"
	case ast.IntegerType, ast.FloatType, ast.InfinityType, ast.NanType:
		return "a number"
	case ast.BoolType:
		return "true or false"
	case ast.NullType:
		return "empty"
	}
	return "a " + t.YAMLName()
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
