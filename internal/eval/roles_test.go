package eval

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// scriptedCaller answers cold calls from a list, in order, and keeps the
// prompts it was given.
type scriptedCaller struct {
	answers []string // JSON, or "" for a failed call
	prompts []string
	schemas []string
}

func (s *scriptedCaller) Structured(_ context.Context, prompt, schema, _ string) (claude.Turn, error) {
	s.prompts = append(s.prompts, prompt)
	s.schemas = append(s.schemas, schema)
	if len(s.answers) == 0 {
		return claude.Turn{}, errors.New("no answer left")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	t := claude.Turn{CostUSD: 0.01}
	if a == "" {
		return t, errors.New("the call failed")
	}
	t.StructuredOutput = json.RawMessage(a)
	return t, nil
}

func testCase() *cases.Case {
	c := &cases.Case{ID: "a", Prompt: "Should we reorder widgets?"}
	c.Key = map[string]json.RawMessage{"correct": json.RawMessage(`["REORDER"]`), "facts": json.RawMessage(`[{"claim":"12 left"}]`)}
	return c
}

var testMeasures = []cases.Measure{
	{ID: "M1", Name: "Right decision", Question: "Is the ruling right?", Uses: []string{"correct"}},
	{ID: "M2", Name: "True facts", Question: "Do the facts match?", Uses: []string{"facts"}},
	{ID: "M3", Name: "Alternatives", Question: "Is each alternative valid?", Uses: []string{"alternatives"}},
}

const testMessage = "REORDER widgets. data/stock.csv lists 12 against a reorder point of 20.\nShall I order 20?"

func TestGraderQuotes(t *testing.T) {
	notes := &Notes{Decision: "Reorder: order 20.", FollowUps: []string{}}
	for _, c := range []struct {
		name    string
		answers []string
		want    map[string]string // measure → result
		calls   int
	}{
		{"verbatim quotes", []string{`{"grades":[{"id":"M1","result":"pass","quote":"REORDER widgets"},{"id":"M2","result":"pass","quote":"lists 12 against a reorder point of 20. Shall I"}]}`},
			map[string]string{"M1": "pass", "M2": "pass", "M3": "n/a"}, 1},
		{"a quote from the reader's notes", []string{`{"grades":[{"id":"M1","result":"pass","quote":"\"Reorder: order 20.\""},{"id":"M2","result":"fail","quote":"lists 12"}]}`},
			map[string]string{"M1": "pass", "M2": "fail", "M3": "n/a"}, 1},
		{"an invented quote, fixed on the retry", []string{
			`{"grades":[{"id":"M1","result":"pass","quote":"the ruling is REORDER"},{"id":"M2","result":"pass","quote":"lists 12"}]}`,
			`{"grades":[{"id":"M1","result":"pass","quote":"REORDER widgets"},{"id":"M2","result":"fail","quote":"lists 12"}]}`},
			map[string]string{"M1": "pass", "M2": "pass", "M3": "n/a"}, 2},
		{"an invented quote twice: a grade error, never a verdict", []string{
			`{"grades":[{"id":"M1","result":"fail","quote":"it says HOLD"},{"id":"M2","result":"pass","quote":"lists 12"}]}`,
			`{"grades":[{"id":"M1","result":"fail","quote":"it says HOLD"},{"id":"M2","result":"pass","quote":"lists 12"}]}`},
			map[string]string{"M1": "error", "M2": "pass", "M3": "n/a"}, 2},
		{"a measure left out, then given", []string{
			`{"grades":[{"id":"M2","result":"pass","quote":"lists 12"}]}`,
			`{"grades":[{"id":"M1","result":"pass","quote":"REORDER widgets"}]}`},
			map[string]string{"M1": "pass", "M2": "pass", "M3": "n/a"}, 2},
		// The key applies M1: an n/a left it out of both sides' scores
		// without a trace (a candidate's failing M1 grades hidden so was
		// accepted).
		{"n/a for a measure the key applies, twice: a grade error", []string{
			`{"grades":[{"id":"M1","result":"n/a","quote":""},{"id":"M2","result":"pass","quote":"lists 12"}]}`,
			`{"grades":[{"id":"M1","result":"n/a","quote":""},{"id":"M2","result":"pass","quote":"lists 12"}]}`},
			map[string]string{"M1": "error", "M2": "pass", "M3": "n/a"}, 2},
		// "?" or "e" is in nearly every reply: it proves no grade.
		{"a quote too short, twice: a grade error", []string{
			`{"grades":[{"id":"M1","result":"pass","quote":"REORDER widgets"},{"id":"M2","result":"pass","quote":"?"}]}`,
			`{"grades":[{"id":"M1","result":"pass","quote":"REORDER widgets"},{"id":"M2","result":"pass","quote":" e? "}]}`},
			map[string]string{"M1": "pass", "M2": "error", "M3": "n/a"}, 2},
		{"no answer that parses", []string{`{"grades":[{"id":"M1","result":"pass","quote":"x","extra":1}]}`, ""},
			map[string]string{"M1": "error", "M2": "error", "M3": "n/a"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := &scriptedCaller{answers: c.answers}
			g := &grader{caller: sc, model: "m", goal: "I rule without asking back.", measures: testMeasures}
			grades, cost := g.grade(context.Background(), testCase(), testMessage, notes)
			for _, gr := range grades {
				if gr.Result != c.want[gr.Measure] {
					t.Errorf("%s: %s (%s), want %s", gr.Measure, gr.Result, gr.Error, c.want[gr.Measure])
				}
				if gr.Result == ResultError && gr.Error == "" {
					t.Errorf("%s: a grade error without its reason", gr.Measure)
				}
			}
			if len(sc.prompts) != c.calls || cost != 0.01*float64(c.calls) {
				t.Errorf("%d calls costing %v, want %d", len(sc.prompts), cost, c.calls)
			}
			p := sc.prompts[0]
			// The grader sees each measure with the key fields it uses, and
			// no measure the case's key cannot grade.
			if !strings.Contains(p, `"correct": [`) || strings.Contains(p, "M3 (") || !strings.Contains(p, testMessage) || !strings.Contains(p, "Reorder: order 20.") {
				t.Errorf("grader prompt:\n%s", p)
			}
			if c.calls > 1 && !strings.Contains(sc.prompts[1], "YOUR LAST ANSWER WAS NOT USABLE") {
				t.Errorf("the retry does not say why:\n%s", sc.prompts[1])
			}
			if !strings.Contains(sc.schemas[0], `"title":"grades"`) {
				t.Errorf("schema %s", sc.schemas[0])
			}
		})
	}
}

// A measure that uses no key field applies to every case, as a keyed one
// applies where the key has its fields: the grader answers pass or fail
// (its schema offers nothing else), and an n/a is asked again, then a
// grade error. Accepted, an n/a left the measure out of both sides'
// scores without a trace: a grader that could not quote a missing fact
// hid a drop so (the review's TestRVNAHidesADrop: accepted, exit 0).
func TestGraderNAForAMeasureWithoutKeyFields(t *testing.T) {
	measures := append(append([]cases.Measure{}, testMeasures...), cases.Measure{ID: "M4", Name: "Answerable close", Question: "Does the reply end with a question answerable from the reply alone?"})
	na := `{"grades":[{"id":"M1","result":"pass","quote":"REORDER widgets"},{"id":"M2","result":"pass","quote":"lists 12"},{"id":"M4","result":"n/a","quote":""}]}`
	sc := &scriptedCaller{answers: []string{na, na}}
	g := &grader{caller: sc, model: "m", goal: "I rule without asking back.", measures: measures}
	grades, _ := g.grade(context.Background(), testCase(), testMessage, &Notes{FollowUps: []string{}})
	want := map[string]string{"M1": "pass", "M2": "pass", "M3": "n/a", "M4": "error"}
	for _, gr := range grades {
		if gr.Result != want[gr.Measure] {
			t.Errorf("%s: %s (%s), want %s", gr.Measure, gr.Result, gr.Error, want[gr.Measure])
		}
	}
	if len(sc.prompts) != 2 || !strings.Contains(sc.prompts[1], "M4: n/a, but the measure applies to this request: answer pass or fail") {
		t.Errorf("%d calls; the retry does not say why", len(sc.prompts))
	}
	if strings.Contains(GraderSchema, "n/a") || strings.Contains(sc.prompts[0], "n/a") {
		t.Error("the grader is still offered n/a")
	}
}

func TestReader(t *testing.T) {
	sc := &scriptedCaller{answers: []string{`{"decision":"x"}`, `{"decision":"Reorder","rebuild":"r","follow_ups":null,"close_answer":"Yes"}`}}
	r := &reader{caller: sc, model: "m"}
	n, cost, err := r.read(context.Background(), "Should we reorder?", testMessage)
	if err != nil {
		// The first answer lacks fields but parses: it is taken.
		t.Fatal(err)
	}
	if n.Decision != "x" || n.FollowUps == nil || cost != 0.01 {
		t.Errorf("notes %+v cost %v", n, cost)
	}
	// The reader sees the prompt and the message, nothing of a key.
	if p := sc.prompts[0]; !strings.Contains(p, "Should we reorder?") || !strings.Contains(p, testMessage) || strings.Contains(p, "correct") {
		t.Errorf("reader prompt:\n%s", p)
	}
	sc = &scriptedCaller{answers: []string{`{"decision":"x","mood":"?"}`, ""}}
	r.caller = sc
	if _, cost, err := r.read(context.Background(), "p", "m"); err == nil || cost != 0.02 || len(sc.prompts) != 2 {
		t.Errorf("an unknown field, then a failed call: err %v, cost %v, %d calls", err, cost, len(sc.prompts))
	}
}

func TestQuoted(t *testing.T) {
	text := "REORDER widgets.\n  data/stock.csv lists 12."
	for q, want := range map[string]bool{
		"REORDER widgets. data/stock.csv": true, `"lists 12."`: true, "“REORDER widgets.”": true,
		"reorder widgets": false, "": false, `""`: false, "lists 13": false,
	} {
		if got := quoted(text, q); got != want {
			t.Errorf("quoted(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestCompatible(t *testing.T) {
	set := &cases.Set{Goal: "g", Measures: testMeasures, Cases: []*cases.Case{{ID: "a", Hash: "h-a"}, {ID: "b", Hash: "h-b2"}, {ID: "new", Hash: "h-n"}}}
	b := &Baseline{Manifest: Manifest{Name: "v1", MeasuresHash: MeasuresHash(set), Cases: map[string]string{"a": "h-a", "b": "h-b", "gone": "h-g"},
		Model: "claude-sonnet-5-5", Effort: "medium", ReaderModel: "r", GraderModel: "g", Tools: []string{"Read"}, Deliver: "system-prompt",
		Claude: "2.1.328", ReaderPrompt: ReaderPromptVersion, GraderPrompt: GraderPromptVersion}}
	cfg := Config{Model: "claude-opus-5-5", Effort: "medium", ReaderModel: "r", GraderModel: "g2", Tools: []string{"Read"}, Deliver: "system-prompt"}
	err := b.Compatible(set, cfg, "claude", "claude", Versions{Claude: "2.1.400"}, "", false)
	if err == nil {
		t.Fatal("compatible, expected the changes named")
	}
	for _, want := range []string{"case b changed", "case new is new", "case gone is gone", "the generator model is claude-opus-5-5, the baseline's claude-sonnet-5-5",
		"the grader model is g2, the baseline's g", "claude is 2.1.400, the baseline's 2.1.328"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nlacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "reader model") || strings.Contains(err.Error(), "effort") {
		t.Errorf("names what did not change: %v", err)
	}
	// A grid changes the generator's model on purpose.
	if err := b.Compatible(set, cfg, "claude", "claude", Versions{Claude: "2.1.328"}, "", true); err == nil || strings.Contains(err.Error(), "generator model") {
		t.Errorf("grid: %v", err)
	}
	// Holdout cases are counted, never named (an editing agent may read
	// stderr): one changed, one new, one gone.
	hb := *b
	hb.Cases = map[string]string{"a": "h-a", "b": "h-b", "hold-x": "h-x", "hold-gone": "h-g"}
	hb.Holdout = []string{"hold-x", "hold-gone"}
	hset := &cases.Set{Goal: "g", Measures: testMeasures, Cases: []*cases.Case{{ID: "a", Hash: "h-a"}, {ID: "b", Hash: "h-b"}},
		Holdout: []*cases.Case{{ID: "hold-x", Hash: "h-x2", Holdout: true}, {ID: "hold-new", Hash: "h-n", Holdout: true}}}
	hcfg := cfg
	hcfg.Model, hcfg.GraderModel = "claude-sonnet-5-5", "g"
	herr := hb.Compatible(hset, hcfg, "claude", "claude", Versions{Claude: "2.1.328"}, "", false)
	for _, want := range []string{"1 holdout case new", "1 holdout case changed", "1 holdout case gone"} {
		if herr == nil || !strings.Contains(herr.Error(), want) {
			t.Errorf("holdout changes: %v\nlacks %q", herr, want)
		}
	}
	if herr != nil && strings.Contains(herr.Error(), "hold-") {
		t.Errorf("a holdout case is named: %v", herr)
	}
	set.Cases = []*cases.Case{{ID: "a", Hash: "h-a"}, {ID: "b", Hash: "h-b"}, {ID: "gone", Hash: "h-g"}}
	cfg.Model, cfg.GraderModel = "claude-sonnet-5-5", "g"
	if err := b.Compatible(set, cfg, "claude", "claude", Versions{Claude: "2.1.328"}, "", false); err != nil {
		t.Errorf("the same case set and settings: %v", err)
	}
	// Where the generator ran: a baseline made in the jail with a key is
	// not the candidate's run without a jail on the author's login (a
	// baseline that predates the field is compared on the rest).
	jailed := *b
	jailed.Environment = Environment("bubblewrap", true)
	if err := jailed.Compatible(set, cfg, "claude", "claude", Versions{Claude: "2.1.328"}, Environment("none", false), false); err == nil || !strings.Contains(err.Error(), "the environment is jail none") {
		t.Errorf("another environment: %v", err)
	}
	if err := jailed.Compatible(set, cfg, "claude", "claude", Versions{Claude: "2.1.328"}, Environment("bubblewrap", true), false); err != nil {
		t.Errorf("the same environment: %v", err)
	}
	set.Measures = testMeasures[:2]
	if err := b.Compatible(set, cfg, "claude", "claude", Versions{Claude: "2.1.328"}, "", false); err == nil || !strings.Contains(err.Error(), "measures changed") {
		t.Errorf("a measure dropped: %v", err)
	}
}

func TestGeneratorArgs(t *testing.T) {
	got := strings.Join(claude.GeneratorArgs("p", "sonnet", "high", []string{"Read", "Grep"}, "/x/SKILL.md"), " ")
	want := "-p p --output-format stream-json --verbose --setting-sources project --strict-mcp-config --no-session-persistence --tools Read Grep --allowedTools Read Grep --append-system-prompt-file /x/SKILL.md --model sonnet --effort high"
	if got != want {
		t.Errorf("argv\n%s\nwant\n%s", got, want)
	}
}

// A cell with an M1 error, an M2 n/a and an M3 pass printed "1/1
// measures passed", read as a clean cell: the progress line names its
// grade errors.
func TestProgressLineNamesGradeErrors(t *testing.T) {
	rec := &Record{Runs: []RunInfo{{Label: "candidate"}}}
	c := &Cell{Case: "hinges", Status: CellOK, Words: 42, Grades: []Grade{{Measure: "M1", Result: ResultError}, {Measure: "M2", Result: ResultNA}, {Measure: "M3", Result: ResultPass}}}
	if got := progressLine(rec, job{repeat: 1}, c); !strings.Contains(got, "1/1 measures passed, 1 grade error, 42 words") {
		t.Errorf("progress line %q", got)
	}
	c.Grades[0].Result = ResultFail
	if got := progressLine(rec, job{repeat: 1}, c); !strings.Contains(got, "1/2 measures passed, 42 words") {
		t.Errorf("progress line %q", got)
	}
}

// A misspelt `cases:` in vibe-test.yaml read as no field at all: the
// message names the field that is there.
func TestFindCasesNamesAMisspeltField(t *testing.T) {
	for _, c := range []struct {
		yaml, want string
	}{
		{"casez: ../cases\n", "has no `cases:` field, but a `casez:` field; expected `cases: ../cases`"},
		{"Cases: ../cases\n", "has no `cases:` field, but a `Cases:` field"},
		{"case: ../cases\n", "has no `cases:` field, but a `case:` field"},
		{"fixture: ./f\n", "has no `cases:` field; add `cases: ../cases`"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "vibe-test.yaml"), []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := FindCases("", &skill.Skill{Dir: dir})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}
