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
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/vibe-test/vibe-test/internal/jsonerr"
)

// Format renders err as "file:line: message". lineOffset is added to the
// parser's line (frontmatter starts below the opening "---").
func Format(file string, lineOffset int, err error) error {
	return format(file, lineOffset, err, nil)
}

// format is Format with the document's source, when known: a value of the
// wrong kind is then named by its whole path ("defaults.repeats",
// "probes[1].task"), which its key alone ("repeats") does not give.
func format(file string, lineOffset int, err error, src []byte) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		line := 0
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		msg := wrongKind(err, src)
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

// wrongKind describes a value of the wrong kind by its path in src (by its
// key when src is nil), or "" for any other error.
func wrongKind(err error, src []byte) string {
	var typ *yaml.TypeError
	var node *yaml.UnexpectedNodeTypeError
	var overflow *yaml.OverflowError
	name := func(tk *token.Token) string {
		own := field(tk)
		if p := pathAt(src, tk); p != "" {
			own = fmt.Sprintf("field %q ", p)
		}
		if anchor, uses := anchorAt(src, tk); len(uses) > 0 {
			// The decoder cannot say which of them it was decoding.
			return fmt.Sprintf("%s, or where its anchor &%s is used (%s), ", strings.TrimSuffix(own, " "), anchor, strings.Join(uses, "; "))
		}
		return own
	}
	switch {
	case errors.As(err, &typ):
		return name(typ.Token) + fmt.Sprintf("is %s, expected %s", sourceKind(typ.SrcType), expected(typ.DstType))
	case errors.As(err, &node):
		return name(node.Token) + fmt.Sprintf("is %s, expected %s", nodeKind(node.Actual), nodeKind(node.Expected))
	case errors.As(err, &overflow):
		return name(overflow.Token) + fmt.Sprintf("is %s, too large for %s", overflow.SrcNum, expected(overflow.DstType))
	}
	return ""
}

// pathAt is the path ("defaults.repeats", "probes[1].task") of the value
// that starts at tk in src, or "" when src is nil, does not parse, or has
// no such value below its top. The outermost node starting there is the
// value: a block mapping starts where its first key's pair does.
func pathAt(src []byte, tk *token.Token) string {
	if src == nil || tk == nil || tk.Position == nil {
		return ""
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return ""
	}
	at := func(n ast.Node) bool {
		p := n.GetToken().Position
		return p != nil && p.Line == tk.Position.Line && p.Column == tk.Position.Column
	}
	for _, doc := range f.Docs {
		var found ast.Node
		ast.Walk(visitFunc(func(n ast.Node) bool {
			if found == nil && n.GetToken() != nil && at(n) {
				found = n
			}
			return found == nil
		}), doc.Body)
		if found != nil {
			// A merge key's mapping ("<<: {keep: 1}") fills the mapping
			// it is in: its fields are that mapping's.
			p := strings.ReplaceAll(found.GetPath(), ".<<.", ".")
			return strings.TrimPrefix(strings.TrimPrefix(p, "$"), ".")
		}
	}
	return ""
}

// anchorAt is the anchor whose value starts at tk ("setup" of &setup),
// and where its aliases (*setup) use it, each with its line
// ("probes[1].task, line 7"): the decoder's token for a value reached
// through an alias is its anchor's, so the fault may lie at any of them.
// Only the aliases up to the next anchor of the same name are its. No
// uses when no anchor's value starts at tk.
func anchorAt(src []byte, tk *token.Token) (anchor string, uses []string) {
	if src == nil || tk == nil || tk.Position == nil {
		return "", nil
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return "", nil
	}
	for _, doc := range f.Docs {
		active := false
		ast.Walk(visitFunc(func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AnchorNode:
				if n.Name == nil || n.Value == nil {
					break
				}
				p := n.Value.GetToken().Position
				here := p != nil && p.Line == tk.Position.Line && p.Column == tk.Position.Column
				switch {
				case here:
					anchor, active = n.Name.GetToken().Value, true
				case active && n.Name.GetToken().Value == anchor:
					active = false // the name anchors another value now
				}
			case *ast.AliasNode:
				if active && n.Value != nil && n.Value.GetToken().Value == anchor {
					path := strings.TrimPrefix(strings.TrimPrefix(strings.ReplaceAll(n.GetPath(), ".<<.", "."), "$"), ".")
					uses = append(uses, fmt.Sprintf("%s, line %d", path, n.GetToken().Position.Line))
				}
			}
			return true
		}), doc.Body)
		if anchor != "" {
			return anchor, uses
		}
	}
	return "", nil
}

// visitFunc is an ast.Visitor from a function that says whether to go on.
type visitFunc func(ast.Node) bool

func (v visitFunc) Visit(n ast.Node) ast.Visitor {
	if n == nil || !v(n) {
		return nil
	}
	return v
}

// field is `field "KEY" ` for the key the value at tk belongs to ("task"
// in "- task: [x]"), or "the value " when tk is not a key's value.
func field(tk *token.Token) string {
	// An element of a list: named by its index ("probes[0]"), which the
	// key alone would not say.
	if tk != nil && tk.Prev != nil {
		var key string
		var i int
		var ok bool
		switch tk.Prev.Type {
		case token.SequenceStartType, token.CollectEntryType:
			key, i, ok = flowElement(tk)
		case token.SequenceEntryType:
			key, i, ok = blockElement(tk.Prev)
		}
		if ok {
			return fmt.Sprintf("field %q ", fmt.Sprintf("%s[%d]", key, i))
		}
	}
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

// flowElement is the key of the flow list ("key: [a, b]") whose element
// starts at tk, and the element's index; not ok for a list inside another
// collection.
func flowElement(tk *token.Token) (key string, index int, ok bool) {
	p := tk.Prev
	for ; p != nil && p.Type != token.SequenceStartType; p = p.Prev {
		switch p.Type {
		case token.CollectEntryType:
			index++
		case token.SequenceEndType, token.MappingStartType, token.MappingEndType:
			return "", 0, false
		}
	}
	if p == nil || p.Prev == nil || p.Prev.Type != token.MappingValueType || p.Prev.Prev == nil {
		return "", 0, false
	}
	return p.Prev.Prev.Value, index, true
}

// blockElement is the key of the block list whose element starts at the
// entry dash, and the element's index: the dashes of its column before it,
// back to the key left of that column.
func blockElement(dash *token.Token) (key string, index int, ok bool) {
	if dash.Position == nil {
		return "", 0, false
	}
	col := dash.Position.Column
	for p := dash.Prev; p != nil; p = p.Prev {
		if p.Position == nil {
			return "", 0, false
		}
		switch {
		case p.Type == token.SequenceEntryType && p.Position.Column == col:
			index++
		case p.Type == token.MappingValueType && p.Prev != nil && p.Prev.Position != nil && p.Prev.Position.Column < col:
			return p.Prev.Value, index, true
		case p.Position.Column < col && p.Type != token.MappingValueType:
			// Left of the list's column and not its key's ":" (met first,
			// walking back): the list is no key's value.
			return "", 0, false
		}
	}
	return "", 0, false
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
