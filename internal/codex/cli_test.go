package codex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// Tests with the real pinned CLI against the scripted server, for what
// only the CLI proves: a conversation in each session mode in the jail,
// faults, the kill, the secrets. They fail where CI=true and the CLI is
// missing (make tools).

// conversationScript: a skill task that loads the skill and runs a
// command, a plain reply, a task that writes and edits files.
func conversationScript() scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{
		{Kind: scripted.KindAgent, Contains: "release notes", Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{{Name: "Skill", Input: map[string]any{"skill": skillName}}}},
			{Text: "Following the skill.", ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": "git log --oneline 2>&1 || echo no history"}}}},
			{Text: "Here are the notes."},
		}},
		{Kind: scripted.KindAgent, Contains: "tidy", Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{{Name: "Write", Input: map[string]any{"file_path": "out.txt", "content": "done\n"}},
				{Name: "Edit", Input: map[string]any{"file_path": "notes.txt", "old_string": "first note", "new_string": "1st note"}}}},
			{Text: "Tidied."},
		}},
		{Kind: scripted.KindAgent, Steps: []scripted.Step{{Text: "Noted."}}},
	}}
}

var conversationPrompts = []string{"write the release notes for this week", "thanks, that is all for now", "now tidy the notes"}

// checkConversation checks the three turns of conversationScript against
// what the stand-in saw: the skill read, the calls, the context of each
// turn's last call, the running cost.
func checkConversation(t *testing.T, srv *scripted.Server, c conv, turns []Outcome) {
	t.Helper()
	var a Agent
	reqs := srv.Requests()
	thread := turns[0].Turn.SessionID
	cost := 0.0
	for i, out := range turns {
		turn := out.Turn
		if f := Failure(turn, out.ExitCode); f != "" {
			t.Fatalf("turn %d failed: %s (stderr %s)", i+1, f, out.Stderr)
		}
		if turn.SessionID != thread || thread == "" {
			t.Errorf("turn %d: thread %q, want %q", i+1, turn.SessionID, thread)
		}
		var mine []scripted.Request
		for _, r := range reqs {
			if r.Prompt == conversationPrompts[i] {
				mine = append(mine, r)
			}
		}
		if len(mine) == 0 || turn.APICalls != len(mine) {
			t.Fatalf("turn %d: %d calls, the stand-in answered %d", i+1, turn.APICalls, len(mine))
		}
		last := mine[len(mine)-1]
		if last.Turn != i+1 || last.SessionID != thread {
			t.Errorf("turn %d: the stand-in saw prompt turn %d of session %q", i+1, last.Turn, last.SessionID)
		}
		if turn.ContextTokens != last.Usage.Context() || turn.ContextTokens == 0 {
			t.Errorf("turn %d: context %d, the last call's input was %d", i+1, turn.ContextTokens, last.Usage.Context())
		}
		if turn.CostUSD <= cost {
			t.Errorf("turn %d: running cost %v, not above the last turn's %v", i+1, turn.CostUSD, cost)
		}
		cost = turn.CostUSD
		if turn.Model != DefaultModel {
			t.Errorf("turn %d: model %q", i+1, turn.Model)
		}
	}
	one, three := turns[0].Turn, turns[2].Turn
	if !a.SkillLoaded(one, skillName) || a.SkillLoaded(turns[1].Turn, skillName) {
		t.Errorf("skill loaded: turn 1 %v, turn 2 %v", a.SkillLoaded(one, skillName), a.SkillLoaded(turns[1].Turn, skillName))
	}
	if len(one.Calls) != 2 || gjson.GetBytes(one.Calls[1].Input, "command").String() != "git log --oneline 2>&1 || echo no history" ||
		!strings.Contains(one.Calls[0].Result, "Run `git log --oneline` first") || one.Text != "Here are the notes." {
		t.Errorf("turn 1: %+v", one)
	}
	if len(three.Calls) != 2 || three.Calls[0].Name != "Write" || three.Calls[1].Name != "Edit" ||
		gjson.GetBytes(three.Calls[1].Input, "file_path").String() != filepath.Join(c.dir, "notes.txt") {
		t.Errorf("turn 3 calls: %+v", three.Calls)
	}
	if b, _ := os.ReadFile(filepath.Join(c.dir, "notes.txt")); string(b) != "1st note\n" {
		t.Errorf("notes.txt = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(c.dir, "out.txt")); string(b) != "done\n" {
		t.Errorf("out.txt = %q", b)
	}
}

func TestResumeConversationInJail(t *testing.T) {
	t.Parallel()
	bin := codexBinary(t)
	srv := startServer(t, conversationScript())
	c := newConv(t)
	a := Agent{Retries: 1}
	var turns []Outcome
	resume := ""
	for _, p := range conversationPrompts {
		s := c.spec(t, bin, srv, true, p)
		s.Resume = resume
		if resume == "" {
			if err := a.PrepareHome(s); err != nil {
				t.Fatal(err)
			}
		}
		out, err := a.Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, out)
		resume = out.Turn.SessionID
	}
	checkConversation(t, srv, c, turns)
}

func TestLiveConversationInJail(t *testing.T) {
	t.Parallel()
	bin := codexBinary(t)
	srv := startServer(t, conversationScript())
	c := newConv(t)
	a := Agent{Retries: 1}
	l, err := a.StartLive(c.spec(t, bin, srv, true, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var turns []Outcome
	for _, p := range conversationPrompts {
		var buf bytes.Buffer
		out, err := l.Send(context.Background(), p, &buf, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		// The transcript reads back to the same turn.
		again, err := ParseTurn(&buf)
		if err != nil || again.Text != out.Turn.Text || len(again.Calls) != len(out.Turn.Calls) || again.ContextTokens != out.Turn.ContextTokens {
			t.Errorf("the saved transcript parses to %+v, the turn was %+v (%v)", again, out.Turn, err)
		}
		turns = append(turns, out)
	}
	checkConversation(t, srv, c, turns)
	// One process served the conversation: no request came from a
	// second thread, and the app-server is still there to compact it.
	out, err := l.(*Live).Compact(context.Background(), nil, time.Minute)
	if err != nil || Failure(out.Turn, out.ExitCode) != "" {
		t.Fatalf("compact: %v %s", err, Failure(out.Turn, out.ExitCode))
	}
	if out.Turn.LocalCommand != "compact" || len(out.Turn.Compactions) != 1 || out.Turn.Compactions[0].Trigger != "manual" || out.Turn.CostUSD <= turns[2].Turn.CostUSD {
		t.Errorf("compaction turn %+v", out.Turn)
	}
}

// A forgetting persona follows until codex has compacted the thread and
// answers from memory after: the compaction in resume mode (an
// app-server of its own) and the scripted side's view of it together.
func TestCompactionInResumeMode(t *testing.T) {
	t.Parallel()
	bin := codexBinary(t)
	proc := scripted.Procedure{
		TaskPattern: "release notes",
		Follow:      []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "Skill", Input: map[string]any{"skill": skillName}}}}, {Text: "Followed the skill."}},
		FromMemory:  "From memory.",
	}
	rules, err := scripted.PersonaRules(scripted.PersonaForgetting, proc)
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, scripted.Script{Personas: []string{scripted.PersonaForgetting}, Rules: rules})
	c := newConv(t)
	a := Agent{Retries: 1}
	run := func(prompt, resume string) Outcome {
		s := c.spec(t, bin, srv, false, prompt)
		s.Resume = resume
		out, err := a.Run(context.Background(), s)
		if err != nil || Failure(out.Turn, out.ExitCode) != "" {
			t.Fatalf("%q: %v %s", prompt, err, Failure(out.Turn, out.ExitCode))
		}
		return out
	}
	one := run("write the release notes", "")
	if !a.SkillLoaded(one.Turn, skillName) {
		t.Fatalf("before the compaction the skill was not read: %+v", one.Turn.Calls)
	}
	var buf bytes.Buffer
	s := c.spec(t, bin, srv, false, "")
	s.Resume, s.Stdout = one.Turn.SessionID, &buf
	comp, err := a.Compact(context.Background(), s)
	if err != nil || len(comp.Turn.Compactions) != 1 || comp.Turn.LocalCommand != "compact" {
		t.Fatalf("compact: %v %+v", err, comp.Turn)
	}
	two := run("write the release notes again", one.Turn.SessionID)
	if two.Turn.Text != "From memory." || a.SkillLoaded(two.Turn, skillName) {
		t.Errorf("after the compaction: %q, calls %+v", two.Turn.Text, two.Turn.Calls)
	}
}

// 429 and 500 are retried (Retries at each layer) and then end the turn
// as an error whose status the driver's retry rule reads.
func TestAPIErrorsRetriedThenFailed(t *testing.T) {
	t.Parallel()
	bin := codexBinary(t)
	srv := startServer(t, scripted.Script{Rules: []scripted.Rule{
		{Kind: scripted.KindAgent, Contains: "limit", Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 429, Count: 1000}}}},
		{Kind: scripted.KindAgent, Contains: "broken", Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 500, Count: 1000}}}},
		{Kind: scripted.KindAgent, Contains: "flaky", Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 500, Count: 2}, Text: "Made it."}}},
	}})
	a := Agent{Retries: 1}
	for _, tc := range []struct {
		prompt   string
		status   int
		requests int
	}{
		// 429: codex retries at its stream layer only.
		{"over the limit", 429, 2},
		// 500: (Retries+1)² requests, the request layer inside the stream layer.
		{"broken server", 500, 4},
		{"flaky server", 0, 3},
	} {
		c := newConv(t)
		before := len(srv.Requests())
		out, err := a.Run(context.Background(), c.spec(t, bin, srv, false, tc.prompt))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(srv.Requests()) - before; n != tc.requests {
			t.Errorf("%s: %d requests, want %d", tc.prompt, n, tc.requests)
		}
		f := Failure(out.Turn, out.ExitCode)
		if tc.status == 0 {
			if f != "" || out.Turn.Text != "Made it." || out.Turn.Retries == 0 {
				t.Errorf("%s: %q, text %q, %d retries", tc.prompt, f, out.Turn.Text, out.Turn.Retries)
			}
			continue
		}
		if out.ExitCode != 1 || out.Turn.APIErrorStatus != tc.status || out.Turn.TerminalReason != "api_error" || !strings.Contains(f, strconv.Itoa(tc.status)) {
			t.Errorf("%s: exit %d, status %d, reason %q, failure %q", tc.prompt, out.ExitCode, out.Turn.APIErrorStatus, out.Turn.TerminalReason, f)
		}
	}
}

// A server that never answers is waited on forever by codex; the turn's
// timeout ends it, in both modes.
func TestHangBoundedByTimeout(t *testing.T) {
	t.Parallel()
	bin := codexBinary(t)
	srv := startServer(t, scripted.Script{Rules: []scripted.Rule{
		{Kind: scripted.KindAgent, Steps: []scripted.Step{{Delay: time.Hour, Text: "never"}}},
	}})
	a := Agent{}
	c := newConv(t)
	s := c.spec(t, bin, srv, true, "hello")
	s.Timeout = 3 * time.Second
	out, err := a.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !out.TimedOut || out.Turn.HasResult || Failure(out.Turn, out.ExitCode) == "" {
		t.Errorf("resume mode: timed out %v, %+v", out.TimedOut, out.Turn)
	}
	l, err := a.StartLive(c.spec(t, bin, srv, true, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out, err = l.Send(context.Background(), "hello", nil, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !out.TimedOut || out.Turn.HasResult {
		t.Errorf("live mode: timed out %v, %+v", out.TimedOut, out.Turn)
	}
	if _, err := l.Send(context.Background(), "again", nil, time.Second); err == nil {
		t.Error("a live session went on after its turn timed out")
	}
}

// processesRunning lists the processes whose command line holds marker.
func processesRunning(marker string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			found = append(found, e.Name()+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return found
}

// gone waits (up to a generous bound, for a loaded machine) until no
// process holds marker, and says which are left otherwise.
func gone(marker string) []string {
	deadline := time.Now().Add(20 * time.Second)
	for {
		left := processesRunning(marker)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A turn stopped while a command runs leaves no process behind, in
// either mode: the jail's PID namespace ends with codex.
func TestKillMidToolLeavesNoProcess(t *testing.T) {
	t.Parallel()
	bin := codexBinary(t)
	// Durations no other process on the machine sleeps for.
	marks := map[string]string{"resume": "sleep 287.25", "live": "sleep 283.75"}
	srv := startServer(t, scripted.Script{Rules: []scripted.Rule{
		{Kind: scripted.KindAgent, Contains: "resume", Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": marks["resume"]}}}}}},
		{Kind: scripted.KindAgent, Contains: "live", Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": marks["live"]}}}}}},
	}})
	a := Agent{}

	c := newConv(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := c.spec(t, bin, srv, true, "wait for the resume build")
	s.Stdout = &watch{w: &bytes.Buffer{}, on: `"item.started"`, fire: cancel}
	out, err := a.Run(ctx, s)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 143 || out.Turn.HasResult || len(out.Turn.Calls) != 1 {
		t.Errorf("killed turn: exit %d, %+v", out.ExitCode, out.Turn)
	}
	if left := gone(marks["resume"]); len(left) > 0 {
		t.Errorf("resume mode left %q", left)
	}

	c = newConv(t)
	l, err := a.StartLive(c.spec(t, bin, srv, true, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	out, err = l.Send(ctx, "wait for the live build", &watch{w: &bytes.Buffer{}, on: `"commandExecution"`, fire: cancel}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if out.Turn.HasResult || len(out.Turn.Calls) != 1 {
		t.Errorf("killed live turn: %+v", out.Turn)
	}
	if left := gone(marks["live"]); len(left) > 0 {
		t.Errorf("live mode left %q", left)
	}
}

// The author's secrets never reach codex, its commands, the stand-in or
// the transcript: not even through /proc, where a command can read
// codex's own environment. What they pass by name reaches the commands,
// as it reaches claude's Bash; the provider's key does not.
func TestSecretsStayOut(t *testing.T) {
	t.Parallel()
	bin := codexBinary(t)
	srv := startServer(t, scripted.Script{Rules: []scripted.Rule{
		{Kind: scripted.KindAgent, Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": "env"}}}},
			{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'"}}}},
			{Text: "Listed."}}},
	}})
	secrets := map[string]string{
		"OPENAI_API_KEY":        "sk-author-openai-4f1c",
		"ANTHROPIC_API_KEY":     "sk-ant-author-9a2e",
		"AWS_SECRET_ACCESS_KEY": "aws-author-77d0",
		"GITHUB_TOKEN":          "ghp-author-31b8",
	}
	c := newConv(t)
	s := c.spec(t, bin, srv, true, "show the environment")
	for k, v := range secrets {
		s.BaseEnv = append(s.BaseEnv, k+"="+v)
	}
	s.BaseEnv = append(s.BaseEnv, "PROJECT_REGION=eu-west-9")
	// Passed by name, the author's key still never goes to a stand-in.
	s.PassEnv = []string{"PROJECT_REGION", "OPENAI_API_KEY"}
	var buf bytes.Buffer
	s.Stdout = &buf
	out, err := Agent{}.Run(context.Background(), s)
	if err != nil || Failure(out.Turn, out.ExitCode) != "" {
		t.Fatalf("%v %s", err, Failure(out.Turn, out.ExitCode))
	}
	if len(out.Turn.Calls) != 2 {
		t.Fatalf("calls %+v", out.Turn.Calls)
	}
	env := out.Turn.Calls[0].Result
	if !strings.Contains(env, "PROJECT_REGION=eu-west-9") {
		t.Errorf("a variable passed by name did not reach the command:\n%s", env)
	}
	if strings.Contains(env, standInKeyVar+"=") {
		t.Errorf("the provider's key is in the commands' environment:\n%s", env)
	}
	if !strings.Contains(out.Turn.Calls[1].Result, "CODEX_HOME=") {
		t.Errorf("/proc showed no codex environment to look in:\n%s", out.Turn.Calls[1].Result)
	}
	var bodies bytes.Buffer
	for _, r := range srv.Requests() {
		bodies.Write(r.Body)
		for _, vs := range r.Header {
			bodies.WriteString(strings.Join(vs, " "))
		}
	}
	rollouts, _ := filepath.Glob(filepath.Join(CodexHome(c.home), "sessions", "*", "*", "*", "*.jsonl"))
	var saved bytes.Buffer
	for _, p := range rollouts {
		b, _ := os.ReadFile(p)
		saved.Write(b)
	}
	for k, v := range secrets {
		for where, text := range map[string]string{"transcript": buf.String(), "requests": bodies.String(), "rollout": saved.String()} {
			if strings.Contains(text, v) {
				t.Errorf("%s reached the %s", k, where)
			}
		}
	}
}

// passVerdict is a judge's answer that passes its one criterion.
var passVerdict = map[string]any{"criteria": []map[string]any{{"id": "runs-census", "result": "pass", "evidence": "call 1", "call": 1}}, "escape_hatch": false, "escape_reason": ""}

// judgeCaller is a jailed cold caller of the real codex against a scripted
// server with the given judge rules.
func judgeCaller(t *testing.T, rules ...scripted.Rule) (Caller, *scripted.Server) {
	t.Helper()
	bin := codexBinary(t)
	srv := startServer(t, scripted.Script{Rules: rules})
	j := testJail(t, bin)
	return Caller{Binary: bin, BaseEnv: os.Environ(), BaseURL: srv.URL(), Timeout: time.Minute, Jail: &j}, srv
}

func TestStructuredCall(t *testing.T) {
	t.Parallel()
	caller, srv := judgeCaller(t,
		scripted.Rule{Kind: scripted.KindJudge, Contains: "good", Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: passVerdict}}}}},
		scripted.Rule{Kind: scripted.KindJudge, Contains: "wrong", Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: map[string]any{"criteria": "none"}}}}}},
		scripted.Rule{Kind: scripted.KindJudge, Contains: "prose", Steps: []scripted.Step{{Text: "It passed, I think."}}},
		scripted.Rule{Kind: scripted.KindJudge, Contains: "refused", Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 401, Count: 100}}}},
		scripted.Rule{Kind: scripted.KindJudge, Contains: "broken", Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 500, Count: 100}}}},
	)
	turn, err := caller.Structured(context.Background(), "judge this: good", judge.Schema, "")
	if err != nil {
		t.Fatal(err)
	}
	if gjson.GetBytes(turn.StructuredOutput, "criteria.0.result").String() != "pass" || turn.CostUSD <= 0 || turn.APICalls != 1 {
		t.Errorf("structured output %s, cost %v, %d calls", turn.StructuredOutput, turn.CostUSD, turn.APICalls)
	}
	reqs := srv.Requests()
	body := string(reqs[len(reqs)-1].Body)
	for _, lean := range []string{`"exec_command"`, "<skills_instructions>", "<environment_context>", "You are Codex"} {
		if strings.Contains(body, lean) {
			t.Errorf("the cold call's request carries %s", lean)
		}
	}
	if !strings.Contains(body, `"name":"codex_output_schema"`) {
		t.Error("no response format in the cold call's request")
	}
	for _, p := range []string{"judge this: wrong", "judge this: prose"} {
		if _, err := caller.Structured(context.Background(), p, judge.Schema, ""); err == nil {
			t.Errorf("%s: accepted", p)
		}
	}
	_, err = caller.Structured(context.Background(), "judge this: refused", judge.Schema, "")
	if !errors.Is(err, ErrCredentials) {
		t.Errorf("a refused key: %v", err)
	}
	// A failed call says why, not what codex writes to stderr on every
	// call (its warning about a home under /tmp, its note on stdin),
	// which was quoted beside every failure.
	_, err = caller.Structured(context.Background(), "judge this: broken", judge.Schema, "")
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("a server error: %v", err)
	}
	for _, noise := range []string{"PATH aliases", "Reading additional input", "Reading prompt"} {
		if strings.Contains(err.Error(), noise) {
			t.Errorf("a server error quotes %q: %v", noise, err)
		}
	}
}

// A cold call whose prompt is longer than one argument may be (a rubric's,
// carrying a SKILL.md of 200 KiB; Linux refuses an argument over 128 KiB)
// reaches the model whole, read from stdin: the exec failed with
// "argument list too long".
func TestLongPromptOnStdin(t *testing.T) {
	t.Parallel()
	caller, srv := judgeCaller(t,
		scripted.Rule{Kind: scripted.KindJudge, Contains: "@@long@@", Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: passVerdict}}}}})
	prompt := "judge @@long@@ " + strings.Repeat("a line of the skill's text, ", 200<<10/28) + "@@end@@"
	turn, err := caller.Structured(context.Background(), prompt, judge.Schema, "")
	if err != nil {
		t.Fatal(err)
	}
	if gjson.GetBytes(turn.StructuredOutput, "criteria.0.result").String() != "pass" {
		t.Errorf("structured output %s", turn.StructuredOutput)
	}
	reqs := srv.Requests()
	if body := reqs[len(reqs)-1].Body; !bytes.Contains(body, []byte(prompt)) {
		t.Errorf("the last request does not hold the %d-byte prompt whole", len(prompt))
	}
}

// The binary runs and is the pinned version, and asking it writes nothing
// into the account's ~/.codex: codex finds its home in the user database
// when HOME is unset, and made ~/.codex/tmp/arg0 there on every run.
func TestCLIVersion(t *testing.T) {
	t.Parallel()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	before := treeOf(filepath.Join(u.HomeDir, ".codex"))
	v, err := Version(context.Background(), codexBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if after := treeOf(filepath.Join(u.HomeDir, ".codex")); after != before {
		t.Errorf("codex --version changed %s/.codex:\nbefore:\n%s\nafter:\n%s", u.HomeDir, before, after)
	}
	if v != VerifiedVersion {
		t.Errorf("codex %s, verified on %s", v, VerifiedVersion)
	}
	// The npm launcher resolves to the same native binary.
	launcher := filepath.Join(testenv.RepoRoot(t), "tools", "node_modules", ".bin", "codex")
	if _, err := os.Stat(launcher); err == nil {
		if got, err := Native(launcher); err != nil || got != codexBinary(t) {
			t.Errorf("Native(%s) = %s, %v", launcher, got, err)
		}
	}
}

// treeOf lists dir's entries with their modification times ("" when
// there is none).
func treeOf(dir string) string {
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			if info, ierr := d.Info(); ierr == nil {
				fmt.Fprintf(&b, "%s %s\n", p, info.ModTime().Format(time.RFC3339Nano))
			}
		}
		return nil
	})
	return b.String()
}

// A resumed turn that never started (stopped before codex printed a line)
// has no call of its own: it was given the resumed thread's rollout, the
// previous turn's calls, usage and context.
func TestTurnThatNeverStartedHasNoCalls(t *testing.T) {
	t.Parallel()
	bin := codexBinary(t)
	srv := startServer(t, conversationScript())
	c := newConv(t)
	a := Agent{Retries: 1}
	s := c.spec(t, bin, srv, false, conversationPrompts[0])
	if err := a.PrepareHome(s); err != nil {
		t.Fatal(err)
	}
	first, err := a.Run(context.Background(), s)
	if err != nil || first.Turn.SessionID == "" || first.Turn.APICalls == 0 {
		t.Fatalf("turn 1: %v, session %q, %d calls", err, first.Turn.SessionID, first.Turn.APICalls)
	}
	s = c.spec(t, bin, srv, false, conversationPrompts[1])
	s.Resume = first.Turn.SessionID
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped before it starts
	out, _ := a.Run(ctx, s)
	if out.Turn.APICalls != 0 || out.Turn.ContextTokens != 0 || len(out.Turn.Calls) != 0 {
		t.Errorf("a turn that never started: %d calls, context %d, %d tool calls (turn 1 had %d, %d)", out.Turn.APICalls, out.Turn.ContextTokens, len(out.Turn.Calls), first.Turn.APICalls, first.Turn.ContextTokens)
	}
}
