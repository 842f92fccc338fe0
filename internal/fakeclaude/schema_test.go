package fakeclaude

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/rubric"
)

// The stand-in's validator must say what jsonschema/v6 (the library it
// replaced) says of every answer to every schema vibe-test sends: each
// schema's valid answer and thousands of mutations of it (members
// dropped, added, retyped; items added and removed; values swapped for
// others of every JSON type, enum values and pattern misses among them).
func TestSchemaAgreesWithJSONSchema(t *testing.T) {
	criterion := `{"id":"runs-ledger","text":"t","kind":"must","check":{"tool":"Bash","pattern":"ledger","expect":"present"}}`
	for _, c := range []struct{ name, schema, valid string }{
		{"judge", judge.Schema, `{"criteria":[{"id":"a","result":"pass","evidence":"e","call":0},{"id":"b","result":"n/a","evidence":"","call":3}],"escape_hatch":false,"escape_reason":""}`},
		{"rubric", rubric.Schema, `{"criteria":[` + strings.Repeat(criterion+",", 4) + `{"id":"x","text":"t","kind":"should"}]}`},
		{"plan", plan.DraftSchema, `{"base_task":"b","probes":["a","b","c"]}`},
		{"reader", eval.ReaderSchema, `{"decision":"d","rebuild":"r","follow_ups":["f"],"close_answer":"c"}`},
		{"grader", eval.GraderSchema, `{"grades":[{"id":"a","result":"fail","quote":"q"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ours, err := compileSchema(c.schema)
			if err != nil {
				t.Fatal(err)
			}
			theirs := libraryValidator(t, c.schema)
			var doc any
			if err := json.Unmarshal([]byte(c.valid), &doc); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(c.name))))
			valid, invalid := 0, 0
			for i := range 3000 {
				inst := doc
				for range 1 + i%3 {
					inst = mutate(rng, inst)
				}
				if i == 0 {
					inst = doc
				}
				b, _ := json.Marshal(inst)
				mine, lib := ours.validate(string(b)), theirs(string(b))
				if (mine == nil) != (lib == nil) {
					t.Fatalf("%s\nstand-in: %v\njsonschema/v6: %v", b, mine, lib)
				}
				if mine == nil {
					valid++
				} else {
					invalid++
				}
			}
			// Both kinds were tried, or the agreement proves little.
			if valid < 100 || invalid < 1000 {
				t.Errorf("%d valid and %d invalid answers", valid, invalid)
			}
		})
	}
	// Text that is not one JSON value.
	ours, _ := compileSchema(plan.DraftSchema)
	for _, s := range []string{``, `{`, `{"base_task":"b","probes":["a","b","c"]} x`, `{"base_task":"b","probes":["a","b","c"]}{}`} {
		if ours.validate(s) == nil {
			t.Errorf("%q: valid", s)
		}
	}
}

// A keyword the stand-in does not check makes --json-schema an error, as
// the library would have checked it: never a schema that passes anything.
func TestSchemaRefusesUncheckedKeywords(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string","maxLength":3}}}`,
		`{"anyOf":[{"type":"string"}]}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"thing"}`,
		`[]`,
	} {
		if _, err := compileSchema(s); err == nil {
			t.Errorf("%s: compiled", s)
		}
	}
	if _, err := compileSchema(`{"title":"t","description":"d","type":["string","null"]}`); err != nil {
		t.Error(err)
	}
}

func libraryValidator(t *testing.T, schema string) func(string) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return func(text string) error {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			return err
		}
		return s.Validate(v)
	}
}

// replacements are the values a mutation puts in place of another: every
// JSON type, integers and not, the enums' values and a pattern's miss.
var replacements = []any{nil, true, false, 0.0, 1.0, -1.0, 1.5, 7.0, 1e9, "", "x", "pass", "fail", "n/a", "must",
	"should", "present", "absent", "Bad ID", "runs-ledger", []any{}, []any{"a"}, map[string]any{}}

// mutate returns a copy of v with one change somewhere in it.
func mutate(rng *rand.Rand, v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		keys := make([]string, 0, len(x))
		for k, w := range x {
			m[k] = w
			keys = append(keys, k)
		}
		if len(keys) == 0 || rng.IntN(5) == 0 {
			m[fmt.Sprintf("extra%d", rng.IntN(2))] = replacements[rng.IntN(len(replacements))]
			return m
		}
		slices.Sort(keys)
		k := keys[rng.IntN(len(keys))]
		switch rng.IntN(4) {
		case 0:
			delete(m, k)
		case 1:
			m[k] = replacements[rng.IntN(len(replacements))]
		default:
			m[k] = mutate(rng, x[k])
		}
		return m
	case []any:
		a := append([]any(nil), x...)
		switch {
		case len(a) > 0 && rng.IntN(4) == 0:
			i := rng.IntN(len(a))
			return append(a[:i], a[i+1:]...)
		case len(a) > 0 && rng.IntN(3) == 0:
			return append(a, a[rng.IntN(len(a))])
		case len(a) > 0:
			i := rng.IntN(len(a))
			a[i] = mutate(rng, a[i])
			return a
		default:
			return append(a, replacements[rng.IntN(len(replacements))])
		}
	}
	if rng.IntN(3) == 0 {
		return v // unchanged: the answer may stay valid
	}
	return replacements[rng.IntN(len(replacements))]
}
