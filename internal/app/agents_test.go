package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// The other agents, end to end through Main on their real pinned CLIs
// against the scripted model (which speaks the Responses API to codex and
// the Gemini API to gemini with the same personas): one run each, one
// fault, the demo, and rejudge re-reading a codex run's transcripts.

// agentBinary is the pinned CLI of agent (tools/, make tools), or its
// override variable's; missing, it skips locally and fails where CI=true.
func agentBinary(t *testing.T, agent string) string {
	t.Helper()
	p := os.Getenv(agents.BinaryVar[agent])
	if p == "" {
		p = filepath.Join(testenv.RepoRoot(t), "tools", "node_modules", ".bin", agent)
	}
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, "the "+agent+" CLI is not installed: run `make tools`")
	}
	return p
}

// agentEnv points vibe-test at agent's pinned CLI.
func agentEnv(t *testing.T, agent string) []string {
	return []string{agents.BinaryVar[agent] + "=" + agentBinary(t, agent)}
}

// runAgent runs the bundled skill on agent's CLI against script, one
// conversation, for a test whose subject is the conversation: the rubric
// and judge calls go to claude's stand-in CLI (--judge-agent), for a
// verdict at no CLI start. TestCodexRun keeps codex's default judge.
func runAgent(t *testing.T, agent string, script scripted.Script, flags ...string) scenario {
	t.Helper()
	return runScript(t, fastCLI(t), script, 1, agentEnv(t, agent), append([]string{"--agent", agent, "--judge-agent", agents.Claude}, flags...)...)
}

func TestCodexRun(t *testing.T) {
	t.Parallel()
	s := checkAgentRun(t, agents.Codex, "")
	// rejudge reads the run's codex transcripts with codex's parser: the
	// deterministic checks see the same calls, so every verdict stands.
	env := append(DemoEnv(os.Environ(), s.srv.URL()), agentEnv(t, agents.Codex)...)
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "rejudge", s.dir}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	if code != 0 {
		t.Fatalf("rejudge: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	v := loadVerdicts(t, filepath.Join(s.dir, "verdicts-2.json"))
	if len(v.Verdicts) == 0 {
		t.Fatal("rejudge judged no turn")
	}
	for _, tv := range v.Verdicts {
		old := s.run.Conversations[0].TurnAt(tv.Turn)
		if tv.Arm == record.ArmFresh {
			old = s.run.Fresh[0].TurnAt(tv.Turn)
		}
		if old == nil || old.Verdict == nil || tv.Verdict.Result != old.Verdict.Result || tv.Verdict.Result == judge.JudgeError {
			t.Errorf("%s turn %d: rejudged %s (%s), was %+v", tv.Arm, tv.Turn, tv.Verdict.Result, tv.Verdict.Error, old)
		}
	}
}

// Gemini's rubric and judge calls go to codex (--judge-agent), though
// gemini's stand-in URL would make gemini the default judge: the flag
// routes them, each to its own CLI (two other CLIs in one run: the judge
// was once started as the driven agent's binary with the judge's
// arguments), at codex's cheap start rather than gemini's 1.8
// CPU-seconds. Gemini's own structured calls are proven on its real CLI
// by internal/gemini's TestStructured (the judge's schema) and, as an
// eval's reader and grader, by internal/eval's TestCodexAndGeminiRoles;
// codex's run keeps its default judge (itself).
func TestGeminiRun(t *testing.T) {
	t.Parallel()
	s := checkAgentRun(t, agents.Gemini, agents.Codex)
	if v := s.run.Versions; v.JudgeAgent == "" || v.JudgeAgent == v.Agent || v.JudgeAgentVerified == "" {
		t.Errorf("versions: agent %q, judge agent %q (verified %q); want codex's recorded beside gemini's", v.Agent, v.JudgeAgent, v.JudgeAgentVerified)
	}
	judged := 0
	for _, q := range s.srv.Requests() {
		ua := q.Header.Get("User-Agent")
		switch q.Kind {
		case scripted.KindAgent:
			if !strings.Contains(ua, "GeminiCLI") {
				t.Errorf("an agent call came from %q, not the gemini CLI", ua)
			}
		case scripted.KindJudge, scripted.KindRubric:
			judged++
			if !strings.Contains(ua, "codex") {
				t.Errorf("a %s call came from %q, not --judge-agent codex", q.Kind, ua)
			}
		}
	}
	if judged == 0 {
		t.Error("no judge call reached the model")
	}
}

// checkAgentRun runs one decaying conversation on agent and checks what
// the record holds against claude's run of the same persona (on the
// stand-in CLI): turns with tool calls, the skill-loaded signal, the
// context of every turn, the estimated cost labelled, the same verdict
// and exit code. judgeAgent is --judge-agent ("": the default, agent itself,
// whose stand-in URL is set).
func checkAgentRun(t *testing.T, agent, judgeAgent string) scenario {
	t.Helper()
	script, err := demo.ScriptFor(agent, []string{scripted.PersonaDecaying}, false)
	if err != nil {
		t.Fatal(err)
	}
	// The author's keys are set: they go to no stand-in and into no file
	// of the run (the agent runs against the stand-in with a dummy key).
	const secret = "sk-author-own-3f9c1e"
	env := append(agentEnv(t, agent), "OPENAI_API_KEY="+secret, "GEMINI_API_KEY="+secret)
	if judgeAgent != "" && judgeAgent != agents.Claude && judgeAgent != agent {
		env = append(env, agentEnv(t, judgeAgent)...)
	}
	flags, wantJudge := []string{"--agent", agent}, agent
	if judgeAgent != "" {
		flags, wantJudge = append(flags, "--judge-agent", judgeAgent), judgeAgent
	}
	s := runScript(t, fastCLI(t), script, 1, env, flags...)
	_ = filepath.WalkDir(s.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the author's key", p)
			}
		}
		return nil
	})
	for _, q := range s.srv.Requests() {
		if bytes.Contains(q.Body, []byte(secret)) || strings.Contains(fmt.Sprint(q.Header), secret) {
			t.Errorf("the stand-in saw the author's key in a %s request", q.Kind)
		}
	}
	want := claudeDecaying(t)
	if s.code != want.code || s.run.Outcome.Verdict != want.verdict || s.run.Outcome.Shape != want.shape {
		t.Errorf("%s: exit %d, verdict %s, shape %s; claude on the same persona: exit %d, %s, %s", agent,
			s.code, s.run.Outcome.Verdict, s.run.Outcome.Shape, want.code, want.verdict, want.shape)
	}
	c := s.run.Config
	if c.Agent != agent || record.JudgeAgentOf(c) != wantJudge || !c.CostEstimated || s.run.Versions.Agent == "" {
		t.Errorf("config agent %q judge %q estimated %v, version %q", c.Agent, record.JudgeAgentOf(c), c.CostEstimated, s.run.Versions.Agent)
	}
	if !strings.Contains(s.stdout, "cost (estimated): $") {
		t.Errorf("the summary does not label the cost estimated:\n%s", s.stdout)
	}
	conv := s.run.Conversations[0]
	if conv.Status != record.StatusCompleted || len(conv.Turns) != 10 {
		t.Fatalf("conversation %s (%s), %d turns", conv.Status, conv.Error, len(conv.Turns))
	}
	for _, tr := range conv.Turns {
		if tr.ContextTokens <= 0 || tr.CostUSD <= 0 || tr.Status != record.TurnOK {
			t.Errorf("turn %d: status %s, context %d, cost %v", tr.Turn, tr.Status, tr.ContextTokens, tr.CostUSD)
		}
	}
	base := conv.Turns[0]
	if !base.SkillInvoked || base.ToolCallCount < 2 || base.Result() != judge.Pass {
		t.Errorf("turn 1: skill loaded %v, %d tool calls, %s", base.SkillInvoked, base.ToolCallCount, base.Result())
	}
	for _, f := range s.run.Fresh[0].Turns {
		if !f.SkillInvoked || f.Result() != judge.Pass {
			t.Errorf("fresh turn %d: skill loaded %v, %s", f.Turn, f.SkillInvoked, f.Result())
		}
	}
	return s
}

// claudeOutcome is what claude's run of a persona ended with.
type claudeOutcome struct {
	code           int
	verdict, shape string
}

var claudeDecayingOnce struct {
	sync.Mutex
	done bool
	out  claudeOutcome
}

// claudeDecaying is claude's run of the decaying persona on the stand-in
// CLI, made once for every agent's run to be checked against.
func claudeDecaying(t *testing.T) claudeOutcome {
	t.Helper()
	c := &claudeDecayingOnce
	c.Lock()
	defer c.Unlock()
	if !c.done {
		s := runScenario(t, fastCLI(t), []string{scripted.PersonaDecaying}, false)
		c.out, c.done = claudeOutcome{s.code, s.run.Outcome.Verdict, s.run.Outcome.Shape}, true
	}
	return c.out
}

// A model that answers HTTP 500 at turn 2 for as long as codex retries
// (and with no rerun left): the turn is an error, never judged, the
// conversation an error, exit 3, its sandbox kept. `vibe-test resume`
// then goes on in the same thread from turn 2, the rollout cut back to the
// end of turn 1 first. In resume mode: one process a turn.
func TestCodexServerErrorIsAnErroredTurn(t *testing.T) {
	t.Parallel()
	// --max-retries 1: codex tries (1+1)² = 4 times at its two layers.
	script := faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{2}, Steps: followAfterError(500, 4)})
	s := runAgent(t, agents.Codex, script, "--session", "resume", "--turn-retries", "0")
	if s.code != 3 {
		t.Fatalf("exit %d, want 3", s.code)
	}
	c := s.run.Conversations[0]
	if c.Status != record.StatusError || len(c.Turns) != 1 || len(c.Abandoned) != 1 {
		t.Fatalf("conversation %s, %d turns, %d abandoned", c.Status, len(c.Turns), len(c.Abandoned))
	}
	if a := c.Abandoned[0]; a.Turn != 2 || a.Status != record.TurnError || a.Verdict != nil || !strings.Contains(a.Error, "500") {
		t.Errorf("turn 2: status %s, error %q, verdict %v", a.Status, a.Error, a.Verdict)
	}
	env := append(DemoEnv(os.Environ(), s.srv.URL()), append(agentEnv(t, agents.Codex), "VIBE_TEST_CLAUDE="+fastCLI(t))...)
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "resume", s.dir}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	r, err := record.Load(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	after := r.Conversations[0]
	if code != 0 || after.Status != record.StatusCompleted || len(after.Turns) != 10 || after.SessionID != c.SessionID {
		t.Fatalf("resume: exit %d, conversation %s (%s), %d turns, thread %s (was %s)\n%s", code, after.Status, after.Error, len(after.Turns), after.SessionID, c.SessionID, stderr.String())
	}
	if len(after.Rewinds) != 1 || after.Rewinds[0].Turn != 2 || after.Rewinds[0].Reason != "resume" {
		t.Errorf("rewinds %+v", after.Rewinds)
	}
}

// `vibe-test demo --agent codex` runs as designed: exit 0, the command's
// own path (its scripted model for codex, codex judging, the estimated
// cost, the next step). One never-following conversation: its baseline
// fails at turn 1, the fresh triple runs, a real run would exit 2. The
// default personas' conversations on codex are the other tests' here:
// decaying in TestCodexRun (the demo's own script for codex), steady
// under the fault tests. (Gemini's demo, the same code with slower
// processes, is left to TestGeminiRun's decaying persona on the demo's
// script for gemini: some 15 CPU-seconds of CLI start-ups would buy
// little.)
func TestDemoCodex(t *testing.T) {
	t.Parallel()
	env := agentEnv(t, agents.Codex)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "CLAUDE_CODE_OAUTH") {
			env = append(env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "demo", "--agent", agents.Codex, "--personas", scripted.PersonaNever, "--out", filepath.Join(t.TempDir(), "demo")},
		IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	if code != 0 || !strings.Contains(stdout.String(), "The demo ran as designed. A real run with these results would exit 2") || !strings.Contains(stdout.String(), "estimated") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

// A 500 burst at turn 6 that outlasts codex's own retries once: vibe-test
// reruns the turn on a new process resuming the thread, whose rollout is
// cut back first to the end of turn 5 (the model sees the prompt once).
// Then the live thread is compacted before probe 2 (turn 8).
func TestCodexRerunRewindsTheRollout(t *testing.T) {
	t.Parallel()
	script := faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{6}, Pattern: "gaskets", Steps: followAfterError(500, 4)})
	s := runAgent(t, agents.Codex, script, "--compact-before", "2")
	if tr := s.run.Conversations[0].TurnAt(8); tr == nil || !tr.AfterCompaction || len(tr.Compactions) != 1 ||
		tr.Compactions[0].Trigger != "manual" || tr.Compactions[0].PostTokens >= tr.Compactions[0].PreTokens || tr.Result() != judge.Pass {
		t.Errorf("turn 8 after the compaction: %+v", tr)
	}
	c := s.run.Conversations[0]
	tr := c.TurnAt(6)
	if s.code != 0 || tr == nil || tr.Status != record.TurnOK || len(tr.Attempts) != 1 || tr.Result() != judge.Pass {
		t.Fatalf("exit %d, turn 6 %+v", s.code, tr)
	}
	if len(c.Rewinds) != 1 || c.Rewinds[0].Turn != 6 || c.Rewinds[0].RemovedLines == 0 {
		t.Errorf("rewinds %+v", c.Rewinds)
	}
}
