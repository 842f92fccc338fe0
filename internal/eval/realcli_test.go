package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// Strings planted where the generator must never reach: in a key, and in
// a holdout case's fixture.
const (
	plantedKey     = "PLANTED-KEY-7f3a"
	plantedHoldout = "PLANTED-HOLDOUT-9c1d"
	skillMarker    = "Rule by the count and the reorder point."
)

// What only the real CLI proves: the generator's argv is accepted and does
// what it says (the skill appended to the system prompt from
// --append-system-prompt-file, --effort sent as output_config.effort, only
// the read-only tools offered), and the jail keeps the case set (keys,
// holdout) out of the generator's reach even when it goes looking: the
// scripted generator greps and reads the case set's files by their real
// paths, and neither its transcript nor any request it sent holds a
// planted string. The reader and grader run on the stand-in (HybridClaude).
func TestRealCLIGeneratorAndJail(t *testing.T) {
	cli := testenv.HybridClaude(t)
	// The case set outside the test's own folder names: the scripted agent
	// puts these paths in its tool calls.
	root, err := os.MkdirTemp("", "ledger-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	set := filepath.Join(root, "cases")
	files := map[string]string{
		"cases.yaml":                       "goal: I rule right away.\nmeasures:\n  - {id: M1, name: Right decision, question: Is the ruling right?, uses: [correct]}\ndefaults: {repeats: 1, model: sonnet, effort: high}\n",
		"c1/case.yaml":                     "prompt: Should we reorder widgets?\n",
		"c1/key.json":                      `{"correct": ["REORDER"], "secret": "` + plantedKey + `"}`,
		"c1/fixture/data/stock.csv":        "item,count\nwidgets,12\n",
		"holdout/h1/case.yaml":             "prompt: Should we reorder clamps?\n",
		"holdout/h1/key.json":              `{"correct": ["HOLD"], "secret": "` + plantedKey + `"}`,
		"holdout/h1/fixture/notes.md":      plantedHoldout + "\n",
		"../skill/reorder-ruling/SKILL.md": "---\nname: reorder-ruling\ndescription: Rule whether to reorder an item.\n---\n" + skillMarker + "\n",
	}
	for rel, content := range files {
		p := filepath.Join(set, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	look := func(prompt, answer string) scripted.Rule {
		return scripted.Rule{Kind: scripted.KindAgent, Contains: prompt, Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{{Name: "Grep", Input: map[string]any{"pattern": "PLANTED", "path": set, "output_mode": "content"}}}},
			{ToolUses: []scripted.ToolUse{{Name: "Read", Input: map[string]any{"file_path": filepath.Join(set, "c1", "key.json")}}}},
			{ToolUses: []scripted.ToolUse{{Name: "Read", Input: map[string]any{"file_path": filepath.Join(set, "holdout", "h1", "fixture", "notes.md")}}}},
			{ToolUses: []scripted.ToolUse{{Name: "Glob", Input: map[string]any{"pattern": "**/*"}}}},
			{Text: answer},
		}}
	}
	answer := func(v any) []scripted.Step {
		return []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: v}}}}
	}
	srv, err := scripted.Start(scripted.Script{Rules: []scripted.Rule{
		look("reorder widgets", "REORDER widgets. Shall I order 20?"),
		look("reorder clamps", "HOLD clamps. Shall I look again next week?"),
		{Kind: scripted.KindReader, Steps: answer(map[string]any{"decision": "Order.", "rebuild": "r", "follow_ups": []string{}, "close_answer": "Yes."})},
		{Kind: scripted.KindGrader, Contains: "REORDER widgets", Steps: answer(map[string]any{"grades": []map[string]any{{"id": "M1", "result": "pass", "quote": "REORDER widgets"}}})},
		{Kind: scripted.KindGrader, Steps: answer(map[string]any{"grades": []map[string]any{{"id": "M1", "result": "pass", "quote": "HOLD clamps"}}})},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	env := append(demo.Env(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+cli)
	var stderr bytes.Buffer
	res, err := eval.Start(context.Background(), eval.Settings{
		SkillPath: filepath.Join(root, "skill", "reorder-ruling"), CasesDir: set, Isolation: "jail", Concurrency: 2,
		OutDir: filepath.Join(root, "out"),
	}, eval.IO{Env: env, Stderr: &stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if res.Record.Jail != "bubblewrap" || res.CellErrors != 0 {
		t.Fatalf("jail %q, %d cell errors: %s", res.Record.Jail, res.CellErrors, res.Sentence)
	}

	agents := 0
	for _, r := range srv.Requests() {
		if r.Kind != scripted.KindAgent {
			continue
		}
		agents++
		body := string(r.Body)
		if strings.Contains(body, plantedKey) || (strings.Contains(r.Prompt, "widgets") && strings.Contains(body, plantedHoldout)) {
			t.Errorf("a generator request (prompt %q, step %d) holds a planted string", r.Prompt, r.Step)
		}
		var req struct {
			System []struct {
				Text string `json:"text"`
			} `json:"system"`
			OutputConfig struct {
				Effort string `json:"effort"`
			} `json:"output_config"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &req); err != nil {
			t.Fatal(err)
		}
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(r.Body, &keys)
		if _, ok := keys["context_management"]; !ok {
			// Only the real CLI sends context_management (PROTOCOL.md §1),
			// the stand-in does not: this request came from the real one.
			t.Errorf("a generator request without context_management: not the real CLI")
		}
		sys := ""
		for _, s := range req.System {
			sys += s.Text
		}
		if !strings.Contains(sys, skillMarker) {
			t.Errorf("the skill is not in the generator's system prompt (--append-system-prompt-file)")
		}
		if req.OutputConfig.Effort != "high" {
			t.Errorf("output_config.effort %q, want high (--effort)", req.OutputConfig.Effort)
		}
		var names []string
		for _, tool := range req.Tools {
			names = append(names, tool.Name)
		}
		if got := strings.Join(names, ","); strings.Contains(got, "Bash") || strings.Contains(got, "Write") || !strings.Contains(got, "Read") {
			t.Errorf("tools offered %s, want the read-only ones only (--tools)", got)
		}
	}
	if agents < 10 {
		t.Errorf("%d generator requests, expected each case's five steps", agents)
	}
	for _, run := range res.Runs {
		for _, c := range append(append([]*eval.Cell{}, run.Main...), run.Holdout...) {
			b, err := os.ReadFile(filepath.Join(res.Dir, c.Generator.Transcript))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(plantedKey)) || (!c.Holdout && bytes.Contains(b, []byte(plantedHoldout))) {
				t.Errorf("%s: the generator's transcript holds a planted string", c.Generator.Transcript)
			}
			// It did look: its Read of the key found nothing there.
			if !bytes.Contains(b, []byte("does not exist")) {
				t.Errorf("%s: the scripted generator's Read of key.json did not fail: the test proves nothing", c.Generator.Transcript)
			}
		}
	}
}

// The eval demo's scripted personas answer the real CLI's generator
// requests as they answer the stand-in's: for one case, each version of the
// demo skill and the empty-skill control get the same message through the
// real CLI (its --append-system-prompt-file, its tools) as through the
// stand-in. So the demo's whole flow, which TestFlow and internal/app's
// TestDemoCases check on the stand-in, is what `vibe-test demo --cases`
// shows a user on the real CLI, at four real generator calls instead of
// the demo's 150.
func TestDemoPersonasOnTheRealCLI(t *testing.T) {
	messages := func(cli string) map[string]string {
		f := newFlow(t, cli)
		keep := "bolts"
		entries, err := os.ReadDir(f.paths.Cases)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && e.Name() != keep {
				if err := os.RemoveAll(filepath.Join(f.paths.Cases, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
		got := map[string]string{}
		for _, v := range []string{demo.VersionBaseline, demo.VersionShorter, demo.VersionBroken} {
			s := f.settings(v, "run-"+v)
			s.Repeats, s.Control = 1, v == demo.VersionBaseline
			res, err := f.start(t, s)
			if err != nil {
				t.Fatalf("%s on %s: %v", v, cli, err)
			}
			for _, r := range res.Runs {
				for _, c := range r.Main {
					if c.Status != eval.CellOK || c.Message == "" {
						t.Fatalf("%s on %s, %s: cell %s (%s)", v, cli, r.Info.Label, c.Status, c.Error)
					}
					got[r.Info.Label+" of "+v] = c.Message
				}
			}
		}
		return got
	}
	real, stand := messages(testenv.HybridClaude(t)), messages(testenv.FakeClaude(t))
	if len(real) != 4 || len(stand) != 4 {
		t.Fatalf("messages: real CLI %q, stand-in %q; want the control and three versions each", real, stand)
	}
	for k, m := range stand {
		if real[k] != m {
			t.Errorf("%s: the real CLI got %q, the stand-in %q", k, real[k], m)
		}
	}
	distinct := map[string]bool{}
	for _, m := range real {
		distinct[m] = true
	}
	if len(distinct) != 4 {
		t.Errorf("the personas did not tell the versions apart on the real CLI: %q", real)
	}
}
