package cases

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/execpath"
	"github.com/vibe-test/vibe-test/internal/jsonerr"
	"github.com/vibe-test/vibe-test/internal/ownfile"
	"github.com/vibe-test/vibe-test/internal/term"
)

// Problem is one thing wrong with a case set that would make its grades
// lie: one line naming the file, the line, the field and what to do.
type Problem struct {
	File  string
	Line  int
	Field string // "" when the problem is the file itself
	Msg   string
}

// String is the problem's one line, fit for a terminal: a file's name or
// a field's text may hold control characters (an escape sequence that
// retitles the window), which are dropped.
func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if p.Field == "" {
		return term.Line(loc + ": " + p.Msg)
	}
	return term.Line(fmt.Sprintf("%s: field %q: %s", loc, p.Field, p.Msg))
}

// Fact is one entry of a key's "facts": a claim the decision depends on,
// the file that proves it and a quote from that file.
type Fact struct {
	Claim string `json:"claim"`
	File  string `json:"file"`
	Quote string `json:"quote"`
}

// Hygiene checks what Load cannot: every key fact's file is in the
// workspace (the fixture or case.yaml's files) and its quote occurs in it;
// no fixture file is one git would leave out of a commit (a clean checkout
// would run the case without it: seed 000's .env trap); every swap pair
// names its partner back; no case id is used twice; every field a measure
// uses is in some key. env is the environment git runs in (for the user's
// global excludes); notes say what could not be checked (no git).
func Hygiene(ctx context.Context, s *Set, env []string) (problems []Problem, notes []string) {
	all := s.All()
	ids := map[string]*Case{}
	for _, c := range all {
		if prev, ok := ids[c.ID]; ok {
			problems = append(problems, Problem{File: c.Dir, Msg: fmt.Sprintf("case id %q is also %s, expected each id once (main and holdout together)", c.ID, prev.Dir)})
			continue
		}
		ids[c.ID] = c
	}
	for _, part := range [][]*Case{s.Cases, s.Holdout} {
		problems = append(problems, pairProblems(part)...)
	}
	for _, c := range all {
		problems = append(problems, factProblems(c)...)
	}
	for i, m := range s.Measures {
		for k, u := range m.Uses {
			found := false
			for _, c := range all {
				if _, ok := c.Key[u]; ok {
					found = true
					break
				}
			}
			if !found {
				p := fmt.Sprintf("measures[%d].uses[%d]", i, k)
				problems = append(problems, Problem{File: s.Path, Line: nodeLine(s.ast, "$."+p), Field: p,
					Msg: fmt.Sprintf("%q is in no case's %s, expected a field some key holds (the measure would never apply)", u, KeyFile)})
			}
		}
	}
	ign, note := ignoredFiles(ctx, s, env)
	if note != "" {
		notes = append(notes, note)
	}
	problems = append(problems, ign...)
	return problems, notes
}

// DecisionProblems are what makes a case set one no decision can be made
// on, though it measures: each part (main, holdout) is decided on its
// own by a paired rule that needs a spread, so a part of one case gets
// no verdict. A one-case set still measures (`vibe-test eval` without
// --baseline or --against); --baseline and --against refuse it before
// any model call (a holdout of one passed --check, then every --against
// on its baseline exited 3, after paying for the candidate).
func DecisionProblems(s *Set) []Problem {
	var out []Problem
	if n := len(s.Cases); n < 2 {
		out = append(out, Problem{File: s.Dir, Msg: fmt.Sprintf("%d main case(s), expected at least 2 to decide on (each part is decided on its own, by a paired rule that needs a spread)", n)})
	}
	if len(s.Holdout) == 1 {
		out = append(out, Problem{File: filepath.Join(s.Dir, HoldoutDir), Msg: "1 holdout case, expected none or at least 2 to decide on (each part is decided on its own, by a paired rule that needs a spread): add one, or move it to the main cases"})
	}
	return out
}

func pairProblems(part []*Case) []Problem {
	byID := map[string]*Case{}
	for _, c := range part {
		byID[c.ID] = c
	}
	var out []Problem
	for _, c := range part {
		if c.Pair == "" {
			continue
		}
		at := Problem{File: c.CaseFilePath(), Line: nodeLine(c.ast, "$.pair"), Field: "pair"}
		other, ok := byID[c.Pair]
		switch {
		case c.Pair == c.ID:
			at.Msg = fmt.Sprintf("%q is the case itself, expected its swap partner's id", c.Pair)
		case !ok:
			where := "main"
			if c.Holdout {
				where = "holdout"
			}
			at.Msg = fmt.Sprintf("%q is no %s case, expected the id of its swap partner", c.Pair, where)
		case other.Pair != c.ID:
			back := "names no pair"
			if other.Pair != "" {
				back = fmt.Sprintf("names %q", other.Pair)
			}
			at.Msg = fmt.Sprintf("%q %s, expected it to name %q back", c.Pair, back, c.ID)
		default:
			continue
		}
		out = append(out, at)
	}
	return out
}

// factProblems checks a key's facts against the workspace the generator
// will get.
func factProblems(c *Case) []Problem {
	raw, ok := c.Key["facts"]
	if !ok {
		return nil
	}
	kp := c.KeyPath()
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return []Problem{{File: kp, Line: jsonLine(c.KeyRaw, `"facts"`), Field: "facts", Msg: "expected a list of {claim, file, quote}"}}
	}
	var out []Problem
	for i, item := range items {
		field := fmt.Sprintf("facts[%d]", i)
		// Each fact on its own, so that a wrong one is named by its place
		// and field ("a list of {claim, file, quote}" named neither).
		var f Fact
		if err := json.Unmarshal(item, &f); err != nil {
			msg := "expected an object {claim, file, quote}"
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				field += "." + te.Field
				got, want := jsonerr.Kinds(te)
				msg = fmt.Sprintf("%s, expected %s", got, want)
			}
			out = append(out, Problem{File: kp, Line: jsonLine(c.KeyRaw, `"facts"`), Field: field, Msg: msg})
			continue
		}
		switch {
		case strings.TrimSpace(f.File) == "":
			out = append(out, Problem{File: kp, Line: jsonLine(c.KeyRaw, `"facts"`), Field: field + ".file", Msg: "missing, expected the workspace file that proves the claim"})
			continue
		case strings.TrimSpace(f.Quote) == "":
			out = append(out, Problem{File: kp, Line: jsonLine(c.KeyRaw, jsonString(f.File)), Field: field + ".quote", Msg: fmt.Sprintf("missing, expected the words of %s that prove the claim", f.File)})
			continue
		}
		if c.leftOutOfCopy(f.File) {
			out = append(out, Problem{File: kp, Line: jsonLine(c.KeyRaw, jsonString(f.File)), Field: field + ".file",
				Msg: fmt.Sprintf("%s is vibe-test's own (a report it wrote, a %s, or in a run's or eval's folder), which the copy leaves out of the workspace: expected a file the generator reads (rename it, or put its content in %s's files)", f.File, ownfile.Config, CaseFile)})
			continue
		}
		content, ok := c.Content(f.File)
		if !ok {
			out = append(out, Problem{File: kp, Line: jsonLine(c.KeyRaw, jsonString(f.File)), Field: field + ".file",
				Msg: fmt.Sprintf("%s is neither in %s nor in %s's files, expected the file the generator reads", f.File, filepath.Join(c.ID, FixtureDir), CaseFile)})
			continue
		}
		if !occurs(content, f.Quote) {
			out = append(out, Problem{File: kp, Line: jsonLine(c.KeyRaw, jsonString(f.Quote)), Field: field + ".quote",
				Msg: fmt.Sprintf("%q does not occur in %s, expected words copied from it", clip(f.Quote, 60), f.File)})
		}
	}
	return out
}

// occurs: quote is in text, exactly or with its runs of white space
// taken as one space (a quote copied across a line break).
func occurs(text, quote string) bool {
	if strings.Contains(text, quote) {
		return true
	}
	return strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(quote), " "))
}

// ignoredFiles names every fixture file git would not commit. Inside a git
// work tree it asks that repository (tracked files are fine: they are
// committed); elsewhere it asks a throwaway empty repository whose work
// tree is the case set, so the case set's .gitignore files and the user's
// global excludes apply as they would once it is committed.
func ignoredFiles(ctx context.Context, s *Set, env []string) ([]Problem, string) {
	var paths []string
	for _, c := range s.All() {
		files, err := c.FixtureFiles()
		if err != nil {
			return []Problem{{File: c.Fixture, Msg: err.Error()}}, ""
		}
		for _, f := range files {
			paths = append(paths, filepath.Join(c.Fixture, filepath.FromSlash(f)))
		}
	}
	if len(paths) == 0 {
		return nil, ""
	}
	gitBin := lookPath("git", env)
	if gitBin == "" {
		return nil, "git is not installed here: fixture files that git would leave out of a commit (a .env) were not looked for"
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	args := []string{"-C", s.Dir}
	probe := exec.CommandContext(ctx, gitBin, "-C", s.Dir, "rev-parse", "--is-inside-work-tree")
	probe.Env = env
	if probe.Run() != nil {
		tmp, err := os.MkdirTemp("", "git-")
		if err != nil {
			return nil, "fixture files that git would leave out of a commit were not looked for: " + err.Error()
		}
		defer os.RemoveAll(tmp)
		init := exec.CommandContext(ctx, gitBin, "init", "-q", tmp)
		init.Env = env
		if out, err := init.CombinedOutput(); err != nil {
			return nil, fmt.Sprintf("fixture files that git would leave out of a commit were not looked for: git init: %v %s", err, firstLine(string(out)))
		}
		args = []string{"-C", s.Dir, "--git-dir=" + filepath.Join(tmp, ".git"), "--work-tree=" + s.Dir}
	}
	cmd := exec.CommandContext(ctx, gitBin, append(args, "check-ignore", "--verbose", "-z", "--stdin")...)
	cmd.Env = env
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: nothing ignored
		return nil, fmt.Sprintf("fixture files that git would leave out of a commit were not looked for: git check-ignore: %v %s", err, firstLine(stderr.String()))
	}
	fields := strings.Split(string(out), "\x00")
	var problems []Problem
	for i := 0; i+3 < len(fields); i += 4 {
		source, line, pattern, path := fields[i], fields[i+1], fields[i+2], fields[i+3]
		if strings.HasPrefix(pattern, "!") {
			continue // a negation: git keeps the file
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.Dir, path)
		}
		rel := path
		var owner *Case
		for _, c := range s.All() {
			if c.Fixture != "" && strings.HasPrefix(path, c.Fixture+string(filepath.Separator)) {
				owner = c
				rel, _ = filepath.Rel(c.Fixture, path)
			}
		}
		where := "its files"
		if owner != nil {
			where = filepath.Join(owner.ID, CaseFile) + "'s files"
		}
		problems = append(problems, Problem{File: path, Msg: fmt.Sprintf(
			"git would not commit it (%s:%s: %s), so a clean checkout runs the case without it: move its content into %s as %q",
			source, line, pattern, where, filepath.ToSlash(rel))})
	}
	sort.Slice(problems, func(i, j int) bool { return problems[i].File < problems[j].File })
	return problems, ""
}

// lookPath finds a program on env's PATH (the process's own when env has
// none).
func lookPath(name string, env []string) string {
	path, set := "", false
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == "PATH" {
			path, set = v, true
		}
	}
	if !set {
		p, _ := exec.LookPath(name)
		return p
	}
	return execpath.Find(name, path)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// leftOutOfCopy says whether the fixture file rel (not one of the case's
// files) is one the workspace copy leaves out as vibe-test's own
// (ownfile): the generator never sees it, so no fact can rest on it.
func (c *Case) leftOutOfCopy(rel string) bool {
	if _, ok := c.file(rel); ok {
		return false
	}
	p, ok := c.fixturePath(rel)
	if !ok {
		return false
	}
	if filepath.Base(p) == ownfile.Config || ownfile.IsReport(p) {
		return true
	}
	for dir := filepath.Dir(p); dir != c.Fixture && strings.HasPrefix(dir, c.Fixture+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if ownfile.IsOutputFolder(dir) || ownfile.IsCaseSet(dir) {
			return true
		}
	}
	return false
}
