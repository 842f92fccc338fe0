package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// `vibe-test eval --agent codex|gemini` with the generator on the real
// pinned CLIs, against the eval demo's case set and scripted model (its
// personas answer on the Responses and Gemini APIs too): on codex, over
// three of its cases, the baseline's instrument checks out and the
// candidate is decided as claude's demo decides it (the broken version
// rejected, exit 1); gemini makes one plain eval of one case. The reader and grader are the judge
// agent's (--judge-agent): codex's on claude's stand-in CLI (some 70
// calls; the real codex reads and grades by default in internal/eval's
// TestCodexAndGeminiRoles, gemini there too), gemini's on codex, which
// proves the two roles can be two other CLIs. No credentials: each CLI
// talks to the stand-in only.
func TestEvalOnCodex(t *testing.T) {
	t.Parallel()
	cand, env := evalOnAgent(t, agents.Codex, agents.Claude, demo.VersionBroken, 1)
	main := func(env []string, args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), append([]string{"vibe-test"}, args...), IO{Env: env, Stdout: &stdout, Stderr: &stderr})
		return code, stdout.String() + stderr.String()
	}
	// report: no CLI at all, the same decision.
	if code, out := main([]string{"PATH=" + t.TempDir()}, "report", cand); code != 1 {
		t.Errorf("report: exit %d, want 1\n%s", code, out)
	}
	// rejudge: the record's judge agent (claude, not the generator's
	// codex) grades the candidate again, the baseline's cells kept as
	// they were graded.
	if code, out := main(env, "rejudge", cand); code != 1 || !strings.Contains(out, "agent codex, judge agent claude") {
		t.Errorf("rejudge: exit %d, want 1, judged on claude\n%s", code, out)
	}
	// resume: an interrupted eval's missing cell is made again on codex.
	rec, err := eval.LoadRecord(cand)
	if err != nil {
		t.Fatal(err)
	}
	rec.Status = eval.StatusInterrupted
	if err := eval.SaveRecord(cand, rec); err != nil {
		t.Fatal(err)
	}
	cell := filepath.Join(cand, "candidate", "widgets", "1.json")
	if err := os.Remove(cell); err != nil {
		t.Fatal(err)
	}
	if code, out := main(env, "resume", cand); code != 1 {
		t.Fatalf("resume: exit %d, want 1\n%s", code, out)
	}
	var c eval.Cell
	if b, err := os.ReadFile(cell); err != nil || json.Unmarshal(b, &c) != nil || c.Status != eval.CellOK {
		t.Fatalf("resume did not make the missing cell again: %v %+v", err, c)
	}
	checkTranscript(t, agents.Codex, cand, &c)
}

func TestEvalOnGemini(t *testing.T) {
	t.Parallel()
	// No baseline here: codex's test proves the decision through another
	// agent; gemini's CLI costs seconds of CPU per start, so one plain run
	// of one case, one repeat (one cell) proves its generator, its
	// transcript and the record, and codex reading and grading what
	// gemini wrote.
	_, _ = evalOnAgent(t, agents.Gemini, agents.Codex, demo.VersionShorter, -1)
}

// evalAgentEnv is the author's environment without any model credentials or
// stand-in URLs, then each named agent pointed at srv: codex and gemini
// their pinned CLIs, claude the stand-in CLI (with the stand-in key
// demo.Env gives it).
func evalAgentEnv(t *testing.T, srv *scripted.Server, names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "CLAUDE_CODE_"), strings.HasPrefix(k, "OPENAI_"),
			strings.HasPrefix(k, "GEMINI_"), strings.HasPrefix(k, "GOOGLE_"), strings.HasPrefix(k, "VIBE_TEST_"):
			continue
		}
		env = append(env, kv)
	}
	for _, n := range names {
		if n == agents.Claude {
			env = append(env, agents.BaseURLVar[n]+"="+srv.URL(), "ANTHROPIC_API_KEY=sk-offline-placeholder", agents.BinaryVar[n]+"="+fastCLI(t))
			continue
		}
		env = append(env, agents.BaseURLVar[n]+"="+srv.URL(), agents.BinaryVar[n]+"="+agentBinary(t, n))
	}
	// The author's keys: a stand-in never gets them, and no artifact may
	// hold them.
	return append(env, "OPENAI_API_KEY="+authorOpenAIKey, "GEMINI_API_KEY="+authorGeminiKey)
}

const (
	authorOpenAIKey = "sk-author-openai-5e1b"
	authorGeminiKey = "author-gemini-key-77c4"
)

// evalOnAgent makes the demo's baseline on agent name, decides candidate
// against it and returns the candidate's eval folder and environment. With
// wantExit -1 it makes no baseline: one plain eval of candidate on one
// case (bolts), one repeat, which exits 0.
func evalOnAgent(t *testing.T, name, judge, candidate string, wantExit int) (string, []string) {
	script, err := demo.CasesScript()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scripted.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	root, err := os.MkdirTemp("", "stock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	paths, err := demo.MaterializeCases(root)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{name}
	flags := []string{"--agent", name, "--cases", paths.Cases, "--concurrency", "4", "--max-retries", "1"}
	wantJudge := name
	if judge != "" {
		names = append(names, judge)
		flags = append(flags, "--judge-agent", judge)
		wantJudge = judge
	}
	env := evalAgentEnv(t, srv, names...)
	main := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), append([]string{"vibe-test", "eval"}, args...), IO{Env: env, Stdout: &stdout, Stderr: &stderr})
		return code, stdout.String(), stderr.String()
	}
	cand := filepath.Join(root, "out", "candidate")
	// The case set is cut to the cases this eval needs: the holdout runs
	// and is decided as the main cases are, by code that does not depend
	// on the agent (claude's eval demo has the whole set), and the
	// scripted broken version is wrong on every case, so three (bolts and
	// the widgets pair) reject it as decisively as six.
	// One repeat (the demo's set has three): a codex start costs most of
	// a CPU-second. Three cases of one repeat cannot show the instrument
	// sound (base run 2 is not accepted against base run 1 from so few
	// grades: evalstats' binomial floor), so --baseline exits 2 and still
	// stores the baseline; the broken version is rejected on them all
	// the same.
	keep := []string{"bolts", "widgets", "widgets-restocked"}
	decide, cells, caseID := []string{"--against", "demo"}, 4*len(keep), "widgets" // two baselines, the control, the candidate; 1 repeat
	flags = append(flags, "--repeats", "1")
	plain := wantExit < 0
	if plain {
		keep = []string{"bolts"}
		decide, cells, caseID, wantExit = nil, 1, "bolts", 0
	}
	entries, err := os.ReadDir(paths.Cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !slices.Contains(keep, e.Name()) {
			if err := os.RemoveAll(filepath.Join(paths.Cases, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !plain {
		base := filepath.Join(root, "out", "baseline")
		if code, out, errs := main(append([]string{paths.Skills[demo.VersionBaseline], "--baseline", "demo", "--out", base}, flags...)...); code != 2 || !strings.Contains(out+errs, "the control was rejected") {
			t.Fatalf("--baseline: exit %d, want 2 (the control rejected, base run 2 not accepted on 3 cases x 1 repeat)\n%s\n%s", code, out, errs)
		}
	}
	code, out, errs := main(append(append([]string{paths.Skills[candidate], "--out", cand, "--json"}, decide...), flags...)...)
	if code != wantExit {
		t.Fatalf("eval %v: exit %d, want %d as claude's demo\n%s\n%s", decide, code, wantExit, out, errs)
	}
	var doc struct {
		Agent         string `json:"agent"`
		JudgeAgent    string `json:"judge_agent"`
		CostEstimated bool   `json:"cost_estimated"`
		CellErrors    int    `json:"cell_errors"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if doc.Agent != name || doc.JudgeAgent != wantJudge || !doc.CostEstimated || doc.CellErrors != 0 {
		t.Errorf("--json: agent %q, judge agent %q, cost estimated %v, %d cell errors; want %s, %s, true, 0", doc.Agent, doc.JudgeAgent, doc.CostEstimated, doc.CellErrors, name, wantJudge)
	}
	if !strings.Contains(errs, "estimated from token counts") {
		t.Errorf("the summary does not label the costs estimated:\n%s", errs)
	}
	rec, err := eval.LoadRecord(cand)
	if err != nil {
		t.Fatal(err)
	}
	if jail.Find(os.Getenv("PATH")) != "" && rec.Jail != "bubblewrap" {
		t.Errorf("eval.json: jail %q (%s), want bubblewrap where it is installed", rec.Jail, rec.JailNote)
	}
	if rec.Agent != name || rec.JudgeAgent != wantJudge || !rec.CostEstimated || (rec.Versions.Claude != "") != (wantJudge == agents.Claude) {
		t.Errorf("eval.json: agent %q, judge agent %q, cost estimated %v, claude %q", rec.Agent, rec.JudgeAgent, rec.CostEstimated, rec.Versions.Claude)
	}
	if rec.Costs.Generator <= 0 || rec.Costs.Reader <= 0 {
		t.Errorf("costs %+v: the estimate priced nothing", rec.Costs)
	}
	// The generator was the real CLI: its requests carry its own client
	// name, and each saved transcript (redacted) parses back, with that
	// agent's parser, into the message the cell holds after the fixture
	// search the persona makes.
	ua := map[string]string{agents.Codex: "codex", agents.Gemini: "GeminiCLI"}[name]
	agentCalls := 0
	for _, r := range srv.Requests() {
		if r.Kind != scripted.KindAgent {
			continue
		}
		agentCalls++
		if !strings.Contains(r.Header.Get("User-Agent"), ua) {
			t.Fatalf("a generator request's User-Agent is %q, expected the real %s CLI's", r.Header.Get("User-Agent"), name)
		}
	}
	if agentCalls < 2*cells {
		t.Errorf("%d generator requests, expected two per cell (a search, the answer) for %d cells", agentCalls, cells)
	}
	for _, r := range srv.Requests() {
		b, _ := json.Marshal(r)
		if bytes.Contains(b, []byte(authorOpenAIKey)) || bytes.Contains(b, []byte(authorGeminiKey)) {
			t.Fatalf("request %d (%s) holds an author's key", r.Seq, r.Kind)
		}
	}
	for _, dir := range []string{filepath.Join(root, "out"), filepath.Join(paths.Cases, "baselines")} {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			continue // no baseline was stored
		}
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if bytes.Contains(b, []byte(authorOpenAIKey)) || bytes.Contains(b, []byte(authorGeminiKey)) {
				t.Errorf("%s holds an author's key", p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range rec.Runs {
		if run.Stored {
			continue
		}
		cell, err := os.ReadFile(filepath.Join(cand, run.Dir, caseID, "1.json"))
		if err != nil {
			t.Fatal(err)
		}
		var c eval.Cell
		if err := json.Unmarshal(cell, &c); err != nil {
			t.Fatal(err)
		}
		checkTranscript(t, name, cand, &c)
	}
	return cand, env
}

// checkTranscript: the cell's saved transcript parses, with its agent's
// parser, into the cell's message, after a tool call, and the cell
// recorded the model and the API calls from the turn.
func checkTranscript(t *testing.T, name, dir string, c *eval.Cell) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, c.Generator.Transcript))
	if err != nil {
		t.Fatal(err)
	}
	turn, err := agents.ParseTurn(name, f)
	f.Close()
	if err != nil || strings.TrimSpace(turn.Text) != strings.TrimSpace(c.Message) || len(turn.Calls) == 0 {
		t.Errorf("%s: the transcript parses to %q with %d calls (%v), the cell holds %q", c.Generator.Transcript, turn.Text, len(turn.Calls), err, c.Message)
	}
	if c.Generator.Model == "" || c.Generator.APICalls < 2 {
		t.Errorf("cell %+v: no model or API calls recorded from the turn", c.Generator)
	}
}
