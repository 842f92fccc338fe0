package skill

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/gemini"
)

func TestAgentNamesAreTheRegistrys(t *testing.T) {
	if codexAgent != agents.Codex || geminiAgent != agents.Gemini {
		t.Fatalf("skill's agent names %q, %q differ from internal/agents' %q, %q", codexAgent, geminiAgent, agents.Codex, agents.Gemini)
	}
	if !slices.Equal(geminiBuiltins, gemini.BuiltinSkills()) {
		t.Fatalf("gemini's built-in skills %q here, %q in internal/gemini", geminiBuiltins, gemini.BuiltinSkills())
	}
}

// TestLoadAsListsWhatEachCLIListed holds LoadAs against what the pinned
// Codex (0.171.0) and Gemini (0.61.0) CLIs did with the same SKILL.md
// files, installed in a sandbox with a stand-in model: the skills each
// listed in its request (codex's "## Skills", gemini's
// <available_skills>), the name and description it listed them by, and
// codex's "failed to load skill" reason on its stderr for the others.
// Claude Code refuses only the disable-model-invocation one, which
// neither other CLI reads.
func TestLoadAsListsWhatEachCLIListed(t *testing.T) {
	long := strings.Repeat("x", 1100)
	cases := []struct {
		folder, front string
		// "" when the CLI lists none; else the name and description
		// (gemini's empty name: the skill's own, warned of).
		codexName, codexDesc   string
		geminiName, geminiDesc string
		geminiListed           bool
		codexWhy               string // part of the refusal under codex
	}{
		{"ok-basic", "---\nname: ok-basic\ndescription: Basic valid skill.\n---", "ok-basic", "Basic valid skill.", "ok-basic", "Basic valid skill.", true, ""},
		{"no-desc", "---\nname: no-desc\n---", "", "", "", "", false, "\"description\" is missing"},
		{"no-name", "---\ndescription: Skill without a name.\n---", "no-name", "Skill without a name.", "", "", false, ""},
		{"num-desc", "---\nname: num-desc\ndescription: 42\n---", "num-desc", "42", "num-desc", "42", true, ""},
		{"list-desc", "---\nname: list-desc\ndescription: [alpha, beta]\n---", "", "", "list-desc", "[alpha, beta]", true, "not text"},
		{"empty-desc", "---\nname: empty-desc\ndescription: \"\"\n---", "", "", "empty-desc", "", true, "is empty"},
		{"desc-null", "---\nname: desc-null\ndescription:\n---", "", "", "desc-null", "", true, "missing"},
		{"desc-space", "---\nname: desc-space\ndescription: \"   \"\n---", "", "", "desc-space", "   ", true, "is empty"},
		{"num-name", "---\nname: 123\ndescription: Numeric name skill.\n---", "123", "Numeric name skill.", "123", "Numeric name skill.", true, ""},
		{"name-list", "---\nname: [a, b]\ndescription: A list for a name.\n---", "", "", "[a, b]", "A list for a name.", true, "\"name\" is a list"},
		{"long-desc", "---\nname: long-desc\ndescription: " + long + "\n---", "long-desc", long[:1021] + "...", "long-desc", long, true, ""},
		{"long-name", "---\nname: " + strings.Repeat("a", 70) + "\ndescription: Seventy char name skill.\n---", "", "", strings.Repeat("a", 70), "Seventy char name skill.", true, "70 characters"},
		{"bad-name", "---\nname: My Fancy Skill\ndescription: Name with spaces.\n---", "My Fancy Skill", "Name with spaces.", "My Fancy Skill", "Name with spaces.", true, ""},
		{"colon-name", "---\nname: \"ns:colon\"\ndescription: Name with a colon.\n---", "ns:colon", "Name with a colon.", "ns-colon", "Name with a colon.", true, ""},
		{"dmi", "---\nname: dmi\ndescription: Hidden from Claude's model.\ndisable-model-invocation: true\n---", "dmi", "Hidden from Claude's model.", "dmi", "Hidden from Claude's model.", true, ""},
		{"yaml-broken", "---\nname: yaml-broken\ndescription: \"unterminated quote\n---", "", "", "yaml-broken", "\"unterminated quote", true, "not valid YAML"},
		{"yaml-colon", "---\nname: yaml-colon\ndescription: Use when: the user asks\n---", "yaml-colon", "Use when: the user asks", "yaml-colon", "Use when: the user asks", true, ""},
		{"bad-name-line", "---\nname: bad: name\ndescription: Name line has colon space.\n---", "bad: name", "Name line has colon space.", "bad- name", "Name line has colon space.", true, ""},
		{"yaml-badfield", "---\nname: yaml-badfield\ndescription: Broken other field.\nallowed-tools: [Read\n---", "yaml-badfield", "Broken other field.", "yaml-badfield", "Broken other field.", true, ""},
		{"tab-indent", "---\nname: tab-indent\ndescription: Tab indented metadata.\nmetadata:\n\tversion: 1\n---", "", "", "tab-indent", "Tab indented metadata.", true, "tab-indented"},
		{"crlf-skill", "---\r\nname: crlf-skill\r\ndescription: CRLF line endings.\r\n---\r", "crlf-skill", "CRLF line endings.", "crlf-skill", "CRLF line endings.", true, ""},
		{"desc-block", "---\nname: desc-block\ndescription: |\n  Block line one.\n  Block line two.\n---", "desc-block", "Block line one.\nBlock line two.\n", "desc-block", "Block line one.\nBlock line two.", true, ""},
		{"name-empty", "---\nname: \"\"\ndescription: Empty name string.\n---", "name-empty", "Empty name string.", "name-empty", "Empty name string.", true, ""},
		{"dup-desc", "---\nname: dup-desc\ndescription: First.\ndescription: Second.\n---", "", "", "dup-desc", "Second.", true, "given 2 times"},
		{"dup-name", "---\nname: dup-name\nname: dup-name\ndescription: Dup name.\n---", "", "", "dup-name", "Dup name.", true, "given 2 times"},
		{"meta-list", "---\nname: meta-list\ndescription: Meta list.\nmetadata: [1, 2]\n---", "", "", "meta-list", "Meta list.", true, "expected a mapping"},
		{"text-after-quote", "---\nname: text-after-quote\ndescription: \"quoted\" then text\n---", "", "", "text-after-quote", "\"quoted\" then text", true, "not valid YAML"},
		{"anchor", "---\nname: anchor\ndescription: &a Anchored desc.\n---", "anchor", "Anchored desc.", "anchor", "Anchored desc.", true, ""},
		{"at-desc", "---\nname: at-desc\ndescription: @mention starts it\n---", "at-desc", "@mention starts it", "at-desc", "@mention starts it", true, ""},
		{"one-space", "---\nname: one-space\ndescription: ok\nmetadata:\n version: 1\n---", "one-space", "ok", "one-space", "ok", true, ""},
		{"name-bool", "---\nname: true\ndescription: Bool name.\n---", "true", "Bool name.", "true", "Bool name.", true, ""},
		{"gemini-dup-quoted", "---\nname: \"quoted\"\ndescription: \"Use it: now\"\nname: \"quoted\"\n---", "", "", "-quoted-", "\"Use it: now\"", true, "given 2 times"},
		{"Skill-Creator", "---\nname: Skill-Creator\ndescription: Makes skills.\n---", "Skill-Creator", "Makes skills.", "", "", false, ""},
		{"skill-creator", "---\nname: skill-creator\ndescription: Makes skills.\n---", "skill-creator", "Makes skills.", "skill-creator", "Makes skills.", true, ""},
		{"fm-list", "---\n- a\n- b\n---", "", "", "", "", false, "not a mapping"},
		{"no-fm", "# Steps only", "", "", "", "", false, "no YAML frontmatter"},
		{"unclosed", "---\nname: unclosed\ndescription: Never closed.", "", "", "", "", false, "no YAML frontmatter"},
		{"bom-skill", "\ufeff---\nname: bom-skill\ndescription: Starts with a BOM.\n---", "", "", "", "", false, "byte-order mark"},
	}
	for _, c := range cases {
		t.Run(c.folder, func(t *testing.T) {
			p := write(t, filepath.Join(t.TempDir(), c.folder), "SKILL.md", c.front+"\n# Steps\nRun `ls` and report.\n")
			sk, err := LoadAs(p, codexAgent)
			switch {
			case c.codexName == "" && err == nil:
				t.Errorf("codex: loaded as %q, want refused (the CLI listed no such skill)", sk.Name)
			case c.codexName == "" && !strings.Contains(err.Error(), c.codexWhy):
				t.Errorf("codex: refused with %q, want it to say %q", err, c.codexWhy)
			case c.codexName != "" && err != nil:
				t.Errorf("codex: refused (%v), want listed as %q", err, c.codexName)
			case c.codexName != "":
				if got := firstNonEmpty(sk.ListedAs, sk.Name); got != c.codexName {
					t.Errorf("codex: listed as %q, want %q", got, c.codexName)
				}
				if sk.Description != c.codexDesc {
					t.Errorf("codex: description %q, want %q", sk.Description, c.codexDesc)
				}
			}
			sk, err = LoadAs(p, geminiAgent)
			switch {
			case !c.geminiListed && err == nil:
				t.Errorf("gemini: loaded as %q, want refused (the CLI listed no such skill)", sk.Name)
			case c.geminiListed && err != nil:
				t.Errorf("gemini: refused (%v), want listed as %q", err, c.geminiName)
			case c.geminiListed:
				if got := firstNonEmpty(sk.ListedAs, sk.Name); got != c.geminiName {
					t.Errorf("gemini: listed as %q, want %q", got, c.geminiName)
				}
				if sk.Description != c.geminiDesc {
					t.Errorf("gemini: description %q, want %q", sk.Description, c.geminiDesc)
				}
			}
			for _, agent := range []string{codexAgent, geminiAgent} {
				if sk, err := LoadAs(p, agent); err == nil {
					for _, w := range sk.Warnings {
						if strings.Contains(w, "the CLI ") {
							t.Errorf("%s: a warning speaks of Claude Code's CLI: %s", agent, w)
						}
					}
				}
			}
			if _, err := Load(p); (err != nil) != (c.folder == "dmi") {
				t.Errorf("claude: Load gave %v; Claude Code refuses the dmi skill alone", err)
			}
		})
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestLoadAsTakesALargeSkillOtherCLIsRead: Claude Code skips a SKILL.md
// over MaxSize; the Codex and Gemini CLIs read one of 1.1 MB whole.
func TestLoadAsTakesALargeSkillOtherCLIsRead(t *testing.T) {
	p := write(t, t.TempDir(), "SKILL.md", "---\nname: big\ndescription: A big one.\n---\n"+strings.Repeat("Run the census.\n", 70_000))
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "the CLI skips a SKILL.md over") {
		t.Fatalf("claude: %v, want the size refusal", err)
	}
	for _, agent := range []string{codexAgent, geminiAgent} {
		sk, err := LoadAs(p, agent)
		if err != nil {
			t.Fatalf("%s: %v, want it loaded (the CLI reads it)", agent, err)
		}
		if !strings.Contains(strings.Join(sk.Warnings, "\n"), "bytes (over 524288)") {
			t.Errorf("%s: no size warning in %q", agent, sk.Warnings)
		}
	}
}

// Claude Code drops allowed-tools when hooks: is malformed; the Codex and
// Gemini CLIs read neither, so vibe-test grants the tools and says so. An
// invalid byte is warned of without Claude Code's words.
func TestLoadAsKeepsAllowedToolsAndSpeaksForItsCLI(t *testing.T) {
	p := write(t, filepath.Join(t.TempDir(), "hk"), "SKILL.md", "---\nname: hk\ndescription: Hooks gone wrong.\nallowed-tools: Bash(git:*) WebFetch\nhooks: [x]\n---\n# Steps\nRun it caf\xe9.\n")
	for _, agent := range []string{codexAgent, geminiAgent} {
		sk, err := LoadAs(p, agent)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(sk.AllowedTools, " ") != "Bash(git:*) WebFetch" {
			t.Errorf("%s: allowed tools %q", agent, sk.AllowedTools)
		}
		all := strings.Join(sk.Warnings, "\n")
		if !strings.Contains(all, "vibe-test grants these (Bash(git:*), WebFetch)") || !strings.Contains(all, "not valid UTF-8") {
			t.Errorf("%s: warnings %q", agent, sk.Warnings)
		}
		if strings.Contains(all, "the CLI ") {
			t.Errorf("%s: a warning speaks of Claude Code's CLI: %q", agent, sk.Warnings)
		}
	}
	if sk, err := Load(p); err != nil || sk.AllowedTools != nil {
		t.Errorf("claude: %v, allowed tools %q (the CLI drops them with a malformed hooks:)", err, sk.AllowedTools)
	}
}

// Codex lists no skill whose SKILL.md is a link: warned of, since the
// sandbox's copy is listed.
func TestLoadAsWarnsOfALinkedSKILLmdUnderCodex(t *testing.T) {
	dir := t.TempDir()
	target := write(t, dir, "real.md", "---\nname: linked\ndescription: d\n---\nRun it.\n")
	if err := os.MkdirAll(filepath.Join(dir, "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "linked", "SKILL.md")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	sk, err := LoadAs(p, codexAgent)
	if err != nil || !strings.Contains(strings.Join(sk.Warnings, "\n"), "lists no skill whose SKILL.md is one") {
		t.Fatalf("codex: %v, warnings %q", err, sk.Warnings)
	}
	if sk, err := LoadAs(p, geminiAgent); err != nil || strings.Contains(strings.Join(sk.Warnings, "\n"), "is a link") {
		t.Errorf("gemini (which lists it): %v, warnings %q", err, sk.Warnings)
	}
}

// A folder's link warnings name no CLI but the agent's.
func TestLoadAsFolderWarningsNameTheAgentsCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ln")
	write(t, dir, "SKILL.md", "---\nname: ln\ndescription: d\n---\nRun it.\n")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "gone.md")); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{codexAgent, geminiAgent} {
		sk, err := LoadAs(filepath.Join(dir, "SKILL.md"), agent)
		all := ""
		if err == nil {
			all = strings.Join(sk.Warnings, "\n")
		}
		if err != nil || !strings.Contains(all, "leads nowhere: the agent's CLI lists the skill all the same") || strings.Contains(all, "the CLI ") {
			t.Errorf("%s: %v, warnings %q", agent, err, all)
		}
	}
}

// AsText applies no CLI's refusal: an eval delivers the skill's text.
func TestLoadAsTextRefusesNothingACLIWould(t *testing.T) {
	for _, front := range []string{"# No frontmatter", "---\nname: dmi\ndescription: x\ndisable-model-invocation: true\n---"} {
		p := write(t, t.TempDir(), "SKILL.md", front+"\nRun the census.\n")
		if _, err := LoadAs(p, AsText); err != nil {
			t.Errorf("%q: %v", front, err)
		}
	}
}
