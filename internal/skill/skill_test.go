package skill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFolderAndFile(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "SKILL.md", "---\nname: stock-check\ndescription: Checks stock.\n---\n# Steps\nRun the script.\n")
	write(t, dir, "scripts/census.sh", "echo 1\n")
	a, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "stock-check" || a.Description != "Checks stock." || !strings.HasPrefix(a.Body, "# Steps") || a.Hash != b.Hash {
		t.Fatalf("%+v", a)
	}
	// A change to a script beside SKILL.md changes the hash.
	write(t, dir, "scripts/census.sh", "echo 2\n")
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Hash == a.Hash {
		t.Error("hash ignores the skill's scripts")
	}
	// vibe-test's own files beside SKILL.md are not part of the skill.
	write(t, dir, "vibe-test.yaml", "base_task: x\n")
	write(t, dir, "vibe-runs/run/run.json", "{}")
	d, err := Load(dir)
	if err != nil || d.Hash != c.Hash {
		t.Errorf("the config or run folder changed the skill hash (%v)", err)
	}
	// Nor are the reports a run writes into the folder (`vibe-test .
	// --junit junit.xml` in it), an eval folder put there with --out, or
	// a config below: they changed the hash on every run, and the agent
	// found them installed with the skill.
	write(t, dir, "junit.xml", `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<testsuites name="vibe-test census" tests="4">`)
	write(t, dir, "summary.md", "## vibe-test\n\n| skill |\n")
	write(t, dir, "out/eval-1/eval.json", `{"schema_version": 1, "kind": "eval"}`)
	write(t, dir, "examples/vibe-test.yaml", "base_task: y\n")
	e, err := Load(dir)
	if err != nil || e.Hash != c.Hash {
		t.Errorf("vibe-test's reports, eval folder or a nested config changed the skill hash (%v)", err)
	}
	// A link to a report is judged by what it leads to, as the sandbox
	// judges it (it was hashed, and not installed).
	if err := os.Symlink("summary.md", filepath.Join(dir, "latest.md")); err != nil {
		t.Fatal(err)
	}
	e, err = Load(dir)
	if err != nil || e.Hash != c.Hash {
		t.Errorf("a link to vibe-test's report changed the skill hash (%v)", err)
	}
	for _, f := range e.Files {
		if f.Rel != "SKILL.md" && f.Rel != "scripts/census.sh" {
			t.Errorf("the skill holds %s", f.Rel)
		}
	}
	// A node_modules is left out (a package tree is not copied into every
	// sandbox), and said: a script that requires it fails under vibe-test.
	write(t, dir, "node_modules/leftpad/index.js", "module.exports = 1\n")
	g, err := Load(dir)
	if err != nil || g.Hash != c.Hash {
		t.Fatalf("node_modules changed the hash (%v)", err)
	}
	if w := strings.Join(g.Warnings, "\n"); !strings.Contains(w, "node_modules/ is left out of the sandbox and of the skill's hash: a script of the skill that requires a package from it fails under vibe-test") {
		t.Errorf("no warning of the node_modules left out: %q", g.Warnings)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name, content, want string
	}{
		{"disable-model-invocation", "---\nname: a\ndescription: d\ndisable-model-invocation: true\n---\nbody\n", `SKILL.md:4: frontmatter field "disable-model-invocation" is "true", which the CLI reads as true: it hides the skill`},
		{"disable-model-invocation string", "---\nname: a\ndescription: d\ndisable-model-invocation: \"true\"\n---\nbody\n", "nothing to measure"},
		{"empty body", "---\nname: a\ndescription: d\n---\n\n  \n", "empty body"},
		{"binary", "---\nname: a\x00\n", "binary content"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := write(t, dir, "SKILL.md", c.content)
			_, err := Load(p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing path: %v", err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "folder has no SKILL.md") {
		t.Errorf("folder without SKILL.md: %v", err)
	}
	// A dangling SKILL.md or skill folder: the CLI hides the skill, silently.
	dangling := t.TempDir()
	os.Symlink(filepath.Join(dangling, "none.md"), filepath.Join(dangling, "SKILL.md"))
	if _, err := Load(dangling); err == nil || !strings.Contains(err.Error(), "leads nowhere: the CLI does not list") {
		t.Errorf("dangling SKILL.md: %v", err)
	}
	gone := filepath.Join(t.TempDir(), "skill")
	os.Symlink(filepath.Join(t.TempDir(), "nofolder"), gone)
	if _, err := Load(gone); err == nil || !strings.Contains(err.Error(), "leads nowhere: the CLI does not list") {
		t.Errorf("dangling skill folder: %v", err)
	}
}

// SKILL.md sizes around the CLI's limit of 1,000,000 bytes (decimal),
// measured on 2.1.328 (FINDINGS §2): 999,999 bytes load whole, 1,000,001
// are skipped. Over 512 KiB is a warning, no longer a refusal.
func TestSkillSizeLimit(t *testing.T) {
	const head = "---\nname: a\ndescription: d\n---\n"
	for _, c := range []struct {
		size    int
		refused bool
		warn    bool
	}{
		{512 << 10, false, false},
		{600 << 10, false, true},
		{999_999, false, true},
		{1_000_000, false, true},
		{1_000_001, true, false},
		{1 << 20, true, false},
	} {
		dir := t.TempDir()
		write(t, dir, "SKILL.md", head+strings.Repeat("x", c.size-len(head)))
		s, err := Load(dir)
		if c.refused {
			if err == nil || !strings.Contains(err.Error(), "the CLI skips a SKILL.md over 1000000 bytes") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%d bytes: err = %v, want a one-line refusal giving the CLI's reason", c.size, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%d bytes: refused what the CLI loads: %v", c.size, err)
			continue
		}
		if got := len(s.Warnings) == 1 && strings.Contains(s.Warnings[0], "resends the body on every request"); got != c.warn {
			t.Errorf("%d bytes: warnings %q, want a size warning: %v", c.size, s.Warnings, c.warn)
		}
	}
}

// A folder over 64 MiB loads in the CLI (it has no folder limit): a
// warning, since vibe-test copies it into every sandbox.
func TestBigFolderWarns(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "SKILL.md", "---\nname: a\ndescription: d\n---\nbody\n")
	f, err := os.Create(filepath.Join(dir, "data.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(70 << 20); err != nil { // sparse: no 70 MiB written
		t.Fatal(err)
	}
	f.Close()
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("refused a 70 MiB folder the CLI loads: %v", err)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "over 67108864") {
		t.Errorf("warnings %q", s.Warnings)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\n---\nbody\n"))
	f.Add([]byte("---\nname: [\n---\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\n00---0")) // a block that parses to a scalar once crashed the warning
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse("SKILL.md", b)
		if err == nil && (s.Name == "" || !nameRE.MatchString(s.Name)) {
			t.Fatalf("parsed to an install name %q that is not folder-safe", s.Name)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error: %q", err)
		}
	})
}

// Frontmatter shaped like real public skills: what the pinned CLI loads is
// accepted, each spec deviation a warning naming its rule.
func TestFrontmatterAsTheCLIReads(t *testing.T) {
	longDesc := strings.Repeat("Build apps with the Claude API or SDK. ", 27) + "Done." // 1,058 characters
	cjk := strings.Repeat("说明文字", 105)                                                  // 420 characters, 1,260 bytes
	cases := []struct {
		name, folder, front string
		wantName, wantDecl  string
		wantDesc            string
		wantTools           []string
		wantWarn            []string // substrings, one warning each, in order
	}{
		{"spec", "stock-check", "name: stock-check\ndescription: Checks stock.\n", "stock-check", "", "Checks stock.", nil, nil},
		{"claude-api long description", "claude-api", "name: claude-api\ndescription: " + longDesc + "\n", "claude-api", "", longDesc, nil,
			[]string{`"description": 1058 characters (Agent Skills spec: at most 1024)`}},
		{"cjk counted in characters", "cjk", "name: cjk\ndescription: " + cjk + "\n", "cjk", "", cjk, nil, nil},
		{"unquoted colon", "pdf", "name: pdf\ndescription: Use when: the user has a PDF\n", "pdf", "", "Use when: the user has a PDF", nil,
			[]string{"YAML rule"}},
		{"name with spaces", "my-skill", "name: My Skill\ndescription: d\n", "my-skill", "My Skill", "d", nil,
			[]string{`"name": "My Skill" breaks the Agent Skills spec`}},
		{"name with dots and colons", "tools", "name: acme:tools.v2\ndescription: d\n", "tools", "acme:tools.v2", "d", nil,
			[]string{"lowercase letters, digits and hyphens"}},
		// The CLI lists a skill without a valid name under its folder's
		// name as it is; vibe-test installed it under a slug ("odd-folder",
		// "n-skill", "y-caps", "skill"), where the body's paths and the
		// listing were not the CLI's.
		{"no name", "Odd Folder", "description: d\n", "Odd Folder", "", "d", nil, []string{`"name" is missing`}},
		{"accented folder", "ünï-skill", "name: ünï-skill\ndescription: d\n", "ünï-skill", "", "d", nil, []string{"breaks the Agent Skills spec"}},
		{"capitals", "Y-Caps", "name: Y-Caps\ndescription: d\n", "Y-Caps", "", "d", nil, []string{"breaks the Agent Skills spec"}},
		{"cjk folder", "库存", "description: d\n", "库存", "", "d", nil, []string{`"name" is missing`}},
		{"no description", "x", "name: x\n", "x", "", "Steps", nil, []string{`"description" is missing`}},
		{"allowed-tools spaces", "a", "name: a\ndescription: d\nallowed-tools: Bash Read\n", "a", "", "d", []string{"Bash", "Read"}, nil},
		{"allowed-tools commas and patterns", "a", "name: a\ndescription: d\nallowed-tools: Bash(git diff:*), Read, WebFetch\n", "a", "", "d",
			[]string{"Bash(git diff:*)", "Read", "WebFetch"}, nil},
		{"allowed-tools list", "a", "name: a\ndescription: d\nallowed-tools:\n  - Bash(git:*)\n  - Grep\n", "a", "", "d", []string{"Bash(git:*)", "Grep"}, nil},
		{"lenient list and colon", "a", "name: a\ndescription: Note: x\nallowed-tools:\n  - Read\n", "a", "", "Note: x", []string{"Read"}, []string{"YAML rule"}},
		{"no frontmatter", "plain", "", "plain", "", "Steps", nil, []string{"SKILL.md:1: no YAML frontmatter (Agent Skills spec"}},
		{"allowed-tools not names", "a", "name: a\ndescription: d\nallowed-tools: {x: 1}\n", "a", "", "d", nil,
			[]string{`SKILL.md:4: frontmatter field "allowed-tools": a mapping, expected tool names separated by spaces or commas, or a list; the CLI grants nothing from it`}},
		{"disable-model-invocation false", "a", "name: a\ndescription: d\ndisable-model-invocation: false\n", "a", "", "d", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), c.folder)
			content := "---\n" + c.front + "---\n# Steps\nDo it.\n"
			if c.front == "" {
				content = "# Steps\nDo it.\n" // the CLI loads it: body only
			}
			p := write(t, dir, "SKILL.md", content)
			s, err := Load(p)
			if err != nil {
				t.Fatalf("refused what the CLI loads: %v", err)
			}
			if s.Name != c.wantName || s.DeclaredName != c.wantDecl || s.Description != c.wantDesc {
				t.Errorf("name %q declared %q description %.40q", s.Name, s.DeclaredName, s.Description)
			}
			if strings.Join(s.AllowedTools, "|") != strings.Join(c.wantTools, "|") {
				t.Errorf("allowed tools %q, want %q", s.AllowedTools, c.wantTools)
			}
			if len(s.Warnings) != len(c.wantWarn) {
				t.Fatalf("warnings %q, want %d", s.Warnings, len(c.wantWarn))
			}
			for i, w := range c.wantWarn {
				if !strings.Contains(s.Warnings[i], w) || !strings.Contains(s.Warnings[i], "SKILL.md") || strings.Contains(s.Warnings[i], "\n") {
					t.Errorf("warning %q, want one line naming the file and %q", s.Warnings[i], w)
				}
			}
		})
	}
}

// A frontmatter that is not closed is body, as the CLI reads it.
func TestUnclosedFrontmatterIsBody(t *testing.T) {
	s, err := Parse("x/SKILL.md", []byte("---\nname: a\n\nDo it.\n"))
	if err != nil || s.Name != "x" || !strings.Contains(s.Body, "Do it.") || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "not closed") {
		t.Fatalf("%+v, %v", s, err)
	}
}

func TestSymlinks(t *testing.T) {
	// A symlinked SKILL.md hashes its target's content: two different
	// targets give two hashes, and the file list installs the target.
	hashOf := func(content string) (*Skill, error) {
		dir := t.TempDir()
		write(t, dir, "docs/skill.md", content)
		if err := os.Symlink("docs/skill.md", filepath.Join(dir, "SKILL.md")); err != nil {
			t.Fatal(err)
		}
		return Load(dir)
	}
	a, err := hashOf("---\nname: a\ndescription: d\n---\nOne.\n")
	if err != nil {
		t.Fatal(err)
	}
	b, err := hashOf("---\nname: a\ndescription: d\n---\nTwo.\n")
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash == b.Hash {
		t.Error("two different linked SKILL.md files share a hash")
	}
	found := false
	for _, f := range a.Files {
		if f.Rel == "SKILL.md" {
			found = true
			if b, _ := os.ReadFile(f.Src); !strings.Contains(string(b), "One.") {
				t.Errorf("SKILL.md installs from %s", f.Src)
			}
		}
	}
	if !found {
		t.Errorf("files %v lack SKILL.md", a.Files)
	}

	// Links that leave the folder are followed and those that lead nowhere
	// left out, as the CLI reads them (it lists such a skill: FINDINGS §1),
	// each with a one-line warning naming the link.
	home := t.TempDir()
	t.Setenv("HOME", home)
	write(t, home, ".ssh/id_ed25519", "PRIVATE KEY")
	outside := t.TempDir()
	write(t, outside, "secret.txt", "outside-file")
	write(t, outside, "docs/a.md", "outside-dir")
	for name, c := range map[string]struct {
		target, warn string
		files        string // Rel=content of the files reached through the link
	}{
		"leaves":     {filepath.Join(outside, "secret.txt"), "ref links to " + filepath.Join(outside, "secret.txt") + ", outside the skill folder", "ref=outside-file"},
		"dir-leaves": {filepath.Join(outside, "docs"), "outside the skill folder: the CLI reads it there", "ref/a.md=outside-dir"},
		"dangles":    {"nope.txt", "ref is a link to nope.txt, which leads nowhere", ""},
		"loops":      {"..", "a folder that holds it", ""},
		// "/" holds the folder too: it was walked whole, and refused as
		// too big.
		"root": {"/", "a folder that holds it", ""},
		// vibe-test reads a link's target itself, outside the jail:
		// /proc/self/environ would be its own environment, keys and
		// all, copied where the agent reads it.
		"environ":     {"/proc/self/environ", "a file of the running system: vibe-test never copies it", ""},
		"system-dir":  {"/proc/self", "a file of the running system", ""},
		"credentials": {filepath.Join(home, ".ssh", "id_ed25519"), "where credentials are kept", ""},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "SKILL.md", "---\nname: a\ndescription: d\n---\nbody\n")
			if err := os.Symlink(c.target, filepath.Join(dir, "ref")); err != nil {
				t.Fatal(err)
			}
			s, err := Load(dir)
			if err != nil {
				t.Fatalf("refused a folder the CLI loads: %v", err)
			}
			if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], c.warn) || !strings.HasPrefix(s.Warnings[0], dir+": ") || strings.Contains(s.Warnings[0], "\n") {
				t.Fatalf("warnings %q, want one line naming the folder and saying %q", s.Warnings, c.warn)
			}
			var got []string
			for _, f := range s.Files {
				if f.Rel == "SKILL.md" {
					continue
				}
				b, _ := os.ReadFile(f.Src)
				got = append(got, f.Rel+"="+string(b))
				if !f.Outside || f.Root == "" {
					t.Errorf("%s: not marked as reached through a link outside the folder (%+v)", f.Rel, f)
				}
			}
			if strings.Join(got, " ") != c.files {
				t.Errorf("files %q, want %q", got, c.files)
			}
		})
	}
	// A link to a folder inside the skill is followed; vibe-test's own files
	// stay out of the hash.
	dir := t.TempDir()
	write(t, dir, "SKILL.md", "---\nname: a\ndescription: d\n---\nbody\n")
	write(t, dir, "real/x.sh", "echo\n")
	if err := os.Symlink("real", filepath.Join(dir, "scripts")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "rubric.json", "{}")
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, f := range s.Files {
		rels = append(rels, f.Rel)
	}
	if strings.Join(rels, " ") != "SKILL.md real/x.sh scripts/x.sh" {
		t.Errorf("files %v", rels)
	}
}

// disable-model-invocation as the CLI's Xke reads it (FINDINGS §4, probe
// dmi): true, yes, 1, on in any case, quoted or not, hide the skill from
// the model; y, 2, enabled do not. A hidden skill is refused, with the
// CLI's reason and what to do.
func TestDisableModelInvocationValues(t *testing.T) {
	for _, c := range []struct {
		value  string
		hidden bool
	}{
		{"true", true}, {"yes", true}, {"1", true}, {"on", true}, {`"true"`, true}, {"TRUE", true},
		{"Yes", true}, {"'1'", true}, {"1.0", true}, {"' on '", true},
		{"y", false}, {"Y", false}, {"false", false}, {"no", false}, {"0", false}, {"off", false},
		{"2", false}, {"enabled", false}, {`""`, false},
	} {
		s, err := Parse("d/SKILL.md", []byte("---\nname: d\ndescription: d\ndisable-model-invocation: "+c.value+"\n---\nbody\n"))
		if c.hidden {
			if err == nil || !strings.Contains(err.Error(), "which the CLI reads as true: it hides the skill from the model's listing") || !strings.Contains(err.Error(), "remove the field") {
				t.Errorf("%s: err = %v, want the skill refused as hidden", c.value, err)
			}
			continue
		}
		if err != nil || len(s.Warnings) != 0 {
			t.Errorf("%s: %v %q, want the skill accepted as the CLI lists it", c.value, err, s.Warnings)
		}
	}
}

// A SKILL.md in another encoding loads as the CLI decodes it: each byte
// that is not UTF-8 is U+FFFD, with a warning (it was refused as binary,
// though the CLI lists it).
func TestLatin1Decoded(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "SKILL.md", "---\nname: latin\ndescription: Caf\xe9 orders\n---\nWrite the caf\xe9 order.\n")
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Description != "Caf\uFFFD orders" || !strings.Contains(s.Body, "caf\uFFFD order") {
		t.Errorf("description %q body %q", s.Description, s.Body)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "not valid UTF-8") {
		t.Errorf("warnings %q", s.Warnings)
	}
}

// Values nested tens of thousands deep ran the YAML reader out of memory
// (50,000 levels in a 100 KB SKILL.md: a crash, not an error); past
// maxFlowDepth the block is dropped as unreadable, with the one-line
// warning, in milliseconds.
func TestDeepNestingDropped(t *testing.T) {
	deep := strings.Repeat("[", 50000) + strings.Repeat("]", 50000)
	s, err := Parse("nest/SKILL.md", []byte("---\nname: nest\ndescription: d\nx: "+deep+"\n---\n\nFirst line.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Description != "First line." || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "nest/SKILL.md:2: frontmatter values nested more than 512 deep ([ or { inside one another): vibe-test does not read it") || strings.Contains(s.Warnings[0], "\n") {
		t.Errorf("description %q warnings %q", s.Description, s.Warnings)
	}
	ok, err := Parse("nest/SKILL.md", []byte("---\nname: nest\ndescription: d\nx: "+strings.Repeat("[", 40)+strings.Repeat("]", 40)+"\n---\n\nFirst line.\n"))
	if err != nil || ok.Description != "d" || len(ok.Warnings) != 0 {
		t.Errorf("40 levels: %v %q %q", err, ok.Description, ok.Warnings)
	}
}

// Frontmatter the CLI cannot parse, even on its second try, is ignored
// whole (FINDINGS §3): no name, no description, no allowed-tools. The
// warning says so and what the model sees instead: the body's first line.
func TestUnparsableFrontmatterDropped(t *testing.T) {
	s, err := Parse("fm-quote-trail/SKILL.md", []byte("---\nname: fm-quote-trail\ndescription: \"quoted\" then trailing text\nallowed-tools: Bash\n---\n\n## Heading of the body\nRest.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "fm-quote-trail" || s.Description != "Heading of the body" || len(s.AllowedTools) != 0 {
		t.Errorf("name %q description %q tools %q, want the folder, the first line and no tools", s.Name, s.Description, s.AllowedTools)
	}
	want := `fm-quote-trail/SKILL.md:3: value is not allowed in this context. map key-value is pre-defined: the CLI cannot parse this frontmatter and ignores all of it ("name", "description", "allowed-tools" dropped): the model sees the skill listed as "- fm-quote-trail: Heading of the body", and vibe-test runs it so`
	if len(s.Warnings) != 1 || s.Warnings[0] != want {
		t.Errorf("warnings %q\nwant %q", s.Warnings, want)
	}
	// One the second try reads: a warning, the fields kept.
	s, err = Parse("c/SKILL.md", []byte("---\nname: c\ndescription: Use when: asked\nallowed-tools: Read\n---\nbody\n"))
	if err != nil || s.Description != "Use when: asked" || strings.Join(s.AllowedTools, " ") != "Read" || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "the CLI reads it on a second try") {
		t.Errorf("%+v %v", s, err)
	}
}

// paths: the CLI lists the skill only once a matching file is touched.
func TestPathsWarned(t *testing.T) {
	for front, want := range map[string]string{
		"paths: src/**/*.py\n":                "src/**/*.py",
		"paths:\n  - docs/*.md\n  - lib/**\n": "docs/*.md, lib",
		"paths: \"*.{ts,tsx}, a/b\"\n":        "*.ts, *.tsx, a/b",
		"paths: \"**\"\n":                     "",
	} {
		s, err := Parse("p/SKILL.md", []byte("---\nname: p\ndescription: d\n"+front+"---\nbody\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(s.Paths, ", "); got != want {
			t.Errorf("%q: paths %q, want %q", front, got, want)
		}
		if warned := len(s.Warnings) == 1 && strings.Contains(s.Warnings[0], "the CLI does not list the skill until the agent Reads, Writes or Edits a matching file"); warned != (want != "") {
			t.Errorf("%q: warnings %q", front, s.Warnings)
		}
	}
}

// Which touches list a paths: skill, as the CLI's matcher decides
// (FINDINGS §5: a Read of src/app/main.py listed py-helper; a Write of
// docs/new.md listed doc-helper).
func TestPathsReveal(t *testing.T) {
	py := &Skill{Name: "py-helper", Paths: cliPaths("src/**/*.py")}
	doc := &Skill{Name: "doc-helper", Paths: cliPaths([]any{"docs/*.md", "lib/**"})}
	any := &Skill{Name: "x", Paths: cliPaths("*.go")}
	for _, c := range []struct {
		s    *Skill
		path string
		want bool
	}{
		{py, "src/app/main.py", true}, {py, "src/main.py", true}, {py, "./src/a/b/c.py", true},
		{py, "notes.txt", false}, {py, "app/src/main.py", false}, {py, "../src/x.py", false}, {py, "src/main.pyc", false},
		{doc, "docs/new.md", true}, {doc, "docs/a/new.md", false}, {doc, "lib/x/y.js", true}, {doc, "lib", true},
		{any, "main.go", true}, {any, "cmd/x/main.go", true}, {any, "main.go.txt", false},
	} {
		if got := c.s.Reveals(c.path); got != c.want {
			t.Errorf("%s reveals %s: %v, want %v", c.s.Name, c.path, got, c.want)
		}
	}
	notes := PathsNotes(py, []string{"README.md", "src/app/main.py"}, true)
	if len(notes) != 2 || !strings.Contains(notes[0], "a Read, Write or Edit of src/app/main.py from the fixture lists it") || !strings.Contains(notes[1], "Unknown skill") {
		t.Errorf("notes %q", notes)
	}
	if notes := PathsNotes(py, []string{"README.md"}, false); len(notes) != 1 || !strings.Contains(notes[0], "no file of the fixture matches") {
		t.Errorf("notes %q", notes)
	}
	if PathsNotes(&Skill{}, nil, true) != nil {
		t.Error("notes for a skill without paths")
	}
}

// context: fork makes the skill a sub-agent's (FINDINGS §6): a warning that
// says how vibe-test sees its steps; only the exact text "fork" counts.
func TestForkWarned(t *testing.T) {
	for front, want := range map[string]string{
		"context: fork\n":                 "runs the skill in a general-purpose sub-agent",
		"context: fork\nagent: auditor\n": `runs the skill in the agent "auditor"`,
		"context: inline\n":               "",
		"context: Fork\nagent: auditor\n": "",
	} {
		s, err := Parse("f/SKILL.md", []byte("---\nname: f\ndescription: d\n"+front+"---\nbody\n"))
		if err != nil {
			t.Fatal(err)
		}
		if s.Fork != (want != "") || (want != "") != (len(s.Warnings) == 1 && strings.Contains(s.Warnings[0], want) && strings.Contains(s.Warnings[0], "marked as the sub-agent's")) {
			t.Errorf("%q: fork %v warnings %q", front, s.Fork, s.Warnings)
		}
	}
}

// hooks: as the CLI's sHs reads them (FINDINGS §8): a mapping of events is
// registered (a warning says when they run); any other value, or a
// PreToolUse written at the top level, loads the skill with no hooks and
// no allowed-tools.
func TestHooksRead(t *testing.T) {
	for _, c := range []struct {
		front, hooks, tools, warn string
	}{
		{"hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: echo\n  PreToolUse: []\n", "PreToolUse Stop", "Bash", "runs them for the rest of that CLI process"},
		{"hooks: {}\n", "", "Bash", ""},
		{"hooks: echo hi\n", "", "", `"hooks" is a string, expected a mapping of events: the CLI loads the skill with no hooks and no allowed-tools`},
		{"PreToolUse:\n  - matcher: Bash\n", "", "", `"PreToolUse" is written at the top level, outside "hooks"`},
		// A matcher with its command but no "hooks" list (five public
		// skills): the pinned CLI logs "Hook matcher \"hooks\" must be an
		// array of hook entries" and drops hooks and allowed-tools.
		{"hooks:\n  PreToolUse:\n    - matcher: Bash(aws *)\n      command: echo\n      once: true\n", "", "",
			`"hooks" (PreToolUse): matcher 1's "hooks" is missing, expected a list of hook entries: the CLI loads the skill with no hooks and no allowed-tools`},
		{"hooks:\n  Stop: echo\n", "", "", `"hooks" (Stop): a string, expected a list of matchers: the CLI loads the skill with no hooks`},
	} {
		s, err := Parse("h/SKILL.md", []byte("---\nname: h\ndescription: d\nallowed-tools: Bash\n"+c.front+"---\nbody\n"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(s.Hooks, " ") != c.hooks || strings.Join(s.AllowedTools, " ") != c.tools {
			t.Errorf("%q: hooks %q tools %q, want %q and %q", c.front, s.Hooks, s.AllowedTools, c.hooks, c.tools)
		}
		if (c.warn == "") != (len(s.Warnings) == 0) || c.warn != "" && !strings.Contains(s.Warnings[0], c.warn) {
			t.Errorf("%q: warnings %q, want %q", c.front, s.Warnings, c.warn)
		}
	}
}
