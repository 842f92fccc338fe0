package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// runEdited runs the bundled skill, one conversation, after edit has
// changed its files (the SKILL.md, the config): what real skills look like.
func runEdited(t *testing.T, bin string, script scripted.Script, edit func(p demo.Paths), flags ...string) scenario {
	t.Helper()
	srv, files, paths := startDemo(t, script)
	edit(paths)
	out := filepath.Join(t.TempDir(), "run")
	env := append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+bin, "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"))
	args := append([]string{"vibe-test", paths.Skill, "--config", paths.Config, "--out", out, "--seed", "7",
		"--conversations", "1", "--max-retries", "1", "--retry-backoff", "200ms"}, flags...)
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), args, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	s := scenario{code: code, stdout: stdout.String(), stderr: stderr.String(), dir: out, srv: srv}
	r, err := record.Load(out)
	if err != nil {
		t.Fatalf("run.json unreadable: %v\nstdout:\n%s\nstderr:\n%s", err, s.stdout, s.stderr)
	}
	s.run = r
	t.Logf("exit %d\n%s\n%s", code, s.stdout, s.stderr)
	return s
}

// setFrontmatter replaces the bundled SKILL.md's frontmatter.
func setFrontmatter(t *testing.T, skillPath, front string) {
	t.Helper()
	b, err := os.ReadFile(skillPath)
	if err != nil {
		t.Fatal(err)
	}
	body := string(b)[strings.Index(string(b)[4:], "\n---\n")+4+5:]
	if err := os.WriteFile(skillPath, []byte("---\n"+front+"---\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
}

const demoDescription = "Answers questions about warehouse stock levels and records every answer in the ledger. Use whenever the user asks how many of an item are in stock, what to reorder, or about inventory counts."

func steadyScript(t *testing.T) scripted.Script {
	t.Helper()
	s, err := demo.Script([]string{scripted.PersonaSteady}, false)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// One real-CLI run of a skill whose frontmatter is as real skills write
// it, on a model that changes mid-conversation; each of its subjects would
// otherwise be a run of its own (the same kind of run, one conversation on
// the pinned CLI):
//
//   - allowed-tools made -p deny the skill's own Skill call (issue 10):
//     with Skill always allowed it loads at every judged turn and is judged.
//   - Anthropic's claude-api skill has a description over 1024 characters;
//     many skills have an unquoted ": " in theirs. The CLI loads both, so
//     the run goes on, with a warning naming each rule.
//   - The agent model is resolved once and passed on every turn; a scripted
//     server that answers turn 8 as another model makes the run flag a
//     confound on run.json, the summary and the chart.
func TestSkillFrontmatterAndModelOnTheRealCLI(t *testing.T) {
	t.Parallel()
	long := "Build, debug and optimize apps with the Claude API: " + strings.Repeat("use it when code imports anthropic or the Agent SDK. ", 19)
	if n := len([]rune(long)); n < 1025 {
		t.Fatalf("description of %d characters, want over 1024", n)
	}
	script := steadyScript(t)
	var switched []scripted.Step
	for _, st := range demo.Procedure().Follow {
		st.Model = "claude-haiku-4-5"
		switched = append(switched, st)
	}
	script.Rules = append([]scripted.Rule{{Kind: scripted.KindAgent, Turns: []int{8}, Pattern: demo.Procedure().TaskPattern, Steps: switched}}, script.Rules...)
	s := runEdited(t, realConversationCLI(t), script, func(p demo.Paths) {
		setFrontmatter(t, p.Skill, "name: stock-ledger\ndescription: "+long+"\nallowed-tools: Bash Read\n")
	}, "--allowed-tools", "Bash(git diff:*),WebFetch")
	if s.code != 0 {
		t.Fatalf("exit %d, want 0", s.code)
	}

	// allowed-tools
	want := "Bash Read Edit Write Glob Grep Skill Bash(git diff:*) WebFetch"
	if got := strings.Join(s.run.Config.AllowedTools, " "); got != want {
		t.Errorf("allowed tools %q, want %q", got, want)
	}
	if !strings.Contains(s.stdout, "tools "+want) {
		t.Error("the summary does not show the agent's tools")
	}
	for _, tr := range s.run.Conversations[0].Turns {
		if tr.Kind != "filler" && (!tr.SkillInvoked || tr.SkillDenied || tr.Verdict == nil) {
			t.Errorf("turn %d: skill invoked %v denied %v verdict %v", tr.Turn, tr.SkillInvoked, tr.SkillDenied, tr.Verdict)
		}
	}

	// The frontmatter the CLI accepts though it breaks two rules.
	w := s.run.Skill.Warnings
	if len(w) != 2 || !strings.Contains(w[0], "YAML rule") || !strings.Contains(w[1], "(Agent Skills spec: at most 1024)") {
		t.Fatalf("warnings %q", w)
	}
	if !strings.Contains(s.stderr, "warning: "+w[1]) || !strings.Contains(s.stdout, "skill warning: ") {
		t.Error("the warnings are not shown at the start and in the summary")
	}

	// The model switch.
	cfg := s.run.Config
	if cfg.Model != "claude-opus-5-5" || cfg.ModelSource != "cli-default" {
		t.Errorf("model %q from %q, want the CLI's default pinned", cfg.Model, cfg.ModelSource)
	}
	for _, r := range s.srv.Requests() {
		if r.Kind == scripted.KindAgent && !bytes.Contains(r.Body, []byte(`"model":"`+cfg.Model+`"`)) {
			t.Fatalf("agent request %d did not ask for the pinned model", r.Seq)
		}
	}
	c := s.run.Conversations[0]
	if got := c.TurnAt(8).AnsweredBy; len(got) != 1 || got[0] != "claude-haiku-4-5" {
		t.Errorf("turn 8 answered by %v", got)
	}
	if !strings.Contains(c.ModelChange, "changed at turn 8") {
		t.Fatalf("model change %q", c.ModelChange)
	}
	page, _ := os.ReadFile(filepath.Join(s.dir, "chart.html"))
	if !strings.HasPrefix(s.stdout, "!! MODEL CHANGED in conversation 1") || !bytes.Contains(page, []byte("MODEL CHANGED in conversation 1")) {
		t.Error("the change is not flagged on the summary's first line and in the chart")
	}
}

// A skill the agent asks for and is refused is reported as refused, never
// counted as loaded. A project setting that makes the Skill tool ask for
// permission does it, as allowed-tools did before Skill was allowed: -p
// denies every permission request.
func TestDeniedSkillReported(t *testing.T) {
	t.Parallel()
	s := runEdited(t, realConversationCLI(t), steadyScript(t), func(p demo.Paths) {
		f, err := os.OpenFile(p.Config, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("files:\n  .claude/settings.json: '{\"permissions\":{\"ask\":[\"Skill\"]}}'\n")
		f.Close()
	}, "--no-baseline-gate")
	c := s.run.Conversations[0]
	base := c.TurnAt(1)
	if base == nil || base.SkillInvoked || !base.SkillDenied {
		t.Fatalf("turn 1: %+v, want the skill denied and not invoked", base)
	}
	if !strings.Contains(s.stdout, "the agent was refused the skill at turn 1") || !strings.Contains(s.stdout, "DENIED") {
		t.Error("the summary does not say the skill was refused")
	}
	raw, _ := os.ReadFile(filepath.Join(s.dir, "run.json"))
	if !bytes.Contains(raw, []byte(`"skill_denied": true`)) {
		t.Error("run.json does not record the denial")
	}
}

// A required script that is missing from the sandbox makes the baseline's
// call fail ("No such file"): the gate names a set-up problem with the
// failing output instead of passing a step that never ran.
func TestSetupProblemStopsTheGate(t *testing.T) {
	t.Parallel()
	s := runEdited(t, fastCLI(t), steadyScript(t), func(p demo.Paths) {
		if err := os.Remove(filepath.Join(filepath.Dir(p.Skill), "scripts", "census.sh")); err != nil {
			t.Fatal(err)
		}
	})
	c := s.run.Conversations[0]
	v := c.TurnAt(1).Verdict
	// The gate stops it, and no verdict comes of it: a broken set-up (exit 3).
	if s.code != 3 || s.run.Outcome.Verdict != record.VerdictSetup || c.Status != record.StatusBaselineFailed || v == nil || v.Result != "fail" {
		t.Fatalf("exit %d status %s verdict %+v", s.code, c.Status, v)
	}
	if !strings.Contains(v.SetupProblem, "runs-census") || !strings.Contains(v.SetupProblem, "No such file") {
		t.Errorf("setup problem %q", v.SetupProblem)
	}
	if !strings.Contains(c.Error, "set-up problem") || !strings.Contains(s.stdout, "turn 1 set-up problem: runs-census") {
		t.Errorf("gate message %q; the summary does not name the set-up problem", c.Error)
	}
}

// Frontmatter the CLI cannot parse is ignored whole (FINDINGS §3): the run
// says what the model is shown instead and runs the skill so, its
// allowed-tools not granted; a paths: skill names the fixture file that
// would list it. The stand-in lists skills leniently, so what this checks
// is vibe-test's reading and report, not the CLI's listing.
func TestFrontmatterAsTheCLIReadsItReported(t *testing.T) {
	t.Parallel()
	never, err := demo.Script([]string{scripted.PersonaNever}, false) // stops at the gate: cheap
	if err != nil {
		t.Fatal(err)
	}
	s := runEdited(t, fastCLI(t), never, func(p demo.Paths) {
		setFrontmatter(t, p.Skill, "name: stock-ledger\ndescription: \"Answers stock questions\" from the census\nallowed-tools: WebFetch\n")
	})
	want := `the model sees the skill listed as "- stock-ledger: Stock ledger", and vibe-test runs it so`
	if w := s.run.Skill.Warnings; len(w) != 1 || !strings.Contains(w[0], want) || !strings.Contains(w[0], `("name", "description", "allowed-tools" dropped)`) {
		t.Fatalf("warnings %q, want one saying %q", w, want)
	}
	if slices.Contains(s.run.Config.AllowedTools, "WebFetch") {
		t.Errorf("allowed tools %q: granted a tool of a frontmatter the CLI ignores", s.run.Config.AllowedTools)
	}
	if !strings.Contains(s.stderr, "warning: ") || !strings.Contains(s.stdout, "skill warning: ") {
		t.Error("the warning is not shown at the start and in the summary")
	}

	s = runEdited(t, fastCLI(t), never, func(p demo.Paths) {
		setFrontmatter(t, p.Skill, "name: stock-ledger\ndescription: "+demoDescription+"\npaths: data/*.csv\n")
	}, "--session", "resume")
	w := strings.Join(s.run.Skill.Warnings, "\n")
	for _, part := range []string{`frontmatter field "paths" (data/*.csv): the CLI does not list the skill until`,
		"a Read, Write or Edit of data/stock.csv from the fixture lists it", `fails with "Unknown skill"`} {
		if !strings.Contains(w, part) {
			t.Errorf("warnings %q lack %q", w, part)
		}
	}
}

// A context: fork skill runs its steps in a sub-agent (FINDINGS §6), whose
// calls the stream tags with the Skill call's id: on the real CLI they are
// parsed into the turn, checked and shown to the judge, so a sub-agent
// that follows the procedure passes, while the main agent's own count
// stays its one Skill call.
func TestForkSkillJudgedOnItsSubagent(t *testing.T) {
	t.Parallel()
	p := demo.Procedure()
	script := scripted.Script{Rules: append([]scripted.Rule{
		// The skill's sub-agent: its prompt is the skill's body.
		{Kind: scripted.KindAgent, BodyHas: scripted.SubagentMark, Contains: "# Stock ledger", Steps: p.Follow[1:]},
		// The main agent invokes the skill and answers from its result.
		{Kind: scripted.KindAgent, Pattern: p.TaskPattern, Steps: []scripted.Step{p.Follow[0], {Text: "The census ran in the skill; the count is as it reported."}}},
	}, demo.JudgeRules(false)...)}
	s := runEdited(t, realCLI(t), script, func(p demo.Paths) {
		setFrontmatter(t, p.Skill, "name: stock-ledger\ndescription: "+demoDescription+"\ncontext: fork\n")
	})
	if s.code != 0 {
		t.Fatalf("exit %d, want 0: the sub-agent followed the skill", s.code)
	}
	if w := s.run.Skill.Warnings; len(w) != 1 || !strings.Contains(w[0], "marked as the sub-agent's") {
		t.Errorf("warnings %q", w)
	}
	judgedTurns := 0
	for _, c := range append([]record.Conversation{s.run.Conversations[0]}, s.run.Fresh...) {
		for _, tr := range c.Turns {
			if tr.Kind == "filler" {
				continue
			}
			judgedTurns++
			if tr.Result() != "pass" || !tr.SkillInvoked || tr.ToolCallCount != 1 || tr.SubagentCallCount != 2 || tr.SubagentAPICalls < 2 {
				t.Errorf("%s turn %d: result %q invoked %v own calls %d sub-agent calls %d (API %d)", c.Control, tr.Turn, tr.Result(), tr.SkillInvoked, tr.ToolCallCount, tr.SubagentCallCount, tr.SubagentAPICalls)
				continue
			}
			if calls := tr.ToolCalls; len(calls) != 3 || calls[0].Name != "Skill" || calls[1].SubagentOf != 1 || calls[2].SubagentOf != 1 || !strings.Contains(string(calls[1].Input), "census.sh") {
				t.Errorf("turn %d: calls %+v", tr.Turn, calls)
			}
		}
	}
	if judgedTurns != 7 {
		t.Errorf("%d judged turns, want the base task, three probes and three fresh", judgedTurns)
	}
	// The judge read the sub-agent's census call, marked.
	judged := false
	for _, r := range s.srv.Requests() {
		if r.Kind == scripted.KindJudge && strings.Contains(string(r.Body), `(sub-agent of [1]) Bash {\"command\":\"bash .claude/skills/stock-ledger/scripts/census.sh`) {
			judged = true
		}
	}
	if !judged {
		t.Error("no judge prompt shows the sub-agent's census call")
	}
}

// A skill's allowed-tools stay granted for the whole session (the choice
// in docs/usage.md), and the run records where that differs from the CLI,
// which grants them only from the Skill call to the end of that turn
// (FINDINGS §7): the tools, the calls that ran on the difference, and a
// caveat in the summary.
func TestSessionWideGrantRecorded(t *testing.T) {
	t.Parallel()
	p := demo.Procedure()
	early := scripted.Step{ToolUses: []scripted.ToolUse{{Name: "NotebookEdit", Input: map[string]any{"notebook_path": "stock.ipynb", "new_source": "x"}}}}
	script := steadyScript(t)
	script.Rules = append([]scripted.Rule{{Kind: scripted.KindAgent, Turns: []int{1}, Pattern: demo.BaseTaskPattern, Steps: append([]scripted.Step{early}, p.Follow...)}}, script.Rules...)
	s := runEdited(t, fastCLI(t), script, func(p demo.Paths) {
		setFrontmatter(t, p.Skill, "name: stock-ledger\ndescription: "+demoDescription+"\nallowed-tools: Bash NotebookEdit\n")
	}, "--no-baseline-gate")
	if got := s.run.Config.SessionWideTools; len(got) != 1 || got[0] != "NotebookEdit" || !slices.Contains(s.run.Config.AllowedTools, "NotebookEdit") {
		t.Fatalf("session-wide %q, allowed %q: want NotebookEdit granted and recorded (Bash is a base tool)", got, s.run.Config.AllowedTools)
	}
	c := s.run.Conversations[0]
	if got := c.TurnAt(1).OutsideSkillGrant; len(got) != 1 || got[0] != 1 || c.TurnAt(1).ToolCalls[0].Name != "NotebookEdit" {
		t.Errorf("turn 1: outside the grant %v, want call 1 (NotebookEdit before the Skill call)", got)
	}
	for _, tr := range c.Turns[1:] {
		if len(tr.OutsideSkillGrant) != 0 {
			t.Errorf("turn %d: outside the grant %v", tr.Turn, tr.OutsideSkillGrant)
		}
	}
	if !strings.Contains(s.stdout, "caveat: the skill's allowed-tools NotebookEdit were granted for the whole session; the CLI grants them only from the skill's Skill call to the end of that turn: 1 call in 1 turn ran on it outside that window") {
		t.Errorf("the summary lacks the caveat:\n%s", s.stdout)
	}
}

// A skill's frontmatter hooks run as the CLI runs them (FINDINGS §8): from
// the Skill call to the end of the process, so in the default interactive
// session a later turn runs them too; each run is recorded. They run in the
// jail with the agent: a write outside the sandbox does not land.
func TestSkillHooksRunAsTheCLIRunsThem(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	escaped := filepath.Join(outside, "escaped.log")
	s := runEdited(t, realConversationCLI(t), steadyScript(t), func(p demo.Paths) {
		setFrontmatter(t, p.Skill, "name: stock-ledger\ndescription: "+demoDescription+"\nhooks:\n"+
			"  PostToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: \"echo post >> hook.log; echo out >> "+escaped+" 2>/dev/null || true\"\n"+
			"  Stop:\n    - hooks:\n        - type: command\n          command: \"echo stop >> hook.log\"\n")
	})
	if s.code != 0 {
		t.Fatalf("exit %d", s.code)
	}
	if w := strings.Join(s.run.Skill.Warnings, "\n"); !strings.Contains(w, `frontmatter field "hooks" (PostToolUse, Stop): the CLI registers them at the skill's Skill call`) {
		t.Errorf("warnings %q", w)
	}
	names := func(tr *record.Turn) string {
		var out []string
		for _, h := range tr.Hooks {
			if h.Outcome != "success" {
				t.Errorf("turn %d: hook %+v", tr.Turn, h)
			}
			out = append(out, h.Name)
		}
		return strings.Join(out, " ")
	}
	c := s.run.Conversations[0]
	// Turn 1: after the Skill call, one PostToolUse per Bash call (the
	// census and the ledger line), then Stop.
	if got := names(c.TurnAt(1)); got != "PostToolUse:Bash PostToolUse:Bash Stop" {
		t.Errorf("turn 1 hooks %q", got)
	}
	// Turn 2, a filler with no tool call: the same process, still registered.
	if got := names(c.TurnAt(2)); got != "Stop" {
		t.Errorf("turn 2 hooks %q, want the Stop hook of the skill loaded at turn 1", got)
	}
	_, err := os.Stat(escaped)
	switch s.run.Jail {
	case jail.Bubblewrap:
		if err == nil {
			t.Error("a hook wrote outside the sandbox through the jail")
		}
	default:
		if !strings.Contains(s.stdout, "its hooks (PostToolUse, Stop) run with no jail") {
			t.Error("no jail, and the summary does not say the hooks ran without one")
		}
	}
}
