package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// actionRun runs scripts/action-run.sh as action.yml does, with the given
// INPUT_* variables, a step summary that already holds an earlier step's
// text, and VIBE_TEST_BIN/VIBE_TEST_CLAUDE pointing at the built binary and
// the stand-in, so nothing is downloaded.
func actionRun(t *testing.T, url string, inputs ...string) (code int, stderr, stepSummary, outputs string) {
	t.Helper()
	tmp := t.TempDir()
	sum := filepath.Join(tmp, "step_summary.md")
	outFile := filepath.Join(tmp, "github_output")
	if err := os.WriteFile(sum, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(testenv.RepoRoot(t), "scripts", "action-run.sh"))
	cmd.Env = append(DemoEnv(os.Environ(), url),
		"VIBE_TEST_BIN="+vibeTestBinary(t), "VIBE_TEST_CLAUDE="+fastCLI(t),
		"VIBE_TEST_CACHE_DIR="+filepath.Join(tmp, "cache"),
		"GITHUB_STEP_SUMMARY="+sum, "GITHUB_OUTPUT="+outFile, "RUNNER_TEMP="+filepath.Join(tmp, "runner"),
		"INPUT_SETUP_JAIL=false")
	cmd.Env = append(cmd.Env, inputs...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("running the script: %v", err)
	}
	s, _ := os.ReadFile(sum)
	o, _ := os.ReadFile(outFile)
	return code, errb.String(), string(s), string(o)
}

// The Action's script runs the skill with the inputs as flags, appends the
// run's Markdown summary to the step summary, names the run folder in the
// step's outputs and exits with vibe-test's exit code.
func TestActionScript(t *testing.T) {
	t.Parallel()
	script, err := demo.Script([]string{"never"}, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, _, paths := startDemo(t, script)
	code, stderr, sum, outputs := actionRun(t, srv.URL(),
		"INPUT_SKILL="+paths.Skill, "INPUT_CONVERSATIONS=1", "INPUT_CONCURRENCY=1", "INPUT_MAX_BUDGET_USD=5",
		"INPUT_ARGS=--config "+paths.Config+" --seed 7  --max-retries 1")
	t.Logf("exit %d\n%s", code, stderr)

	dir := regexp.MustCompile(`(?m)^run-dir=(.+)$`).FindStringSubmatch(outputs)
	if dir == nil {
		t.Fatalf("no run-dir in $GITHUB_OUTPUT:\n%s", outputs)
	}
	r, err := record.Load(dir[1])
	if err != nil {
		t.Fatalf("the run folder named in the outputs: %v", err)
	}
	if code != exit.Indeterminate || r.Outcome.Exit != code {
		t.Errorf("script exit %d, run.json's outcome %d; want both %d (the skill fails its baseline)", code, r.Outcome.Exit, exit.Indeterminate)
	}
	if !strings.Contains(outputs, "exit-code=2\n") {
		t.Errorf("$GITHUB_OUTPUT lacks exit-code=2:\n%s", outputs)
	}
	if c := r.Config; c.Conversations != 1 || c.Concurrency != 1 || c.MaxBudgetUSD != 5 || r.Plan == nil || r.Plan.FillerSeed != 7 {
		t.Errorf("the inputs did not reach vibe-test: config %s, plan %s", mustJSON(t, c), mustJSON(t, r.Plan))
	}
	var want bytes.Buffer
	if err := summary.Markdown(&want, []summary.MarkdownEntry{{Dir: dir[1], Run: r}}); err != nil {
		t.Fatal(err)
	}
	if sum != "earlier step\n"+want.String() {
		t.Errorf("the step summary is not the earlier text followed by the run's Markdown:\n%s\nwant the run's:\n%s", sum, want.String())
	}
	if !strings.Contains(sum, "| stock\\-ledger | **baseline\\-failed** (exit 2) |") {
		t.Errorf("the step summary lacks the skill's row:\n%s", sum)
	}
}

// A bad input stops the script before vibe-test starts: exit 3, one line
// naming the input, and a line on the step summary.
func TestActionScriptBadInput(t *testing.T) {
	t.Parallel()
	code, stderr, sum, _ := actionRun(t, "http://127.0.0.1:9", "INPUT_SKILL=skill", "INPUT_CONVERSATIONS=two")
	if code != exit.Tool {
		t.Errorf("exit %d, want %d", code, exit.Tool)
	}
	if want := "action-run: input conversations: \"two\" is not a whole number\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if !strings.HasPrefix(sum, "earlier step\n") || !strings.Contains(sum, "**vibe-test:** vibe\\-test did not run: input conversations") {
		t.Errorf("the step summary does not say why:\n%s", sum)
	}
}

// Every line of a multi-line args input reaches vibe-test (a `args: |`
// block): the script kept the first line and dropped the rest without a
// word, a --max-budget-usd among them.
func TestActionScriptArgsOnSeveralLines(t *testing.T) {
	t.Parallel()
	script, err := demo.Script([]string{"never"}, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, _, paths := startDemo(t, script)
	code, stderr, _, outputs := actionRun(t, srv.URL(), "INPUT_SKILL="+paths.Skill, "INPUT_CONVERSATIONS=1",
		"INPUT_ARGS=--config "+paths.Config+"\n--seed 7\n  --max-retries 1 --max-budget-usd 4\n")
	dir := regexp.MustCompile(`(?m)^run-dir=(.+)$`).FindStringSubmatch(outputs)
	if dir == nil {
		t.Fatalf("exit %d, no run-dir:\n%s", code, stderr)
	}
	r, err := record.Load(dir[1])
	if err != nil {
		t.Fatal(err)
	}
	if r.Plan == nil || r.Plan.FillerSeed != 7 || r.Config.MaxRetries != 1 || r.Config.MaxBudgetUSD != 4 {
		t.Errorf("the later lines of args did not reach vibe-test: seed %v, max retries %d, budget %v\n%s", r.Plan, r.Config.MaxRetries, r.Config.MaxBudgetUSD, stderr)
	}
}

// Inputs the script would pass on wrongly are refused before vibe-test
// runs: --out in args (vibe-test took the last --out, and the step's
// run-dir, which the artifact upload reads, named an empty folder), a
// setup-jail that is neither true nor false, a line break in out (it
// would write outputs of its own into $GITHUB_OUTPUT).
func TestActionScriptRefusesWhatItWouldMisread(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ input, want string }{
		{"INPUT_ARGS=--seed 7 --out /tmp/elsewhere", "action-run: input args: --out: give the run folder as the out input"},
		{"INPUT_ARGS=--out=/tmp/elsewhere", "action-run: input args: --out=/tmp/elsewhere: give the run folder as the out input"},
		// urfave/cli reads a single dash as two.
		{"INPUT_ARGS=-out /tmp/elsewhere", "action-run: input args: -out: give the run folder as the out input"},
		{"INPUT_SETUP_JAIL=no", "action-run: input setup-jail: \"no\" is neither true nor false"},
		{"INPUT_OUT=runs\nexit-code=0", "action-run: input out: a line break in the folder's name"},
	} {
		code, stderr, _, _ := actionRun(t, "http://127.0.0.1:9", "INPUT_SKILL=skill", tc.input)
		if code != exit.Tool || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 3 and %q", tc.input, code, stderr, tc.want)
		}
	}
}

// action.yml passes every input to the script as the variable it reads,
// runs the script, uploads the run folder, and installs by default the
// claude CLI the project pins.
func TestActionYAML(t *testing.T) {
	root := testenv.RepoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Inputs map[string]struct {
			Default  string `yaml:"default"`
			Required bool   `yaml:"required"`
		} `yaml:"inputs"`
		Runs struct {
			Using string `yaml:"using"`
			Steps []struct {
				ID   string            `yaml:"id"`
				Uses string            `yaml:"uses"`
				Run  string            `yaml:"run"`
				Env  map[string]string `yaml:"env"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(raw, &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if action.Runs.Using != "composite" {
		t.Errorf("runs.using %q, want composite", action.Runs.Using)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(root, "tools", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if got, want := action.Inputs["claude-version"].Default, pkg.Dependencies["@anthropic-ai/claude-code"]; got != want {
		t.Errorf("claude-version defaults to %q, tools/package.json pins %q", got, want)
	}
	scriptText, err := os.ReadFile(filepath.Join(root, "scripts", "action-run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, m := range regexp.MustCompile(`INPUT_[A-Z_]+`).FindAllString(string(scriptText), -1) {
		read[m] = true
	}
	var runStep, upload bool
	for _, s := range action.Runs.Steps {
		if strings.Contains(s.Run, "scripts/action-run.sh") {
			runStep = true
			for name := range action.Inputs {
				v := "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
				if name == "node-version" || name == "artifact-name" {
					continue // used by the action's own steps
				}
				if s.Env[v] != "${{ inputs."+name+" }}" {
					t.Errorf("input %s reaches the script as %s=%q", name, v, s.Env[v])
				}
				if !read[v] {
					t.Errorf("the script never reads %s (input %s)", v, name)
				}
			}
			for v := range read {
				if _, ok := s.Env[v]; !ok {
					t.Errorf("the script reads %s, which action.yml does not set", v)
				}
			}
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && s.With["path"] == "${{ steps.run.outputs.run-dir }}" {
			upload = true
		}
	}
	if !runStep || !upload {
		t.Errorf("action.yml runs the script: %v; uploads the run folder: %v", runStep, upload)
	}
}

// When vibe-test itself stops before it has a run to summarise (here, a
// skill that does not exist), the script passes its exit code on and the
// step summary says so instead of staying silent.
func TestActionScriptVibeTestFailsEarly(t *testing.T) {
	t.Parallel()
	code, stderr, sum, outputs := actionRun(t, "http://127.0.0.1:9", "INPUT_SKILL="+filepath.Join(t.TempDir(), "no-skill", "SKILL.md"))
	if code != exit.Tool {
		t.Errorf("exit %d, want %d\n%s", code, exit.Tool, stderr)
	}
	if !strings.Contains(stderr, "SKILL.md") {
		t.Errorf("vibe-test's error is not in the log:\n%s", stderr)
	}
	if !strings.Contains(sum, "vibe\\-test exited 3 before it wrote a summary") || !strings.Contains(outputs, "exit-code=3\n") {
		t.Errorf("step summary:\n%s\noutputs:\n%s", sum, outputs)
	}
}
