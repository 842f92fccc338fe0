package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rejudge"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// cmdRun is one vibe-test command run against a scripted model.
type cmdRun struct {
	code           int
	stdout, stderr string
	srv            *scripted.Server
}

// runAgainst starts a scripted model and runs one vibe-test command (args
// after the program name) with the stand-in CLI pointed at it: the
// commands it runs (init, rejudge, a drafted plan) make cold calls, whose
// real-CLI form internal/fakeclaude's fidelity test covers.
func runAgainst(t *testing.T, script scripted.Script, args ...string) cmdRun {
	t.Helper()
	bin := fastCLI(t)
	srv, err := scripted.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	env := DemoEnv(os.Environ(), srv.URL())
	env = append(env, "VIBE_TEST_CLAUDE="+bin, "VIBE_TEST_CACHE_DIR="+filepath.Join(t.TempDir(), "cache"))
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), append([]string{"vibe-test"}, args...), IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	t.Logf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout.String(), stderr.String())
	return cmdRun{code: code, stdout: stdout.String(), stderr: stderr.String(), srv: srv}
}

// judgeAnswering is a scripted model whose judge always gives answer.
func judgeAnswering(answer any) scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{{Kind: scripted.KindJudge, Steps: []scripted.Step{
		{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: answer}}},
	}}}}
}

// failingEverything is a judge answer failing every criterion named.
func failingEverything(ids ...string) map[string]any {
	var crit []map[string]any
	for _, id := range ids {
		crit = append(crit, map[string]any{"id": id, "result": "fail", "evidence": "not shown", "call": 0})
	}
	return map[string]any{"criteria": crit, "escape_hatch": false, "escape_reason": ""}
}

func demoCriterionIDs() []string {
	var ids []string
	for _, c := range demo.Rubric()["criteria"].([]map[string]any) {
		ids = append(ids, c["id"].(string))
	}
	return ids
}

// copyRun copies a saved run folder, so each test judges its own copy.
func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "run")
	if err := sandbox.CopyDir(src, dst, nil); err != nil {
		t.Fatal(err)
	}
	return dst
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadVerdicts(t *testing.T, path string) rejudge.VerdictsFile {
	t.Helper()
	var v rejudge.VerdictsFile
	if err := json.Unmarshal(readFile(t, path), &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l+"\n") {
			t.Errorf("output lacks the line %q", l)
		}
	}
}

// One saved steady run (the recorded not-enough-evidence folder: two
// conversations) is judged again in several ways, each on its own copy.
func TestRejudge(t *testing.T) {
	t.Parallel()
	saved := struct{ dir string }{testenv.RecordedRun(t, "not-enough-evidence")}

	// A refused key stops the re-judging: one line of advice, no
	// verdicts file, not a judge error per turn.
	t.Run("RefusedKey", func(t *testing.T) {
		t.Parallel()
		dir := copyRun(t, saved.dir)
		refused := scripted.Script{Rules: []scripted.Rule{{Kind: scripted.KindJudge, Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 401, Count: 1000}}}}}}
		r := runAgainst(t, refused, "rejudge", dir)
		if r.code != 3 || !strings.Contains(r.stderr, "refused the credentials (HTTP 401)") || !strings.Contains(r.stderr, "nothing written") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "verdicts-2.json")); err == nil {
			t.Error("a verdicts file was written")
		}
		sessions := map[string]bool{}
		for _, q := range r.srv.Requests() {
			sessions[q.SessionID] = true
		}
		if len(sessions) > rejudge.Concurrency {
			t.Errorf("%d judge calls after a 401, want at most the %d already running", len(sessions), rejudge.Concurrency)
		}
	})

	// A run judged with --judge-repeats is judged again the same way: it
	// was judged once a turn, a third of the calls and the cost.
	t.Run("JudgeRepeats", func(t *testing.T) {
		t.Parallel()
		dir := copyRun(t, saved.dir)
		b := readFile(t, filepath.Join(dir, "run.json"))
		b = bytes.Replace(b, []byte(`"judge_repeats": 1`), []byte(`"judge_repeats": 3`), 1)
		if !bytes.Contains(b, []byte(`"judge_repeats": 3`)) {
			t.Fatal("the recorded run has no judge_repeats to set")
		}
		if err := os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		r := runAgainst(t, judgeAnswering(failingEverything(demoCriterionIDs()...)), "rejudge", dir)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		v := loadVerdicts(t, filepath.Join(dir, "verdicts-2.json"))
		for _, tv := range v.Verdicts {
			if len(tv.Verdict.Repeats) != 3 {
				t.Fatalf("turn %d judged %d times, want the run's 3", tv.Turn, len(tv.Verdict.Repeats))
			}
		}
	})

	t.Run("FailingJudge", func(t *testing.T) {
		t.Parallel()
		dir := copyRun(t, saved.dir)
		before := readFile(t, filepath.Join(dir, "run.json"))
		r := runAgainst(t, judgeAnswering(failingEverything(demoCriterionIDs()...)), "rejudge", dir)
		if r.code != 0 {
			t.Fatalf("exit %d, want 0: it ran, even though verdicts changed", r.code)
		}
		if !bytes.Equal(before, readFile(t, filepath.Join(dir, "run.json"))) {
			t.Fatal("run.json changed")
		}
		v := loadVerdicts(t, filepath.Join(dir, "verdicts-2.json"))
		if v.Rubric == nil || len(v.Rubric.Criteria) != 6 || v.CreatedAt.IsZero() {
			t.Errorf("rubric %+v, created_at %v", v.Rubric, v.CreatedAt)
		}
		var turns []int
		for _, tv := range v.Verdicts {
			turns = append(turns, tv.Turn)
			if (tv.Conversation != 1 && tv.Conversation != 2) || (tv.Arm != "" && tv.Arm != record.ArmFresh) {
				t.Errorf("conversation %d arm %q", tv.Conversation, tv.Arm)
			}
			// The deterministic checks still pass the musts: they win over
			// the judge, so only the judge-only criterion flips.
			if tv.Verdict.Result != judge.Pass {
				t.Errorf("turn %d: %s, want pass (checks win)", tv.Turn, tv.Verdict.Result)
			}
			for _, c := range tv.Verdict.Criteria {
				if c.ID == "answers-from-census" && (c.Result != judge.Fail || c.Source != "judge") {
					t.Errorf("turn %d answers-from-census: %+v", tv.Turn, c)
				}
			}
		}
		// The conversations' four judged turns each, then their fresh
		// triples' three: both arms, judged by the same rubric.
		if fmt.Sprint(turns) != "[1 6 8 10 1 6 8 10 6 8 10 6 8 10]" || v.Verdicts[7].Arm != "" || v.Verdicts[8].Arm != record.ArmFresh {
			t.Errorf("judged turns %v, want [1 6 8 10 1 6 8 10 6 8 10 6 8 10] (the last six fresh)", turns)
		}
		for _, n := range []string{"1", "6", "8", "10"} {
			wantLines(t, r.stdout, "conv 1 turn "+n+" answers-from-census: pass → fail (judge)", "conv 2 turn "+n+" answers-from-census: pass → fail (judge)")
		}
		wantLines(t, r.stdout, "fresh 1 turn 8 answers-from-census: pass → fail (judge)", "fresh 2 turn 10 answers-from-census: pass → fail (judge)")
		if strings.Contains(r.stdout, "runs-census:") || strings.Contains(r.stdout, "turn 8: pass") {
			t.Error("unchanged verdicts were printed as changes")
		}
		if !strings.Contains(r.stdout, "rejudged 14 turns: results changed 0, criterion verdicts changed 14, judge errors 0; outcome not-enough-evidence (exit 0), was not-enough-evidence (exit 0)") {
			t.Error("summary line missing or wrong")
		}

		// Again: verdicts-3.json, and verdicts-2.json is left alone.
		v2 := readFile(t, filepath.Join(dir, "verdicts-2.json"))
		r = runAgainst(t, judgeAnswering(failingEverything(demoCriterionIDs()...)), "rejudge", dir)
		if r.code != 0 {
			t.Fatalf("second rejudge: exit %d", r.code)
		}
		if _, err := os.Stat(filepath.Join(dir, "verdicts-3.json")); err != nil {
			t.Errorf("verdicts-3.json: %v", err)
		}
		if !bytes.Equal(v2, readFile(t, filepath.Join(dir, "verdicts-2.json"))) {
			t.Error("verdicts-2.json was written over")
		}
		if !bytes.Equal(before, readFile(t, filepath.Join(dir, "run.json"))) {
			t.Fatal("run.json changed")
		}
	})

	t.Run("OtherRubric", func(t *testing.T) {
		t.Parallel()
		dir := copyRun(t, saved.dir)
		before := readFile(t, filepath.Join(dir, "run.json"))
		// A stricter rubric: its musts have no check, so the judge decides.
		rubricFile := filepath.Join(t.TempDir(), "strict.json")
		os.WriteFile(rubricFile, []byte(`{"criteria": [
  {"id": "runs-census", "kind": "must", "text": "runs scripts/census.sh with Bash before answering"},
  {"id": "reads-skill", "kind": "must", "text": "opens the stock-ledger skill before anything else"},
  {"id": "answers-from-census", "kind": "should", "text": "answers only from the census output"},
  {"id": "no-guessing", "kind": "must", "text": "never states a count that no call produced"},
  {"id": "one-ledger-line", "kind": "should", "text": "appends exactly one line to ledger.log"}
]}`), 0o644)
		r := runAgainst(t, judgeAnswering(failingEverything("runs-census", "reads-skill", "answers-from-census", "no-guessing", "one-ledger-line")),
			"rejudge", dir, "--rubric", rubricFile, "--judge-model", "claude-judge-test")
		if r.code != 0 {
			t.Fatalf("exit %d, want 0", r.code)
		}
		if !bytes.Equal(before, readFile(t, filepath.Join(dir, "run.json"))) {
			t.Fatal("run.json changed")
		}
		v := loadVerdicts(t, filepath.Join(dir, "verdicts-2.json"))
		if v.Rubric.Source != rubricFile || len(v.Rubric.Criteria) != 5 || v.JudgeModel != "claude-judge-test" {
			t.Errorf("rubric source %q, %d criteria, judge model %q", v.Rubric.Source, len(v.Rubric.Criteria), v.JudgeModel)
		}
		for _, tv := range v.Verdicts {
			if tv.Verdict.Result != judge.Fail || tv.Verdict.Model != "claude-judge-test" {
				t.Errorf("turn %d: %s by %q", tv.Turn, tv.Verdict.Result, tv.Verdict.Model)
			}
		}
		wantLines(t, r.stdout,
			"conv 1 turn 8: pass → fail",
			"conv 1 turn 8 runs-census: pass → fail (judge)",
			"conv 1 turn 8 reads-skill: (none) → fail (judge)",
			"conv 1 turn 8 appends-ledger: pass → (none) (not in this rubric)",
		)
		if !strings.Contains(r.stdout, "was not-enough-evidence (exit 0)") || !strings.Contains(r.stdout, "results changed 14,") {
			t.Error("summary line missing or wrong")
		}
		for _, req := range r.srv.Requests() {
			var body struct{ Model string }
			if req.Kind == scripted.KindJudge && (json.Unmarshal(req.Body, &body) != nil || body.Model != "claude-judge-test") {
				t.Errorf("judge call used model %q", body.Model)
			}
		}
	})

	t.Run("JudgeErrors", func(t *testing.T) {
		t.Parallel()
		dir := copyRun(t, saved.dir)
		before := readFile(t, filepath.Join(dir, "run.json"))
		// An answer that omits every criterion never validates.
		r := runAgainst(t, judgeAnswering(map[string]any{"criteria": []any{}, "escape_hatch": false, "escape_reason": ""}), "rejudge", dir)
		if r.code != 3 {
			t.Fatalf("exit %d, want 3", r.code)
		}
		if !strings.Contains(r.stderr, "14 of 14 turns could not be judged") {
			t.Errorf("stderr %q", r.stderr)
		}
		if !bytes.Equal(before, readFile(t, filepath.Join(dir, "run.json"))) {
			t.Fatal("run.json changed")
		}
		for _, n := range []string{"1", "6", "8", "10"} {
			if !strings.Contains(r.stdout, "conv 1 turn "+n+": pass → judge-error (") {
				t.Errorf("turn %s not shown as a judge error", n)
			}
		}
		if strings.Contains(r.stdout, "→ fail") || strings.Contains(r.stdout, "→ pass") {
			t.Error("a judge error was shown as a pass or a fail")
		}
		for _, tv := range loadVerdicts(t, filepath.Join(dir, "verdicts-2.json")).Verdicts {
			if tv.Verdict.Result != judge.JudgeError || len(tv.Verdict.Criteria) != 0 || tv.Verdict.Attempts != 2 {
				t.Errorf("turn %d: %+v", tv.Turn, tv.Verdict)
			}
		}
	})

	t.Run("MissingTranscript", func(t *testing.T) {
		t.Parallel()
		dir := copyRun(t, saved.dir)
		os.Remove(filepath.Join(dir, "conv-1", "turn-08.jsonl"))
		r := runAgainst(t, judgeAnswering(failingEverything(demoCriterionIDs()...)), "rejudge", dir)
		if r.code != 3 || !strings.Contains(r.stdout, "conv 1 turn 8: pass → judge-error (reading the saved transcript") {
			t.Errorf("exit %d", r.code)
		}
		wantLines(t, r.stdout, "conv 1 turn 10 answers-from-census: pass → fail (judge)")
	})

	t.Run("CredentialsDiffer", func(t *testing.T) {
		t.Parallel()
		dir := copyRun(t, saved.dir)
		var env []string
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); k != "ANTHROPIC_API_KEY" && k != "CLAUDE_CODE_OAUTH_TOKEN" && k != "ANTHROPIC_AUTH_TOKEN" {
				env = append(env, kv)
			}
		}
		env = append(env, "VIBE_TEST_CLAUDE="+fastCLI(t))
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), []string{"vibe-test", "rejudge", dir}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
		if code != 3 || !strings.Contains(stderr.String(), `isolation "hermetic"`) {
			t.Errorf("exit %d, stderr %q", code, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "verdicts-2.json")); err == nil {
			t.Error("verdicts-2.json written after refusing")
		}
	})
}
