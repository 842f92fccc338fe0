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

// compact_at and compact_before together in the file are named as the
// file spells them, on one line, with no flag the user never gave.
func TestConfigCompactBothNamesTheFields(t *testing.T) {
	p := writeConfig(t, good+"schedule:\n  compact_before: [2]\n  compact_at: 120k\n")
	_, err := LoadConfig(p)
	want := p + ":14: schedule.compact_at and schedule.compact_before are both given, expected one of them"
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "--") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v\nwant one line starting %s", err, want)
	}
}

// A decimal or quoted number in a whole-number field is refused, not read
// as the whole number it truncates or parses to.
func TestConfigWholeNumbers(t *testing.T) {
	for _, c := range []struct{ schedule, want string }{
		{"{compact_before: [2.5]}", `:12: field "schedule.compact_before[0]" is a decimal number, expected a whole number`},
		{"{compact_before: [\"3\"]}", `:12: field "schedule.compact_before[0]" is text, expected a whole number`},
		{"{dilute_to: [50k, 100k, 150k], max_fillers: 7.9}", `:12: field "schedule.max_fillers" is a decimal number, expected a whole number`},
		{"{dilute_to: [50k, 100k, 150k], max_fillers: \"7\"}", `:12: field "schedule.max_fillers" is text, expected a whole number`},
	} {
		p := writeConfig(t, good+"schedule: "+c.schedule+"\n")
		if _, err := LoadConfig(p); err == nil || err.Error() != p+c.want {
			t.Errorf("%s: err = %v\nwant %s", c.schedule, err, p+c.want)
		}
	}
}

// schedule.max_fillers takes what --max-fillers takes: 0 is refused, not
// read as the default.
func TestConfigMaxFillersRange(t *testing.T) {
	for _, n := range []string{"0", "-1", "1001", "100000"} {
		p := writeConfig(t, good+"schedule:\n  dilute_to: [50k, 100k, 150k]\n  max_fillers: "+n+"\n")
		want := p + ":14: field \"schedule.max_fillers\": " + n + ", expected 1 to 1000"
		if _, err := LoadConfig(p); err == nil || err.Error() != want {
			t.Errorf("max_fillers %s: err = %v\nwant %s", n, err, want)
		}
	}
	p := writeConfig(t, good+"schedule:\n  dilute_to: [50k, 100k, 150k]\n  max_fillers: 1000\n")
	c, err := LoadConfig(p)
	if err != nil || c.Schedule.Schedule().MaxFillers != 1000 {
		t.Fatalf("max_fillers 1000: %v", err)
	}
	p = writeConfig(t, good+"schedule:\n  dilute_to: [50k, 100k, 150k]\n")
	if c, err = LoadConfig(p); err != nil || c.Schedule.Schedule().MaxFillersOrDefault() != DefaultMaxFillers {
		t.Fatalf("no max_fillers: %v", err)
	}
}

// A second document is refused at its marker, not ignored.
func TestConfigSecondDocument(t *testing.T) {
	for _, sep := range []string{"---", "..."} {
		p := writeConfig(t, good+sep+"\nmodel: opus\n")
		want := p + ":12: a second YAML document"
		if _, err := LoadConfig(p); err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v\nwant one line starting %s", sep, err, want)
		}
	}
}

// A file of files: or a probe's setup that the sandbox cannot write (a
// folder of the fixture there, a fixture file where its folder goes, a
// file written before it) is refused at load, naming the field.
func TestConfigWritesCollide(t *testing.T) {
	for _, c := range []struct{ name, from, to, want string }{
		{"setup on a fixture folder", `notes.txt: "x"`, `data: "oops\n"`, `:5: field "probes[0].setup": "data": data is a folder in the fixture, expected a file there`},
		{"setup under a fixture file", `notes.txt: "x"`, `readme.txt/x: "oops"`, `:5: field "probes[0].setup": "readme.txt/x": readme.txt is a file in the fixture, expected a folder there`},
		{"files on a fixture folder", `.env: "TOKEN=1"`, `data/: "x"`, `:10: field "files": "data/": data is a folder in the fixture, expected a file there`},
		{"setup under files", `notes.txt: "x"`, `.env/x: "y"`, `:5: field "probes[0].setup": ".env/x": .env is a file written before it, expected a folder there`},
		{"file under another of its map", `notes.txt: "x"`, `{notes: "x", notes/a.txt: "y"}`, `:5: field "probes[0].setup": "notes/a.txt": notes is a file written before it, expected a folder there`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeConfig(t, strings.Replace(good, c.from, c.to, 1))
			fx := filepath.Join(filepath.Dir(p), "fx")
			os.Mkdir(filepath.Join(fx, "data"), 0o755)
			os.WriteFile(filepath.Join(fx, "readme.txt"), []byte("hi"), 0o644)
			if _, err := LoadConfig(p); err == nil || err.Error() != p+c.want {
				t.Fatalf("err = %v\nwant %s", err, p+c.want)
			}
		})
	}
	p := writeConfig(t, strings.Replace(good, `notes.txt: "x"`, `data/new.txt: "x"`, 1))
	os.Mkdir(filepath.Join(filepath.Dir(p), "fx", "data"), 0o755)
	if _, err := LoadConfig(p); err != nil {
		t.Fatalf("a new file in a fixture folder: %v", err)
	}
}
