package eval_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/codex"
	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// Codex and gemini in an eval's roles, on the real CLIs against the
// stand-in: a burst of HTTP 500s that outlasts codex's retries and
// vibe-test's is recorded as the cell's error (every measure a grade
// error, never a pass or a fail) while the other case is read and graded
// by codex, the default judge when only its stand-in is set; a skill
// delivered as a project skill is read where codex finds it; gemini can
// read and grade what codex generated (--judge-agent gemini: a gemini
// process costs some 1.8 CPU-seconds to start); a refused key stops the
// eval with codex's advice. Only the burst needs a second case.
func TestCodexAndGeminiRoles(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(testenv.RepoRoot(t), "tools", "node_modules", ".bin", "codex")
	if _, err := os.Stat(bin); err != nil {
		testenv.Missing(t, "the codex CLI is not installed: run `make tools`")
	}
	root, err := os.MkdirTemp("", "ledger-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	// Two case sets: c1 and c2, and c1 alone.
	set, one := filepath.Join(root, "cases"), filepath.Join(root, "one-case")
	setYAML := "goal: I rule right away.\nmeasures:\n  - {id: M1, name: Right decision, question: Is the ruling right?, uses: [correct]}\ndefaults: {repeats: 1}\n"
	for rel, content := range map[string]string{
		"cases/cases.yaml":              setYAML,
		"cases/c1/case.yaml":            "prompt: Should we reorder widgets?\n",
		"cases/c1/key.json":             `{"correct": ["REORDER"]}`,
		"cases/c2/case.yaml":            "prompt: Should we reorder clamps?\n",
		"cases/c2/key.json":             `{"correct": ["HOLD"]}`,
		"one-case/cases.yaml":           setYAML,
		"one-case/c1/case.yaml":         "prompt: Should we reorder widgets?\n",
		"one-case/c1/key.json":          `{"correct": ["REORDER"]}`,
		"skill/reorder-ruling/SKILL.md": "---\nname: reorder-ruling\ndescription: Rule whether to reorder an item.\n---\nRule by the count.\n",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(v any) []scripted.Step {
		return []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: v}}}}
	}
	judging := []scripted.Rule{
		{Kind: scripted.KindReader, Steps: answer(map[string]any{"decision": "Hold.", "rebuild": "r", "follow_ups": []string{}, "close_answer": ""})},
		{Kind: scripted.KindGrader, Contains: "REORDER widgets", Steps: answer(map[string]any{"grades": []map[string]any{{"id": "M1", "result": "pass", "quote": "REORDER widgets"}}})},
		{Kind: scripted.KindGrader, Steps: answer(map[string]any{"grades": []map[string]any{{"id": "M1", "result": "pass", "quote": "HOLD clamps"}}})},
	}
	var srv *scripted.Server
	run := func(t *testing.T, set, out, deliver, judge string, widgets ...scripted.Step) (*eval.Result, string, error) {
		var err error
		srv, err = scripted.Start(scripted.Script{Rules: append([]scripted.Rule{
			{Kind: scripted.KindAgent, Contains: "reorder widgets", Steps: widgets},
			{Kind: scripted.KindAgent, Contains: "reorder clamps", Steps: []scripted.Step{{Text: "HOLD clamps: 40 on the shelf."}}},
		}, judging...)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "OPENAI_BASE_URL=" + srv.URL(), "VIBE_TEST_CODEX=" + bin}
		if judge == agents.Gemini {
			env = append(env, "GOOGLE_GEMINI_BASE_URL="+srv.URL(), "VIBE_TEST_GEMINI="+testenv.Gemini(t))
		}
		var stderr bytes.Buffer
		res, err := eval.Start(context.Background(), eval.Settings{
			SkillPath: filepath.Join(root, "skill", "reorder-ruling"), CasesDir: set, Agent: agents.Codex, JudgeAgent: judge,
			Concurrency: 1, MaxRetries: 0, Deliver: deliver, RetryBackoff: 10 * time.Millisecond, OutDir: filepath.Join(root, "out", out),
		}, eval.IO{Env: env, Stderr: &stderr})
		return res, stderr.String(), err
	}
	t.Run("500 burst", func(t *testing.T) {
		res, stderr, err := run(t, set, "burst", "", "", scripted.Step{Error: &scripted.HTTPError{Status: 500, Count: 1000}, Text: "REORDER widgets."})
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if res.CellErrors != 1 {
			t.Fatalf("%d cell errors, want 1 (the widgets case): %s\n%s", res.CellErrors, res.Sentence, stderr)
		}
		// No --judge-agent: the reader and grader are codex's, the agent
		// whose stand-in is set.
		if res.Record.JudgeAgent != agents.Codex || res.Record.Versions.Claude != "" {
			t.Errorf("judge agent %q, claude %q: want codex's reader and grader, no claude", res.Record.JudgeAgent, res.Record.Versions.Claude)
		}
		judged := 0
		for _, r := range srv.Requests() {
			if r.Kind == scripted.KindReader || r.Kind == scripted.KindGrader {
				judged++
				if !strings.Contains(r.Header.Get("User-Agent"), "codex") {
					t.Errorf("a %s call came from %q, not the codex CLI", r.Kind, r.Header.Get("User-Agent"))
				}
			}
		}
		if judged < 2 {
			t.Errorf("%d reader and grader calls, want the graded case's two", judged)
		}
		for _, c := range res.Runs[0].Main {
			switch c.Case {
			case "c1":
				if c.Status != eval.CellError || !strings.Contains(c.Error, "500") || c.Generator.Attempts != 3 {
					t.Errorf("the faulted cell: status %q, error %q, %d attempts; want an error naming the 500 after 3 attempts", c.Status, c.Error, c.Generator.Attempts)
				}
				for _, g := range c.Grades {
					if g.Result != eval.ResultError {
						t.Errorf("the faulted cell's %s is %q, want a grade error", g.Measure, g.Result)
					}
				}
			case "c2":
				if c.Status != eval.CellOK || len(c.Grades) != 1 || c.Grades[0].Result != eval.ResultPass {
					t.Errorf("the other cell: status %q (%s), grades %+v; want graded", c.Status, c.Error, c.Grades)
				}
			}
		}
	})
	t.Run("skill delivered", func(t *testing.T) {
		// --deliver skill: installed at codex's .agents/skills/<name>, and
		// the scripted model's Skill step reads it there.
		res, stderr, err := run(t, one, "skill", "skill", "",
			scripted.Step{ToolUses: []scripted.ToolUse{{Name: "Skill", Input: map[string]any{"skill": "reorder-ruling"}}}},
			scripted.Step{Text: "REORDER widgets."})
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if len(res.Runs[0].Main) != 1 {
			t.Fatalf("%d cells, want c1's", len(res.Runs[0].Main))
		}
		for _, c := range res.Runs[0].Main {
			f, err := os.Open(filepath.Join(res.Dir, c.Generator.Transcript))
			if err != nil {
				t.Fatal(err)
			}
			turn, err := agents.ParseTurn(agents.Codex, f)
			f.Close()
			if err != nil || c.Status != eval.CellOK || !(codex.Agent{}).SkillLoaded(turn, "reorder-ruling") ||
				!strings.Contains(turn.Calls[0].Result, "Rule by the count.") {
				t.Errorf("cell %s (%s): the skill was not read from the workspace: %v %+v", c.Status, c.Error, err, turn.Calls)
			}
		}
	})
	t.Run("gemini judges", func(t *testing.T) {
		// The reader and the grader on the real gemini CLI (its cold
		// calls in JSON mode), the generator on codex.
		res, stderr, err := run(t, one, "judged", "", agents.Gemini, scripted.Step{Text: "REORDER widgets: 12 left."})
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if res.Record.JudgeAgent != agents.Gemini || res.Record.Versions.Gemini == "" || res.CellErrors != 0 || len(res.Runs[0].Main) != 1 {
			t.Fatalf("judge agent %q, gemini %q, %d cell errors: %s\n%s", res.Record.JudgeAgent, res.Record.Versions.Gemini, res.CellErrors, res.Sentence, stderr)
		}
		for _, c := range res.Runs[0].Main {
			if c.Reader == nil || c.Reader.Decision != "Hold." || len(c.Grades) != 1 || c.Grades[0].Result != eval.ResultPass || c.Costs.Reader <= 0 {
				t.Errorf("cell %s: reader %+v, grades %+v, costs %+v; want gemini's notes and a pass, priced", c.Case, c.Reader, c.Grades, c.Costs)
			}
		}
	})
	t.Run("refused key", func(t *testing.T) {
		_, stderr, err := run(t, one, "refused", "", "", scripted.Step{Error: &scripted.HTTPError{Status: 401, Count: 1000}, Text: "REORDER widgets."})
		if exit.Code(err) != exit.Tool || err == nil || !strings.Contains(err.Error(), codex.CredentialsAdvice) {
			t.Fatalf("error %v (exit %d), want exit 3 with codex's advice\n%s", err, exit.Code(err), stderr)
		}
	})
}
