package rubric

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// fakeCaller answers each structured call with the next answer or error and
// records what it was asked.
type fakeCaller struct {
	answers []string
	errs    []error
	prompts []string
	schemas []string
	models  []string
}

func (f *fakeCaller) Structured(_ context.Context, prompt, schema, model string) (claude.Turn, error) {
	f.prompts = append(f.prompts, prompt)
	f.schemas = append(f.schemas, schema)
	f.models = append(f.models, model)
	i := len(f.prompts) - 1
	turn := claude.Turn{CostUSD: 0.01, OutputTokens: 5, LastUsage: claude.Usage{Input: 10, CacheCreation: 20, CacheRead: 30}}
	if i < len(f.errs) && f.errs[i] != nil {
		return turn, f.errs[i]
	}
	if i >= len(f.answers) {
		return turn, errors.New("fakeCaller: no answer scripted for this call")
	}
	turn.StructuredOutput = json.RawMessage(f.answers[i])
	return turn, nil
}

const goodRubric = `{"criteria":[
 {"id":"runs-census","text":"runs scripts/census.sh with Bash","kind":"must","check":{"tool":"Bash","pattern":"census\\.sh","expect":"present"}},
 {"id":"reads-ledger","text":"reads ledger.csv","kind":"must"},
 {"id":"no-edit-ledger","text":"never edits ledger.csv","kind":"must","check":{"tool":"Edit|Write","pattern":"ledger\\.csv","expect":"absent"}},
 {"id":"reports-total","text":"prints the total","kind":"should"},
 {"id":"uses-skill","text":"invokes the skill","kind":"should","check":{"tool":"Skill","pattern":"stock-ledger","expect":"present"}}
]}`

func testSkill(t *testing.T, body string) *skill.Skill {
	t.Helper()
	s, err := skill.Parse("SKILL.md", []byte("---\nname: stock-ledger\ndescription: Counts the stock.\n---\n"+body+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	s.Hash = "sha256:" + body // Parse alone leaves the folder hash empty
	return s
}

// criteria builds a rubric JSON with n criteria of the given kind.
func criteria(n int, kind string) string {
	var cs []string
	for i := 0; i < n; i++ {
		cs = append(cs, `{"id":"c`+string(rune('a'+i))+`","text":"does thing","kind":"`+kind+`"}`)
	}
	return `{"criteria":[` + strings.Join(cs, ",") + `]}`
}

func TestParseValid(t *testing.T) {
	r, err := Parse([]byte(goodRubric))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Criteria) != 5 || r.Criteria[0].Check == nil || r.Criteria[1].Check != nil {
		t.Fatalf("criteria %+v", r.Criteria)
	}
	if c, ok := r.ByID("no-edit-ledger"); !ok || c.Kind != Must || c.Check.Expect != "absent" {
		t.Errorf("ByID: %+v %v", c, ok)
	}
	if _, ok := r.ByID("missing"); ok {
		t.Error("ByID found an id that is not there")
	}
	var nilRubric *Rubric
	if _, ok := nilRubric.ByID("x"); ok {
		t.Error("a nil rubric has no criteria")
	}
}

func TestValidateErrors(t *testing.T) {
	sixth := func(c string) string { return strings.Replace(goodRubric, "\n]}", ",\n "+c+"\n]}", 1) }
	cases := []struct {
		name, doc, want string
	}{
		{"not JSON", `{"criteria":`, "not a rubric"},
		{"unknown field", `{"criteria":[],"extra":1}`, "not a rubric"},
		{"too few", criteria(4, "must"), "criteria: 4 given, expected 5 to 8"},
		{"too many", criteria(9, "must"), "criteria: 9 given, expected 5 to 8"},
		{"no must", criteria(5, "should"), `none is "must"`},
		{"bad id", sixth(`{"id":"Bad Id","text":"t","kind":"must"}`), `criteria[5].id: "Bad Id", expected lowercase`},
		{"repeated id", sixth(`{"id":"reads-ledger","text":"t","kind":"must"}`), `criteria[5].id: "reads-ledger" repeats`},
		{"empty text", sixth(`{"id":"x","text":"  ","kind":"must"}`), "criteria[5].text: empty"},
		{"bad kind", sixth(`{"id":"x","text":"t","kind":"may"}`), `criteria[5].kind: "may", expected "must" or "should"`},
		{"empty tool", sixth(`{"id":"x","text":"t","kind":"must","check":{"tool":"","pattern":"a","expect":"present"}}`), "criteria[5].check: tool"},
		{"bad tool regexp", sixth(`{"id":"x","text":"t","kind":"must","check":{"tool":"(","pattern":"a","expect":"present"}}`), "criteria[5].check: tool"},
		{"bad pattern", sixth(`{"id":"x","text":"t","kind":"must","check":{"tool":"Bash","pattern":"[","expect":"present"}}`), "criteria[5].check: pattern"},
		{"bad expect", sixth(`{"id":"x","text":"t","kind":"must","check":{"tool":"Bash","pattern":"a","expect":"maybe"}}`), `criteria[5].check: expect: "maybe"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
	// The bounds themselves are valid.
	for _, n := range []int{5, 8} {
		if _, err := Parse([]byte(criteria(n, "must"))); err != nil {
			t.Errorf("%d criteria: %v", n, err)
		}
	}
}

func TestCheckRun(t *testing.T) {
	calls := []Call{
		{Name: "Read", Input: `{"file_path":"ledger.csv"}`},
		{Name: "Bash", Input: `{"command":"bash scripts/census.sh"}`},
		{Name: "Write", Input: `{"file_path":"out.txt","content":"x"}`},
	}
	cases := []struct {
		check Check
		pass  bool
		call  int
	}{
		{Check{Tool: "Bash", Pattern: `census\.sh`, Expect: "present"}, true, 2},
		{Check{Tool: "Bash", Pattern: `health\.py`, Expect: "present"}, false, 0},
		{Check{Tool: "Edit|Write", Pattern: `ledger\.csv`, Expect: "absent"}, true, 0},
		{Check{Tool: "Edit|Write", Pattern: `out\.txt`, Expect: "absent"}, false, 3},
		// The tool expression matches the whole name: "Rea" is not "Read".
		{Check{Tool: "Rea", Pattern: `.`, Expect: "present"}, false, 0},
	}
	for _, tc := range cases {
		got, err := tc.check.Run(calls)
		if err != nil {
			t.Fatal(err)
		}
		if got.Pass != tc.pass || got.Call != tc.call || got.Evidence == "" {
			t.Errorf("%+v: got %+v, want pass %v call %d", tc.check, got, tc.pass, tc.call)
		}
	}
	if _, err := (&Check{Tool: "Bash", Pattern: "(", Expect: "present"}).Run(calls); err == nil {
		t.Error("a check that does not compile must be an error")
	}
}

func TestCacheKey(t *testing.T) {
	a := testSkill(t, "Run the census.")
	base := CacheKey(a, "claude-opus-5-5", "")
	if len(base) != 32 || strings.Trim(base, "0123456789abcdef") != "" {
		t.Fatalf("key %q is not 32 hex digits", base)
	}
	if CacheKey(testSkill(t, "Run the census."), "claude-opus-5-5", "") != base {
		t.Error("the same skill and model must give the same key")
	}
	if CacheKey(a, "claude-sonnet-5-5", "") == base {
		t.Error("another model must give another key")
	}
	if CacheKey(testSkill(t, "Run the census twice."), "claude-opus-5-5", "") == base {
		t.Error("another skill content must give another key")
	}
}

func TestExtractValidatesAndCaches(t *testing.T) {
	dir := t.TempDir()
	s := testSkill(t, "Run scripts/census.sh, never edit ledger.csv.")
	f := &fakeCaller{answers: []string{goodRubric}}
	r, u, err := Extract(context.Background(), f, s, "claude-opus-5-5", Cache{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r.Source != "extracted" || r.Model != "claude-opus-5-5" || len(r.Criteria) != 5 {
		t.Fatalf("rubric %+v", r)
	}
	if u.Calls != 1 || u.Tokens != 60+5 || u.Cost != 0.01 {
		t.Errorf("usage %+v, want 1 call, 65 tokens, $0.01", u)
	}
	if len(f.prompts) != 1 || f.schemas[0] != Schema || f.models[0] != "claude-opus-5-5" ||
		!strings.Contains(f.prompts[0], "--- INSTRUCTIONS (stock-ledger) ---") || !strings.Contains(f.prompts[0], "never edit ledger.csv") {
		t.Errorf("call: prompt %q schema ok %v model %v", f.prompts, f.schemas[0] == Schema, f.models)
	}
	cached := filepath.Join(dir, CacheKey(s, "claude-opus-5-5", "")+".json")
	if _, err := os.Stat(cached); err != nil {
		t.Fatalf("no cache file: %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	// Second extraction: from the cache, no call.
	r2, u2, err := Extract(context.Background(), f, s, "claude-opus-5-5", Cache{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Source != "cache" || u2.Calls != 0 || len(f.prompts) != 1 {
		t.Errorf("second extract: source %q, %d calls, caller asked %d times", r2.Source, u2.Calls, len(f.prompts))
	}
	// Another model misses the cache.
	f2 := &fakeCaller{answers: []string{goodRubric}}
	if _, u3, err := Extract(context.Background(), f2, s, "claude-sonnet-5-5", Cache{Dir: dir}); err != nil || u3.Calls != 1 {
		t.Errorf("other model: %d calls, %v", u3.Calls, err)
	}
}

func TestExtractIgnoresABadCacheFile(t *testing.T) {
	dir := t.TempDir()
	s := testSkill(t, "Run the census.")
	if err := os.WriteFile(filepath.Join(dir, CacheKey(s, "m", "")+".json"), []byte(criteria(2, "must")), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fakeCaller{answers: []string{goodRubric}}
	r, u, err := Extract(context.Background(), f, s, "m", Cache{Dir: dir})
	if err != nil || r.Source != "extracted" || u.Calls != 1 {
		t.Fatalf("source %v, calls %d, err %v: an invalid cache file must be re-extracted", r, u.Calls, err)
	}
}

func TestExtractRetriesABadAnswer(t *testing.T) {
	s := testSkill(t, "Run the census.")
	// The first answer breaks the contract (4 criteria); the retry is good.
	f := &fakeCaller{answers: []string{criteria(4, "must"), goodRubric}}
	r, u, err := Extract(context.Background(), f, s, "m", Cache{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.prompts) != 2 || u.Calls != 2 || u.Cost != 0.02 || len(r.Criteria) != 5 {
		t.Errorf("calls %d usage %+v criteria %d", len(f.prompts), u, len(r.Criteria))
	}
	// A call error is retried too.
	f = &fakeCaller{errs: []error{errors.New("claude exited 1")}, answers: []string{"", goodRubric}}
	if _, u, err := Extract(context.Background(), f, s, "m", Cache{}); err != nil || u.Calls != 2 {
		t.Errorf("after a call error: %d calls, %v", u.Calls, err)
	}
}

func TestExtractGivesUpAfterTwoBadAnswers(t *testing.T) {
	s := testSkill(t, "Run the census.")
	dir := t.TempDir()
	// No structured output at all (the model never called the tool), then
	// a rubric with no must.
	f := &fakeCaller{answers: []string{"", criteria(5, "should")}}
	r, u, err := Extract(context.Background(), f, s, "m", Cache{Dir: dir})
	if err == nil || r != nil {
		t.Fatalf("rubric %+v, err %v: two bad answers must fail", r, err)
	}
	if !strings.Contains(err.Error(), "failed twice") || !strings.Contains(err.Error(), `none is "must"`) {
		t.Errorf("error %q should say it failed twice and why the last answer was refused", err)
	}
	if u.Calls != 2 || len(f.prompts) != 2 {
		t.Errorf("%d calls, want exactly 2 (one retry)", u.Calls)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("a refused rubric was cached: %v", files)
	}
}

func TestExtractStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakeCaller{errs: []error{context.Canceled, context.Canceled}}
	_, u, err := Extract(ctx, f, testSkill(t, "x"), "m", Cache{})
	if !errors.Is(err, context.Canceled) || u.Calls != 1 {
		t.Fatalf("err %v after %d calls: a cancelled extraction must stop without a retry", err, u.Calls)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "rubric.json")
	if err := os.WriteFile(good, []byte(goodRubric), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Load(good)
	if err != nil || r.Source != good {
		t.Fatalf("Load: %+v %v", r, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json: no such file") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(criteria(3, "must")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": criteria: 3 given") {
		t.Errorf("invalid file: %v (want the path, the field and what was expected)", err)
	}
	// An unknown key is named with its place and the keys expected there
	// ("unknown field \"extra\"" before, no criterion, no list).
	extra := filepath.Join(dir, "extra.json")
	if err := os.WriteFile(extra, []byte(strings.Replace(goodRubric, `"kind"`, `"extra": 1, "kind"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(extra); err == nil || !strings.Contains(err.Error(), extra+":") || !strings.Contains(err.Error(), `field "criteria[0].extra" is unknown, expected one of: id, text, kind, check`) {
		t.Errorf("unknown key: %v", err)
	}
	// Text after the object, or a second rubric back to back, was ignored:
	// the first rubric ran.
	for name, tail := range map[string]string{"trailing.json": " trailing", "twice.json": goodRubric, "brace.json": "}"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(goodRubric+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p+":") || !strings.Contains(err.Error(), "text after the rubric's JSON object") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A refused key (HTTP 401/403) stops extraction at once: no second call, and
// the error says what to do rather than "failed twice" with the CLI's text.
func TestExtractStopsOnRefusedCredentials(t *testing.T) {
	refused := fmt.Errorf("%w (HTTP 401): %s", claude.ErrCredentials, claude.CredentialsAdvice)
	f := &fakeCaller{errs: []error{refused, refused}, answers: []string{"", goodRubric}}
	_, u, err := Extract(context.Background(), f, testSkill(t, "x"), "m", Cache{})
	if !errors.Is(err, claude.ErrCredentials) || u.Calls != 1 {
		t.Fatalf("err %v after %d calls: a refused key must stop without a retry", err, u.Calls)
	}
	if strings.Contains(err.Error(), "twice") || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("message: %q", err)
	}
}

// A FIFO at the cache path is not read (the read blocked until a writer
// came, hanging the run): the rubric is extracted again.
func TestExtractSkipsACacheThatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	s := testSkill(t, "Run the census.")
	if err := syscall.Mkfifo(filepath.Join(dir, CacheKey(s, "m", "")+".json"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := Extract(context.Background(), &fakeCaller{answers: []string{goodRubric}}, s, "m", Cache{Dir: dir})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("extract beside a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("extract hangs on a FIFO at the cache path")
	}
}

// An unnamed model (the CLI's default) is keyed by what the default
// resolves from, and the rubric records the model that wrote it: a
// rubric one default model wrote was reused when the CLI would answer
// with another, and run.json said "model": "" for both.
func TestExtractUnnamedModel(t *testing.T) {
	dir := t.TempDir()
	s := testSkill(t, "Run the census.")
	if CacheKey(s, "", "ANTHROPIC_MODEL=claude-haiku-4-5") == CacheKey(s, "", "ANTHROPIC_MODEL=claude-opus-5-5") {
		t.Fatal("two defaults share a key")
	}
	haiku := &answering{fakeCaller{answers: []string{goodRubric}}, "claude-haiku-4-5"}
	r, u, err := Extract(context.Background(), haiku, s, "", Cache{Dir: dir, Unnamed: "ANTHROPIC_MODEL=claude-haiku-4-5"})
	if err != nil || u.Calls != 1 || r.Model != "claude-haiku-4-5" {
		t.Fatalf("extracted by the default: model %q, %d calls, %v; want claude-haiku-4-5, 1", r.Model, u.Calls, err)
	}
	// The same default: from the cache, with the model that wrote it.
	r, u, err = Extract(context.Background(), haiku, s, "", Cache{Dir: dir, Unnamed: "ANTHROPIC_MODEL=claude-haiku-4-5"})
	if err != nil || u.Calls != 0 || r.Source != "cache" || r.Model != "claude-haiku-4-5" {
		t.Fatalf("the same default again: source %q model %q, %d calls, %v", r.Source, r.Model, u.Calls, err)
	}
	// Another default: extracted again.
	opus := &answering{fakeCaller{answers: []string{goodRubric}}, "claude-opus-5-5"}
	r, u, err = Extract(context.Background(), opus, s, "", Cache{Dir: dir, Unnamed: "ANTHROPIC_MODEL=claude-opus-5-5"})
	if err != nil || u.Calls != 1 || r.Model != "claude-opus-5-5" {
		t.Errorf("another default: model %q, %d calls, %v; want claude-opus-5-5 and a call", r.Model, u.Calls, err)
	}
}

// answering is a fakeCaller whose CLI says it ran model.
type answering struct {
	fakeCaller
	model string
}

func (a *answering) Structured(ctx context.Context, prompt, schema, model string) (claude.Turn, error) {
	t, err := a.fakeCaller.Structured(ctx, prompt, schema, model)
	t.Model, t.AnsweredBy = a.model, []string{a.model}
	return t, err
}
