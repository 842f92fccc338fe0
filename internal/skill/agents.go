package skill

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vibe-test/vibe-test/internal/yamlerr"
)

// The agents whose CLIs read a skill otherwise than Claude Code does: the
// names internal/agents gives them (a test holds them equal; this package
// cannot import that one, which imports every agent package).
const (
	codexAgent  = "codex"
	geminiAgent = "gemini"
)

// AsText is LoadAs's reading of a skill no CLI lists: its text is handed
// to the agent as it is (an eval's --deliver system-prompt). Not "", so
// that an agent left unset is never taken for it.
const AsText = "text"

// claudeFields are the frontmatter fields only Claude Code reads: the
// Codex CLI (0.171.0) reads name, description and metadata, the Gemini
// CLI (0.61.0) name and description, and both ignore the rest, so these
// change nothing under them (hooks: the engine says so itself).
// allowed-tools has a line of its own (vibe-test grants the tools).
var claudeFields = []string{"context", "agent", "disable-model-invocation", "paths", "model", "user-invocable", "when_to_use", "argument-hint"}

// readAs replaces Claude Code's reading of the frontmatter (Parse's
// warnings, its refusal of disable-model-invocation, paths: and context:
// fork) with the agent's own CLI's: it refuses, in one line, a skill the
// CLI would never list (the run would blame the skill for what the CLI
// did), and warns of what the CLI lists otherwise than written. The
// listing itself is the CLI's: what vibe-test installs is unchanged.
func (s *Skill) readAs(agent string, raw []byte) error {
	text := string(raw)
	fm := splitFrontmatter(text)
	var listed listing
	switch agent {
	case geminiAgent:
		listed = geminiListing(s.Path, text)
	case codexAgent:
		listed = codexListing(s.Path, text, fm, folderName(s.Path))
	default:
		return fmt.Errorf("skill: no reading for agent %q", agent)
	}
	if listed.unlisted != "" {
		return fmt.Errorf("%s, so the agent could never use it; %s, or run it with --agent claude", listed.unlisted, listed.fix)
	}
	fields := fm.fields
	if parsed, err := parseYAML(fm.text); err == nil {
		if m, ok := parsed.(map[string]any); ok {
			fields = m
		}
	}
	cli := cliName(agent)
	s.Warnings = slices.Clone(listed.warnings)
	warn := func(format string, a ...any) { s.Warnings = append(s.Warnings, fmt.Sprintf(format, a...)) }
	s.Description = listed.description
	if listed.name != s.Name {
		s.ListedAs = listed.name
	}
	var ignored []string
	for _, k := range claudeFields {
		if _, ok := fields[k]; ok {
			ignored = append(ignored, k)
		}
	}
	if len(ignored) > 0 {
		line := fieldLine(fm, ignored[0])
		warn("%s:%d: frontmatter %s %s %s Claude Code's; the %s ignores %s, and so does this run", s.Path, line, plural(len(ignored), "field", "fields"), quoted(ignored), plural(len(ignored), "is", "are"), cli, plural(len(ignored), "it", "them"))
	}
	// Claude Code drops allowed-tools when its hooks: are malformed; this
	// CLI reads neither, and vibe-test grants the field's tools.
	tools, problem := toolList(fields["allowed-tools"])
	if problem != "" {
		warn("%s:%d: frontmatter field \"allowed-tools\": %s", s.Path, fieldLine(fm, "allowed-tools"), strings.Replace(problem, "the CLI", "vibe-test", 1))
	}
	s.AllowedTools = tools
	if len(s.AllowedTools) > 0 {
		warn("%s:%d: frontmatter field \"allowed-tools\": the %s grants no tool for a skill; vibe-test grants these (%s) for the whole conversation, as it does its base tools (a line below names any the agent cannot have)", s.Path, fieldLine(fm, "allowed-tools"), cli, strings.Join(s.AllowedTools, ", "))
	}
	// Codex lists no skill whose SKILL.md is itself a link (seen on the
	// pinned binary, silently); the sandbox installs a copy, so the run
	// lists one the author's own install would not.
	if st, err := os.Lstat(s.Path); agent == codexAgent && err == nil && st.Mode()&os.ModeSymlink != 0 {
		warn("%s is a link: the %s lists no skill whose SKILL.md is one, so installed as it is the skill is not seen; vibe-test installs a copy, which it lists (make SKILL.md a file)", s.Path, cli)
	}
	// Claude Code's alone: a sub-agent, a listing held back until a file
	// is touched, its hooks' line (the engine writes the agent's own).
	s.Fork, s.Agent, s.Paths, s.WhenToUse, s.HooksWarning = false, "", nil, "", ""
	return nil
}

// listing is a skill as an agent's CLI lists it: unlisted says why it
// lists none ("" when it does) and fix what would make it list it;
// warnings are what it lists otherwise than the Agent Skills spec reads.
type listing struct {
	name, description string
	unlisted, fix     string
	warnings          []string
}

// cliName is how a message names an agent's CLI and its pinned version.
func cliName(agent string) string {
	switch agent {
	case geminiAgent:
		return "Gemini CLI (0.61.0)"
	case codexAgent:
		return "Codex CLI (0.171.0)"
	}
	return agent
}

// geminiFront is the Gemini CLI's FRONTMATTER_REGEX, matched against the
// file as read (no byte-order mark stripped: a file starting with one has
// no frontmatter for it).
var geminiFront = regexp.MustCompile(`^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n([\s\S]*))?`)

// geminiLine* are its fallback reader's patterns (parseSimpleFrontmatter).
var (
	geminiNameLine = regexp.MustCompile(`^\s*name:\s*(.*)$`)
	geminiDescLine = regexp.MustCompile(`^\s*description:\s*(.*)$`)
	geminiMoreLine = regexp.MustCompile(`^[ \t]+\S`)
	lineBreak      = regexp.MustCompile(`\r?\n`) // its content.split(/\r?\n/)
)

// geminiBuiltins are the skills the Gemini CLI (0.61.0) ships
// (gemini.BuiltinSkills; a test holds them equal): vibe-test's settings
// hide them, except the one the skill under test replaces.
var geminiBuiltins = []string{"skill-creator", "antigravity-support"}

// geminiUnsafe are the characters the Gemini CLI turns to "-" in a name.
var geminiUnsafe = regexp.MustCompile(`[:\\/<>*?"|]`)

// geminiListing is the Gemini CLI's loadSkillFromFile (0.61.0,
// packages/core/src/skills/skillLoader.ts): the frontmatter's YAML when
// both name and description are strings in it, else its fallback, which
// takes the text after each "name:" and "description:" line (a
// description's indented lines after it joined by spaces), and no skill
// unless it finds both. The name has its unsafe characters made "-".
func geminiListing(file, text string) listing {
	l := listing{fix: "give SKILL.md a \"---\" block at its first byte with name: and description: lines"}
	m := geminiFront.FindStringSubmatch(text)
	if m == nil {
		l.unlisted = fmt.Sprintf("%s: the Gemini CLI (0.61.0) lists no skill whose SKILL.md does not start with a \"---\" block (closed by a \"---\" line, no byte-order mark before it)", file)
		return l
	}
	cli := cliName(geminiAgent)
	name, desc, ok := "", "", false
	// js-yaml's load throws on a key given twice, where Claude Code's
	// reader keeps the last: then the fallback reads the lines.
	if v, err := parseYAMLStrict(m[1]); err == nil {
		if fields, isMap := v.(map[string]any); isMap {
			n, nameOK := fields["name"].(string)
			d, descOK := fields["description"].(string)
			name, desc, ok = n, d, nameOK && descOK
		}
	}
	if !ok {
		var foundName, foundDesc bool
		lines := lineBreak.Split(m[1], -1)
		for i := 0; i < len(lines); i++ {
			if nm := geminiNameLine.FindStringSubmatch(lines[i]); nm != nil {
				name, foundName = strings.TrimSpace(nm[1]), true
				continue
			}
			if dm := geminiDescLine.FindStringSubmatch(lines[i]); dm != nil {
				parts := []string{strings.TrimSpace(dm[1])}
				for i+1 < len(lines) && geminiMoreLine.MatchString(lines[i+1]) {
					parts = append(parts, strings.TrimSpace(lines[i+1]))
					i++
				}
				desc, foundDesc = strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), " "), true
			}
		}
		if !foundName || !foundDesc {
			missing := "name:"
			if foundName {
				missing = "description:"
			}
			l.unlisted = fmt.Sprintf("%s: the Gemini CLI (0.61.0) lists no skill whose frontmatter has no name and description as YAML strings and no %q line to fall back on", file, missing)
			l.fix = "give the frontmatter a name and a description"
			return l
		}
		l.warnings = append(l.warnings, fmt.Sprintf("%s: the frontmatter has no name and description as YAML strings (not valid YAML, or a value of another type); the %s reads its name: and description: lines as text and lists the skill as %q: %q", file, cli, geminiUnsafe.ReplaceAllString(name, "-"), desc))
	}
	l.name, l.description = geminiUnsafe.ReplaceAllString(name, "-"), desc
	if l.name != name {
		l.warnings = append(l.warnings, fmt.Sprintf("%s: frontmatter field \"name\": %q; the %s lists it as %q (it makes each of :\\/<>*?\"| a \"-\")", file, name, cli, l.name))
	}
	for _, b := range geminiBuiltins {
		if strings.EqualFold(l.name, b) && l.name != b {
			// The CLI lists both (keyed by the exact name), and its
			// activate_skill finds a name case aside, the built-in first.
			l.unlisted = fmt.Sprintf("%s: the skill's name %q differs in case only from the Gemini CLI (0.61.0)'s built-in skill %q, whose instructions its activate_skill loads in the skill's place", file, l.name, b)
			l.fix = fmt.Sprintf("name it %q exactly (it then replaces the built-in) or otherwise", b)
			return l
		}
	}
	switch {
	case l.name == "":
		l.warnings = append(l.warnings, fmt.Sprintf("%s: frontmatter field \"name\" is empty: the %s lists the skill with no name, and vibe-test cannot tell the agent's activate_skill of it from another's", file, cli))
	case !nameRE.MatchString(l.name) || utf8.RuneCountInString(l.name) > maxName:
		l.warnings = append(l.warnings, fmt.Sprintf("%s: frontmatter field \"name\": %q breaks the Agent Skills spec (lowercase letters, digits and hyphens, at most %d characters); the %s lists it as written", file, l.name, maxName, cli))
	}
	switch n := utf8.RuneCountInString(desc); {
	case strings.TrimSpace(desc) == "":
		l.warnings = append(l.warnings, fmt.Sprintf("%s: frontmatter field \"description\" is empty (Agent Skills spec: description is required); the %s lists the skill with no description, so the model may not know when to use it", file, cli))
	case n > maxDescription:
		l.warnings = append(l.warnings, fmt.Sprintf("%s: frontmatter field \"description\": %d characters (Agent Skills spec: at most %d); the %s lists it whole", file, n, maxDescription, cli))
	}
	return l
}

// codexMaxDescription: the Codex CLI lists a longer description's first
// codexMaxDescription-3 characters, then "...".
const codexMaxDescription = 1024

// codexListing is the Codex CLI's skill loader (0.171.0) as observed on
// the pinned binary against a stand-in model: a "---" block it reads as
// YAML, with values holding ": " or brackets read as text (a broken quote
// or a tab-indented line loses the skill, and the CLI logs "failed to
// load skill" on its stderr, which a run watches for too: conversation's
// skillLoadFailure), a required description (text, a number or a
// bool, not blank), a name of at most 64 characters that is a scalar when
// given (else the folder's name).
func codexListing(file, text string, fm frontmatter, folder string) listing {
	l := listing{fix: "give SKILL.md a \"---\" block with a description"}
	cli := cliName(codexAgent)
	switch {
	case strings.HasPrefix(text, "\ufeff"):
		l.unlisted = fmt.Sprintf("%s: starts with a byte-order mark: the %s finds no frontmatter after it and lists no such skill", file, cli)
		l.fix = "save it without the byte-order mark"
		return l
	case !fm.found:
		l.unlisted = fmt.Sprintf("%s: no YAML frontmatter delimited by ---: the %s lists no such skill", file, cli)
		return l
	}
	v, err := parseYAML(fm.text)
	if err != nil && !leadingTabs.MatchString(fm.text) {
		// It reads again with such values quoted, as Claude Code does (seen:
		// "Use when: ...", "bad: name", an unclosed "[Read"), but leaves a
		// tab-indented line an error.
		v, err = parseYAML(quoteSpecial(fm.text))
	}
	fields, isMap := v.(map[string]any)
	switch {
	case err != nil:
		l.unlisted = fmt.Sprintf("%s: the frontmatter is not valid YAML, and the %s lists no such skill (it reads an unquoted \": \" or bracket in a value, not a broken quote or a tab-indented line)", yamlerr.Format(file, fm.line-1, err), cli)
		l.fix = "close the quotes and indent with spaces"
		return l
	case !isMap:
		l.unlisted = fmt.Sprintf("%s: the frontmatter is not a mapping of fields: the %s lists no such skill", file, cli)
		return l
	}
	// Its reader keeps no duplicate of the fields it reads, and reads
	// metadata as a mapping ("duplicate field `description`", "metadata:
	// invalid type: sequence").
	for _, k := range []string{"name", "description", "metadata"} {
		if n := countTopKey(fm.text, k); n > 1 {
			l.unlisted = fmt.Sprintf("%s:%d: frontmatter field %q is given %d times: the %s lists no such skill", file, fieldLine(fm, k), k, n, cli)
			l.fix = "keep one"
			return l
		}
	}
	if m, given := fields["metadata"]; given && m != nil {
		if _, ok := m.(map[string]any); !ok {
			l.unlisted = fmt.Sprintf("%s:%d: frontmatter field \"metadata\" is a %s, expected a mapping: the %s lists no such skill", file, fieldLine(fm, "metadata"), yamlType(m), cli)
			l.fix = "make metadata a mapping of keys, or remove it"
			return l
		}
	}
	desc, descOK := jsString(fields["description"])
	switch {
	case fields["description"] == nil || !descOK:
		l.unlisted = fmt.Sprintf("%s:%d: frontmatter field \"description\" is missing or not text: the %s lists no skill without one", file, fieldLine(fm, "description"), cli)
		return l
	case strings.TrimSpace(desc) == "":
		l.unlisted = fmt.Sprintf("%s:%d: frontmatter field \"description\" is empty: the %s lists no skill without one", file, fieldLine(fm, "description"), cli)
		return l
	}
	l.name = folder
	if raw, given := fields["name"]; given && raw != nil {
		name, ok := jsString(raw)
		switch {
		case !ok:
			l.unlisted = fmt.Sprintf("%s:%d: frontmatter field \"name\" is a %s, expected text: the %s lists no such skill", file, fieldLine(fm, "name"), yamlType(raw), cli)
			l.fix = "make the name a plain word"
			return l
		case utf8.RuneCountInString(name) > maxName:
			l.unlisted = fmt.Sprintf("%s:%d: frontmatter field \"name\": %d characters: the %s lists no skill whose name is over %d", file, fieldLine(fm, "name"), utf8.RuneCountInString(name), cli, maxName)
			l.fix = fmt.Sprintf("shorten the name to %d characters", maxName)
			return l
		case strings.TrimSpace(name) != "":
			l.name = name
		}
	}
	if !nameRE.MatchString(l.name) {
		l.warnings = append(l.warnings, fmt.Sprintf("%s: the skill's name %q breaks the Agent Skills spec (lowercase letters, digits and hyphens, at most %d characters); the %s lists it as written", file, l.name, maxName, cli))
	}
	l.description = desc
	if n := utf8.RuneCountInString(desc); n > codexMaxDescription {
		l.description = string([]rune(desc)[:codexMaxDescription-3]) + "..."
		l.warnings = append(l.warnings, fmt.Sprintf("%s:%d: frontmatter field \"description\": %d characters (Agent Skills spec: at most %d); the %s lists its first %d, then \"...\"", file, fieldLine(fm, "description"), n, maxDescription, cli, codexMaxDescription-3))
	}
	return l
}

// countTopKey is how many of the block's lines start with key:.
func countTopKey(text, key string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if m := topKeyRE.FindStringSubmatch(l); m != nil && m[1] == key {
			n++
		}
	}
	return n
}

// plural is one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
