// Package cases reads a case set: the known-answer cases a skill's
// decisions are graded on (seed 000's method, `vibe-test eval`).
//
// A case set is a folder outside the skill's folder:
//
//	cases/
//	  cases.yaml               the goal, the measures, the diagnostics, the defaults
//	  <case-id>/case.yaml      prompt, tags, pair, files
//	  <case-id>/fixture/...    the small project the generator works in (a copy)
//	  <case-id>/key.json       the answer key: the grader sees it, nobody else
//	  holdout/<case-id>/...    cases the skill's editor never saw (same shape)
//	  baselines/<name>/...     stored baseline runs (written by --baseline)
//
// cases.yaml holds the one-sentence goal every measure must answer, the
// measures (an id, a question and the key fields the grader is shown for
// it), the diagnostics (deterministic rule checks over the message, which
// never decide anything: they help find which removed rule made a score
// drop) and the run's defaults. A case's key.json is a free-form JSON
// object; by convention its "facts" list ({claim, file, quote}) is what the
// hygiene check holds against the fixture.
//
// Load reads and checks the structure: every error is one line naming the
// file, the line, the field and what was expected. Hygiene (hygiene.go)
// then looks for what makes a case set lie without failing: a fact whose
// quote is not in its file, a fixture file git would not commit, a swap
// pair that does not name its partner back.
package cases

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/jsonerr"
	"github.com/vibe-test/vibe-test/internal/readfile"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/yamlerr"
)

// The names in a case set.
const (
	SetFile      = "cases.yaml"
	CaseFile     = "case.yaml"
	KeyFile      = "key.json"
	FixtureDir   = "fixture"
	HoldoutDir   = "holdout"
	BaselinesDir = "baselines"
)

// Limits of the files read: a case set is text an author wrote.
const (
	maxYAML = 256 << 10
	maxKey  = 1 << 20
)

// The values a default or a flag may take.
const (
	DeliverSystemPrompt = "system-prompt" // --append-system-prompt-file, as seed 000 did
	DeliverSkill        = "skill"         // installed as a project skill in the workspace
	DefaultRepeats      = 3
)

// Efforts are the levels the pinned CLI's --effort takes.
var Efforts = []string{"low", "medium", "high", "xhigh", "max"}

// DefaultTools are the generator's tools unless the case set says otherwise:
// it can read the fixture and change nothing.
var DefaultTools = []string{"Read", "Grep", "Glob"}

// Set is a loaded case set.
type Set struct {
	Dir         string // absolute
	Path        string // its cases.yaml
	Goal        string
	Measures    []Measure
	Diagnostics []Diagnostic
	Defaults    Defaults
	Cases       []*Case // the main cases, by id
	Holdout     []*Case // the holdout cases, by id
	// Hash covers cases.yaml: the goal, the measures' questions and uses,
	// the diagnostics and the defaults.
	Hash string
	src  []byte
	ast  *ast.File
}

// Measure is one thing the grader decides per message: pass, fail or n/a.
type Measure struct {
	ID       string   `yaml:"id" json:"id"`
	Name     string   `yaml:"name" json:"name"`
	Question string   `yaml:"question" json:"question"`
	Uses     []string `yaml:"uses" json:"uses"`
}

// Label is the measure as tables show it: "M1 Right decision".
func (m Measure) Label() string {
	if m.Name == "" || m.Name == m.ID {
		return m.ID
	}
	return m.ID + " " + m.Name
}

// Diagnostic is a deterministic check over the message: a pattern present
// or absent, or a most words. It never decides.
type Diagnostic struct {
	ID    string `yaml:"id" json:"id"`
	Text  string `yaml:"text" json:"text"`
	Check Check  `yaml:"check" json:"check"`
}

// Check is a diagnostic's rule.
type Check struct {
	Pattern  string `yaml:"pattern" json:"pattern,omitempty"`
	Expect   string `yaml:"expect" json:"expect,omitempty"` // present or absent, with Pattern
	MaxWords int    `yaml:"max_words" json:"max_words,omitempty"`
	re       *regexp.Regexp
}

// Run applies the check to a message: whether it holds, and what it saw.
func (c Check) Run(message string) (bool, string) {
	if c.MaxWords > 0 {
		n := Words(message)
		return n <= c.MaxWords, fmt.Sprintf("%d words (at most %d)", n, c.MaxWords)
	}
	found := c.re.MatchString(message)
	if c.Expect == "absent" {
		return !found, map[bool]string{true: "matched", false: "no match"}[found]
	}
	return found, map[bool]string{true: "matched", false: "no match"}[found]
}

// Words counts a message's words (seed 000's M6): runs of non-space.
func Words(s string) int { return len(strings.Fields(s)) }

// Defaults are the run's settings unless a flag says otherwise.
type Defaults struct {
	Repeats     int      `yaml:"repeats" json:"repeats"`
	Model       string   `yaml:"model" json:"model,omitempty"`
	Effort      string   `yaml:"effort" json:"effort,omitempty"`
	Tools       []string `yaml:"tools" json:"tools"`
	Deliver     string   `yaml:"deliver" json:"deliver"`
	ReaderModel string   `yaml:"reader_model" json:"reader_model,omitempty"`
	GraderModel string   `yaml:"grader_model" json:"grader_model,omitempty"`
	// Agent is the generator's CLI (claude, codex, gemini; "" is claude)
	// and JudgeAgent the reader's and grader's ("" is the default judge).
	// Model, ReaderModel and GraderModel name models of these agents.
	Agent      string `yaml:"agent" json:"agent,omitempty"`
	JudgeAgent string `yaml:"judge_agent" json:"judge_agent,omitempty"`
}

// Case is one known-answer case.
type Case struct {
	ID      string
	Dir     string
	Holdout bool
	Prompt  string
	Tags    []string
	Pair    string
	// Files are written into the workspace after the fixture is copied:
	// what git would not commit (a .env), kept in case.yaml instead.
	Files map[string]string
	// Fixture is the case's fixture folder, "" when it has none (the
	// generator then starts in an empty folder).
	Fixture string
	// Key is key.json's top level, field by field; KeyRaw the file.
	Key    map[string]json.RawMessage
	KeyRaw []byte
	// Hash covers case.yaml, key.json and every fixture file.
	Hash string
	src  []byte
	ast  *ast.File
}

// CaseFilePath is the case's case.yaml.
func (c *Case) CaseFilePath() string { return filepath.Join(c.Dir, CaseFile) }

// KeyPath is the case's key.json.
func (c *Case) KeyPath() string { return filepath.Join(c.Dir, KeyFile) }

// All is every case, main ones first.
func (s *Set) All() []*Case { return append(slices.Clone(s.Cases), s.Holdout...) }

// MeasureIDs are the measures' ids, in order.
func (s *Set) MeasureIDs() []string {
	out := make([]string, len(s.Measures))
	for i, m := range s.Measures {
		out[i] = m.ID
	}
	return out
}

// ByID finds a case, main or holdout.
func (s *Set) ByID(id string) *Case {
	for _, c := range s.All() {
		if c.ID == id {
			return c
		}
	}
	return nil
}

var (
	idRE      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	measureRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
)

type setFile struct {
	Goal        string       `yaml:"goal"`
	Measures    []Measure    `yaml:"measures"`
	Diagnostics []Diagnostic `yaml:"diagnostics"`
	Defaults    *Defaults    `yaml:"defaults"`
}

type caseFile struct {
	Prompt string            `yaml:"prompt"`
	Tags   []string          `yaml:"tags"`
	Pair   string            `yaml:"pair"`
	Files  map[string]string `yaml:"files"`
}

// Load reads the case set in dir. Any error is one line naming the file,
// the line and field where known, and what was expected.
func Load(dir string) (*Set, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: not a folder, expected a case set (a folder holding %s)", dir, SetFile)
	}
	s := &Set{Dir: abs, Path: filepath.Join(abs, SetFile)}
	if err := s.loadSetFile(); err != nil {
		return nil, err
	}
	if s.Cases, err = loadCases(abs, false, true); err != nil {
		return nil, err
	}
	hold := filepath.Join(abs, HoldoutDir)
	if st, err := os.Stat(hold); err == nil && st.IsDir() {
		if s.Holdout, err = loadCases(hold, true, false); err != nil {
			return nil, err
		}
	}
	if len(s.Cases) == 0 && len(s.Holdout) > 0 {
		return nil, fmt.Errorf("%s: no main cases (%d in %s/), expected folders holding %s beside %s too: the holdout only checks what the main cases decide", abs, len(s.Holdout), HoldoutDir, CaseFile, SetFile)
	}
	if len(s.Cases) == 0 {
		return nil, fmt.Errorf("%s: no cases, expected folders holding %s beside %s", abs, CaseFile, SetFile)
	}
	return s, nil
}

func (s *Set) loadSetFile() error {
	b, err := readfile.Regular(s.Path, maxYAML)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: no such file, expected the case set's goal, measures and defaults", s.Path)
		}
		return err
	}
	var f setFile
	if err := yamlerr.Strict(s.Path, b, &f); err != nil {
		return err
	}
	s.src, s.Hash = b, hashOf(b)
	s.ast, _ = parser.ParseBytes(b, 0)
	line := func(p string) int { return nodeLine(s.ast, p) }
	at := func(p, format string, args ...any) error {
		return fmt.Errorf("%s:%d: field %q: %s", s.Path, line("$."+p), p, fmt.Sprintf(format, args...))
	}
	s.Goal = strings.TrimSpace(f.Goal)
	if s.Goal == "" {
		return at("goal", "missing or empty, expected the one sentence every measure answers")
	}
	if len(f.Measures) == 0 {
		return at("measures", "missing or empty, expected at least one {id, name, question, uses}")
	}
	seen := map[string]bool{}
	for i, m := range f.Measures {
		p := fmt.Sprintf("measures[%d]", i)
		switch {
		case !measureRE.MatchString(m.ID):
			return at(p+".id", "%q, expected a letter then letters, digits, - or _ (M1, right-decision)", m.ID)
		case seen[strings.ToLower(m.ID)]:
			return at(p+".id", "%q is used twice, expected each measure once", m.ID)
		case strings.EqualFold(m.ID, "total"):
			return at(p+".id", "%q is the name of the share of all measures, expected another id", m.ID)
		case strings.TrimSpace(m.Question) == "":
			return at(p+".question", "missing or empty, expected the question the grader answers pass or fail")
		}
		for k, u := range m.Uses {
			if strings.TrimSpace(u) == "" {
				return at(fmt.Sprintf("%s.uses[%d]", p, k), "empty, expected a key.json field name")
			}
		}
		seen[strings.ToLower(m.ID)] = true
		m.Name, m.Question = strings.TrimSpace(m.Name), strings.TrimSpace(m.Question)
		s.Measures = append(s.Measures, m)
	}
	seen = map[string]bool{}
	for i, d := range f.Diagnostics {
		p := fmt.Sprintf("diagnostics[%d]", i)
		switch {
		case !measureRE.MatchString(d.ID):
			return at(p+".id", "%q, expected a letter then letters, digits, - or _", d.ID)
		case seen[d.ID]:
			return at(p+".id", "%q is used twice, expected each diagnostic once", d.ID)
		case d.Check.Pattern == "" && d.Check.MaxWords <= 0:
			return at(p+".check", "expected {pattern, expect: present|absent} or {max_words: N}")
		case d.Check.Pattern != "" && d.Check.MaxWords > 0:
			return at(p+".check", "has both pattern and max_words, expected one of them")
		case d.Check.MaxWords < 0:
			return at(p+".check.max_words", "%d, expected a positive number", d.Check.MaxWords)
		}
		if d.Check.Pattern != "" {
			re, err := regexp.Compile(d.Check.Pattern)
			if err != nil {
				return at(p+".check.pattern", "%v", firstLine(err.Error()))
			}
			d.Check.re = re
			switch d.Check.Expect {
			case "":
				d.Check.Expect = "present"
			case "present", "absent":
			default:
				return at(p+".check.expect", "%q, expected present or absent", d.Check.Expect)
			}
		} else if d.Check.Expect != "" {
			return at(p+".check.expect", "only goes with a pattern")
		}
		seen[d.ID] = true
		s.Diagnostics = append(s.Diagnostics, d)
	}
	def := Defaults{}
	if f.Defaults != nil {
		def = *f.Defaults
	}
	switch {
	case def.Repeats == 0 && !present(s.ast, "$.defaults.repeats"):
		def.Repeats = DefaultRepeats // `repeats: 0` is refused, not read as absent
	case def.Repeats < 1 || def.Repeats > 20:
		return at("defaults.repeats", "%d, expected 1 to 20", def.Repeats)
	}
	if def.Effort != "" && !slices.Contains(Efforts, def.Effort) {
		return at("defaults.effort", "%q, expected one of %s", def.Effort, strings.Join(Efforts, ", "))
	}
	for _, a := range []struct{ field, name string }{{"defaults.agent", def.Agent}, {"defaults.judge_agent", def.JudgeAgent}} {
		if a.name != "" && !slices.Contains(agents.Names, a.name) {
			return at(a.field, "%q, expected one of %s", a.name, strings.Join(agents.Names, ", "))
		}
	}
	switch def.Deliver {
	case "":
		def.Deliver = DeliverSystemPrompt
	case DeliverSystemPrompt, DeliverSkill:
	default:
		return at("defaults.deliver", "%q, expected %s or %s", def.Deliver, DeliverSystemPrompt, DeliverSkill)
	}
	if len(def.Tools) == 0 {
		def.Tools = slices.Clone(DefaultTools)
	}
	for i, t := range def.Tools {
		if strings.TrimSpace(t) == "" {
			return at(fmt.Sprintf("defaults.tools[%d]", i), "empty, expected a tool name (Read, Grep, Glob, ...)")
		}
	}
	s.Defaults = def
	return nil
}

// loadCases reads every case folder in dir, by name. In the top folder,
// holdout/ and baselines/ are not cases; a folder beginning with a dot is
// skipped anywhere.
func loadCases(dir string, holdout, top bool) ([]*Case, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*Case
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.IsDir() {
			continue
		}
		if top && (name == HoldoutDir || name == BaselinesDir) {
			continue
		}
		cdir := filepath.Join(dir, name)
		if !idRE.MatchString(name) {
			return nil, fmt.Errorf("%s: folder name %q, expected a case id: an ASCII letter or digit, then ASCII letters, digits, '.', '-' or '_'", cdir, name)
		}
		c, err := loadCase(cdir, name, holdout)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func loadCase(dir, id string, holdout bool) (*Case, error) {
	c := &Case{ID: id, Dir: dir, Holdout: holdout}
	path := c.CaseFilePath()
	b, err := readfile.Regular(path, maxYAML)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file, expected every folder of the case set to be a case (prompt, tags, pair, files)", path)
		}
		return nil, err
	}
	var f caseFile
	if err := yamlerr.Strict(path, b, &f); err != nil {
		return nil, err
	}
	c.src = b
	c.ast, _ = parser.ParseBytes(b, 0)
	at := func(p, format string, args ...any) error {
		return fmt.Errorf("%s:%d: field %q: %s", path, nodeLine(c.ast, "$."+p), p, fmt.Sprintf(format, args...))
	}
	c.Prompt = strings.TrimSpace(f.Prompt)
	if c.Prompt == "" {
		return nil, at("prompt", "missing or empty, expected what the user asks the agent")
	}
	c.Tags, c.Pair, c.Files = f.Tags, strings.TrimSpace(f.Pair), f.Files
	for _, rel := range sortedKeys(f.Files) {
		clean := filepath.Clean(rel)
		if rel == "" || filepath.IsAbs(rel) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return nil, at("files", "%q, expected a relative path inside the workspace", rel)
		}
	}
	fx := filepath.Join(dir, FixtureDir)
	if st, err := os.Lstat(fx); err == nil {
		if !st.IsDir() {
			return nil, fmt.Errorf("%s: not a folder, expected the case's fixture folder", fx)
		}
		if err := sandbox.CheckFixture(fx, nil); err != nil {
			return nil, fmt.Errorf("%s: %v", fx, err)
		}
		c.Fixture = fx
	}
	if msg := filesProblem(c.Fixture, f.Files); msg != "" {
		return nil, at("files", "%s", msg)
	}
	kp := c.KeyPath()
	if c.KeyRaw, err = readfile.Regular(kp, maxKey); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file, expected the case's answer key (a JSON object; only the grader sees it)", kp)
		}
		return nil, err
	}
	// A byte-order mark (some Windows editors write one) is no JSON: it
	// read as "invalid character 'ï'". The hash keeps the file as it is.
	keyJSON := bytes.TrimPrefix(c.KeyRaw, []byte("\xef\xbb\xbf"))
	if err := json.Unmarshal(keyJSON, &c.Key); err != nil {
		return nil, jsonerr.Format(kp, keyJSON, err, "an answer key")
	}
	if c.Key == nil {
		return nil, fmt.Errorf("%s:1: null, expected a JSON object", kp)
	}
	for _, field := range sortedKeys(c.Key) {
		// A null field counted as present: the grader was asked to grade
		// the measure against nothing.
		if bytes.Equal(bytes.TrimSpace(c.Key[field]), []byte("null")) {
			return nil, fmt.Errorf("%s:%d: field %q is null, expected its answer (leave the field out where no measure using it applies)", kp, jsonerr.FieldLine(keyJSON, field), field)
		}
	}
	if path, line, dup := jsonerr.DuplicateKey(keyJSON); dup {
		// JSON keeps the last: the grader would have seen half the key.
		return nil, fmt.Errorf("%s:%d: field %q given twice, expected it once (only the last would count)", kp, line, path)
	}
	if c.Hash, err = caseHash(c); err != nil {
		return nil, err
	}
	return c, nil
}

// filesProblem says why a case's files cannot all be written over its
// fixture ("" when they can): each is a file's path, not the workspace,
// nor a folder or link of the fixture, below folders only (not below a
// fixture's file or link, nor another of the files). Found at run time
// instead, every cell of the case failed after the others were paid for.
func filesProblem(fixture string, files map[string]string) string {
	for _, rel := range sortedKeys(files) {
		clean := filepath.Clean(rel)
		if clean == "." {
			return fmt.Sprintf("%q, expected a file's path, not the workspace itself", rel)
		}
		for _, other := range sortedKeys(files) {
			if o := filepath.Clean(other); strings.HasPrefix(clean, o+string(filepath.Separator)) {
				return fmt.Sprintf("%q lies inside %q, also a file here", rel, other)
			}
		}
		if fixture == "" {
			continue
		}
		parts := strings.Split(clean, string(filepath.Separator))
		at := ""
		for i, part := range parts {
			at = filepath.Join(at, part)
			st, err := os.Lstat(filepath.Join(fixture, at))
			if err != nil {
				break // not in the fixture: written, with the folders above it
			}
			switch last := i == len(parts)-1; {
			case st.Mode()&fs.ModeSymlink != 0:
				return fmt.Sprintf("%q: %s is a link in the fixture, expected a file's path that follows none", rel, at)
			case last && st.IsDir():
				return fmt.Sprintf("%q: a folder in the fixture, expected a file", rel)
			case !last && !st.IsDir():
				return fmt.Sprintf("%q: %s is a file in the fixture, expected a folder", rel, at)
			}
		}
	}
	return ""
}

// caseHash covers what the case is: case.yaml, key.json, and each fixture
// file's path, mode and content.
func caseHash(c *Case) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "case.yaml\x00%d\x00", len(c.src))
	h.Write(c.src)
	fmt.Fprintf(h, "key.json\x00%d\x00", len(c.KeyRaw))
	h.Write(c.KeyRaw)
	if c.Fixture == "" {
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	err := filepath.WalkDir(c.Fixture, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(c.Fixture, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "link\x00%s\x00%s\x00", rel, target)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "file\x00%s\x00%o\x00%d\x00", rel, info.Mode().Perm(), len(b))
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", c.Fixture, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// FixtureFiles are the fixture's regular files, by path relative to it.
func (c *Case) FixtureFiles() ([]string, error) {
	if c.Fixture == "" {
		return nil, nil
	}
	var out []string
	err := filepath.WalkDir(c.Fixture, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(c.Fixture, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

// Content is what the workspace holds at rel: case.yaml's files entry,
// else the fixture's file; ok is false when it holds none.
func (c *Case) Content(rel string) (string, bool) {
	if v, ok := c.file(rel); ok {
		return v, true
	}
	p, ok := c.fixturePath(rel)
	if !ok {
		return "", false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// file is the case's files: entry named rel, if any.
func (c *Case) file(rel string) (string, bool) {
	clean := filepath.ToSlash(filepath.Clean(rel))
	for k, v := range c.Files {
		if filepath.ToSlash(filepath.Clean(k)) == clean {
			return v, true
		}
	}
	return "", false
}

// fixturePath is where rel lies in the case's fixture; not ok when the
// case has none or rel leads out of it.
func (c *Case) fixturePath(rel string) (string, bool) {
	clean := filepath.ToSlash(filepath.Clean(rel))
	if c.Fixture == "" || strings.HasPrefix(clean, "../") || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.Join(c.Fixture, filepath.FromSlash(clean)), true
}

// KeyFields is the key's fields a measure uses, as a JSON object: what the
// grader is shown for it. ok is false when the key has none of them (the
// measure does not apply to this case). A measure that uses no field
// applies to every case, with an empty object.
func (c *Case) KeyFields(m Measure) (json.RawMessage, bool) {
	if len(m.Uses) == 0 {
		return json.RawMessage("{}"), true
	}
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, u := range m.Uses {
		v, ok := c.Key[u]
		if !ok {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(u)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
		n++
	}
	b.WriteByte('}')
	if n == 0 {
		return nil, false
	}
	var out bytes.Buffer
	if json.Indent(&out, b.Bytes(), "", "  ") != nil {
		return b.Bytes(), true
	}
	return out.Bytes(), true
}

// nodeLine is the line of the node at a YAML path ($.measures[1].uses), or
// 1 when the file or the path has none.
// present says whether the document has the field at path.
func present(f *ast.File, path string) bool {
	yp, err := yaml.PathString(path)
	if f == nil || err != nil {
		return false
	}
	n, err := yp.FilterFile(f)
	return err == nil && n != nil
}

func nodeLine(f *ast.File, path string) int {
	if f == nil {
		return 1
	}
	for p := path; p != "$"; {
		yp, err := yaml.PathString(p)
		if err == nil {
			if n, err := yp.FilterFile(f); err == nil && n != nil {
				if tk := n.GetToken(); tk != nil && tk.Position != nil {
					return tk.Position.Line
				}
			}
		}
		// The field is absent: the line of the nearest parent that is there.
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			break
		}
		p = p[:i]
	}
	return 1
}

// jsonLine is the line of the first occurrence of needle in b, else 1.
func jsonLine(b []byte, needle string) int {
	if i := bytes.Index(b, []byte(needle)); i >= 0 {
		return jsonerr.LineAt(b, int64(i))
	}
	return 1
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
