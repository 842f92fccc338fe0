package fakeclaude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strings"
)

// schema checks the model's StructuredOutput against --json-schema for the
// keywords vibe-test's cold-call schemas use (judge, rubric, plan, eval's
// reader and grader), and refuses any other keyword when it compiles, so
// a schema it cannot check fails loudly rather than passing everything.
//
// Why not jsonschema/v6, which vibe-test itself uses: importing it
// compiles five metaschemas at init, 10 to 14 ms of the stand-in's 20 to 30
// ms of CPU a process, and `make test` starts over 4,000 of them (about 60
// of its CPU-seconds). schema_test.go checks this validator against
// jsonschema/v6 on every one of those schemas.
type schema struct {
	types      []string // "" entries never; empty: any type
	properties map[string]*schema
	required   []string
	closed     bool // additionalProperties: false
	items      *schema
	enum       []any
	minimum    *big.Rat
	minItems   int // -1: none
	maxItems   int // -1: none
	pattern    *regexp.Regexp
}

// checkedKeywords are the keywords schema checks; annotations are those
// that never fail an instance.
var (
	checkedKeywords = []string{"type", "properties", "required", "additionalProperties", "items", "enum", "minimum", "minItems", "maxItems", "pattern"}
	annotations     = []string{"title", "description", "$schema", "$id", "$comment"}
)

func compileSchema(text string) (*schema, error) {
	var doc any
	if err := decodeJSON(text, &doc); err != nil {
		return nil, err
	}
	return compileNode(doc, "")
}

func compileNode(doc any, at string) (*schema, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		if b, ok := doc.(bool); ok && b {
			return &schema{minItems: -1, maxItems: -1}, nil
		}
		return nil, fmt.Errorf("at '%s': a schema must be an object (the stand-in checks no other)", at)
	}
	s := &schema{minItems: -1, maxItems: -1}
	for k, v := range m {
		var err error
		switch k {
		case "type":
			err = s.compileType(v)
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("at '%s/properties': not an object", at)
			}
			s.properties = map[string]*schema{}
			for name, p := range props {
				if s.properties[name], err = compileNode(p, at+"/properties/"+name); err != nil {
					return nil, err
				}
			}
		case "required":
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("at '%s/required': not an array", at)
			}
			for _, r := range list {
				name, ok := r.(string)
				if !ok {
					return nil, fmt.Errorf("at '%s/required': not an array of strings", at)
				}
				s.required = append(s.required, name)
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("at '%s/additionalProperties': the stand-in checks true or false only", at)
			}
			s.closed = !b
		case "items":
			s.items, err = compileNode(v, at+"/items")
		case "enum":
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("at '%s/enum': not an array", at)
			}
			s.enum = list
		case "minimum":
			s.minimum, err = ratOf(v, at+"/minimum")
		case "minItems":
			s.minItems, err = countOf(v, at+"/minItems")
		case "maxItems":
			s.maxItems, err = countOf(v, at+"/maxItems")
		case "pattern":
			p, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("at '%s/pattern': not a string", at)
			}
			s.pattern, err = regexp.Compile(p)
		default:
			if !slices.Contains(annotations, k) {
				return nil, fmt.Errorf("at '%s': keyword %q is not one the stand-in checks (%s)", at, k, strings.Join(checkedKeywords, ", "))
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *schema) compileType(v any) error {
	names := []any{v}
	if list, ok := v.([]any); ok {
		names = list
	}
	for _, n := range names {
		name, ok := n.(string)
		if !ok || !slices.Contains([]string{"object", "array", "string", "integer", "number", "boolean", "null"}, name) {
			return fmt.Errorf("type %v: not a JSON Schema type", n)
		}
		s.types = append(s.types, name)
	}
	return nil
}

func ratOf(v any, at string) (*big.Rat, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("at '%s': not a number", at)
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		return nil, fmt.Errorf("at '%s': not a number", at)
	}
	return r, nil
}

func countOf(v any, at string) (int, error) {
	r, err := ratOf(v, at)
	if err != nil || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() {
		return 0, fmt.Errorf("at '%s': not a non-negative integer", at)
	}
	return int(r.Num().Int64()), nil
}

// validate checks the instance text against s; the error names the first
// place that fails, by its JSON pointer.
func (s *schema) validate(text string) error {
	var v any
	if err := decodeJSON(text, &v); err != nil {
		return err
	}
	return s.check(v, "")
}

func (s *schema) check(v any, at string) error {
	if len(s.types) > 0 && !slices.ContainsFunc(s.types, func(t string) bool { return isType(v, t) }) {
		return fmt.Errorf("at '%s': got %s, want %s", at, typeName(v), strings.Join(s.types, " or "))
	}
	if s.enum != nil && !slices.ContainsFunc(s.enum, func(e any) bool { return equalJSON(e, v) }) {
		return fmt.Errorf("at '%s': value must be one of %s", at, enumText(s.enum))
	}
	switch x := v.(type) {
	case map[string]any:
		for _, name := range s.required {
			if _, ok := x[name]; !ok {
				return fmt.Errorf("at '%s': missing property '%s'", at, name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(x)) {
			p, known := s.properties[name]
			switch {
			case known:
				if err := p.check(x[name], at+"/"+name); err != nil {
					return err
				}
			case s.closed:
				return fmt.Errorf("at '%s': additional property '%s' not allowed", at, name)
			}
		}
	case []any:
		if s.minItems >= 0 && len(x) < s.minItems {
			return fmt.Errorf("at '%s': minItems: got %d, want %d", at, len(x), s.minItems)
		}
		if s.maxItems >= 0 && len(x) > s.maxItems {
			return fmt.Errorf("at '%s': maxItems: got %d, want %d", at, len(x), s.maxItems)
		}
		if s.items != nil {
			for i, item := range x {
				if err := s.items.check(item, fmt.Sprintf("%s/%d", at, i)); err != nil {
					return err
				}
			}
		}
	case string:
		if s.pattern != nil && !s.pattern.MatchString(x) {
			return fmt.Errorf("at '%s': '%s' does not match pattern '%s'", at, x, s.pattern)
		}
	case json.Number:
		if s.minimum != nil {
			if r, ok := new(big.Rat).SetString(x.String()); ok && r.Cmp(s.minimum) < 0 {
				return fmt.Errorf("at '%s': minimum: got %s, want %s", at, x, s.minimum.RatString())
			}
		}
	}
	return nil
}

func isType(v any, t string) bool {
	switch x := v.(type) {
	case map[string]any:
		return t == "object"
	case []any:
		return t == "array"
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case nil:
		return t == "null"
	case json.Number:
		if t == "number" {
			return true
		}
		r, ok := new(big.Rat).SetString(x.String())
		return t == "integer" && ok && r.IsInt() // 7.0 is an integer too
	}
	return false
}

func typeName(v any) string {
	for _, t := range []string{"object", "array", "string", "boolean", "null", "integer", "number"} {
		if isType(v, t) {
			return t
		}
	}
	return "?"
}

func enumText(list []any) string {
	b, _ := json.Marshal(list)
	return string(b)
}

// equalJSON is JSON equality: numbers by value, objects by their members.
func equalJSON(a, b any) bool {
	if x, ok := a.(json.Number); ok {
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, okx := new(big.Rat).SetString(x.String())
		ry, oky := new(big.Rat).SetString(y.String())
		return okx && oky && rx.Cmp(ry) == 0
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, equalJSON)
	}
	return a == b
}

// decodeJSON decodes one JSON value, numbers kept exact, and refuses
// anything after it.
func decodeJSON(text string, v *any) error {
	d := json.NewDecoder(bytes.NewReader([]byte(text)))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return fmt.Errorf("invalid character after top-level value")
	}
	return nil
}
