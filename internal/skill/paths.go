package skill

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Reveals reports whether the agent touching rel (a slash path relative to
// its working folder) makes the CLI list a skill with paths: the CLI
// matches each path the Read, Write and Edit tools are given against the
// globs, gitignore style (the `ignore` package: a glob with no slash but a
// trailing one matches a name at any depth, one with a slash matches from
// the root, a match on a folder covers what is in it), skipping paths that
// start with "..". A skill without paths is always listed.
func (s *Skill) Reveals(rel string) bool {
	if s.Paths == nil {
		return true
	}
	rel = path.Clean(strings.TrimPrefix(rel, "./"))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return false
	}
	for _, g := range s.Paths {
		re := globRE(g)
		if re == nil {
			continue
		}
		// The path itself, then each folder above it.
		for p := rel; p != "." && p != "/"; p = path.Dir(p) {
			if re.MatchString(p) {
				return true
			}
		}
	}
	return false
}

// globRE turns one gitignore-style glob into a regular expression over a
// slash path; nil for one it cannot read (a negation, an empty one).
func globRE(g string) *regexp.Regexp {
	if g == "" || strings.HasPrefix(g, "!") || strings.HasPrefix(g, "#") {
		return nil
	}
	g = strings.TrimSuffix(g, "/") // folders only: a file below one matches through its folder
	anchored := strings.Contains(g, "/")
	g = strings.TrimPrefix(g, "/")
	var b strings.Builder
	b.WriteString("^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}
	for i := 0; i < len(g); i++ {
		switch c := g[i]; {
		case strings.HasPrefix(g[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(g[i:], "/**") && i+3 == len(g):
			b.WriteString("/.*")
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(g[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		case c == '\\' && i+1 < len(g):
			i++
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil
	}
	return re
}

// PathsNotes are what a run adds to a paths: skill's warning once it
// knows the fixture (files: the paths the sandbox starts with, relative,
// slash-separated) and the session mode: which touch of a fixture file
// would list the skill, or that none would; and, in resume mode, that the
// CLI forgets the activation in every new process.
func PathsNotes(s *Skill, files []string, resume bool) []string {
	if s.Paths == nil {
		return nil
	}
	var hits []string
	for _, f := range files {
		if s.Reveals(f) {
			hits = append(hits, f)
		}
	}
	sort.Strings(hits)
	var out []string
	globs := strings.Join(s.Paths, ", ")
	switch {
	case len(hits) == 0:
		out = append(out, fmt.Sprintf("skill %s (paths: %s): no file of the fixture matches, so the model sees the skill only if the agent Writes a matching file, or a prompt @-mentions one", s.Name, globs))
	default:
		more := ""
		if len(hits) > 3 {
			more = fmt.Sprintf(" (or one of %d more)", len(hits)-3)
			hits = hits[:3]
		}
		out = append(out, fmt.Sprintf("skill %s (paths: %s): a Read, Write or Edit of %s%s from the fixture lists it; until the agent does one (a Bash cat or a Grep does not count), or a prompt @-mentions one, the model cannot see the skill", s.Name, globs, strings.Join(hits, ", "), more))
	}
	if resume {
		out = append(out, fmt.Sprintf("skill %s (paths: %s) with --session resume: each turn is a new CLI process, which forgets that a matching file was touched while the history still lists the skill, so its Skill call fails with \"Unknown skill\" until a matching file is touched again in that turn; the default interactive session keeps it", s.Name, globs))
	}
	return out
}
