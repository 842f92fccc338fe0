package fakeclaude_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// session is one short conversation as vibe-test runs it: three resumed
// agent turns (the demo's base task, a filler, a probe) and one judge call,
// as the server saw it and as claude.ParseTurn read it.
type session struct {
	turns    []claude.Turn
	exits    []int
	judge    claude.Turn
	requests []scripted.Request
	dir      string // the working folder
	config   string // the config dir
}

var prompts = []string{
	"How many widgets do we have in stock right now?",
	"Summarise in two sentences how a refrigerator keeps food cold.",
	"Quick one, how many gaskets are in stock, and do we need to reorder them?",
}

// setup starts a scripted server playing the demo's steady persona and
// makes the demo's working folder (fixture and skill) and config dir; env
// is the agent's environment.
func setup(t *testing.T) (srv *scripted.Server, s session, env, base []string) {
	t.Helper()
	script, err := demo.Script([]string{scripted.PersonaSteady}, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, err = scripted.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	files := t.TempDir()
	paths, err := demo.Materialize(files)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := sandbox.CopyDir(filepath.Join(files, "fixture"), work, nil); err != nil {
		t.Fatal(err)
	}
	if err := sandbox.CopyDir(filepath.Dir(paths.Skill), filepath.Join(work, ".claude", "skills", demo.SkillName), nil); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	s = session{dir: work, config: filepath.Join(home, ".claude")}
	if err := os.MkdirAll(s.config, 0o700); err != nil {
		t.Fatal(err)
	}
	// TMPDIR in the test's folder: the CLI keeps task files under
	// $TMPDIR/claude-<uid>, which would otherwise outlive the test in /tmp.
	base = []string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-offline-placeholder",
		"TMPDIR=" + t.TempDir()}
	env = claude.Env(base, claude.EnvOptions{Home: home, ConfigDir: s.config, Extra: []string{"CLAUDE_CODE_MAX_RETRIES=1"}})
	return srv, s, env, base
}

// converse runs the session through bin against a fresh scripted server
// playing the demo's steady persona.
func converse(t *testing.T, bin string) session {
	t.Helper()
	srv, s, env, base := setup(t)
	work := s.dir
	ctx := context.Background()
	resume := ""
	for _, p := range prompts {
		out, err := claude.Run(ctx, claude.Invocation{Binary: bin, Args: claude.AgentArgs(p, resume, "", claude.AgentTools(nil, nil)),
			Env: env, Dir: work, Timeout: 2 * time.Minute, Grace: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		s.turns = append(s.turns, out.Turn)
		s.exits = append(s.exits, out.ExitCode)
		resume = out.Turn.SessionID
	}
	caller := claude.Caller{Binary: bin, Timeout: 2 * time.Minute, Grace: time.Second, Env: func(dir string) []string {
		h := filepath.Join(dir, ".home")
		_ = os.MkdirAll(filepath.Join(h, ".claude"), 0o700)
		return claude.Env(base, claude.EnvOptions{Home: h, ConfigDir: filepath.Join(h, ".claude"), Extra: []string{"CLAUDE_CODE_MAX_RETRIES=1"}})
	}}
	var err error
	s.judge, err = caller.Structured(ctx, "Judge this trace: "+`{"command":"bash .claude/skills/stock-ledger/scripts/census.sh"}`, judge.Schema, "")
	if err != nil {
		t.Fatalf("judge call: %v", err)
	}
	s.requests = srv.Requests()
	return s
}

// The stand-in and the pinned CLI, run through the same conversation, look
// the same to the scripted API and to vibe-test's parser: same calls in the
// same order (kind, prompt turn, step, prompt), the skill listed and its
// body sent after the Skill call, the same tool calls with the same
// results, the skill loaded, one session resumed, the judge's structured
// output, and the result fields vibe-test reads.
func TestFakeMatchesRealCLI(t *testing.T) {
	t.Parallel()
	real := converse(t, testenv.Claude(t))
	fake := converse(t, testenv.FakeClaude(t))

	type call struct {
		Kind       scripted.CallKind
		Turn, Step int
		Prompt     string
		Persona    string
		Status     int
		Listed     bool // the skill listing names the skill
		SkillBody  bool // the skill's body rode with a tool result
	}
	calls := func(s session) []call {
		var out []call
		for _, r := range s.requests {
			out = append(out, call{r.Kind, r.Turn, r.Step, r.Prompt, r.Persona, r.Status,
				strings.Contains(string(r.Body), "- "+demo.SkillName+":"),
				strings.Contains(string(r.Body), "Base directory for this skill:")})
		}
		return out
	}
	if rc, fc := calls(real), calls(fake); !reflect.DeepEqual(rc, fc) {
		t.Errorf("the server saw different calls\nreal: %+v\nfake: %+v", rc, fc)
	}

	for i := range prompts {
		r, f := real.turns[i], fake.turns[i]
		if real.exits[i] != 0 || fake.exits[i] != 0 {
			t.Errorf("turn %d: exit real %d, fake %d", i+1, real.exits[i], fake.exits[i])
		}
		type seen struct {
			HasResult, IsError bool
			APICalls           int
			Text, Reason       string
			Model              string
			Answered           []string
			Skill              bool
			Calls              []string
		}
		view := func(tr claude.Turn) seen {
			v := seen{HasResult: tr.HasResult, IsError: tr.IsError, APICalls: tr.APICalls, Text: tr.Text,
				Reason: tr.TerminalReason, Model: tr.Model, Answered: tr.AnsweredBy}
			v.Skill, _ = tr.SkillUse(demo.SkillName)
			for _, c := range tr.Calls {
				v.Calls = append(v.Calls, c.Name+" "+string(c.Input)+" -> "+c.Result+errMark(c.IsError, c.HasResult, c.Denied))
			}
			return v
		}
		if rv, fv := view(r), view(f); !reflect.DeepEqual(rv, fv) {
			t.Errorf("turn %d parses differently\nreal: %+v\nfake: %+v", i+1, rv, fv)
		}
		if !contains(r.Skills, demo.SkillName) || !contains(f.Skills, demo.SkillName) {
			t.Errorf("turn %d: init skills real %v, fake %v", i+1, r.Skills, f.Skills)
		}
		if r.CostUSD <= 0 || f.CostUSD <= 0 || r.ContextTokens <= 0 || f.ContextTokens <= 0 || r.CLIVersion != f.CLIVersion {
			t.Errorf("turn %d: cost %v/%v, context %d/%d, version %q/%q", i+1, r.CostUSD, f.CostUSD, r.ContextTokens, f.ContextTokens, r.CLIVersion, f.CLIVersion)
		}
		// The CLI's total_cost_usd is the session's running total: both grow.
		if i > 0 && (r.CostUSD <= real.turns[i-1].CostUSD) != (f.CostUSD <= fake.turns[i-1].CostUSD) {
			t.Errorf("turn %d: the cost's running total differs: real %v after %v, fake %v after %v", i+1, r.CostUSD, real.turns[i-1].CostUSD, f.CostUSD, fake.turns[i-1].CostUSD)
		}
	}
	for _, s := range []session{real, fake} {
		id := s.turns[0].SessionID
		for i, tr := range s.turns {
			if tr.SessionID != id || id == "" {
				t.Errorf("turn %d: session %q, want the first turn's %q", i+1, tr.SessionID, id)
			}
		}
		if _, err := os.Stat(filepath.Join(sandbox.SessionDir(s.config, s.dir), id+".jsonl")); err != nil {
			t.Errorf("session file: %v", err)
		}
	}
	if string(real.judge.StructuredOutput) == "" || !reflect.DeepEqual(jsonOf(real.judge.StructuredOutput), jsonOf(fake.judge.StructuredOutput)) {
		t.Errorf("judge: real %s, fake %s", real.judge.StructuredOutput, fake.judge.StructuredOutput)
	}
}

func errMark(isErr, has, denied bool) string {
	switch {
	case denied:
		return " (denied)"
	case !has:
		return " (no result)"
	case isErr:
		return " (error)"
	}
	return ""
}

func jsonOf(b []byte) any {
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
