package jsonerr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type turn struct {
	Turn   int       `json:"turn"`
	Tokens uint      `json:"tokens"`
	Score  float64   `json:"score"`
	Pass   bool      `json:"pass"`
	At     time.Time `json:"at"`
	IDs    [2]int    `json:"ids"`
}

type doc struct {
	Name  string `json:"name"`
	Turns []turn `json:"turns"`
}

func TestFormat(t *testing.T) {
	cases := []struct {
		name, data, want string
		strict           bool
	}{
		{"syntax, its line", "{\n  \"name\": \"a\",\n  oops\n}", `run.json:3: not a record: invalid JSON (invalid character 'o' looking for beginning of object key string)`, false},
		{"cut short", "{\n  \"name\": ", `run.json:2: not a record: invalid JSON (unexpected end of JSON input)`, false},
		{"cut short, strict", "{\n  \"name\": ", `run.json:2: not a record: invalid JSON (unexpected end of JSON input)`, true},
		{"a field's kind", "{\n  \"name\": [1]\n}", `run.json:2: not a record: field "name" is an array, expected a string`, false},
		{"a nested field's kind", "{\"turns\": [\n {\"turn\": 1},\n {\"turn\": \"two\"}]}", `run.json:3: not a record: field "turns.turn" is a string, expected a whole number`, false},
		{"a fraction for a count", "{\"turns\": [{\"turn\": 1.5}]}", `field "turns.turn" is the number 1.5, expected a whole number`, false},
		{"a negative count", "{\"turns\": [{\"tokens\": -3}]}", `field "turns.tokens" is the number -3, expected a whole number of at least 0`, false},
		{"true for a number", "{\"turns\": [{\"score\": true}]}", `field "turns.score" is true or false, expected a number`, false},
		{"a number for true", "{\"turns\": [{\"pass\": 1}]}", `field "turns.pass" is a number, expected true or false`, false},
		{"an object for a list", "{\"turns\": {}}", `field "turns" is an object, expected an array`, false},
		{"a list of the wrong length", "{\"turns\": [{\"ids\": \"x\"}]}", `field "turns.ids" is a string, expected an array of 2`, false},
		{"a time", "{\"turns\": [{\"at\": \"yesterday\"}]}", `run.json:1: not a record: parsing time "yesterday"`, false},
		{"the document itself", "[1, 2]", `run.json:1: not a record: the document is an array, expected an object`, false},
		{"an unknown field, its line", "{\n\"name\": \"a\",\n\"extra\": 1}", `run.json:3: not a record: unknown field "extra"`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Strict: a json.Decoder, as the rubric's reader; else
			// json.Unmarshal, as the run records'. The two report a
			// document cut short differently.
			var d doc
			err := json.Unmarshal([]byte(tc.data), &d)
			if tc.strict {
				dec := json.NewDecoder(bytes.NewReader([]byte(tc.data)))
				dec.DisallowUnknownFields()
				err = dec.Decode(&d)
			}
			if err == nil {
				t.Fatal("no error")
			}
			got := Format("run.json", []byte(tc.data), err, "a record").Error()
			if !strings.Contains(got, tc.want) {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if strings.Contains(got, "\n") || strings.Contains(got, "Go ") || strings.Contains(got, "jsonerr.") {
				t.Errorf("not one line in the file's terms: %q", got)
			}
		})
	}
}

func TestFormatWithoutFile(t *testing.T) {
	data := []byte("{\"name\": 3}")
	var d doc
	err := Format("", data, json.Unmarshal(data, &d), "a rubric")
	if want := `not a rubric: line 1: field "name" is a number, expected a string`; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
}

func TestDuplicateKey(t *testing.T) {
	for _, tc := range []struct {
		data, path string
		line       int
	}{
		{`{"correct": ["A"], "invalid": [], "correct": ["B"]}`, "correct", 1},
		{"{\n  \"a\": {\"x\": 1},\n  \"b\": [{\"id\": 1}, {\"id\": 2,\n \"id\": 3}]\n}", "b[1].id", 4},
		{`{"a": {"x": 1, "y": {"x": 2}}, "z": [[{"k": 1, "k": 2}]]}`, "z[0][0].k", 1},
	} {
		path, line, ok := DuplicateKey([]byte(tc.data))
		if !ok || path != tc.path || line != tc.line {
			t.Errorf("%s: %q line %d (%v), want %q line %d", tc.data, path, line, ok, tc.path, tc.line)
		}
	}
	// A struct's fields are matched without regard to case.
	if path, line, ok := DuplicateField([]byte("{\"criteria\": [],\n\"Criteria\": []}")); !ok || path != "Criteria" || line != 2 {
		t.Errorf("DuplicateField: %q line %d (%v)", path, line, ok)
	}
	if _, _, ok := DuplicateKey([]byte(`{"correct": 1, "Correct": 2}`)); ok {
		t.Error("DuplicateKey: a map's keys differing in case are two keys")
	}
	// The same key in two objects, a key equal to a value, arrays of
	// scalars, and what is not JSON: no duplicate.
	for _, data := range []string{`{"a": {"x": 1}, "b": {"x": 1}}`, `{"a": "a", "b": ["a", "a"]}`, `[1, 1, {"a": 1}, {"a": 2}]`, `{"a": `, `not json`} {
		if path, _, ok := DuplicateKey([]byte(data)); ok {
			t.Errorf("%s: duplicate %q", data, path)
		}
	}
}
