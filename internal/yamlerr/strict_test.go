package yamlerr

import (
	"strings"
	"testing"
	"time"
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
		{"kind by its path", "probes:\n  - task: t\n  - task: {a: b}\n", `c.yaml:3: field "probes[1].task" is a mapping, expected text`},
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

type strictSchedule struct {
	MaxFillers    int   `yaml:"max_fillers"`
	CompactBefore []int `yaml:"compact_before"`
	Keep          bool  `yaml:"keep"`
}

type strictKinds struct {
	Schedule *strictSchedule `yaml:"schedule"`
	Task     string          `yaml:"task"`
	Wait     time.Duration   `yaml:"wait"`
}

// A value the decoder would convert into its field's kind (7.9 and "7"
// read as 7) is refused, naming the field by its place, as is a value the
// decoder refuses itself (it was named by its key alone: "keep"); text
// fields take
// numbers, and a duration its own text.
func TestStrictRefusesConvertedKinds(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"schedule:\n  max_fillers: 7.9\n", `c.yaml:2: field "schedule.max_fillers" is a decimal number, expected a whole number`},
		{"schedule:\n  max_fillers: \"7\"\n", `c.yaml:2: field "schedule.max_fillers" is text, expected a whole number`},
		{"schedule: {compact_before: [1, 2.5]}\n", `c.yaml:1: field "schedule.compact_before[1]" is a decimal number, expected a whole number`},
		{"schedule: {compact_before: [\"3\"]}\n", `c.yaml:1: field "schedule.compact_before[0]" is text, expected a whole number`},
		{"schedule:\n  keep: 1\n", `c.yaml:2: field "schedule.keep" is a number, expected true or false`},
		{"schedule: {keep: [x]}\n", `c.yaml:1: field "schedule.keep" is a list, expected true or false`},
		{"schedule:\n  keep:\n    a: 1\n", `c.yaml:3: field "schedule.keep" is a mapping, expected true or false`},
		{"schedule:\n  keep:\n    - x\n", `c.yaml:3: field "schedule.keep" is a list, expected true or false`},
		{"schedule:\n  compact_before:\n    - 1\n    - [2]\n", `c.yaml:4: field "schedule.compact_before[1]" is a list, expected a whole number`},
		{"task: [x]\n", `c.yaml:1: field "task" is a list, expected text`},
		// A value reached through an alias: the decoder's token is its
		// anchor's, so the fault is at the anchor's own field or where an
		// alias uses it (the anchor's field alone was named, though "task"
		// is text), and only the aliases of that anchor (a name given
		// again anchors another value).
		{"task: &a ok\nschedule:\n  keep: *a\n", `c.yaml:1: field "task", or where its anchor &a is used (schedule.keep, line 3), is text, expected true or false`},
		{"task: &a ok\nschedule:\n  compact_before: &a [1]\n  max_fillers: *a\n  keep: true\nwait: *a\n", `c.yaml:3: field "schedule.compact_before", or where its anchor &a is used (schedule.max_fillers, line 4; wait, line 6), is a list, expected a whole number`},
		{"wait: &a 1s\nschedule:\n  keep: *a\n  compact_before: &a [1]\n  max_fillers: *a\n", `c.yaml:4: field "schedule.compact_before", or where its anchor &a is used (schedule.max_fillers, line 5), is a list, expected a whole number`},
		// A merge key's fields are its mapping's.
		{"schedule:\n  <<: {keep: [1]}\n", `c.yaml:2: field "schedule.keep" is a list, expected true or false`},
	} {
		var c strictKinds
		if err := Strict("c.yaml", []byte(tc.src), &c); err == nil || err.Error() != tc.want {
			t.Errorf("%q: Strict = %v\nwant %s", tc.src, err, tc.want)
		}
	}
	var c strictKinds
	src := "schedule: {max_fillers: 7, compact_before: [2], keep: true}\ntask: 42\nwait: 10s\n"
	if err := Strict("c.yaml", []byte(src), &c); err != nil || c.Schedule.MaxFillers != 7 || c.Task != "42" || c.Wait != 10*time.Second {
		t.Fatalf("a good document: %v, %+v", err, c)
	}
}

// A second document is refused at its "---" (or the "..." that ends the
// first), not dropped; an empty one drops nothing.
func TestStrictRefusesASecondDocument(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"task: a\n---\ntask: b\n", `c.yaml:2: a second YAML document`},
		{"---\ntask: a\n---\ntask: b\n", `c.yaml:3: a second YAML document`},
		{"task: a\n...\ntask: b\n", `c.yaml:2: a second YAML document`},
		{"%YAML 1.2\n---\ntask: a\n---\ntask: b\n", `c.yaml:4: a second YAML document`},
	} {
		var c strictKinds
		if err := Strict("c.yaml", []byte(tc.src), &c); err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: Strict = %v\nwant one line starting %s", tc.src, err, tc.want)
		}
	}
	// One document: a %YAML directive ahead of its "---" is not a first
	// document of its own (it was refused as one).
	for _, src := range []string{"---\ntask: a\n", "task: a\n...\n", "task: a\n---\n# the end\n", "%YAML 1.2\n---\ntask: a\n"} {
		var c strictKinds
		if err := Strict("c.yaml", []byte(src), &c); err != nil || c.Task != "a" {
			t.Errorf("%q: %v, %+v", src, err, c)
		}
	}
}
