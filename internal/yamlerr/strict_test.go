package yamlerr

import (
	"testing"
)

type strictProbe struct {
	Task  string            `yaml:"task"`
	Files map[string]string `yaml:"files"`
}

type StrictInline struct {
	Seed int `yaml:"seed"`
}

type strictConfig struct {
	BaseTask     string        `yaml:"base_task"`
	Probes       []strictProbe `yaml:"probes"`
	StrictInline `yaml:",inline"`
	Model        string `json:"model"`
	Skip         string `yaml:"-"`
}

// An unknown key names what was expected where it stands: the keys of its
// own mapping, top level or nested in a list.
func TestStrictNamesTheExpectedKeys(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"top level", "base_task: b\nconversation: 3\n", `c.yaml:2: unknown field "conversation", expected one of: base_task, probes, seed, model`},
		{"in a list", "base_task: b\nprobes:\n  - task: t\n  - tsk: u\n", `c.yaml:4: unknown field "tsk", expected one of: task, files`},
		{"kind still named", "base_task: [x]\n", `c.yaml:1: field "base_task" is a list, expected text`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c strictConfig
			err := Strict("c.yaml", []byte(tc.src), &c)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Strict = %v\nwant %s", err, tc.want)
			}
		})
	}
	var c strictConfig
	if err := Strict("c.yaml", []byte("base_task: b\nprobes:\n  - task: t\n    files: {a: b}\nseed: 2\n"), &c); err != nil || c.Seed != 2 || c.Probes[0].Files["a"] != "b" {
		t.Fatalf("a good document: %v, %+v", err, c)
	}
}
