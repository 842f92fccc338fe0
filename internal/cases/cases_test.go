package cases

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// write makes files (path → content) under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const goodSet = `goal: After one message, I make the correct ruling without a follow-up question.
measures:
  - id: M1
    name: Right decision
    question: Is the recommendation one of the correct options?
    uses: [correct, invalid]
  - id: M2
    name: True facts
    question: Does every fact match the files?
    uses: [facts]
diagnostics:
  - id: one-question
    text: ends with exactly one question
    check: {pattern: '\?\s*$', expect: present}
  - id: short
    text: at most 50 words
    check: {max_words: 50}
defaults: {repeats: 2, model: sonnet, effort: medium}
`

func goodFiles() map[string]string {
	return map[string]string{
		"cases.yaml":               goodSet,
		"a/case.yaml":              "prompt: Should we reorder widgets?\ntags: [stock]\npair: b\n",
		"a/key.json":               `{"correct": ["hold"], "facts": [{"claim": "40 in stock", "file": "stock.csv", "quote": "widgets,40"}]}`,
		"a/fixture/stock.csv":      "item,count\nwidgets,40\n",
		"b/case.yaml":              "prompt: Should we reorder gaskets?\npair: a\nfiles:\n  .env: \"SUPPLIER=acme\\n\"\n",
		"b/key.json":               `{"correct": ["reorder"], "invalid": ["hold"], "facts": [{"claim": "acme", "file": ".env", "quote": "SUPPLIER=acme"}]}`,
		"holdout/h1/case.yaml":     "prompt: Which supplier do we use?\n",
		"holdout/h1/key.json":      `{"correct": ["acme"]}`,
		"baselines/v1/notes.txt":   "not a case",
		".hidden/case.yaml":        "not: read",
		"holdout/h1/fixture/x.txt": "x",
	}
}

func TestLoadGood(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, goodFiles())
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cases) != 2 || s.Cases[0].ID != "a" || s.Cases[1].ID != "b" || len(s.Holdout) != 1 || !s.Holdout[0].Holdout {
		t.Fatalf("cases %+v holdout %+v", s.Cases, s.Holdout)
	}
	if s.Defaults.Repeats != 2 || s.Defaults.Deliver != DeliverSystemPrompt || strings.Join(s.Defaults.Tools, ",") != "Read,Grep,Glob" {
		t.Errorf("defaults %+v", s.Defaults)
	}
	if got := s.Measures[0].Label(); got != "M1 Right decision" {
		t.Errorf("label %q", got)
	}
	if s.Cases[1].Fixture != "" || s.Cases[0].Fixture == "" {
		t.Errorf("fixtures %q %q", s.Cases[0].Fixture, s.Cases[1].Fixture)
	}
	if v, ok := s.Cases[1].Content(".env"); !ok || v != "SUPPLIER=acme\n" {
		t.Errorf("content of .env: %q %v", v, ok)
	}
	kf, ok := s.Cases[0].KeyFields(s.Measures[0])
	if !ok || !strings.Contains(string(kf), `"correct"`) || strings.Contains(string(kf), "facts") {
		t.Errorf("key fields of M1: %s %v", kf, ok)
	}
	if _, ok := s.Holdout[0].KeyFields(s.Measures[1]); ok {
		t.Error("h1 has no facts, so M2 should not apply")
	}
	// A diagnostic holds or not.
	if ok, _ := s.Diagnostics[0].Check.Run("Rule: hold. Shall I?"); !ok {
		t.Error("one-question should hold on a message ending with ?")
	}
	if ok, _ := s.Diagnostics[1].Check.Run(strings.Repeat("w ", 51)); ok {
		t.Error("short should fail on 51 words")
	}
	// The hash follows the fixture.
	h := s.Cases[0].Hash
	write(t, dir, map[string]string{"a/fixture/stock.csv": "item,count\nwidgets,41\n"})
	s2, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Cases[0].Hash == h || s2.Cases[1].Hash != s.Cases[1].Hash {
		t.Error("a fixture change should change that case's hash only")
	}
}

// Every structural error is one line naming the file, the line and the
// field.
// Every case in holdout/ read as "no cases", the ten there unseen; a
// key.json with a byte-order mark as "invalid character 'ï'": it is read.
func TestLoadHoldoutOnlyAndBOM(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"cases.yaml": goodSet, "holdout/h1/case.yaml": "prompt: p\n", "holdout/h1/key.json": `{"correct": ["acme"]}`})
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "no main cases (1 in holdout/), expected folders holding case.yaml beside cases.yaml too") {
		t.Errorf("a set with holdout cases only: %v", err)
	}
	dir = t.TempDir()
	files := goodFiles()
	files["a/key.json"] = "\ufeff" + files["a/key.json"]
	write(t, dir, files)
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("a key.json with a byte-order mark: %v", err)
	}
	if _, ok := s.Cases[0].KeyFields(Measure{ID: "M1", Uses: []string{"correct"}}); !ok || s.Cases[0].ID != "a" {
		t.Errorf("case %s: its key's correct field was not read", s.Cases[0].ID)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no goal", map[string]string{"cases.yaml": strings.Replace(goodSet, "goal: After", "goal: \"\"\n#", 1)},
			`cases.yaml:1: field "goal": missing or empty`},
		{"unknown field", map[string]string{"cases.yaml": goodSet + "extra: 1\n"}, `cases.yaml:19: unknown field "extra"`},
		{"question missing", map[string]string{"cases.yaml": strings.Replace(goodSet, "    question: Does every fact match the files?\n", "", 1)},
			`cases.yaml:7: field "measures[1].question": missing or empty`},
		{"measure twice", map[string]string{"cases.yaml": strings.Replace(goodSet, "id: M2", "id: m1", 1)},
			`cases.yaml:7: field "measures[1].id": "m1" is used twice`},
		{"bad pattern", map[string]string{"cases.yaml": strings.Replace(goodSet, `'\?\s*$'`, `'(['`, 1)},
			`cases.yaml:14: field "diagnostics[0].check.pattern": error parsing regexp`},
		{"bad effort", map[string]string{"cases.yaml": strings.Replace(goodSet, "effort: medium", "effort: huge", 1)},
			`cases.yaml:18: field "defaults.effort": "huge", expected one of low, medium, high, xhigh, max`},
		{"zero repeats", map[string]string{"cases.yaml": strings.Replace(goodSet, "repeats: 2", "repeats: 0", 1)},
			`cases.yaml:18: field "defaults.repeats": 0, expected 1 to 20`},
		{"bad deliver", map[string]string{"cases.yaml": strings.Replace(goodSet, "effort: medium", "deliver: mail", 1)},
			`field "defaults.deliver": "mail", expected system-prompt or skill`},
		{"no prompt", map[string]string{"a/case.yaml": "tags: [x]\n"}, `a/case.yaml:1: field "prompt": missing or empty`},
		{"case unknown field", map[string]string{"a/case.yaml": "prompt: p\nfixture: x\n"}, `a/case.yaml:2: unknown field "fixture"`},
		{"file leaves", map[string]string{"a/case.yaml": "prompt: p\nfiles:\n  ../x: y\n"}, `a/case.yaml:3: field "files": "../x", expected a relative path`},
		// Each of these passed --check, then failed every cell of the case
		// at run time ("is a directory") after the others were paid for.
		{"file is the workspace", map[string]string{"a/case.yaml": "prompt: p\nfiles:\n  .: y\n"}, `a/case.yaml:3: field "files": ".", expected a file's path`},
		{"file is a fixture folder", map[string]string{"a/case.yaml": "prompt: p\nfiles:\n  data: y\n", "a/fixture/data/x.csv": "x"},
			`a/case.yaml:3: field "files": "data": a folder in the fixture, expected a file`},
		{"file under a fixture file", map[string]string{"a/case.yaml": "prompt: p\nfiles:\n  stock.csv/x: y\n"},
			`a/case.yaml:3: field "files": "stock.csv/x": stock.csv is a file in the fixture, expected a folder`},
		{"file under another", map[string]string{"a/case.yaml": "prompt: p\nfiles:\n  notes: y\n  notes/x: z\n"},
			`a/case.yaml:3: field "files": "notes/x" lies inside "notes", also a file here`},
		{"no key", map[string]string{"c/case.yaml": "prompt: p\n"}, `c/key.json: no such file, expected the case's answer key`},
		{"bad key", map[string]string{"a/key.json": "{\n  \"correct\": [\"hold\"],\n}\n"}, `a/key.json:3: not an answer key: invalid JSON (invalid character '}'`},
		{"key not object", map[string]string{"a/key.json": `["hold"]`}, `a/key.json:1: not an answer key: the document is an array, expected an object`},
		{"not a case", map[string]string{"notes/readme.md": "x"}, `notes/case.yaml: no such file, expected every folder of the case set to be a case`},
		{"bad id", map[string]string{"a b/case.yaml": "prompt: p\n"}, `a b: folder name "a b", expected a case id`},
		// The rule is ASCII: "a letter" read as any letter.
		{"non-ASCII id", map[string]string{"ŝraŭbo/case.yaml": "prompt: p\n"}, `expected a case id: an ASCII letter or digit, then ASCII letters`},
		// A null field counted as present: the grader graded against nothing.
		{"null key field", map[string]string{"a/key.json": "{\n  \"correct\": [\"hold\"],\n  \"facts\": null\n}\n"},
			`a/key.json:3: field "facts" is null, expected its answer (leave the field out where no measure using it applies)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, goodFiles())
			write(t, dir, c.files)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("loaded, expected an error")
			}
			msg := strings.ReplaceAll(err.Error(), dir+"/", "")
			if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, expected one line holding %q", msg, c.want)
			}
		})
	}
}

func TestHygiene(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		testenv.Missing(t, "git is not installed")
	}
	dir := t.TempDir()
	files := goodFiles()
	// A fact whose file is missing, one whose quote is wrong, a pair that
	// does not name its partner back, a measure field no key holds, and a
	// fixture .env that a global exclude hides from git.
	files["a/key.json"] = `{"correct": ["hold"], "facts": [
  {"claim": "40 in stock", "file": "stock.csv", "quote": "widgets,41"},
  {"claim": "the supplier", "file": "suppliers.md", "quote": "acme"},
  {"claim": 40, "file": "stock.csv", "quote": "widgets"},
  {"claim": "x", "file": ["stock.csv"], "quote": "widgets"},
  {"claim": "the last count", "file": "summary.md", "quote": "widgets 40"}]}`
	// vibe-test's own report in the fixture: the copy leaves it out, so
	// the generator never reads what the fact quotes (--check said
	// nothing).
	files["a/fixture/summary.md"] = "## vibe-test\n\nwidgets 40\n"
	files["c/case.yaml"] = "prompt: p\npair: a\n"
	files["c/key.json"] = `{"correct": ["x"]}`
	files["c/fixture/.env"] = "TOKEN=1\n"
	files["cases.yaml"] = strings.Replace(goodSet, "uses: [facts]", "uses: [facts, alternatives]", 1)
	write(t, dir, files)
	home := t.TempDir()
	write(t, home, map[string]string{"ignore": "**/*.env\n", "gitconfig": "[core]\n\texcludesFile = " + filepath.Join(home, "ignore") + "\n"})
	env := []string{"PATH=" + filepath.Dir(gitBin), "HOME=" + home, "GIT_CONFIG_GLOBAL=" + filepath.Join(home, "gitconfig"), "GIT_CONFIG_NOSYSTEM=1"}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	problems, notes := Hygiene(context.Background(), s, env)
	if len(notes) > 0 {
		t.Fatalf("notes %v", notes)
	}
	var got []string
	for _, p := range problems {
		got = append(got, strings.ReplaceAll(p.String(), dir+"/", ""))
	}
	for _, want := range []string{
		`a/key.json:2: field "facts[0].quote": "widgets,41" does not occur in stock.csv`,
		`a/key.json:3: field "facts[1].file": suppliers.md is neither in a/fixture nor in case.yaml's files`,
		// A wrong type is named by its place: "expected a list of {claim,
		// file, quote}" named neither, for a list.
		`a/key.json:1: field "facts[2].claim": a number, expected a string`,
		`a/key.json:1: field "facts[3].file": an array, expected a string`,
		`a/key.json:6: field "facts[4].file": summary.md is vibe-test's own (a report it wrote, a vibe-test.yaml, or in a run's or eval's folder), which the copy leaves out of the workspace`,
		`c/case.yaml:2: field "pair": "a" names "b", expected it to name "c" back`,
		`cases.yaml:10: field "measures[1].uses[1]": "alternatives" is in no case's key.json`,
		`c/fixture/.env: git would not commit it (` + filepath.Join(home, "ignore") + `:1: **/*.env), so a clean checkout runs the case without it: move its content into c/case.yaml's files as ".env"`,
	} {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, want)
		}
		if !found {
			t.Errorf("no problem %q in:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if len(got) != 8 {
		t.Errorf("%d problems, expected 8:\n%s", len(got), strings.Join(got, "\n"))
	}

	// Without git, what could not be checked is said.
	_, notes = Hygiene(context.Background(), s, []string{"PATH=" + t.TempDir()})
	if len(notes) != 1 || !strings.Contains(notes[0], "git is not installed") {
		t.Errorf("notes without git: %v", notes)
	}
}

// A problem's line is fit for a terminal: a file named with an escape
// sequence (a window title) reached it from `vibe-test eval --check`.
func TestProblemLineIsCleaned(t *testing.T) {
	for _, p := range []Problem{
		{File: "cases/a/supp\x1b]0;TITLE\x07.md", Msg: "is neither in the fixture nor in files"},
		{File: "cases/a/key.json", Line: 3, Field: "facts[0].file", Msg: "names x\u009b31m\x1b[2J"},
	} {
		line := p.String()
		if strings.ContainsAny(line, "\x1b\x07\u009b\n") || !strings.Contains(line, "cases/a/") {
			t.Errorf("%q", line)
		}
	}
}
