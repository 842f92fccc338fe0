// Package skill reads an Agent Skill: a SKILL.md with YAML frontmatter
// (name and description required) and the folder around it, whose other
// files (scripts/, references/, assets/) travel with the skill into the
// sandbox.
package skill

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/vibe-test/vibe-test/internal/ownfile"
	"github.com/vibe-test/vibe-test/internal/readfile"
	"github.com/vibe-test/vibe-test/internal/yamlerr"
)

// MaxSize is the pinned CLI's own limit on SKILL.md (2.1.328: `eS=1e6`,
// decimal, the whole file): over it the CLI skips the skill and never lists
// it, so vibe-test refuses it too.
const MaxSize = 1_000_000

// bigSize: a SKILL.md over it still loads, whole, and its body is resent on
// every request after the skill loads; worth a warning.
const bigSize = 512 << 10

// The CLI has no folder limit (it reads a skill's other files only when the
// agent asks), but vibe-test copies the folder into every sandbox: over
// bigFolder it warns, over maxFolder (the sandbox's cap on any copy,
// sandbox.MaxFixtureBytes) or maxFiles it refuses.
const (
	bigFolder = 64 << 20
	maxFolder = 256 << 20
	maxFiles  = 10000
)

// Skill is a parsed skill.
type Skill struct {
	// Name is the name the CLI lists the skill under and the Skill tool
	// takes: the folder it is installed in (.claude/skills/<Name>/). It is
	// the frontmatter's name when that follows the spec, else the skill's
	// folder name (the CLI lists a project skill under its folder).
	Name string `json:"name"`
	// DeclaredName is the frontmatter's name when it differs from Name.
	DeclaredName string `json:"declared_name,omitempty"`
	Description  string `json:"description"`
	Path         string `json:"path"` // the SKILL.md file
	Dir          string `json:"dir"`  // its folder
	Body         string `json:"-"`    // the instructions after the frontmatter
	Raw          string `json:"-"`    // the whole SKILL.md
	// AllowedTools is the frontmatter's allowed-tools, one entry per tool or
	// pattern (Bash(git:*)), in the order written.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// WhenToUse is the frontmatter's when_to_use, which the CLI lists after
	// the description.
	WhenToUse string `json:"when_to_use,omitempty"`
	// Fork: context: fork, the skill runs as a sub-agent (Agent: the agent
	// type, "" for general-purpose) whose calls the stream tags with the
	// Skill call's id.
	Fork  bool   `json:"fork,omitempty"`
	Agent string `json:"agent,omitempty"`
	// Hooks are the events of the frontmatter's hooks: the CLI registers
	// them at the Skill call and runs them for the rest of the process.
	Hooks []string `json:"hooks,omitempty"`
	// Paths are the globs of a paths: field: the CLI lists the skill only
	// once the agent has touched a matching file (PathsNotes).
	Paths []string `json:"paths,omitempty"`
	// Warnings are deviations from the Agent Skills spec that the pinned CLI
	// still loads; each names the rule it breaks.
	Warnings []string `json:"warnings,omitempty"`
	// HooksWarning is the one of Warnings that says how Claude Code runs
	// the hooks: another agent's run says its own instead.
	HooksWarning string `json:"-"`
	// ListedAs is the name the driven agent's CLI lists the skill under
	// when it is not Name (the frontmatter's name as codex and gemini list
	// it, gemini making a ":" a "-"): the agent loads the skill by it.
	ListedAs string `json:"-"`
	// ReadAs is the agent whose CLI's reading LoadAs applied.
	ReadAs string `json:"-"`
	// Hash covers every file of the folder, so a changed script changes it.
	Hash string `json:"hash"`
	// Files are what the CLI would read, symlinks resolved: what Hash covers
	// and what the sandbox installs.
	Files []File `json:"-"`
}

// File is one file of the skill folder: its path inside the skill and the
// real file it reads (a symlink's target).
type File struct {
	Rel  string
	Src  string
	Mode fs.FileMode
	// Root is the real folder Src was reached from: the skill folder, or the
	// target of a link that leads outside it (Outside), where the sandbox's
	// exclusions are checked from.
	Root    string
	Outside bool
}

// nameRE is the Agent Skills rule for names: lowercase words joined by
// hyphens. It also keeps the name safe as a folder name.
var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Spec limits, in characters (runes), not bytes.
const (
	maxName        = 64
	maxDescription = 1024
)

// Load reads the skill at path, which is a SKILL.md or the folder holding one.
// Every error is one line naming the file, the line when known, the field and
// what was expected.
func Load(path string) (*Skill, error) { return LoadAs(path, "claude") }

// LoadAs reads the skill at path as the given agent's CLI reads it (claude,
// codex or gemini): Claude Code's reading is Parse's; another CLI's lists
// the skill by rules of its own (readAs), so that a skill it loads runs and
// one it would never list is refused. AsText reads it as text a CLI never
// lists (an eval's skill delivered in the system prompt): no CLI's
// refusal applies; its name and description are Claude Code's reading.
func LoadAs(path, agent string) (*Skill, error) {
	if path == "" {
		return nil, fmt.Errorf("no skill given: expected a path to a SKILL.md or its folder")
	}
	st, err := os.Stat(path)
	if err != nil {
		if target, lerr := os.Readlink(path); lerr == nil {
			what := "folder"
			if filepath.Base(path) == "SKILL.md" {
				what = "SKILL.md"
			}
			return nil, fmt.Errorf("%s: a link to %s, which leads nowhere: the CLI does not list a skill whose %s is missing", path, target, what)
		}
		return nil, fmt.Errorf("%s: no such file or folder (expected a SKILL.md or its folder)", path)
	}
	if st.IsDir() {
		path = filepath.Join(path, "SKILL.md")
		if st, err = os.Stat(path); err != nil {
			if target, lerr := os.Readlink(path); lerr == nil {
				return nil, fmt.Errorf("%s: a link to %s, which leads nowhere: the CLI does not list a skill whose SKILL.md is missing", path, target)
			}
			return nil, fmt.Errorf("%s: folder has no SKILL.md", filepath.Dir(path))
		}
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a folder, expected a SKILL.md file", path)
	}
	// A FIFO, device or oversized file as SKILL.md is refused in one line
	// that says which, not read forever; read it before the folder is walked.
	claude, asText := agent == "claude", agent == AsText
	limit := int64(MaxSize)
	if !claude {
		// The Codex and Gemini CLIs read a SKILL.md of any size; the
		// sandbox copies no file over its cap. As text, the caller says
		// how much it hands an agent (an eval's system prompt).
		limit = maxFolder
	}
	raw, err := readfile.Regular(path, limit)
	if errors.Is(err, readfile.ErrTooLarge) && claude {
		return nil, fmt.Errorf("%s: %d bytes: the CLI skips a SKILL.md over %d bytes and would not list the skill (expected at most that)", path, st.Size(), MaxSize)
	}
	if errors.Is(err, readfile.ErrTooLarge) {
		return nil, fmt.Errorf("%s: %d bytes: over the %d bytes vibe-test copies into a sandbox (expected at most that)", path, st.Size(), limit)
	}
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	files, folderWarnings, err := folderFiles(filepath.Dir(abs))
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		return nil, fmt.Errorf("%s: binary content (a NUL byte), expected UTF-8 markdown text", path)
	}
	invalid := !utf8.Valid(raw)
	if invalid {
		// The CLI decodes the file as UTF-8, each byte it cannot read
		// becoming U+FFFD, and lists the skill (a Latin-1 é, say).
		raw = replaceInvalid(raw)
	}
	s, hidden, err := parse(path, raw)
	if err != nil {
		return nil, err
	}
	if claude && hidden != nil {
		return nil, hidden
	}
	switch {
	case asText:
		s.Warnings = nil // how a CLI lists it: none does
	case !claude:
		if err := s.readAs(agent, raw); err != nil {
			return nil, err
		}
	}
	switch {
	case invalid && claude:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: not valid UTF-8 (Latin-1 or another encoding?): the CLI reads each byte it cannot decode as U+FFFD, and so does vibe-test; save it as UTF-8", path))
	case invalid:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: not valid UTF-8 (Latin-1 or another encoding?): vibe-test reads each byte it cannot decode as U+FFFD, and the agent's CLI may read it otherwise; save it as UTF-8", path))
	}
	s.Path = abs
	s.Dir = filepath.Dir(abs)
	s.Files = files
	switch {
	case len(raw) > bigSize && claude:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %d bytes (over %d): the CLI loads up to %d, whole, and resends the body on every request after the skill loads (about %d tokens each)", path, len(raw), bigSize, MaxSize, len(raw)/4))
	case len(raw) > bigSize:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %d bytes (over %d): once the agent reads the skill all of it is in its context, and every request after carries it (about %d tokens each)", path, len(raw), bigSize, len(raw)/4))
	}
	for _, w := range folderWarnings {
		if !claude {
			// Said of Claude Code; the Codex and Gemini CLIs follow a
			// folder's links and list such a skill alike (the outside
			// check's runs), under their own names.
			w = strings.ReplaceAll(w, "the CLI ", "the agent's CLI ")
		}
		s.Warnings = append(s.Warnings, w)
	}
	if s.Hash, err = hashFiles(s.Dir, files); err != nil {
		return nil, err
	}
	s.ReadAs = agent
	return s, nil
}

// Parse reads SKILL.md content; file is only used in messages and for the
// folder name a skill without a usable name is listed under.
//
// It reads the frontmatter as the pinned CLI (2.1.328) does (frontmatter.go):
// where the CLI drops a block it cannot parse, or a field of a type it
// omits, so does vibe-test, and the warning says what the model will see.
// It accepts what the CLI loads: a name with spaces, dots or colons
// (listed under the folder name), a missing name or description (the
// folder name, the body's first line), a description over 1024
// characters, frontmatter the CLI reads only on its second try, and no
// frontmatter at all. Each becomes a warning naming the rule it breaks. It
// refuses what gives nothing to measure, though the CLI loads it: an empty
// body, and disable-model-invocation (the model cannot see or invoke the
// skill).
func Parse(file string, raw []byte) (*Skill, error) {
	s, hidden, err := parse(file, raw)
	if err == nil && hidden != nil {
		return nil, hidden
	}
	return s, err
}

// parse is Parse, disable-model-invocation's refusal (hidden) apart: it is
// Claude Code's alone (the Codex and Gemini CLIs ignore the field).
func parse(file string, raw []byte) (s *Skill, hidden error, err error) {
	fm := splitFrontmatter(string(raw))
	// The body as vibe-test reads it (the rubric, the empty check); the
	// CLI hands the model the file's own line endings.
	body := strings.ReplaceAll(fm.body, "\r\n", "\n")
	s = &Skill{Body: body, Raw: string(raw), Path: file}
	warn := func(format string, a ...any) { s.Warnings = append(s.Warnings, fmt.Sprintf(format, a...)) }
	line := func(field string) int { return fieldLine(fm, field) }
	noFront := ""
	if !fm.found {
		noFront = "no YAML frontmatter"
		if strings.HasPrefix(strings.TrimPrefix(string(raw), "\ufeff"), "---") {
			noFront = "the frontmatter is not closed"
		}
		warn("%s:1: %s (Agent Skills spec: SKILL.md starts with a \"---\" block holding name and description); the CLI reads the whole file as instructions", file, noFront)
	}
	if fm.firstErr != nil && fm.dropErr == nil {
		warn("%s (YAML rule: the frontmatter is not valid YAML; the CLI reads it on a second try, with values that hold special characters such as \": \" quoted and leading tabs made spaces, and so does vibe-test: quote such values)", yamlerr.Format(file, fm.line-1, fm.firstErr))
	}
	fields := fm.fields
	if strings.TrimSpace(body) == "" {
		return nil, nil, fmt.Errorf("%s: empty body: expected the skill's instructions after the frontmatter", file)
	}
	if v, ok := fields["disable-model-invocation"]; ok && cliTrue(v) {
		shown, _ := jsString(v)
		hidden = fmt.Errorf("%s:%d: frontmatter field \"disable-model-invocation\" is %q, which the CLI reads as true: it hides the skill from the model's listing and refuses the model's Skill call, so the skill can only be run as a /command and vibe-test, which measures whether the model uses it, has nothing to measure; remove the field (or set it to false) to test the skill", file, line("disable-model-invocation"), shown)
	}

	folder := folderName(file)
	declared, _ := fields["name"].(string)
	declared = strings.TrimSpace(declared)
	dropped := fm.dropErr != nil || fm.notMap
	switch {
	case dropped || fields["name"] == nil && noFront != "":
	case fields["name"] == nil:
		warn("%s:1: frontmatter field \"name\" is missing (Agent Skills spec: name is required); the CLI lists the skill under its folder name", file)
	case declared == "":
		warn("%s:%d: frontmatter field \"name\" is not a non-empty string (Agent Skills spec: name is required); the CLI lists the skill under its folder name", file, line("name"))
	case !nameRE.MatchString(declared) || utf8.RuneCountInString(declared) > maxName:
		warn("%s:%d: frontmatter field \"name\": %q breaks the Agent Skills spec (lowercase letters, digits and hyphens, at most %d characters); the CLI lists the skill under its folder name", file, line("name"), declared, maxName)
	default:
		// A valid name is the folder's in a spec-conforming install
		// (.claude/skills/<name>/): the skill is installed so.
		s.Name = declared
	}
	if s.Name == "" {
		// The CLI lists the skill under its folder's name as it is
		// (2.1.328: "ünï-skill", "Y-Caps", "库存"), and the skill is
		// installed under it, so that the listing and the paths its
		// body names (.claude/skills/<folder>/scripts/...) are the ones
		// the author's own install has: a slug of the folder ("n-skill",
		// "y-caps", "skill") broke both.
		s.Name = folder
		if s.Name == "" {
			s.Name = slug(declared)
		}
		if s.Name == "" {
			s.Name = "skill"
		}
		if declared != "" && declared != s.Name {
			s.DeclaredName = declared
		}
	}

	raw0, present := fields["description"]
	desc, usable := cliDescription(raw0)
	switch {
	case dropped, !present && noFront != "":
	case !present:
		warn("%s:1: frontmatter field \"description\" is missing (Agent Skills spec: description is required); the CLI shows the body's first line instead, so the model may not know when to use the skill", file)
	case !usable:
		warn("%s:%d: frontmatter field \"description\" is a %s, expected a string (Agent Skills spec); the CLI omits it and shows the body's first line instead", file, line("description"), yamlType(raw0))
	case desc == "":
		warn("%s:%d: frontmatter field \"description\" is empty (Agent Skills spec: description is required); the CLI shows the body's first line instead", file, line("description"))
	case isNumber(raw0) || raw0 == true || raw0 == false:
		warn("%s:%d: frontmatter field \"description\" is a %s, expected a string (Agent Skills spec); the CLI lists it as the text %q", file, line("description"), yamlType(raw0), desc)
	}
	if desc == "" {
		desc = firstLine(fm.body)
	}
	s.Description = desc
	if w, ok := jsString(fields["when_to_use"]); ok && fields["when_to_use"] != nil {
		s.WhenToUse = w
	}
	if n := utf8.RuneCountInString(s.Description); n > maxDescription && !dropped {
		how := "the CLI lists it whole"
		if len(utf16.Encode([]rune(s.Listing()))) >= maxListing && strings.HasSuffix(s.Listing(), "…") {
			how = fmt.Sprintf("the CLI lists only its first %d characters, then \"…\"", maxListing-1)
		}
		warn("%s:%d: frontmatter field \"description\": %d characters (Agent Skills spec: at most %d); %s", file, line("description"), n, maxDescription, how)
	}
	if dropped {
		what := fmt.Sprintf("%s:%d: the frontmatter is a list or a single value, not a mapping: the CLI ignores all of it", file, fm.line)
		switch {
		case errors.Is(fm.dropErr, errTooDeep):
			// The CLI's reader may take it; vibe-test's would run out of
			// memory, so here alone the skill runs otherwise than listed.
			what = fmt.Sprintf("%s:%d: frontmatter %v: vibe-test does not read it and ignores all of it (the CLI may read it: flatten the values)", file, fm.line, errTooDeep)
		case fm.dropErr != nil:
			what = fmt.Sprintf("%s: the CLI cannot parse this frontmatter and ignores all of it", yamlerr.Format(file, fm.line-1, fm.dropErr))
		}
		lost := "no field"
		if keys := topKeys(fm.text); len(keys) > 0 {
			lost = quoted(keys)
		}
		warn("%s (%s dropped): the model sees the skill listed as \"- %s: %s\", and vibe-test runs it so", what, lost, s.Name, s.Listing())
	}

	// context: fork (exactly that text, as the CLI's EKe reads it) runs the
	// skill as a sub-agent; agent: names the agent type it runs as.
	if fields["context"] == "fork" {
		s.Fork = true
		if a, ok := jsString(fields["agent"]); ok && fields["agent"] != nil {
			s.Agent = a
		}
		as := "a general-purpose sub-agent"
		if s.Agent != "" {
			as = fmt.Sprintf("the agent %q (.claude/agents/%s.md: its own model and tools; the sandbox has it only if the fixture does)", s.Agent, s.Agent)
		}
		warn("%s:%d: frontmatter field \"context\" is fork: the CLI runs the skill in %s; its tool calls reach vibe-test marked as the sub-agent's and are judged with the rest, its texts never do (the judge sees its steps and its final result only)", file, line("context"), as)
	}

	tools, problem := toolList(fields["allowed-tools"])
	if problem != "" {
		warn("%s:%d: frontmatter field \"allowed-tools\": %s", file, line("allowed-tools"), problem)
	}
	s.AllowedTools = tools
	// hooks: the CLI's sHs. A mapping of events registers them at the Skill
	// call; anything else, or a PreToolUse/PermissionRequest written at the
	// top level, loads the skill with no hooks and no allowed-tools; so does
	// an event whose matchers are not what its schema reads (each a mapping
	// with a "hooks" list: "Hook matcher \"hooks\" must be an array of
	// hook entries", seen in five public skills, whose allowed-tools the
	// CLI then dropped while vibe-test granted them).
	guard := ""
	for _, k := range []string{"PreToolUse", "PermissionRequest"} {
		if _, top := fields[k]; top {
			guard = fmt.Sprintf("%s:%d: frontmatter field %q is written at the top level, outside \"hooks\"", file, line(k), k)
		}
	}
	switch h := fields["hooks"].(type) {
	case nil:
	case map[string]any:
		for event := range h {
			s.Hooks = append(s.Hooks, event)
		}
		sort.Strings(s.Hooks)
		for _, event := range s.Hooks {
			if bad := hookShape(h[event]); bad != "" {
				guard = fmt.Sprintf("%s:%d: frontmatter field \"hooks\" (%s): %s", file, line("hooks"), event, bad)
				break
			}
		}
	default:
		if cliTruthy(h) {
			guard = fmt.Sprintf("%s:%d: frontmatter field \"hooks\" is a %s, expected a mapping of events", file, line("hooks"), yamlType(h))
		}
	}
	switch {
	case guard != "":
		warn("%s: the CLI loads the skill with no hooks and no allowed-tools, and so does vibe-test", guard)
		s.Hooks, s.AllowedTools = nil, nil
	case len(s.Hooks) > 0:
		warn("%s:%d: frontmatter field \"hooks\" (%s): the CLI registers them at the skill's Skill call and runs them for the rest of that CLI process, to the end of the conversation in the default interactive session, only in the invoking turn with --session resume (a SessionStart hook never runs); they are commands run with the agent's rights, in the jail when there is one. vibe-test runs them as the CLI does and records each run (hooks in run.json)", file, line("hooks"), strings.Join(s.Hooks, ", "))
		s.HooksWarning = s.Warnings[len(s.Warnings)-1]
	}
	if s.Paths = cliPaths(fields["paths"]); s.Paths != nil {
		warn("%s:%d: frontmatter field \"paths\" (%s): the CLI does not list the skill until the agent Reads, Writes or Edits a matching file, or a prompt @-mentions one (Bash, Glob and Grep do not count): until then the model can neither see nor invoke it", file, line("paths"), strings.Join(s.Paths, ", "))
	}
	return s, hidden, nil
}

// hookShape says what in one event's matchers the CLI's hook schema
// refuses ("" when nothing): the event holds a list of matchers, each a
// mapping with a "hooks" list.
func hookShape(v any) string {
	matchers, ok := v.([]any)
	if !ok {
		return fmt.Sprintf("a %s, expected a list of matchers", yamlType(v))
	}
	for i, m := range matchers {
		mm, ok := m.(map[string]any)
		if !ok {
			return fmt.Sprintf("matcher %d is a %s, expected a mapping", i+1, yamlType(m))
		}
		if _, ok := mm["hooks"].([]any); !ok {
			got := "missing"
			if mm["hooks"] != nil {
				got = "a " + yamlType(mm["hooks"])
			}
			return fmt.Sprintf("matcher %d's \"hooks\" is %s, expected a list of hook entries", i+1, got)
		}
	}
	return ""
}

// Listed is the name the driven agent's CLI lists the skill under.
func (s *Skill) Listed() string {
	if s.ListedAs != "" {
		return s.ListedAs
	}
	return s.Name
}

// Listing is the skill's text in the CLI's skills listing, after its name:
// what the model reads to decide whether to use it.
func (s *Skill) Listing() string { return listingText(s.Description, s.WhenToUse) }

// yamlType names a YAML value's type for a message.
func yamlType(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	case bool:
		return "bool"
	case string:
		return "string"
	}
	if isNumber(v) {
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// toolList reads allowed-tools as the CLI's egn/pP does: a string of
// tools separated by spaces or commas (the spec's form and the CLI's), or
// a YAML list of them (an item that is not text is dropped). Any other
// type grants nothing; problem says so. A pattern such as Bash(git
// diff:*) keeps its spaces and commas inside the parentheses.
func toolList(v any) (out []string, problem string) {
	add := func(s string) { out = append(out, SplitTools(s)...) }
	switch x := v.(type) {
	case nil:
	case string:
		add(x)
	case []any:
		for _, e := range x {
			str, ok := e.(string)
			if !ok {
				problem = fmt.Sprintf("a list item is a %s, expected tool names; the CLI skips it", yamlType(e))
				continue
			}
			add(str)
		}
	default:
		problem = fmt.Sprintf("a %s, expected tool names separated by spaces or commas, or a list; the CLI grants nothing from it", yamlType(v))
	}
	return out, problem
}

// SplitTools splits a tool list on spaces and commas outside parentheses.
func SplitTools(s string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || unicode.IsSpace(r)):
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return out
}

// folderName is the name of the folder SKILL.md is in, as the CLI lists
// the skill ("" for none: a file at the root).
func folderName(file string) string {
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	name := filepath.Base(filepath.Dir(file))
	if name == string(filepath.Separator) || name == "." {
		return ""
	}
	return name
}

// slug makes a folder-safe skill name: lowercase, runs of other characters
// as one hyphen.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if len(out) > maxName {
		out = strings.TrimRight(out[:maxName], "-")
	}
	return out
}

// fieldLine is the file line of "field:" in the frontmatter, or 1 (the
// opening ---) when the field is absent.
func fieldLine(fm frontmatter, field string) int {
	for i, l := range strings.Split(fm.text, "\n") {
		if strings.HasPrefix(l, field+":") {
			return fm.line + i
		}
	}
	return 1
}

// NotPart reports whether a top-level entry of the skill folder belongs to
// vibe-test, not to the skill: it is neither hashed nor installed in the
// sandbox, so the agent never sees the config, the rubric or the runs.
func NotPart(rel string) bool {
	top := strings.Split(filepath.ToSlash(rel), "/")[0]
	switch top {
	case "vibe-test.yaml", "rubric.json", "vibe-runs", ".git", "node_modules":
		return true
	}
	return false
}

// folderFiles lists the files of the skill folder as the CLI would read
// them: every link is followed, wherever it leads (the CLI has no "stay
// inside the folder" rule on Linux), so the sandbox gets the content the
// agent would read through it. What the CLI would show differently is a
// warning: a link that leads outside the folder (the skill needs that file
// on its users' machines too), a link that leads nowhere (left out: the
// agent finds nothing there), a link to a folder that holds it (left out:
// its copy would never end), a folder over bigFolder.
func folderFiles(dir string) ([]File, []string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading skill folder %s: %w", dir, err)
	}
	var files []File
	var warns []string
	var total int64
	warn := func(format string, a ...any) { warns = append(warns, dir+": "+fmt.Sprintf(format, a...)) }
	// root is the real folder being walked, prefix its path in the skill.
	var walk func(root, prefix string, outside bool, depth int) error
	walk = func(root, prefix string, outside bool, depth int) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.Join(prefix, rel)
			// vibe-test's own files wherever they lie below (a report the
			// author wrote into the folder, a run folder put there with
			// --out) are no part of the skill either.
			if p != root && (NotPart(rel) || ownfile.LeftOut(p, d)) {
				if filepath.ToSlash(rel) == "node_modules" {
					// A package tree (10,000 files and more, pnpm's links
					// copied as files) is not copied into every sandbox;
					// said, since a script that requires it fails under
					// vibe-test only.
					warn("node_modules/ is left out of the sandbox and of the skill's hash: a script of the skill that requires a package from it fails under vibe-test, where it would run in a person's session; bundle what the scripts need into the skill's own files, or install it in the config's fixture")
				}
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			src, fileRoot, fileOutside := p, root, outside
			info, err := d.Info()
			if err != nil {
				return err
			}
			if d.Type()&fs.ModeSymlink != 0 {
				show := filepath.ToSlash(rel)
				target, err := filepath.EvalSymlinks(p)
				if err != nil {
					link, _ := os.Readlink(p)
					warn("%s is a link to %s, which leads nowhere: the CLI lists the skill all the same and the agent finds nothing at %s; vibe-test leaves it out of the sandbox", show, link, show)
					return nil
				}
				if info, err = os.Stat(target); err != nil {
					return err
				}
				// What the link leads to is judged as the sandbox judges it:
				// a link to a report or an output folder is no part of the
				// skill either (it was hashed, and not installed).
				if info.IsDir() && (ownfile.IsOutputFolder(target) || ownfile.IsCaseSet(target)) || !info.IsDir() && ownfile.IsReport(target) {
					return nil
				}
				if info.IsDir() {
					parent, err := filepath.EvalSymlinks(filepath.Dir(p))
					if err != nil {
						return err
					}
					if within(target, parent) || depth >= 8 {
						warn("%s links to %s, a folder that holds it (or links nest more than 8 deep): vibe-test leaves it out of the sandbox, whose copy would never end", show, target)
						return nil
					}
				}
				leaves := !within(real, target) && !within(root, target)
				if why := neverCopied(target); leaves && why != "" {
					warn("%s links to %s, %s: vibe-test never copies it into the sandbox, whose copy would hold what vibe-test itself reads there, past the jail", show, target, why)
					return nil
				}
				if leaves {
					warn("%s links to %s, outside the skill folder: the CLI reads it there; vibe-test copies its content into each sandbox (the skill's users need that file too)", show, target)
				}
				if info.IsDir() {
					return walk(target, rel, outside || leaves, depth+1)
				}
				src = target
				if leaves {
					fileRoot, fileOutside = target, true
				}
			}
			if info.Mode().IsRegular() {
				total += info.Size()
				if total > maxFolder {
					return fmt.Errorf("%s: skill folder holds more than %d bytes, expected at most that (vibe-test copies it into every sandbox; the CLI itself has no limit)", dir, maxFolder)
				}
				if len(files) == maxFiles {
					return fmt.Errorf("%s: skill folder holds more than %d files, expected at most that (vibe-test copies it into every sandbox; the CLI itself has no limit)", dir, maxFiles)
				}
				files = append(files, File{Rel: filepath.ToSlash(rel), Src: src, Mode: info.Mode().Perm(), Root: fileRoot, Outside: fileOutside})
			}
			return nil
		})
	}
	if err := walk(real, "", false, 0); err != nil {
		if strings.HasPrefix(err.Error(), dir+": ") {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("reading skill folder %s: %w", dir, err)
	}
	if total > bigFolder {
		warn("the skill folder holds %d bytes (over %d): the CLI loads it (it reads the other files only when the agent asks); vibe-test copies all of it into every sandbox", total, bigFolder)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Rel < files[j].Rel })
	return files, warns, nil
}

// replaceInvalid is b with each byte that is not part of a UTF-8
// character replaced by U+FFFD, as a UTF-8 decoder that does not fail
// reads it.
func replaceInvalid(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

// within reports whether p is dir or lies inside it.
func within(dir, p string) bool {
	if dir == string(filepath.Separator) {
		return filepath.IsAbs(p) // "/" holds every path ("//" prefixed none)
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// neverCopied says why a file a link leads to outside the skill folder is
// left out of the sandbox ("" when it is copied). The CLI reads its own
// there; vibe-test, which reads the link's target itself, outside the
// jail and with the whole environment the agent is denied, would copy its
// own: /proc/self/environ is vibe-test's environment, keys and all. So no
// file of the running system (/proc, /sys, /dev), and none of the places
// credentials are kept in a home folder.
func neverCopied(target string) string {
	for _, sys := range []string{"/proc", "/sys", "/dev"} {
		if within(sys, target) {
			return "a file of the running system"
		}
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	for _, c := range credentialPlaces {
		if within(filepath.Join(home, c), target) {
			return "where credentials are kept"
		}
	}
	return ""
}

// credentialPlaces are the places, under a home folder, that tools keep
// credentials in.
var credentialPlaces = []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".netrc", ".git-credentials", ".npmrc", ".pypirc",
	filepath.Join(".config", "gcloud"), filepath.Join(".config", "gh"), filepath.Join(".claude", ".credentials.json"), filepath.Join(".codex", "auth.json"), filepath.Join(".gemini", "oauth_creds.json")}

// hashFiles hashes every file's relative path and content, in a fixed order.
func hashFiles(dir string, files []File) (string, error) {
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f.Src)
		if err != nil {
			return "", fmt.Errorf("reading skill file %s: %w", filepath.Join(dir, f.Rel), err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f.Rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ClaudePathWarning is the warning for a skill run by another agent than
// claude (agent, which finds it in dir) whose SKILL.md names a path under
// .claude/skills/, where Claude Code installs skills: commands on those
// paths fail there. "" when it names none.
func ClaudePathWarning(s *Skill, agent, dir string) string {
	for i, l := range strings.Split(s.Raw, "\n") {
		if strings.Contains(l, ".claude/skills/") {
			return fmt.Sprintf("skill %s: SKILL.md:%d names .claude/skills/, where Claude Code installs skills; --agent %s finds the skill at %s/, so commands on those paths fail in the sandbox (name the skill's files relative to its folder)",
				s.Name, i+1, agent, filepath.ToSlash(dir))
		}
	}
	return ""
}
