package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const good = `base_task: How many widgets?
probes:
  - task: And gaskets?
    setup:
      notes.txt: "x"
  - task: And hinges?
  - task: Widgets again?
fixture: fx
files:
  .env: "TOKEN=1"
model: sonnet
`

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "fx"), 0o755)
	p := filepath.Join(dir, ConfigName)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfig(t *testing.T) {
	p := writeConfig(t, good)
	c, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	pl := FromConfig(p, c)
	if pl.Task(1) != "How many widgets?" || pl.Task(8) != "And hinges?" || pl.Setup(6)["notes.txt"] != "x" || !filepath.IsAbs(pl.Fixture) {
		t.Fatalf("%+v", pl)
	}
	if Kind(1) != "base" || Kind(6) != "probe" || Kind(7) != "filler" || Kind(10) != "probe" {
		t.Error("schedule")
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct{ name, content, want string }{
		{"unknown key", good + "probs: []\n", `unknown field "probs"`},
		{"wrong type", strings.Replace(good, "model: sonnet", "model: [a]", 1), ConfigName + ":"},
		{"no base task", strings.Replace(good, "base_task: How many widgets?", "", 1), `field "base_task" is missing`},
		{"two probes", "base_task: a\nprobes:\n  - task: b\n  - task: c\n", "2 given, expected exactly 3"},
		{"empty probe", "base_task: a\nprobes:\n  - task: b\n  - task: \"\"\n  - task: d\n", `probes[1].task" is empty`},
		{"fixture missing", strings.Replace(good, "fixture: fx", "fixture: nope", 1), `field "fixture"`},
		{"escaping file", strings.Replace(good, ".env:", "../../etc/x:", 1), "relative path inside the sandbox"},
		{"broken yaml", "base_task: [\n", ConfigName + ":"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadConfig(writeConfig(t, c.content))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line containing %q", err, c.want)
			}
		})
	}
}

func FuzzLoadConfig(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("base_task: [\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, ConfigName)
		os.WriteFile(p, b, 0o644)
		c, err := LoadConfig(p)
		if err == nil && (len(c.Probes) != 3 || c.BaseTask == "") {
			t.Fatal("accepted an incomplete config")
		}
	})
}

// The case: a fixture link to /tmp plus files: through it. The
// config is refused at load, one line naming the file, the field and the
// link, before any conversation starts.
func TestFixtureLinkOutRefusedAtLoad(t *testing.T) {
	p := writeConfig(t, good)
	os.Symlink(os.TempDir(), filepath.Join(filepath.Dir(p), "fx", "tmpdir"))
	_, err := LoadConfig(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), `field "fixture"`) ||
		!strings.Contains(err.Error(), "tmpdir: a symbolic link") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v", err)
	}
}
