package gemini

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// The real CLI against scripted/, where only it proves something: a
// conversation in each session mode in the jail with the skill installed,
// faults, kills, structured calls. Each -p turn costs the CLI about a
// second of start-up, a live process five.

// checkConversation asserts what both session modes must report: the
// skill loaded at both turns, the second time in a session that already
// had it (and its procedure run each time), the environment listed at
// turn 1 without the author's secret or any API key, one session, context
// and estimated cost on every turn. (A turn of a session that loaded the
// skill before but does not load it now is not counted as loading it:
// TestParseResumedTurn, on the pinned CLI's recording.)
func checkConversation(t *testing.T, d cliDirs, turns []agent.Outcome, transcripts []string) {
	t.Helper()
	a := Agent{}
	var session string
	for i, out := range turns {
		turn := out.Turn
		if f := turn.Failure(out.ExitCode); f != "" {
			t.Fatalf("turn %d: %s\n%s", i+1, f, out.Stderr)
		}
		if i == 0 {
			session = turn.SessionID
		}
		if turn.SessionID == "" || turn.SessionID != session {
			t.Errorf("turn %d: session %q, want %q", i+1, turn.SessionID, session)
		}
		if turn.ContextTokens <= 0 || turn.CostUSD <= 0 || a.CostExact() {
			t.Errorf("turn %d: context %d, estimated cost %v", i+1, turn.ContextTokens, turn.CostUSD)
		}
		if !a.SkillLoaded(turn, skillName) {
			t.Errorf("turn %d: the skill was not loaded", i+1)
		}
		calls := turn.Calls
		if n := len(calls); n != 3-i || calls[n-1].Name != "Bash" || gjson.GetBytes(calls[n-1].Input, "command").String() != "echo noted >> notes.log" || calls[n-1].IsError {
			t.Fatalf("turn %d: calls %+v", i+1, calls)
		}
		if !strings.Contains(calls[0].Result, skillBody) {
			t.Errorf("turn %d: the skill's body did not reach the model: %q", i+1, calls[0].Result)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(d.work, "notes.log")); string(b) != "noted\nnoted\n" {
		t.Errorf("notes.log %q: the commands ran in the sandbox", b)
	}
	env := turns[0].Turn.Calls[1]
	if env.Name != "Bash" || !strings.Contains(env.Result, "GEMINI_CLI=1") || !strings.Contains(env.Result, "PATH=") {
		t.Fatalf("the environment: %+v", env)
	}
	if strings.Contains(env.Result, "GEMINI_API_KEY") {
		t.Error("the shell commands see the API key: the CLI's redaction is off")
	}
	for i, tr := range transcripts {
		for _, secret := range []string{secretValue, authorKey, StandInKey} {
			if strings.Contains(tr, secret) {
				t.Errorf("turn %d: %q reached the transcript", i+1, secret)
			}
		}
	}
}

// Turn 1 loads the skill and lists the environment; turn 2 loads the
// skill again.
var conversationPrompts = []string{"@@skillenv@@ note the first thing, then show the environment", "@@skill@@ note the next thing"}

func TestResumeConversation(t *testing.T) {
	t.Parallel()
	bin := testenv.Gemini(t)
	srv := startScript(t, recordRules()...)
	d := newDirs(t)
	installSkill(t, d.work)
	a := Agent{MaxAttempts: 1}
	spec := turnSpec(t, a, bin, d, srv, baseEnv())
	var outs []agent.Outcome
	var trs []string
	for _, p := range conversationPrompts {
		var tr bytes.Buffer
		spec.Prompt, spec.Stdout = p, &tr
		out, err := a.Run(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		// The transcript is the whole record: parsed again it is the turn.
		again, _ := ParseTurn(bytes.NewReader(tr.Bytes()))
		if again.ContextTokens != out.Turn.ContextTokens || len(again.Calls) != len(out.Turn.Calls) {
			t.Errorf("the transcript parses to another turn")
		}
		outs, trs = append(outs, out), append(trs, tr.String())
		spec.Resume = out.Turn.SessionID
	}
	checkConversation(t, d, outs, trs)
	if outs[1].Turn.ContextTokens <= outs[0].Turn.ContextTokens {
		t.Errorf("context %d then %d: the resumed history is sent", outs[0].Turn.ContextTokens, outs[1].Turn.ContextTokens)
	}
	if _, err := SessionFile(d.home, spec.Resume); err != nil {
		t.Error(err)
	}
}

func TestLiveConversation(t *testing.T) {
	t.Parallel()
	bin := testenv.Gemini(t)
	srv := startScript(t, recordRules()...)
	d := newDirs(t)
	installSkill(t, d.work)
	a := Agent{MaxAttempts: 1}
	spec := turnSpec(t, a, bin, d, srv, baseEnv())
	l, err := a.StartLive(spec)
	if err != nil {
		t.Fatal(err)
	}
	var outs []agent.Outcome
	var trs []string
	for _, p := range conversationPrompts {
		var tr bytes.Buffer
		out, err := l.Send(t.Context(), p, &tr, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		outs, trs = append(outs, out), append(trs, tr.String())
	}
	checkConversation(t, d, outs, trs)
	file, err := SessionFile(d.home, outs[0].Turn.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	// A third turn stopped in the middle of its shell command (the live
	// case of TestKillLeavesNoProcess, on this process): it fails, and no
	// process is left in the sandbox.
	killed := holdAndStop(t, d, func(ctx context.Context, w *watchWriter) (agent.Outcome, error) {
		return l.Send(ctx, "@@hold@@ wait", w, 2*time.Minute)
	})
	l.Close()
	if killed.Turn.Failure(killed.ExitCode) == "" || len(killed.Turn.Calls) != 1 || killed.Turn.Calls[0].Name != "Bash" {
		t.Errorf("the stopped turn: failure %q, calls %+v", killed.Turn.Failure(killed.ExitCode), killed.Turn.Calls)
	}
	// One process: every request of the three turns in one session.
	sessions := map[string]bool{}
	for _, r := range srv.Requests() {
		sessions[r.SessionID] = true
	}
	if len(sessions) != 1 {
		t.Errorf("%d sessions on the server", len(sessions))
	}
	if _, err := l.Send(t.Context(), "after close", nil, time.Minute); err == nil {
		t.Error("a closed session took a message")
	}
	if left := procsIn(d.work); len(left) > 0 {
		t.Errorf("processes left in the sandbox: %v", left)
	}

	// A new process resuming the session after the failed turn, its file
	// cut back to the end of turn 2 as a rerun cuts it, within the minute
	// the session began: the history is loaded, its replay is not taken
	// for the turn.
	if b, err := os.ReadFile(file); err != nil || len(b) <= len(kept) || !bytes.HasPrefix(b, kept) {
		t.Fatalf("the stopped turn did not append to the session file (%v): %d bytes, %d after turn 2", err, len(b), len(kept))
	}
	if err := os.WriteFile(file, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	spec.Resume = outs[0].Turn.SessionID
	l, err = a.StartLive(spec)
	if err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	var tr bytes.Buffer
	out, err := l.Send(t.Context(), "@@plain@@ after the restart", &tr, 2*time.Minute)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	if f := out.Turn.Failure(out.ExitCode); f != "" || out.Turn.SessionID != spec.Resume || len(out.Turn.Calls) != 0 ||
		out.Turn.APICalls != 1 || out.Turn.Text != "A plain answer, in two chunks." {
		t.Fatalf("resumed live turn: failure %q session %q calls %d api calls %d text %q\n%s", f, out.Turn.SessionID, len(out.Turn.Calls), out.Turn.APICalls, out.Turn.Text, tr.String())
	}
	reqs := srv.Requests()
	if len(reqs) != before+1 || !strings.Contains(string(reqs[before].Body), "note the first thing") {
		t.Errorf("the resumed process sent %d requests; the first prompt in its history: %v", len(reqs)-before,
			len(reqs) > before && strings.Contains(string(reqs[before].Body), "note the first thing"))
	}

	// A second load of the same session (a turn's second rerun, or resume
	// after one): the first load's fresh file beside the history made the
	// pinned CLI's session/load fail ("Internal error") and remove the
	// history, which the conversation then lost.
	l, err = a.StartLive(spec)
	if err != nil {
		t.Fatalf("the second load: %v", err)
	}
	before = len(srv.Requests())
	tr.Reset()
	out, err = l.Send(t.Context(), "@@plain@@ after the second restart", &tr, 2*time.Minute)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	reqs = srv.Requests()
	if f := out.Turn.Failure(out.ExitCode); f != "" || len(reqs) != before+1 || !strings.Contains(string(reqs[before].Body), "note the first thing") {
		t.Errorf("the second load's turn: failure %q, %d requests, the first prompt in its history: %v\n%s", f, len(reqs)-before,
			len(reqs) > before && strings.Contains(string(reqs[before].Body), "note the first thing"), tr.String())
	}
}

// procsIn lists processes whose working folder is dir or below it.
func procsIn(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
			out = append(out, pid)
		}
	}
	return out
}

// sleeping: a sleep runs in dir (the held shell command).
func sleeping(dir string) bool {
	for _, pid := range procsIn(dir) {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if strings.HasPrefix(string(b), "sleep\x00") {
			return true
		}
	}
	return false
}

// API errors are retried (MaxAttempts 2) and then end the turn as an
// error with the status; a silent server is cut by the turn's timeout.
// A 429 runs here, the CLI's rate-limit path; a 500 goes through the same
// runner (the exit status mod 256, the retries counted from the same
// "Attempt N failed with status S" lines), and what the pinned CLI does
// with it is in the recorded err500 transcript (TestParseAPIErrors).
func TestFaults(t *testing.T) {
	t.Parallel()
	bin := testenv.Gemini(t)
	srv := startScript(t, recordRules()...)
	t.Run("429", func(t *testing.T) {
		t.Parallel()
		d := newDirs(t)
		a := Agent{MaxAttempts: 2}
		spec := turnSpec(t, a, bin, d, srv, baseEnv())
		spec.Prompt = "@@e429@@ now"
		out, err := a.Run(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		turn := out.Turn
		if !turn.IsError || turn.APIErrorStatus != 429 || turn.Retries != 1 || out.ExitCode != 429-256 || turn.Failure(out.ExitCode) == "" {
			t.Errorf("status %d retries %d exit %d failure %q", turn.APIErrorStatus, turn.Retries, out.ExitCode, turn.Failure(out.ExitCode))
		}
	})
	t.Run("hang", func(t *testing.T) {
		t.Parallel()
		d := newDirs(t)
		a := Agent{MaxAttempts: 1}
		spec := turnSpec(t, a, bin, d, srv, baseEnv())
		spec.Prompt, spec.Timeout = "@@stall@@ wait", 5*time.Second
		out, err := a.Run(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if !out.TimedOut || out.Turn.HasResult || out.Turn.Failure(out.ExitCode) == "" {
			t.Errorf("timed out %v, result %v", out.TimedOut, out.Turn.HasResult)
		}
	})
}

// holdAndStop runs a turn (send) whose scripted model holds a shell
// command (@@hold@@) and stops it once the command's sleep runs in d.
func holdAndStop(t *testing.T, d cliDirs, send func(context.Context, *watchWriter) (agent.Outcome, error)) agent.Outcome {
	t.Helper()
	w := newWatch("exec sleep 300")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-w.seen
		// The call is in the stream; stop once its sleep runs.
		for !sleeping(d.work) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	out, err := send(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A turn stopped in the middle of a shell command leaves no process,
// jailed (the PID namespace ends) or not (the runner kills the shell's own
// session, which the CLI does not). A live session's turn is stopped the
// same way in TestLiveConversation.
func TestKillLeavesNoProcess(t *testing.T) {
	t.Parallel()
	bin := testenv.Gemini(t)
	srv := startScript(t, recordRules()...)
	for _, mode := range []string{"jailed", "unjailed"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			d := newDirs(t)
			a := Agent{MaxAttempts: 1}
			spec := turnSpec(t, a, bin, d, srv, baseEnv())
			if mode == "unjailed" {
				spec.Jail = nil
			}
			out := holdAndStop(t, d, func(ctx context.Context, w *watchWriter) (agent.Outcome, error) {
				spec.Prompt, spec.Stdout = "@@hold@@ wait", w
				return a.Run(ctx, spec)
			})
			if out.Turn.Failure(out.ExitCode) == "" {
				t.Error("a killed turn passed")
			}
			if len(out.Turn.Calls) != 1 || out.Turn.Calls[0].Name != "Bash" {
				t.Errorf("calls %+v", out.Turn.Calls)
			}
			if left := procsIn(d.work); len(left) > 0 {
				t.Errorf("processes left in the sandbox: %v", left)
			}
		})
	}
}

// A prompt longer than one exec argument may be (a rubric's, carrying a
// SKILL.md of 200 KiB) is refused by name, before any process: the exec
// failed with "argument list too long", and the CLI's other way in,
// stdin, it gives up on after 500 ms (a piped prompt was lost on a loaded
// CI machine).
func TestLongPromptRefused(t *testing.T) {
	t.Parallel()
	srv := startScript(t, recordRules()...)
	c := Caller{Binary: testenv.Gemini(t), BaseEnv: baseEnv(), BaseURL: srv.URL(), Timeout: time.Minute, MaxAttempts: 1}
	prompt := "Judge this: " + strings.Repeat("a line of the skill's text, ", 200<<10/28)
	_, err := c.Structured(t.Context(), prompt, judge.Schema, "")
	if err == nil || !strings.Contains(err.Error(), "--judge-agent claude or codex") {
		t.Fatalf("a %d-byte prompt: %v", len(prompt), err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
	// One at the limit still runs as an argument.
	if err := checkPrompt(Args(strings.Repeat("x", MaxPrompt), "", "")); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}

// The cold calls on the real CLI, with the schemas a run's judge and
// rubric calls send (internal/app's TestGeminiRun sends its own to
// claude: --judge-agent).
func TestStructured(t *testing.T) {
	t.Parallel()
	bin := testenv.Gemini(t)
	verdict := map[string]any{"criteria": []map[string]any{{"id": "keeps-notes", "result": "pass", "evidence": "call 1", "call": 1}}, "escape_hatch": false, "escape_reason": ""}
	srv := startScript(t, append([]scripted.Rule{
		{Kind: scripted.KindCold, Contains: "@@e401@@", Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 401, Count: 100}}}},
		{Kind: scripted.KindJudge, Contains: "kept the notes", Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: verdict}}}}},
		{Kind: scripted.KindRubric, Contains: "@@badjson@@", Steps: []scripted.Step{{Text: `{"verdict": "maybe"}`}}},
	}, recordRules()...)...)
	c := Caller{Binary: bin, BaseEnv: baseEnv(), BaseURL: srv.URL(), Timeout: time.Minute, MaxAttempts: 1}
	turn, err := c.Structured(t.Context(), "Judge this: bob@example.com kept the notes.", judge.Schema, "")
	if err != nil {
		t.Fatal(err)
	}
	if gjson.GetBytes(turn.StructuredOutput, "criteria.0.result").String() != "pass" || gjson.GetBytes(turn.StructuredOutput, "criteria.0.call").Int() != 1 || turn.CostUSD <= 0 {
		t.Errorf("answer %s, cost %v", turn.StructuredOutput, turn.CostUSD)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	body := gjson.ParseBytes(last.Body)
	if last.Kind != scripted.KindJudge || body.Get("generationConfig.responseMimeType").String() != "application/json" ||
		body.Get("generationConfig.responseJsonSchema.title").String() != "verdict" || len(body.Get("tools.0.functionDeclarations").Array()) != 0 {
		t.Errorf("request: kind %s, config %s, tools %s", last.Kind, body.Get("generationConfig").Raw, body.Get("tools").Raw)
	}
	if !strings.HasPrefix(body.Get("systemInstruction.parts.0.text").String(), "You answer the user's request in one JSON value") {
		t.Error("the agent's system prompt was sent, not the short one")
	}
	// The CLI names its version in every request, the one `--version`
	// prints: Version reads the same from the package without a process.
	if ua, v := last.Header.Get("User-Agent"), packageVersion(bin, baseEnv()); v == "" || !strings.HasPrefix(ua, "GeminiCLI") || !strings.Contains(ua, "/"+v+"/") {
		t.Errorf("User-Agent %q; the package's version %q", ua, v)
	}

	// The rubric's schema reaches the model as sent; an answer outside it
	// is refused here (the CLI checks nothing).
	if _, err := c.Structured(t.Context(), "@@badjson@@ extract the rubric", rubric.Schema, ""); err == nil || !strings.Contains(err.Error(), "does not match the schema") {
		t.Errorf("an answer outside the schema: %v", err)
	}
	reqs = srv.Requests()
	if last := reqs[len(reqs)-1]; last.Kind != scripted.KindRubric || gjson.GetBytes(last.Body, "generationConfig.responseJsonSchema.properties.criteria.minItems").Int() != 5 {
		t.Errorf("the rubric call: kind %s, config %s", last.Kind, gjson.GetBytes(last.Body, "generationConfig").Raw)
	}
	untitled := `{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]}},"required":["verdict"]}`
	if _, err := c.Structured(t.Context(), "@@e401@@ judge", untitled, ""); !errors.Is(err, claude.ErrCredentials) {
		t.Errorf("a refused key: %v", err)
	}
}
