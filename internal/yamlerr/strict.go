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
)

// Strict decodes src into dst (a pointer), refusing keys dst has no field
// for, and formats an error as Format does. An unknown key also says what
// was expected there: the keys of the mapping it sits in ("unknown field
// "conversation", expected one of: base_task, probes, ..."), found by
// walking dst's type along the document to that mapping.
func Strict(file string, src []byte, dst any) error {
	err := yaml.UnmarshalWithOptions(src, dst, yaml.Strict())
	if err == nil {
		return nil
	}
	var unknown *yaml.UnknownFieldError
	if errors.As(err, &unknown) && unknown.Token != nil && unknown.Token.Position != nil {
		if keys := expectedKeys(src, unknown.Token.Position, reflect.TypeOf(dst)); len(keys) > 0 {
			return fmt.Errorf("%s:%d: %s, expected one of: %s", file, unknown.Token.Position.Line, oneLine(unknown.Message), strings.Join(keys, ", "))
		}
	}
	return Format(file, 0, err)
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
