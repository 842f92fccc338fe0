package fakeclaude

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// projectSkill is one skill under <cwd>/.claude/skills/<folder>/SKILL.md,
// where the CLI finds project skills (--setting-sources project hides the
// user's own).
type projectSkill struct {
	name            string // the folder's name, which the CLI lists
	dir             string
	description     string
	body            string
	hasAllowedTools bool
	disabled        bool // disable-model-invocation: true, yes, 1 or on
}

func findSkills(cwd string) map[string]projectSkill {
	out := map[string]projectSkill{}
	root := filepath.Join(cwd, ".claude", "skills")
	entries, err := os.ReadDir(root)
	if err != nil {
		return out
	}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
		if err != nil {
			continue
		}
		sk := parseSkill(string(b))
		sk.name, sk.dir = e.Name(), dir
		out[sk.name] = sk
	}
	return out
}

// parseSkill reads the frontmatter line by line, leniently: enough for the
// skills the fast tests install. It does not reproduce the CLI's YAML
// reading (a block it cannot parse is dropped whole: internal/skill), nor
// paths: (every skill is listed from the start).
func parseSkill(text string) projectSkill {
	var sk projectSkill
	body := text
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		if end := strings.Index(rest, "\n---"); end >= 0 {
			front := rest[:end]
			body = rest[end+len("\n---"):]
			body = strings.TrimPrefix(body, "\n")
			for _, line := range strings.Split(front, "\n") {
				k, v, ok := strings.Cut(line, ":")
				if !ok || strings.HasPrefix(line, " ") {
					continue
				}
				v = strings.Trim(strings.TrimSpace(v), `"'`)
				switch strings.TrimSpace(k) {
				case "description":
					sk.description = v
				case "allowed-tools":
					sk.hasAllowedTools = true
				case "disable-model-invocation":
					// The CLI's truthy values (skill.cliTrue).
					switch strings.ToLower(v) {
					case "1", "true", "yes", "on":
						sk.disabled = true
					}
				}
			}
		}
	}
	sk.body = strings.TrimLeft(body, "\n")
	if sk.description == "" {
		sk.description, _, _ = strings.Cut(strings.TrimSpace(sk.body), "\n")
	}
	return sk
}

func skillNames(skills map[string]projectSkill) []string {
	names := make([]string, 0, len(skills))
	for n := range skills {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// skillListing is the part of the environment message that lists skills
// (scripted's BodyLacks looks for "- <name>:").
func skillListing(skills map[string]projectSkill) string {
	var b strings.Builder
	b.WriteString("The following skills are available for use with the Skill tool:\n\n")
	for _, n := range skillNames(skills) {
		fmt.Fprintf(&b, "- %s: %s\n", n, skills[n].description)
	}
	return b.String()
}

// structuredOutput checks the model's answer against --json-schema.
func (f *fake) structuredOutput(input json.RawMessage) toolOutcome {
	if f.schema != nil {
		if err := f.schema.validate(string(input)); err != nil {
			return toolOutcome{content: "Output does not match required schema: " + oneLine(err.Error()), isError: true}
		}
	}
	return toolOutcome{content: "Structured output provided successfully", structured: input}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
