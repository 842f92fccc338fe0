package yamlerr

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

type probe struct {
	Task string `yaml:"task"`
}

type config struct {
	BaseTask string            `yaml:"base_task"`
	Probes   []probe           `yaml:"probes"`
	Files    map[string]string `yaml:"files"`
	Max      int               `yaml:"max"`
	Small    int8              `yaml:"small"`
	Count    uint              `yaml:"count"`
}

// Each error names the file, the line and the key the wrong value belongs
// to, in YAML's words: never the Go field or type, which for a probe's task
// the decoder gets wrong ("Config.Probes of type string").
func TestFormat(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"a list for text", "base_task: [a]\n", `c.yaml:1: field "base_task" is a list, expected text`},
		{"a block list for text", "base_task:\n  - a\n  - b\n", `c.yaml:2: field "base_task" is a list, expected text`},
		{"a mapping for text", "base_task: {a: 1}\n", `c.yaml:1: field "base_task" is a mapping, expected text`},
		{"a number for a list", "base_task: b\nprobes: 3\n", `c.yaml:2: field "probes" is a number, expected a list`},
		{"a nested key", "probes:\n  - task: ok\n  - task: [x]\n", `c.yaml:3: field "task" is a list, expected text`},
		{"a list for a mapping", "files: [a]\n", `c.yaml:1: field "files" is a list, expected a mapping`},
		// A list's element is named with its index ("the value is text"
		// before: no field at all).
		{"text for a mapping in a flow list", "probes: [a, b]\n", `c.yaml:1: field "probes[0]" is text, expected a mapping`},
		{"text for a mapping in a block list", "probes:\n  - task: ok\n  - b\n", `c.yaml:3: field "probes[1]" is text, expected a mapping`},
		{"a mapping's value", "files:\n  a: [1]\n", `c.yaml:2: field "a" is a list, expected text`},
		{"text for a number", "max: lots\n", `c.yaml:1: field "max" is text, expected a whole number`},
		{"too large", "small: 300\n", `c.yaml:1: field "small" is 300, too large for a whole number`},
		{"a syntax error", "probes: [a\n", `c.yaml:1: sequence end token ']' not found`},
		{"an unknown key", "base_task: b\nextra: 1\n", `c.yaml:2: unknown field "extra"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c config
			err := yaml.UnmarshalWithOptions([]byte(tc.doc), &c, yaml.Strict())
			if err == nil {
				t.Fatal("no error")
			}
			got := Format("c.yaml", 0, err).Error()
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// Frontmatter's lines are counted from the file's top.
func TestFormatLineOffset(t *testing.T) {
	var c config
	err := yaml.Unmarshal([]byte("base_task: [a]\n"), &c)
	if got := Format("SKILL.md", 1, err).Error(); !strings.HasPrefix(got, "SKILL.md:2: ") {
		t.Errorf("got %q, want line 2", got)
	}
}
