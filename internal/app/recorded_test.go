package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// Tests whose subject is only what a run folder says (the verdict, the
// statistics, the summary's sentences, the reports) read a recorded run
// folder (internal/testdata/runs, made by TestRecordRuns on the stand-in
// CLI) through `vibe-test report`, in-process and in milliseconds, instead
// of running vibe-test. The runs themselves (the engine that made them) are
// the subject of the end-to-end tests.

// reportOf runs `vibe-test report` on a copy of the recorded run name, with
// extra flags: the exit code and output of the run as vibe-test redraws it,
// and the record.
func reportOf(t *testing.T, name string, flags ...string) scenario {
	t.Helper()
	dir := testenv.CopyOfRun(t, name)
	var stdout, stderr bytes.Buffer
	code := Main(t.Context(), append([]string{"vibe-test", "report", dir}, flags...), IO{Env: os.Environ(), Stdout: &stdout, Stderr: &stderr})
	r, err := record.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	return scenario{code: code, stdout: stdout.String(), stderr: stderr.String(), dir: dir, run: r}
}

// TestRecordedDecay: three conversations of an agent that follows the skill
// until its session is compacted and answers from memory after, with the
// CLI's /compact before probe 2 (turn 8), while each probe asked fresh
// passes: exit 1. (The recording is that of TestRecordRuns/decay; the
// compaction itself is run by TestCompactionOnTheRealCLI and, in resume
// mode, TestCompactionResumeMode.)
func TestRecordedDecay(t *testing.T) {
	t.Parallel()
	reports := t.TempDir()
	junitPath, mdPath := filepath.Join(reports, "junit.xml"), filepath.Join(reports, "summary.md")
	s := reportOf(t, "decay", "--junit", junitPath, "--markdown", mdPath)
	if s.code != 1 || s.run.Outcome.Verdict != record.VerdictDecay {
		t.Fatalf("exit %d (%s), want 1", s.code, s.run.Outcome.Sentence)
	}
	cmp := s.run.Outcome.Stats.Comparison
	if cmp.Diluted.Passed != 3 || cmp.Diluted.Probes != 9 || cmp.Fresh.Passed != 9 || cmp.Fresh.Probes != 9 || cmp.P > 0.05 {
		t.Errorf("comparison %+v", cmp)
	}
	if !strings.Contains(s.stdout, "Decay: the probes passed 67 points less often diluted than fresh") {
		t.Errorf("sentence: %s", s.run.Outcome.Sentence)
	}
	for i := range s.run.Conversations {
		c := &s.run.Conversations[i]
		assertCompactedBefore(t, s, c, 2)
		for k, want := range map[int]string{1: judge.Pass, 2: judge.Fail, 3: judge.Fail} {
			if got := c.ProbeAt(k).Result(); got != want {
				t.Errorf("conversation %d probe %d: %s, want %s", c.Index, k, got, want)
			}
		}
		if p := c.ProbeAt(2); p.Turn != 8 || p.ToolCallCount != 0 || c.Shape != record.ShapeDecayed {
			t.Errorf("conversation %d: probe 2 at turn %d (the seed's schedule keeps it at 8) with %d calls, shape %q", c.Index, p.Turn, p.ToolCallCount, c.Shape)
		}
	}
	// The compactions' summary calls count in the agent's cost.
	var turnsCost, compactions float64
	for _, c := range append(append([]record.Conversation{}, s.run.Conversations...), s.run.Fresh...) {
		for _, tr := range c.Turns {
			turnsCost += tr.CostUSD
			for _, cp := range tr.Compactions {
				compactions += cp.CostUSD
			}
		}
	}
	if compactions <= 0 || math.Abs(s.run.Costs.Agent-turnsCost-compactions) > 1e-9 {
		t.Errorf("agent cost $%.6f, the turns' $%.6f and the compactions' $%.6f", s.run.Costs.Agent, turnsCost, compactions)
	}
	if pc := s.run.Outcome.Stats.Probes[1]; pc.AfterCompaction != 3 || pc.Decayed != 3 {
		t.Errorf("probe 2 comparison %+v", pc)
	}
	if len(s.run.Outcome.StoppedConsulting) == 0 {
		t.Error("stopped consulting not flagged")
	}
	if !strings.Contains(s.stdout, "turn 8: the CLI's /compact ran before it") || !strings.Contains(s.stdout, "3 after compaction") {
		t.Error("the summary does not say where the session was compacted")
	}
	for path, want := range map[string]string{junitPath: "asked after the session was compacted", mdPath: "probe 2 (turn 8, "} {
		if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q (%v)", filepath.Base(path), want, err)
		}
	}
}

// TestRecordedGateBypassed: seed 002 replayed with --no-baseline-gate (the
// recording of TestRecordRuns/gate-bypassed, three conversations): the
// baseline runs the census
// but rewrites the ledger (fails), turn 6 answers from memory with no tool
// call, turn 8 runs the census and skips the append (the judge calls it an
// escape hatch), turn 10 from memory. Every turn runs and is judged; the
// summary, run.json and the chart lead with the bypass; a flat line at fail
// is "never worked", not a curve.
func TestRecordedGateBypassed(t *testing.T) {
	t.Parallel()
	s := reportOf(t, "gate-bypassed")
	if s.code != 2 {
		t.Fatalf("exit %d, want 2", s.code)
	}
	if !strings.HasPrefix(s.stdout, "!! BASELINE GATE BYPASSED") {
		t.Errorf("summary does not lead with the bypass: %q", strings.SplitN(s.stdout, "\n", 2)[0])
	}
	raw, _ := os.ReadFile(filepath.Join(s.dir, "run.json"))
	if !s.run.GateBypassed || !bytes.Contains(raw, []byte(`"gate_bypassed": true`)) {
		t.Error("run.json does not record the bypass")
	}
	if s.run.Outcome.Shape != record.ShapeNeverWorked {
		t.Errorf("run shape %q, want %q: a flat line at fail is no curve", s.run.Outcome.Shape, record.ShapeNeverWorked)
	}
	for _, c := range s.run.Conversations {
		if len(c.Turns) != 10 || c.Shape != record.ShapeNeverWorked {
			t.Errorf("conversation %d: %d turns, shape %q; want all 10 run past the failed baseline, never worked", c.Index, len(c.Turns), c.Shape)
		}
		v := c.TurnAt(8).Verdict
		if v == nil || !v.OverCall || v.EscapeHatch || v.Result != judge.Fail {
			t.Errorf("conversation %d turn 8: %+v (want the escape hatch downgraded, still a fail)", c.Index, v)
		}
	}
	n := len(s.run.Conversations)
	if s.run.Outcome.OverCalls != n {
		t.Errorf("over-calls %d, want %d (turn 8 of each conversation)", s.run.Outcome.OverCalls, n)
	}
	consulted := strings.Join(s.run.Outcome.StoppedConsulting, "\n")
	for c := 1; c <= n; c++ {
		if !strings.Contains(consulted, fmt.Sprintf("conversation %d turn 6: 0 tool calls after 3", c)) {
			t.Errorf("stopped consulting not flagged at turn 6 of conversation %d: %q", c, consulted)
		}
	}
	// Each conversation's context range on its own line.
	if got := len(contextRangeLine.FindAllString(s.stdout, -1)); got != n {
		t.Errorf("want one context range line per conversation (%d), got %d", n, got)
	}
	page, err := os.ReadFile(filepath.Join(s.dir, "chart.html"))
	if err != nil && testenv.InCI() {
		t.Fatal(err)
	}
	if err == nil && !bytes.Contains(page, []byte("BASELINE GATE BYPASSED: turn 1 already failed, so this is not a decay curve.")) {
		t.Error("chart.html lacks the red stamp")
	}
}

// TestRecordedBaselineFailed: seed 002 replayed with the gate on (the
// recording of TestRecordRuns/baseline-failed): the gate stops both
// conversations at their failed baseline, exit 2.
func TestRecordedBaselineFailed(t *testing.T) {
	t.Parallel()
	s := reportOf(t, "baseline-failed")
	if s.code != 2 || s.run.Status != record.StatusBaselineFailed {
		t.Fatalf("exit %d status %s, want the gate to stop both conversations (exit 2)", s.code, s.run.Status)
	}
	if len(s.run.Conversations) != 2 {
		t.Fatalf("%d conversations, want 2", len(s.run.Conversations))
	}
	for _, c := range s.run.Conversations {
		if len(c.Turns) != 1 || c.Shape != record.ShapeBaselineFailed || !strings.Contains(c.Error, "decay curve from it is meaningless") {
			t.Errorf("conversation %d: %d turns, shape %q, error %q", c.Index, len(c.Turns), c.Shape, c.Error)
		}
	}
}

// TestRecordedEscapeAndOverCall: an escaping agent (it sums the CSV with
// awk) beside a steady one whose judge flags an escape hatch although the
// required script ran (the recording of TestRecordRuns/escape-over-call).
// The first is a fail with the escape hatch; the second's flags are
// downgraded to over-calls, partial compliance that passes; one
// conversation of each cannot show decay (exit 0).
func TestRecordedEscapeAndOverCall(t *testing.T) {
	t.Parallel()
	s := reportOf(t, "escape-over-call")
	if s.code != 0 || s.run.Outcome.Verdict != record.VerdictNotEnough {
		t.Fatalf("exit %d, want 0 (%s)", s.code, s.run.Outcome.Sentence)
	}
	escaping, steady := s.run.Conversations[0], s.run.Conversations[1]
	escapes := 0
	for _, n := range []int{6, 8, 10} {
		v := escaping.TurnAt(n).Verdict
		if v == nil || !v.EscapeHatch || v.Result != judge.Fail || v.OverCall {
			t.Errorf("escaping agent turn %d verdict %+v", n, v)
		} else {
			escapes++
		}
	}
	for _, n := range []int{1, 6, 8, 10} {
		v := steady.TurnAt(n).Verdict
		if v == nil || v.EscapeHatch || !v.Partial || !v.OverCall || v.Result != judge.Pass {
			t.Errorf("steady agent turn %d verdict %+v", n, v)
		}
	}
	if s.run.Outcome.Escapes != escapes || !strings.Contains(s.stdout, "ESCAPE") {
		t.Errorf("escapes counted %d, want %d, and the summary must show them", s.run.Outcome.Escapes, escapes)
	}
	if s.run.Outcome.OverCalls == 0 || !strings.Contains(s.stdout, "over-call") {
		t.Errorf("over-calls counted %d; the summary must name them", s.run.Outcome.OverCalls)
	}
}

// The error that stopped a run may quote a CLI's stderr: `report` prints
// it on the terminal without its escape sequences.
func TestReportCleansTheRunsError(t *testing.T) {
	dir := testenv.CopyOfRun(t, "decay")
	r, err := record.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Error = "judge: claude exited 1: \x1b]0;PWNED\x07\r\x1b[2Kall good \u202eliaf"
	if err := record.WriteJSON(filepath.Join(dir, "run.json"), r); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	Main(t.Context(), []string{"vibe-test", "report", dir}, IO{Env: os.Environ(), Stdout: &stdout, Stderr: &stderr})
	if !strings.Contains(stderr.String(), "the run stopped with an error: judge: claude exited 1") {
		t.Fatalf("the error is not printed:\n%s", stderr.String())
	}
	for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e"} {
		if strings.Contains(stderr.String(), bad) {
			t.Errorf("stderr carries %q: %q", bad, stderr.String())
		}
	}
}

// --junit and --markdown never write over what is already there and not
// theirs: a transcript inside a run folder (rejudge then judged the lost
// turn a fail), the skill's own files, the config. Each is refused in one
// line before anything runs, and the file is untouched.
func TestReportsNeverWriteOverKeptFiles(t *testing.T) {
	t.Parallel()
	run := testenv.CopyOfRun(t, "held")
	skill := t.TempDir()
	config := filepath.Join(t.TempDir(), "vibe-test.yaml")
	fillers := t.TempDir()
	for _, f := range []string{filepath.Join(skill, "SKILL.md"), filepath.Join(skill, "scripts", "census.sh"), config, filepath.Join(fillers, "p1.md")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("the author's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	transcript := filepath.Join(run, "conv-1", "turn-01.jsonl")
	for _, c := range []struct {
		args   []string
		target string
		says   string
	}{
		{[]string{"report", run, "--junit", transcript}, transcript, "a vibe-test record"},
		{[]string{skill, "--junit", filepath.Join(skill, "SKILL.md")}, filepath.Join(skill, "SKILL.md"), "an existing file of " + skill},
		{[]string{skill, "--markdown", filepath.Join(skill, "scripts", "census.sh")}, filepath.Join(skill, "scripts", "census.sh"), "an existing file of " + skill},
		{[]string{skill, "--config", config, "--markdown", config}, config, "an existing file of " + config},
		{[]string{skill, "--fillers", fillers, "--junit", filepath.Join(fillers, "p1.md")}, filepath.Join(fillers, "p1.md"), "an existing file of " + fillers},
	} {
		refusedUntouched(t, c.args, c.target, c.says)
	}
	// Nor into the folder about to be made, where the record will be
	// (`--out o --junit o/suite.json` replaced the new suite.json).
	// An empty --out may exist already (a folder made for it).
	out := filepath.Join(t.TempDir(), "new")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{skill, "--out", out, "--junit", filepath.Join(out, "run.json")},
		{"merge", "--out", out, "--markdown", filepath.Join(out, "suite.json"), "a", "b"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(t.Context(), append([]string{"vibe-test"}, args...), IO{Env: os.Environ(), Stdout: &stdout, Stderr: &stderr})
		if code != 3 || !strings.Contains(stderr.String(), "where the record is written") {
			t.Errorf("%v: exit %d, %q", args, code, stderr.String())
		}
	}
	// vibe-test's own report of an earlier run in the skill's folder is
	// replaced (`vibe-test . --junit junit.xml` run twice).
	own := filepath.Join(skill, "junit.xml")
	var stdout, stderr bytes.Buffer
	if code := Main(t.Context(), []string{"vibe-test", "report", run, "--junit", own}, IO{Env: os.Environ(), Stdout: &stdout, Stderr: &stderr}); code != 0 {
		t.Fatalf("report --junit: exit %d %s", code, stderr.String())
	}
	if err := (Output{JUnit: own, Markdown: filepath.Join(skill, "summary.md")}).checkFiles("", skill); err != nil {
		t.Errorf("vibe-test's own junit.xml in the skill's folder: %v", err)
	}
}

// Text a record carries reaches the terminal without its control
// characters: a run.json's vibe-test version (report's note that another
// version made it) and a suite.json's text (its status in the title, before
// report settled the status from the skills; a skill's name in the table)
// carried an OSC title and a screen clear through. A session mode resume does not know
// is refused, not run as if it knew it.
func TestRecordTextIsCleanedOnTheTerminal(t *testing.T) {
	t.Parallel()
	const evil = "\x1b]0;PWNED\x07\x1b[2J"
	edit := func(path, field, value string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		m := doc
		parts := strings.Split(field, ".")
		for _, p := range parts[:len(parts)-1] {
			switch v := m[p].(type) {
			case map[string]any:
				m = v
			case []any: // "skills.0": the list's first element
				m = v[0].(map[string]any)
			}
		}
		m[parts[len(parts)-1]] = value
		out, _ := json.Marshal(doc)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := testenv.CopyOfRun(t, "held")
	edit(filepath.Join(run, "run.json"), "versions.vibe_test", "0.0.1"+evil)
	suite := testenv.CopyOfRun(t, "suite")
	edit(filepath.Join(suite, "suite.json"), "skills.name", "dowel-ledger"+evil)
	for _, dir := range []string{run, suite} {
		var stdout, stderr bytes.Buffer
		Main(t.Context(), []string{"vibe-test", "report", dir}, IO{Env: os.Environ(), Stdout: &stdout, Stderr: &stderr})
		if out := stdout.String() + stderr.String(); strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, "PWNED") {
			t.Errorf("report %s: control characters reached the terminal, or the text was dropped:\n%q", filepath.Base(dir), out)
		}
	}
	mode := testenv.CopyOfRun(t, "held")
	edit(filepath.Join(mode, "run.json"), "config.session_mode", "sometimes")
	var stdout, stderr bytes.Buffer
	code := Main(t.Context(), []string{"vibe-test", "resume", mode}, IO{Env: os.Environ(), Stdout: &stdout, Stderr: &stderr})
	if code != 3 || !strings.Contains(stderr.String(), `field "config.session_mode": "sometimes", expected "interactive" or "resume"`) {
		t.Errorf("resume of an unknown session mode: exit %d, %s", code, stderr.String())
	}
}

// report, resume and merge write --junit and --markdown over none of the
// files the folder's record names as the author's (the skill's folder, the
// config, the fixture), as run refuses to: `report RUN --markdown
// skill/SKILL.md` replaced the skill, and the next resume found its hash
// changed.
func TestRecordedInputsAreKept(t *testing.T) {
	t.Parallel()
	author := t.TempDir()
	skillMD := filepath.Join(author, "skill", "stock-ledger", "SKILL.md")
	config := filepath.Join(author, "vibe-test.yaml")
	fixtureFile := filepath.Join(author, "fixture", "data", "stock.csv")
	for _, f := range []string{skillMD, config, fixtureFile} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("the author's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A run's record points at them, as one made from them does.
	pointAt := func(runJSON string) {
		t.Helper()
		var r map[string]any
		raw, err := os.ReadFile(runJSON)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		r["skill"].(map[string]any)["path"] = skillMD
		r["config"].(map[string]any)["config_file"] = config
		r["plan"].(map[string]any)["fixture"] = filepath.Join(author, "fixture")
		out, _ := json.Marshal(r)
		if err := os.WriteFile(runJSON, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := testenv.CopyOfRun(t, "held")
	pointAt(filepath.Join(run, "run.json"))
	suite := testenv.CopyOfRun(t, "suite")
	pointAt(filepath.Join(suite, "stock-ledger", "run.json"))
	for _, c := range []struct {
		args   []string
		target string
	}{
		{[]string{"report", run, "--markdown", skillMD}, skillMD},
		{[]string{"report", run, "--junit", config}, config},
		{[]string{"resume", run, "--markdown", fixtureFile}, fixtureFile},
		{[]string{"report", suite, "--junit", skillMD}, skillMD},
		{[]string{"merge", "--out", filepath.Join(t.TempDir(), "m"), "--markdown", config, suite, suite}, config},
	} {
		refusedUntouched(t, c.args, c.target, "an existing file of ")
	}
}

// refusedUntouched runs vibe-test with args in process and checks that it
// refused in one line holding says, exit 3, and left target as it was.
func refusedUntouched(t *testing.T, args []string, target, says string) {
	t.Helper()
	before, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Main(t.Context(), append([]string{"vibe-test"}, args...), IO{Env: os.Environ(), Stdout: &stdout, Stderr: &stderr})
	after, _ := os.ReadFile(target)
	if code != 3 || !strings.Contains(stderr.String(), says) || strings.Count(strings.TrimSpace(stderr.String()), "\n") > 0 || !bytes.Equal(before, after) {
		t.Errorf("%v: exit %d, %q; the file changed: %v", args, code, stderr.String(), !bytes.Equal(before, after))
	}
}
