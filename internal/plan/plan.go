// Package plan says what each conversation will be told: the base task
// (turn 1), the three probe tasks (turns 6, 8, 10 on the seed's schedule;
// see Schedule for the others), the setup files written before each probe,
// the fixture, and the models. It comes from the author's
// vibe-test.yaml, or is drafted by one cold call from the skill and saved so
// the author can copy it into a config.
package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/readfile"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/yamlerr"
)

// Turns of a conversation, and which are judged.
const Turns = 10

// ProbeTurns are the turns that repeat a skill-relevant task after dilution.
var ProbeTurns = [3]int{6, 8, 10}

// The kinds of turn, as run.json spells them: the base task (the baseline),
// a probe (a skill-relevant task after dilution), a filler (unrelated text
// that dilutes the context, never judged).
const (
	KindBase   = "base"
	KindProbe  = "probe"
	KindFiller = "filler"
)

// Kind of each turn, by 1-based number.
func Kind(turn int) string {
	if turn == 1 {
		return KindBase
	}
	for _, p := range ProbeTurns {
		if turn == p {
			return KindProbe
		}
	}
	return KindFiller
}

// Probe is one probe task and the files written just before it.
type Probe struct {
	Task  string            `yaml:"task" json:"task"`
	Setup map[string]string `yaml:"setup,omitempty" json:"setup,omitempty"`
}

// Config is vibe-test.yaml. Every key is documented in the README; unknown
// keys are errors, so a typo never silently changes the experiment.
type Config struct {
	BaseTask   string            `yaml:"base_task" json:"base_task"`
	Probes     []Probe           `yaml:"probes" json:"probes"`
	Fixture    string            `yaml:"fixture,omitempty" json:"fixture,omitempty"`
	Files      map[string]string `yaml:"files,omitempty" json:"files,omitempty"`
	Model      string            `yaml:"model,omitempty" json:"model,omitempty"`
	JudgeModel string            `yaml:"judge_model,omitempty" json:"judge_model,omitempty"`
	// Schedule, when set, replaces the seed's ten turns (flags override it).
	Schedule *ScheduleConfig `yaml:"schedule,omitempty" json:"schedule,omitempty"`
	// Cases is the skill's case set for `vibe-test eval` (a folder outside
	// the skill's, relative to this file); a decay run does not read it.
	Cases string `yaml:"cases,omitempty" json:"cases,omitempty"`
}

// ScheduleConfig is the schedule as vibe-test.yaml spells it.
type ScheduleConfig struct {
	DiluteTo      Levels `yaml:"dilute_to,omitempty" json:"dilute_to,omitempty"`
	CompactBefore []int  `yaml:"compact_before,omitempty" json:"compact_before,omitempty"`
	CompactAt     Tokens `yaml:"compact_at,omitempty" json:"compact_at,omitempty"`
	Fillers       string `yaml:"fillers,omitempty" json:"fillers,omitempty"`
	// MaxFillers is a pointer so that a written 0 is refused, not read as
	// absent (the default).
	MaxFillers *int `yaml:"max_fillers,omitempty" json:"max_fillers,omitempty"`
}

// Levels are context levels, written as numbers or as 50k, 1.5m.
type Levels []int64

// UnmarshalYAML reads a list of levels, each a number or a string such as
// "50k". It reads the node itself, so that an error names its line and
// field as every other field's does (a plain error named the file alone).
func (l *Levels) UnmarshalYAML(node ast.Node) error {
	seq, ok := node.(*ast.SequenceNode)
	if !ok {
		return nodeError(node, "dilute_to", "expected a list of token counts such as [50k, 100k, 150k]")
	}
	*l = nil
	for _, v := range seq.Values {
		n, err := ParseTokens(scalarText(v))
		if err != nil {
			return nodeError(v, "dilute_to", err.Error())
		}
		*l = append(*l, n)
	}
	return nil
}

// Tokens is one token count, written as a number or as 120k.
type Tokens int64

// UnmarshalYAML reads a number or a string such as "120k", from the node
// (as Levels does).
func (n *Tokens) UnmarshalYAML(node ast.Node) error {
	v, err := ParseTokens(scalarText(node))
	if err != nil {
		return nodeError(node, "compact_at", err.Error())
	}
	*n = Tokens(v)
	return nil
}

// scalarText is a scalar node's text as written ("50k", "120000"), or a
// description of a node that is none (a list, a mapping), which
// ParseTokens refuses by name.
func scalarText(node ast.Node) string {
	switch node.(type) {
	case *ast.SequenceNode, *ast.MappingNode, *ast.MappingValueNode:
		return node.String()
	}
	if tk := node.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

// nodeError is an error at node, in the words yamlerr prints with the
// file and the line: field field, then msg.
func nodeError(node ast.Node, field, msg string) error {
	return &yaml.SyntaxError{Message: fmt.Sprintf("field %q: %s", "schedule."+field, msg), Token: node.GetToken()}
}

// Plan is what the run will do; saved as plan.json.
type Plan struct {
	Source   string  `json:"source"` // config path, or "drafted"
	BaseTask string  `json:"base_task"`
	Probes   []Probe `json:"probes"`
	Fixture  string  `json:"fixture,omitempty"` // absolute
	// FixtureHash covers what a sandbox gets of the fixture
	// (sandbox.FixtureHash): a resume or a merge refuses a fixture whose
	// contents changed. Runs before it have none.
	FixtureHash string            `json:"fixture_hash,omitempty"`
	Files       map[string]string `json:"files,omitempty"`
	Model       string            `json:"model,omitempty"`
	JudgeModel  string            `json:"judge_model,omitempty"`
	// Schedule is when the probes are asked and what dilutes the context;
	// nil is the seed's ten turns.
	Schedule *Schedule `json:"schedule,omitempty"`
	// FillerSeed picks each conversation's fillers (seed + conversation index).
	FillerSeed int64 `json:"filler_seed"`
	// Fillers are the passage ids each conversation was given, by conversation.
	Fillers [][]string `json:"fillers,omitempty"`
}

// ProbeTask is probe k's task (1-based).
func (p *Plan) ProbeTask(k int) string {
	if k < 1 || k > len(p.Probes) {
		return ""
	}
	return p.Probes[k-1].Task
}

// ProbeSetup is the files written just before probe k (1-based).
func (p *Plan) ProbeSetup(k int) map[string]string {
	if k < 1 || k > len(p.Probes) {
		return nil
	}
	return p.Probes[k-1].Setup
}

// Task returns the prompt of a judged turn of the fixed schedule.
func (p *Plan) Task(turn int) string {
	switch turn {
	case 1:
		return p.BaseTask
	case 6:
		return p.Probes[0].Task
	case 8:
		return p.Probes[1].Task
	case 10:
		return p.Probes[2].Task
	}
	return ""
}

// Setup returns the files to write just before a probe turn.
func (p *Plan) Setup(turn int) map[string]string {
	for i, t := range ProbeTurns {
		if t == turn && i < len(p.Probes) {
			return p.Probes[i].Setup
		}
	}
	return nil
}

// MaxConfigSize bounds vibe-test.yaml: tasks and a few setup files, not data.
const MaxConfigSize = 1 << 20

// ConfigName is the config file looked for beside SKILL.md.
const ConfigName = "vibe-test.yaml"

// LoadConfig reads and validates a config file. Errors name the file, the
// line when known, the field and what was expected.
func LoadConfig(path string) (*Config, error) {
	b, err := readfile.Regular(path, MaxConfigSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file (expected a %s config)", path, ConfigName)
		}
		return nil, err
	}
	var c Config
	if err := yamlerr.Strict(path, b, &c); err != nil {
		return nil, err
	}
	if err := c.validate(path, b); err != nil {
		return nil, err
	}
	if c.Fixture != "" {
		if !filepath.IsAbs(c.Fixture) {
			c.Fixture = filepath.Join(filepath.Dir(path), c.Fixture)
		}
		if st, err := os.Stat(c.Fixture); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%s:%d: field \"fixture\": %s is not a folder", path, keyLine(b, "fixture"), c.Fixture)
		}
		// Links out of the fixture and an oversized one are refused now,
		// not once per conversation.
		if err := sandbox.CheckFixture(c.Fixture, []string{path}); err != nil {
			return nil, fmt.Errorf("%s:%d: field \"fixture\": %s: %v", path, keyLine(b, "fixture"), c.Fixture, err)
		}
	}
	if err := c.checkWrites(path, b); err != nil {
		return nil, err
	}
	return &c, nil
}

// checkWrites refuses a path of files: or of a probe's setup that the
// sandbox cannot write: a folder there (the fixture's, or one an earlier
// write made), or a file where one of its folders goes. Found now, not
// when the write fails at that probe, after the turns before it were paid
// for. The writes are taken in the order a conversation makes them:
// files: at the start, then each probe's setup.
func (c *Config) checkWrites(path string, src []byte) error {
	written := map[string]bool{} // cleaned paths written so far
	writes := func(top, below string, files map[string]string) error {
		// In the sandbox's order (sorted), so "a" is written before "a/b".
		for _, k := range sortedKeys(files) {
			if err := writable(c.Fixture, written, filepath.Clean(k)); err != nil {
				return fmt.Errorf("%s:%d: field %q: %q: %v", path, fieldLine(src, top, below), top+below, k, err)
			}
			written[filepath.Clean(k)] = true
		}
		return nil
	}
	if err := writes("files", "", c.Files); err != nil {
		return err
	}
	for i, p := range c.Probes {
		if err := writes("probes", fmt.Sprintf("[%d].setup", i), p.Setup); err != nil {
			return err
		}
	}
	return nil
}

// writable says why the file rel (cleaned, relative) cannot be written
// into a sandbox that holds the fixture (absolute; "" for none) and the
// files written before it, or nil.
func writable(fixture string, written map[string]bool, rel string) error {
	for dir := filepath.Dir(rel); dir != "."; dir = filepath.Dir(dir) {
		if written[dir] {
			return fmt.Errorf("%s is a file written before it, expected a folder there", dir)
		}
		if fixture == "" {
			continue
		}
		if st, err := os.Stat(filepath.Join(fixture, dir)); err == nil && !st.IsDir() {
			return fmt.Errorf("%s is a file in the fixture, expected a folder there", dir)
		}
	}
	for w := range written {
		if strings.HasPrefix(w, rel+string(filepath.Separator)) {
			return fmt.Errorf("%s is a folder of files written before it, expected a file there", rel)
		}
	}
	if fixture == "" {
		return nil
	}
	st, err := os.Lstat(filepath.Join(fixture, rel))
	switch {
	case err != nil:
		return nil
	case st.IsDir():
		return fmt.Errorf("%s is a folder in the fixture, expected a file there", rel)
	case st.Mode()&fs.ModeSymlink != 0:
		// The sandbox never writes through a link.
		return fmt.Errorf("%s is a symbolic link in the fixture, expected a plain file there", rel)
	}
	return nil
}

func (c *Config) validate(path string, src []byte) error {
	if strings.TrimSpace(c.BaseTask) == "" {
		return fmt.Errorf("%s:%d: field \"base_task\" is missing or empty, expected the turn-1 task", path, keyLine(src, "base_task"))
	}
	if len(c.Probes) != len(ProbeTurns) {
		return fmt.Errorf("%s:%d: field \"probes\": %d given, expected exactly %d (turns 6, 8 and 10)", path, keyLine(src, "probes"), len(c.Probes), len(ProbeTurns))
	}
	for i, p := range c.Probes {
		if strings.TrimSpace(p.Task) == "" {
			return fmt.Errorf("%s:%d: field \"probes[%d].task\" is empty, expected the task for turn %d", path, keyLine(src, "probes"), i, ProbeTurns[i])
		}
		if err := checkPaths(p.Setup); err != nil {
			return fmt.Errorf("%s:%d: field \"probes[%d].setup\": %v", path, keyLine(src, "probes"), i, err)
		}
	}
	if err := checkPaths(c.Files); err != nil {
		return fmt.Errorf("%s:%d: field \"files\": %v", path, keyLine(src, "files"), err)
	}
	if sc := c.Schedule; sc != nil {
		// Both in the file: said in the file's words, not the flags'
		// (Check's message names both, for when the flags give them).
		if sc.CompactAt > 0 && len(sc.CompactBefore) > 0 {
			return fmt.Errorf("%s:%d: schedule.compact_at and schedule.compact_before are both given, expected one of them (a session compacts at a context level or before given probes)", path, fieldLine(src, "schedule", ".compact_at"))
		}
		// The flag's range: 0 would silently mean the default.
		if n := sc.MaxFillers; n != nil && (*n < 1 || *n > MaxFillersLimit) {
			return fmt.Errorf("%s:%d: field \"schedule.max_fillers\": %d, expected 1 to %d", path, fieldLine(src, "schedule", ".max_fillers"), *n, MaxFillersLimit)
		}
		if err := sc.Schedule().Check(); err != nil {
			// Check names the field first: "dilute_to: 2 levels given, ...".
			field, msg, _ := strings.Cut(err.Error(), ": ")
			return fmt.Errorf("%s:%d: field \"schedule.%s\": %s", path, fieldLine(src, "schedule", "."+field), field, msg)
		}
	}
	return nil
}

// checkPaths refuses file paths that would leave the sandbox.
func checkPaths(files map[string]string) error {
	for _, k := range sortedKeys(files) {
		clean := filepath.Clean(k)
		if k == "" || filepath.IsAbs(k) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("path %q, expected a relative path inside the sandbox", k)
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// keyLine finds the line of a top-level key, for error messages.
func keyLine(src []byte, key string) int {
	for i, l := range bytes.Split(src, []byte("\n")) {
		if bytes.HasPrefix(l, []byte(key+":")) {
			return i + 1
		}
	}
	return 1
}

// fieldLine finds the line of the value at path below the top-level key
// top (path "[0].setup" below "probes", ".max_fillers" below "schedule"),
// else top's line, for error messages.
func fieldLine(src []byte, top, path string) int {
	p, err := yaml.PathString("$." + top + path)
	if err != nil {
		return keyLine(src, top)
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return keyLine(src, top)
	}
	node, err := p.FilterFile(f)
	if err != nil || node == nil || node.GetToken() == nil || node.GetToken().Position == nil {
		return keyLine(src, top)
	}
	return node.GetToken().Position.Line
}

// Schedule is the schedule the config asks for (nil: the seed's).
func (sc *ScheduleConfig) Schedule() *Schedule {
	if sc == nil {
		return nil
	}
	s := &Schedule{DiluteTo: sc.DiluteTo, CompactBefore: sc.CompactBefore, CompactAt: int64(sc.CompactAt), Fillers: sc.Fillers}
	if sc.MaxFillers != nil {
		s.MaxFillers = *sc.MaxFillers
	}
	return s
}

// FromConfig makes a plan from a config.
func FromConfig(path string, c *Config) *Plan {
	return &Plan{Source: path, BaseTask: c.BaseTask, Probes: c.Probes, Fixture: c.Fixture,
		Files: c.Files, Model: c.Model, JudgeModel: c.JudgeModel, Schedule: c.Schedule.Schedule()}
}

// DraftSchema is the schema of the drafting call's answer.
const DraftSchema = `{"title":"plan","type":"object","additionalProperties":false,"properties":{` +
	`"base_task":{"type":"string"},"probes":{"type":"array","minItems":3,"maxItems":3,"items":{"type":"string"}}},` +
	`"required":["base_task","probes"]}`

// DraftPrompt asks for a base task and three probes a user of the skill
// would plausibly type.
func DraftPrompt(s *skill.Skill) string {
	return `Below are instructions an AI coding agent follows for some kind of request. Write four requests a real user of this agent might type, each one that the instructions clearly apply to: base_task (the first), and probes (three more, different from the first and from each other, each phrased as a new request in an ongoing chat). Write them as the user would, in plain words; do not mention the instructions, grading or checking. Answer with the StructuredOutput tool.

--- INSTRUCTIONS (` + s.Name + `) ---
` + s.Raw
}

// Caller is the cold-call seam: claude.Structured.
type Caller = claude.Structured

// Draft asks the model for the tasks. It returns the turn for cost
// accounting even on error.
func Draft(ctx context.Context, c Caller, s *skill.Skill, model string) (*Plan, claude.Turn, error) {
	turn, err := c.Structured(ctx, DraftPrompt(s), DraftSchema, model)
	if err != nil {
		return nil, turn, fmt.Errorf("drafting the tasks: %w", err)
	}
	var ans struct {
		BaseTask string   `json:"base_task"`
		Probes   []string `json:"probes"`
	}
	if err := json.Unmarshal(turn.StructuredOutput, &ans); err != nil {
		return nil, turn, fmt.Errorf("drafting the tasks: answer does not parse: %w", err)
	}
	if strings.TrimSpace(ans.BaseTask) == "" || len(ans.Probes) != 3 {
		return nil, turn, fmt.Errorf("drafting the tasks: expected a base task and 3 probes, got %d probes", len(ans.Probes))
	}
	p := &Plan{Source: "drafted", BaseTask: ans.BaseTask}
	for _, t := range ans.Probes {
		if strings.TrimSpace(t) == "" {
			return nil, turn, fmt.Errorf("drafting the tasks: an empty probe")
		}
		p.Probes = append(p.Probes, Probe{Task: t})
	}
	return p, turn, nil
}

// YAML renders a plan as a vibe-test.yaml the author can review and keep.
func (p *Plan) YAML() string {
	c := Config{BaseTask: p.BaseTask, Probes: p.Probes, Model: p.Model, JudgeModel: p.JudgeModel}
	b, err := yaml.Marshal(c)
	if err != nil {
		return ""
	}
	return string(b)
}
