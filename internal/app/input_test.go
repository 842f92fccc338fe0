package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input: one line on stderr naming the file or flag and what was
// expected, exit 3, and nothing on disk overwritten. None of these cases
// reaches the claude CLI.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	linkOut := func(name string) string {
		p := write(name+"/SKILL.md", "---\nname: "+name+"\ndescription: d\n---\nx\n")
		os.Symlink(good0(dir), filepath.Join(dir, name, "shared.md"))
		return p
	}
	good := write("good/SKILL.md", "---\nname: good\ndescription: d\n---\nRun the script.\n")
	write("s2/vibe-test.yaml", "base_task: [a]\n")
	write("s3/rubric.json", `{"criteria":[]}`)
	emptyFolder := filepath.Join(dir, "empty")
	os.Mkdir(emptyFolder, 0o755)
	oldClaude := write("bin/claude", "#!/bin/sh\necho '1.0.3 (Claude Code)'\n")
	os.Chmod(oldClaude, 0o755)
	existing := filepath.Join(dir, "earlier-run")
	marker := write("earlier-run/run.json", `{"schema_version":1}`)

	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"no path", nil, nil, "no skill given"},
		{"missing path", []string{filepath.Join(dir, "nope")}, nil, "no such file or folder"},
		{"folder without SKILL.md", []string{emptyFolder}, nil, "empty: no SKILL.md in the folder or below it"},
		{"model cannot invoke", []string{write("b/SKILL.md", "---\nname: b\ndescription: d\ndisable-model-invocation: true\n---\nx\n")}, nil, `SKILL.md:4: frontmatter field "disable-model-invocation" is true`},
		{"link leaves the skill", []string{linkOut("c")}, nil, "outside the skill folder"},
		{"empty body", []string{write("e/SKILL.md", "---\nname: e\ndescription: d\n---\n")}, nil, "empty body"},
		{"binary", []string{write("f/SKILL.md", "---\x00\x01")}, nil, "binary content"},
		{"config unknown key", []string{good, "--config", write("cfg1.yaml", "base_task: a\nprobes: [{task: b}, {task: c}, {task: d}]\nextra: 1\n")}, nil, `unknown field "extra"`},
		{"config wrong type", []string{good, "--config", write("cfg2.yaml", "base_task: [a]\nprobes: []\n")}, nil, "cfg2.yaml:"},
		{"probe schedule", []string{good, "--config", write("cfg3.yaml", "base_task: a\nprobes: [{task: b}]\n")}, nil, "expected exactly 3"},
		{"fixture missing", []string{good, "--config", write("cfg4.yaml", "base_task: a\nprobes: [{task: b}, {task: c}, {task: d}]\nfixture: nowhere\n")}, nil, `field "fixture"`},
		{"config missing", []string{good, "--config", filepath.Join(dir, "none.yaml")}, nil, "none.yaml: no such file"},
		{"rubric missing", []string{good, "--rubric", filepath.Join(dir, "none.json")}, nil, "none.json: no such file"},
		{"rubric invalid", []string{good, "--rubric", write("r.json", `{"criteria":[]}`)}, nil, "expected 5 to 8"},
		{"out exists", []string{good, "--out", existing}, nil, "folder exists and is not empty"},
		{"conversations", []string{good, "--conversations", "0"}, nil, "--conversations: 0"},
		{"suite: bad config beside a skill", []string{good, write("s2/SKILL.md", "---\nname: s2\ndescription: d\n---\nx\n"), "--seed", "1"}, nil, "s2/vibe-test.yaml:"},
		{"suite: bad rubric.json beside a skill", []string{good, write("s3/SKILL.md", "---\nname: s3\ndescription: d\n---\nx\n")}, nil, "expected 5 to 8"},
		{"suite: --config", []string{good, good, "--config", write("cfg5.yaml", "base_task: a\n")}, nil, "--config: not for a suite"},
		{"shard without seed", []string{good, "--shard", "1/2"}, nil, "--shard needs --seed N"},
		{"bad shard", []string{good, "--shard", "3/2", "--seed", "1"}, nil, `--shard: "3/2", expected i/n`},
		{"suite: claude missing", []string{good, good}, nil, "claude not found on PATH"},
		{"unknown flag", []string{good, "--nope"}, nil, "flag provided but not defined"},
		{"fillers dir", []string{good, "--fillers", emptyFolder}, nil, "fillers:"},
		{"claude missing", []string{good}, []string{"PATH=" + emptyFolder}, "claude not found on PATH nor in tools/node_modules/.bin/claude"},
		{"claude too old", []string{good}, []string{"PATH=" + emptyFolder, "VIBE_TEST_CLAUDE=" + oldClaude}, "too old for the flags vibe-test needs"},
		{"conflicting flags", []string{good, "--rule", "any-probe-failed", "--alpha", "0.01"}, nil, "--alpha only applies with --rule diluted-vs-fresh"},
		{"gate is gone", []string{good, "--gate", "any"}, nil, "flag provided but not defined: -gate"},
		{"bad rule", []string{good, "--rule", "vibes"}, nil, `--rule: "vibes", expected "diluted-vs-fresh" or "any-probe-failed"`},
		{"noise floor is gone", []string{good, "--until-decided", "--noise-floor", "0.1"}, nil, "flag provided but not defined: -noise-floor"},
		{"beta is gone", []string{good, "--until-decided", "--beta", "0.2"}, nil, "flag provided but not defined: -beta"},
		{"undiluted control is gone", []string{good, "--control", "undiluted"}, nil, `--control: "undiluted", expected "no-skill"`},
		{"bad effect", []string{good, "--effect", "2"}, nil, "--effect: 2, expected a drop between 0 and 1"},
		{"bad session mode", []string{good, "--session", "sometimes"}, nil, `--session: "sometimes", expected "interactive" or "resume"`},
		{"levels not ascending", []string{good, "--dilute-to", "50k,20k,90k"}, nil, "--dilute-to 50k,20k,90k: 20k after 50k, expected ascending levels"},
		{"levels not tokens", []string{good, "--dilute-to", "50k,lots,90k"}, nil, `--dilute-to: "lots" is not a token count`},
		{"two levels", []string{good, "--dilute-to", "50k,90k"}, nil, "2 levels given, expected 3 (one per probe)"},
		{"no such probe", []string{good, "--compact-before", "4"}, nil, `--compact-before: "4" is not a probe number, expected 1 to 3`},
		{"filler cap without levels", []string{good, "--max-fillers", "5", "--config", write("cfg6.yaml", "base_task: a\nprobes: [{task: b}, {task: c}, {task: d}]\n")}, nil, "--max-fillers (or schedule.max_fillers) only applies with --dilute-to"},
		{"unknown filler kind", []string{good, "--config", write("cfg7.yaml", "base_task: a\nprobes: [{task: b}, {task: c}, {task: d}]\nschedule:\n  fillers: novels\n")}, nil, `cfg7.yaml:3: field "schedule.fillers": "novels", expected passages or work`},
		{"work chores' folder taken", []string{good, "--fillers", "work", "--config", write("cfg8.yaml", "base_task: a\nprobes: [{task: b, setup: {ops/notes.txt: x}}, {task: c}, {task: d}]\n")}, nil, `cfg8.yaml: field "probes[0].setup": ops/notes.txt is in ops/, the folder the work chores (--fillers work) write and read`},
		{"config schedule", []string{good, "--config", write("cfg9.yaml", "base_task: a\nprobes: [{task: b}, {task: c}, {task: d}]\nschedule:\n  dilute_to: [9k, 8k, 10k]\n")}, nil, `cfg9.yaml:3: field "schedule.dilute_to": 8k after 9k, expected ascending levels`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := c.env
			if env == nil {
				env = []string{"PATH=" + emptyFolder}
			}
			code := Main(context.Background(), append([]string{"vibe-test"}, c.args...), IO{Env: env, Stdout: &stdout, Stderr: &stderr})
			if code != 3 {
				t.Fatalf("exit %d, want 3; stderr %q", code, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, c.want) || !strings.HasPrefix(last, "vibe-test: ") {
				t.Fatalf("stderr %q, want one line containing %q", stderr.String(), c.want)
			}
		})
	}
	if b, _ := os.ReadFile(marker); string(b) != `{"schema_version":1}` {
		t.Error("an earlier run's file was overwritten")
	}
}

// good0 is a file outside any skill folder of TestBadInput.
func good0(dir string) string {
	p := filepath.Join(dir, "outside.md")
	os.WriteFile(p, []byte("x"), 0o644)
	return p
}

func TestReorderFlagsAfterPath(t *testing.T) {
	a := newApp(IO{}, &chosen{})
	got := reorder(a, []string{"vibe-test", "./SKILL.md", "--no-baseline-gate", "--conversations", "3", "--out=x"})
	want := "vibe-test --no-baseline-gate --conversations 3 --out=x ./SKILL.md"
	if strings.Join(got, " ") != want {
		t.Fatalf("%v", got)
	}
	got = reorder(a, []string{"vibe-test", "demo", "--personas", "steady"})
	if strings.Join(got, " ") != "vibe-test demo --personas steady" {
		t.Fatalf("%v", got)
	}
}

// --allowed-tools values may hold several tools; urfave/cli has already
// cut them at commas, even inside a pattern's parentheses.
func TestSplitTools(t *testing.T) {
	got := splitTools([]string{"Bash(git add", "commit:*) WebFetch", "Read"})
	if strings.Join(got, "|") != "Bash(git add,commit:*)|WebFetch|Read" {
		t.Errorf("%q", got)
	}
}
