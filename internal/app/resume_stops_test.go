package app

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// resumeRun resumes the run folder dir against srv, with flags.
func resumeRun(t *testing.T, dir string, srv *scripted.Server, flags ...string) (int, *record.Run, string) {
	t.Helper()
	env := append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+fastCLI(t))
	var so, se bytes.Buffer
	code := Main(context.Background(), append([]string{"vibe-test", "resume", dir, "--retry-backoff", "200ms"}, flags...), IO{Env: env, Stdout: &so, Stderr: &se})
	r, err := record.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return code, r, se.String()
}

// baseTaskAsked counts the conversation's agent requests that asked the
// base task again (its first request of turn 1), from request from on.
func baseTaskAsked(srv *scripted.Server, r *record.Run, from int) int {
	n := 0
	for _, q := range srv.Requests()[from:] {
		if q.Kind == scripted.KindAgent && q.Turn == 1 && q.Step == 0 && strings.Contains(q.Prompt, r.Plan.BaseTask[:20]) {
			n++
		}
	}
	return n
}

// A budget stop keeps the conversation's sandbox, so `resume
// --max-budget-usd` with more continues its session: it removed it, and
// the resume restarted from turn 1, every turn done moved to abandoned and
// paid for again.
func TestBudgetStopResumesTheSession(t *testing.T) {
	t.Parallel()
	s := runScript(t, fastCLI(t), faultScript(t), 1, nil, "--max-budget-usd", "0.15")
	c := s.run.Conversations[0]
	if c.Status != record.StatusBudgetExhausted || len(c.Turns) == 0 || c.Sandbox == "" {
		t.Fatalf("first run: conversation %s with %d turns, sandbox %q; want a budget stop that kept it", c.Status, len(c.Turns), c.Sandbox)
	}
	done := len(c.Turns)
	before := len(s.srv.Requests())
	code, r, stderr := resumeRun(t, s.dir, s.srv, "--max-budget-usd", "5")
	c = r.Conversations[0]
	if c.Status != record.StatusCompleted || len(c.Turns) != 10 || len(c.Abandoned) != 0 || baseTaskAsked(s.srv, r, before) != 0 {
		t.Errorf("resume (exit %d): %s, %d turns, %d abandoned, base task asked %d more times, notes %q; want the %d turns kept\n%s",
			code, c.Status, len(c.Turns), len(c.Abandoned), baseTaskAsked(s.srv, r, before), c.Notes, done, stderr)
	}
}

// A baseline whose judgement failed keeps its sandbox (resume judges it
// again and goes on from the turns done), and one whose judgement fails
// again on resume stops there, as the gate did the first time: it went on
// to the probes with no verdict on the baseline.
func TestBaselineJudgeErrorOnResume(t *testing.T) {
	t.Parallel()
	bad := map[string]any{"criteria": []map[string]any{{"id": "runs-census", "result": "pass", "evidence": "x", "call": 99}}, "escape_hatch": false, "escape_reason": ""}
	failing := faultScript(t, scripted.Rule{Kind: scripted.KindJudge, Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: bad}}}}})
	s := runScript(t, fastCLI(t), failing, 1, nil)
	c := s.run.Conversations[0]
	if c.Status != record.StatusError || !strings.Contains(c.Error, "judging the baseline failed") || c.Sandbox == "" {
		t.Fatalf("first run: %s %q, sandbox %q; want a judge error that kept the sandbox", c.Status, c.Error, c.Sandbox)
	}
	done := len(c.Turns)

	// Resumed on the same failing judge: stopped again, no probe asked.
	code, r, _ := resumeRun(t, s.dir, s.srv)
	c = r.Conversations[0]
	if c.Status != record.StatusError || len(c.Turns) != done || c.TurnAt(1).Result() != judge.JudgeError || c.Sandbox == "" {
		t.Errorf("resume on a failing judge (exit %d): %s %q, %d turns (had %d), baseline %s", code, c.Status, c.Error, len(c.Turns), done, c.TurnAt(1).Result())
	}

	// Resumed on a judge that works: the session goes on from the turns
	// done, the base task is not asked again.
	srv2, err := scripted.Start(faultScript(t))
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Close()
	code, r, stderr := resumeRun(t, s.dir, srv2)
	c = r.Conversations[0]
	if c.Status != record.StatusCompleted || len(c.Turns) != 10 || len(c.Abandoned) != 0 || baseTaskAsked(srv2, r, 0) != 0 || c.TurnAt(1).Result() != judge.Pass {
		t.Errorf("resume on a working judge (exit %d): %s %q, %d turns, %d abandoned, base task asked %d times, baseline %s\n%s",
			code, c.Status, c.Error, len(c.Turns), len(c.Abandoned), baseTaskAsked(srv2, r, 0), c.TurnAt(1).Result(), stderr)
	}
}

// A baseline judged for the first time on resume is gated as on a first
// run: judged fail, the conversation stops there (baseline-failed, no
// probe asked), unless the run was started with --no-baseline-gate, which
// the resume keeps from the record (the conversation goes on to turn 10).
// The agent never follows the skill; the first run's judge errs.
func TestBaselineFailOnResumeGates(t *testing.T) {
	t.Parallel()
	never := func(faults ...scripted.Rule) scripted.Script {
		s, err := demo.Script([]string{"never"}, false)
		if err != nil {
			t.Fatal(err)
		}
		s.Rules = append(append([]scripted.Rule{}, faults...), s.Rules...)
		return s
	}
	bad := map[string]any{"criteria": []map[string]any{{"id": "runs-census", "result": "pass", "evidence": "x", "call": 99}}, "escape_hatch": false, "escape_reason": ""}
	erring := never(scripted.Rule{Kind: scripted.KindJudge, Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: bad}}}}})
	for _, bypass := range []bool{false, true} {
		var flags []string
		if bypass {
			flags = append(flags, "--no-baseline-gate")
		}
		s := runScript(t, fastCLI(t), erring, 1, nil, flags...)
		c := s.run.Conversations[0]
		if c.Status != record.StatusError || c.TurnAt(1).Result() != judge.JudgeError {
			t.Fatalf("bypass %v, first run: %s %q, baseline %s; want a judge error", bypass, c.Status, c.Error, c.TurnAt(1).Result())
		}
		done := len(c.Turns)
		srv2, err := scripted.Start(never())
		if err != nil {
			t.Fatal(err)
		}
		code, r, stderr := resumeRun(t, s.dir, srv2)
		srv2.Close()
		c = r.Conversations[0]
		want, turns := record.StatusBaselineFailed, done
		if bypass {
			want, turns = record.StatusCompleted, 10
		}
		if c.TurnAt(1).Result() != judge.Fail || c.Status != want || len(c.Turns) != turns {
			t.Errorf("bypass %v, resume on a judge failing the baseline (exit %d): %s %q, baseline %s, %d turns (had %d); want %s with %d turns\n%s",
				bypass, code, c.Status, c.Error, c.TurnAt(1).Result(), len(c.Turns), done, want, turns, stderr)
		}
	}
}

// The budget counts what the run spent before its conversations: a plan
// drafted for $0.013 against --max-budget-usd 0.001 let turn 1 and more
// run (costs.total, which the budget started from, is summed only as a
// run ends). A resume starts from every turn recorded, the same way.
func TestBudgetCountsTheDraftedPlan(t *testing.T) {
	t.Parallel()
	srv, paths, out, env := demoRun(t, faultScript(t), fastCLI(t))
	var so, se bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", paths.Skill, "--out", out, "--seed", "7", "--conversations", "1", "--concurrency", "1", "--max-budget-usd", "0.001"}, IO{Env: env, Stdout: &so, Stderr: &se})
	r, err := record.Load(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	agent := 0
	for _, q := range srv.Requests() {
		if q.Kind == scripted.KindAgent {
			agent++
		}
	}
	if r.Costs.Plan <= 0.001 || agent != 0 || code != 3 || r.Conversations[0].Status != record.StatusBudgetExhausted {
		t.Errorf("exit %d: plan $%.4f, %d agent requests, conversation %s; want no turn once the plan spent the budget\n%s", code, r.Costs.Plan, agent, r.Conversations[0].Status, se.String())
	}
}

// A judge error in a finished conversation or fresh triple is judged
// again by resume, from the saved transcript, with no turn run again: it
// stayed for good (resume launched only unfinished units), and a second
// resume said "nothing to resume" and exited 0 while run.json said 3.
func TestResumeJudgesFinishedUnitsAgain(t *testing.T) {
	t.Parallel()
	bad := map[string]any{"criteria": []map[string]any{{"id": "runs-census", "result": "pass", "evidence": "x", "call": 99}}, "escape_hatch": false, "escape_reason": ""}
	// The last probe's judgement fails, diluted and fresh.
	failing := faultScript(t, scripted.Rule{Kind: scripted.KindJudge, Contains: "Before I close for the day", Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: bad}}}}})
	s := runScript(t, fastCLI(t), failing, 1, nil)
	c, f := s.run.Conversations[0], s.run.Fresh[0]
	if s.code != 3 || c.Status != record.StatusCompleted || f.Status != record.StatusCompleted || c.TurnAt(10).Result() != judge.JudgeError || f.ProbeAt(3).Result() != judge.JudgeError {
		t.Fatalf("first run: exit %d, conversation %s (turn 10 %s), fresh %s (probe 3 %s); want both finished with a judge error", s.code, c.Status, c.TurnAt(10).Result(), f.Status, f.ProbeAt(3).Result())
	}
	srv2, err := scripted.Start(faultScript(t))
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Close()
	code, r, stderr := resumeRun(t, s.dir, srv2)
	c, f = r.Conversations[0], r.Fresh[0]
	agent := 0
	for _, q := range srv2.Requests() {
		if q.Kind == scripted.KindAgent {
			agent++
		}
	}
	if code == 3 || c.TurnAt(10).Result() == judge.JudgeError || f.ProbeAt(3).Result() == judge.JudgeError || agent != 0 {
		t.Errorf("resume: exit %d, turn 10 %s, fresh probe 3 %s, %d agent requests; want both judged again and no turn run\n%s", code, c.TurnAt(10).Result(), f.ProbeAt(3).Result(), agent, stderr)
	}
	// The first judgements were paid for: the judge's cost grows by the
	// second ones (it fell by the first's, which the new verdicts
	// replaced, before).
	first, second := c.TurnAt(10).EarlierJudgeUSD+f.ProbeAt(3).EarlierJudgeUSD, c.TurnAt(10).Verdict.CostUSD+f.ProbeAt(3).Verdict.CostUSD
	if first <= 0 || math.Abs(r.Costs.Judge-(s.run.Costs.Judge+second)) > 1e-9 || math.Abs(r.Costs.Total-(s.run.Costs.Total+second)) > 1e-9 {
		t.Errorf("judge cost $%.6f after resume, $%.6f before, the resume's judging $%.6f (earlier $%.6f kept): want before + resume", r.Costs.Judge, s.run.Costs.Judge, second, first)
	}
}

// A stream cut before its result (the CLI died mid-turn) keeps the
// conversation's sandbox, so resume continues its session from the cut
// turn: the sandbox was removed, and the resume restarted from turn 1,
// paying for turns 1 to 5 again.
func TestCutStreamResumesTheSession(t *testing.T) {
	t.Parallel()
	flag := filepath.Join(t.TempDir(), "cut")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(t.TempDir(), "claude")
	// Once, the conversation's turn 6 (a --resume of the session asking
	// probe 1): its stream cut at 2000 bytes, exit 1.
	script := "#!/bin/sh\ncase \"$*\" in *gaskets*--resume*|*--resume*gaskets*) if [ -e " + flag + " ]; then rm -f " + flag + "; " +
		fastCLI(t) + " \"$@\" | head -c 2000; exit 1; fi;; esac\nexec " + fastCLI(t) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// No jail: the flag file and the stand-in live in temp folders it hides.
	s := runScript(t, wrapper, faultScript(t), 1, nil, "--session", "resume", "--turn-retries", "0", "--isolation", "none")
	c := s.run.Conversations[0]
	if c.Status != record.StatusError || len(c.Turns) != 5 || c.Sandbox == "" {
		t.Fatalf("first run: conversation %s with %d turns, sandbox %q, notes %q; want turn 6 cut and the sandbox kept\n%s", c.Status, len(c.Turns), c.Sandbox, c.Notes, s.stderr)
	}
	before := len(s.srv.Requests())
	code, r, stderr := resumeRun(t, s.dir, s.srv)
	c = r.Conversations[0]
	if c.Status != record.StatusCompleted || len(c.Turns) != 10 || baseTaskAsked(s.srv, r, before) != 0 {
		t.Errorf("resume (exit %d): %s, %d turns, base task asked %d more times, notes %q; want turns 1-5 kept\n%s",
			code, c.Status, len(c.Turns), baseTaskAsked(s.srv, r, before), c.Notes, stderr)
	}
}

// TestSequentialStopsAtTheBudget: --until-decided takes no look at a batch
// the budget stopped and adds no batch after it. It appended batches to
// --max-conversations, each stopped at once, claimed "reached the cap" from
// one conversation, and a resume with more budget ran every added
// conversation with no look between them. The resume now runs the stopped
// batch, then looks, and adds batches one at a time.
func TestSequentialStopsAtTheBudget(t *testing.T) {
	t.Parallel()
	s := runScenario(t, fastCLI(t), []string{"decaying", "decaying"}, false,
		"--until-decided", "--max-conversations", "8", "--max-budget-usd", "0.3")
	if s.code != 3 || s.run.Status != record.StatusBudgetExhausted {
		t.Fatalf("exit %d, status %s: want 3, budget-exhausted", s.code, s.run.Status)
	}
	if n := len(s.run.Conversations); n != 2 || len(s.run.Sequential.Looks) != 0 {
		t.Fatalf("%d conversations and %d looks after the budget stopped the first batch; want the batch of 2 and no look", n, len(s.run.Sequential.Looks))
	}
	code, r, out := resumeRun(t, s.dir, s.srv, "--max-budget-usd", "50")
	if code != 1 || len(r.Sequential.Looks) == 0 {
		t.Fatalf("resume: exit %d, %d looks: want the decay decided at a look\n%s", code, len(r.Sequential.Looks), out)
	}
	last := r.Sequential.Looks[len(r.Sequential.Looks)-1]
	if last.Conversations != len(r.Conversations) {
		t.Errorf("the deciding look saw %d conversations of the %d run: conversations ran past the look that decided", last.Conversations, len(r.Conversations))
	}
}

// TestSequentialLooksAtABatchTheBudgetLetFinish: a budget that runs out
// in a batch's last turns still lets that whole batch be looked at: the
// loop skipped the look and the run, which had shown decay, ended
// "completed, not enough evidence", exit 0. The budget is set just under
// what the run spends in all, so it runs out in the last batch.
func TestSequentialLooksAtABatchTheBudgetLetFinish(t *testing.T) {
	t.Parallel()
	// The built binary, out of the race detector: twelve units twice.
	script, err := demo.Script([]string{"decaying", "decaying"}, false)
	if err != nil {
		t.Fatal(err)
	}
	flags := []string{"--until-decided", "--max-conversations", "8"}
	full := runScriptBuilt(t, fastCLI(t), script, 2, nil, flags...)
	if full.code != 1 {
		t.Fatalf("without a budget: exit %d, want the decay decided", full.code)
	}
	tight := runScriptBuilt(t, fastCLI(t), script, 2, nil,
		append(flags, "--max-budget-usd", strconv.FormatFloat(full.run.Costs.Total-0.004, 'f', 4, 64))...)
	if tight.code != 1 && tight.code != 3 {
		t.Fatalf("the budget ran out in the last batch: exit %d (%s), want the decay (1) or budget exhausted (3), never %d", tight.code, tight.run.Outcome.Sentence, tight.code)
	}
}

// resume refuses a TMPDIR naming the experiment, as a new run does, before
// it changes anything: every sandbox it made there was refused one by one,
// and the run ended "stopped on an error" with the reason in run.json only.
func TestResumeRefusesATempDirNamingTheExperiment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "budget")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testenv.RunsDir(t), "budget"))); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, filepath.Join(dir, "run.json"))
	t.Setenv("TMPDIR", "/nonexistent/ci/vibe-tmp")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "resume", dir}, IO{Env: []string{"PATH=" + t.TempDir()}, Stdout: &stdout, Stderr: &stderr})
	want := `vibe-test: the temp folder /nonexistent/ci/vibe-tmp (TMPDIR) names "vibe"`
	if code != exit.Tool || !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want exit 3 and the one line %q...", code, stderr.String(), want)
	}
	if !bytes.Equal(before, readFile(t, filepath.Join(dir, "run.json"))) {
		t.Error("run.json changed")
	}
}
