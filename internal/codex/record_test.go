//go:build recordfixtures

package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// TestRecordFixtures remakes testdata/ (transcripts, rollouts) and
// ../scripted/testdata/responses (the request bodies the stand-in got)
// with the pinned CLI against the scripted server: `make fixtures`. It is
// behind the build tag recordfixtures, so make test never lists it as a
// skip; `make vet` vets it.

// recordSchema is the structured call's schema; its title routes it to
// the scripted judge.
const recordSchema = `{"title":"verdict","type":"object","additionalProperties":false,"properties":{"verdict":{"type":"string","enum":["pass","fail"]},"score":{"type":"integer"},"note":{"type":"string"}},"required":["verdict","score"]}`

func recordScript() scripted.Script {
	bash := func(cmd string) scripted.ToolUse {
		return scripted.ToolUse{Name: "Bash", Input: map[string]any{"command": cmd, "description": "run it"}}
	}
	agentRule := func(marker string, steps ...scripted.Step) scripted.Rule {
		return scripted.Rule{Kind: scripted.KindAgent, Contains: marker, Steps: steps}
	}
	return scripted.Script{Rules: []scripted.Rule{
		agentRule("[plain]", scripted.Step{Text: "Hello there."}),
		agentRule("[tools]",
			scripted.Step{Text: "Looking around.", ToolUses: []scripted.ToolUse{bash("ls -a"),
				{Name: "Read", Input: map[string]any{"file_path": "notes.txt"}}}},
			scripted.Step{ToolUses: []scripted.ToolUse{{Name: "Glob", Input: map[string]any{"pattern": "**/*.txt"}},
				{Name: "Grep", Input: map[string]any{"pattern": "note"}}}},
			scripted.Step{ToolUses: []scripted.ToolUse{{Name: "Write", Input: map[string]any{"file_path": "out.txt", "content": "done\n"}},
				{Name: "Edit", Input: map[string]any{"file_path": "notes.txt", "old_string": "first note", "new_string": "1st note"}}}},
			scripted.Step{ToolUses: []scripted.ToolUse{bash("echo out-line; echo oops >&2; exit 3")}},
			scripted.Step{Text: "All done."}),
		agentRule("[skill]",
			scripted.Step{ToolUses: []scripted.ToolUse{{Name: "Skill", Input: map[string]any{"skill": skillName}}}},
			scripted.Step{Text: "Following the skill.", ToolUses: []scripted.ToolUse{bash("git log --oneline 2>&1 || true")}},
			scripted.Step{Text: "Here are the notes."}),
		agentRule("$"+skillName, scripted.Step{Text: "Using the skill you named."}),
		agentRule("[second]", scripted.Step{ToolUses: []scripted.ToolUse{bash("echo resumed")}}, scripted.Step{Text: "Resumed and ran it."}),
		agentRule("[wait]", scripted.Step{ToolUses: []scripted.ToolUse{bash("sleep 297")}}),
		agentRule("[busy]", scripted.Step{Error: &scripted.HTTPError{Status: 429, Count: 1000}}),
		agentRule("[broken]", scripted.Step{Error: &scripted.HTTPError{Status: 500, Count: 1000}}),
		{Kind: scripted.KindAgent, Contains: scripted.SummaryRequest, Steps: []scripted.Step{{Text: "The user asked two short questions; both were answered."}}},
		{Kind: scripted.KindJudge, Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: map[string]any{"verdict": "pass", "score": 7}}}}}},
		agentRule("", scripted.Step{Text: "Noted."}),
	}}
}

// recorder runs the cases and cleans what they leave.
type recorder struct {
	t       *testing.T
	bin     string
	srv     *scripted.Server
	a       Agent
	root    string
	index   map[string]any
	reqSave map[string][]byte
}

var (
	portRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	callRE = regexp.MustCompile(`/call-\d+/`)
)

// clean rewrites the throwaway paths and the port to fixed ones.
func (r *recorder) clean(b []byte, c conv) []byte {
	for _, p := range [][2]string{{c.dir, "/tmp/work"}, {c.home, "/home/user"}, {c.tmp, "/tmp/scratch"}} {
		b = bytes.ReplaceAll(b, []byte(p[0]), []byte(p[1]))
	}
	b = callRE.ReplaceAll(b, []byte("/call/"))
	return portRE.ReplaceAll(b, []byte("127.0.0.1:8080"))
}

func (r *recorder) conv() conv {
	r.t.Helper()
	root, err := os.MkdirTemp(r.root, "session-")
	if err != nil {
		r.t.Fatal(err)
	}
	c := conv{dir: filepath.Join(root, "work"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{c.dir, c.home, c.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			r.t.Fatal(err)
		}
	}
	for name, body := range map[string]string{
		"notes.txt": "first note\nsecond note\n",
		filepath.Join(Agent{}.SkillDir(skillName), "SKILL.md"): skillBody,
	} {
		p := filepath.Join(c.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	return c
}

// spec is a turn in the jail, as a run makes it.
func (r *recorder) spec(c conv, prompt string, stdout io.Writer) agent.TurnSpec {
	j := testJail(r.t, r.bin).With(c.tmp, c.dir, []string{c.dir, c.home}, nil)
	return agent.TurnSpec{Binary: r.bin, Prompt: prompt, Dir: c.dir, Home: c.home, BaseURL: r.srv.URL(), Jail: &j,
		BaseEnv: []string{"PATH=" + os.Getenv("PATH")}, Stdout: stdout, Timeout: 60 * time.Second, Grace: 2 * time.Second}
}

func (r *recorder) write(rel string, b []byte) {
	r.t.Helper()
	p := filepath.Join(testenv.RepoRoot(r.t), rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// transcript saves one turn's stream and what the index says of it.
func (r *recorder) transcript(name string, c conv, stream []byte, out Outcome) {
	r.write(filepath.Join("internal/codex/testdata/transcripts", name+".jsonl"), r.clean(stream, c))
	r.index[name+".jsonl"] = map[string]any{"exit": out.ExitCode, "context": out.Turn.ContextTokens, "api_calls": out.Turn.APICalls}
}

// rollout saves the thread's rollout file.
func (r *recorder) rollout(name string, c conv, thread string) {
	r.t.Helper()
	path, err := RolloutFile(CodexHome(c.home), thread)
	if err != nil {
		r.t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		r.t.Fatal(err)
	}
	r.write(filepath.Join("internal/codex/testdata/rollouts", name+".jsonl"), r.clean(b, c))
}

// request keeps the body of the newest request whose prompt contains
// marker, at step.
func (r *recorder) request(name string, c conv, pick func(scripted.Request) bool) {
	r.t.Helper()
	reqs := r.srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if pick(reqs[i]) {
			var v any
			if err := json.Unmarshal(reqs[i].Body, &v); err != nil {
				r.t.Fatal(err)
			}
			b, _ := json.MarshalIndent(v, "", " ")
			r.reqSave[name+".json"] = r.clean(append(b, '\n'), c)
			return
		}
	}
	r.t.Fatalf("no request for %s", name)
}

func (r *recorder) run(name string, c conv, prompt, resume string) Outcome {
	r.t.Helper()
	var buf bytes.Buffer
	s := r.spec(c, prompt, &buf)
	s.Resume = resume
	out, err := r.a.Run(context.Background(), s)
	if err != nil {
		r.t.Fatalf("%s: %v", name, err)
	}
	r.transcript(name, c, buf.Bytes(), out)
	return out
}

func promptHas(s string, step int) func(scripted.Request) bool {
	return func(q scripted.Request) bool { return strings.Contains(q.Prompt, s) && q.Step == step }
}

func TestRecordFixtures(t *testing.T) {
	bin := codexBinary(t)
	v, err := Version(context.Background(), bin)
	if err != nil {
		t.Fatal(err)
	}
	if v != VerifiedVersion {
		t.Fatalf("recording with codex %s, but VerifiedVersion is %s", v, VerifiedVersion)
	}
	root, err := os.MkdirTemp("", "sessions-") // the agent sees the path: no test in it
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	r := &recorder{t: t, bin: bin, srv: startServer(t, recordScript()), a: Agent{Retries: 1},
		root: root, index: map[string]any{}, reqSave: map[string][]byte{}}

	c := r.conv()
	out := r.run("plain", c, "[plain] say hello", "")
	r.rollout("plain", c, out.Turn.SessionID)
	r.request("first-request", c, promptHas("[plain]", 0))

	c = r.conv()
	out = r.run("tool-calls", c, "[tools] look around the project and tidy it", "")
	r.rollout("tool-calls", c, out.Turn.SessionID)
	r.request("tool-output-followup", c, promptHas("[tools]", 1))
	r.request("apply-patch-followup", c, promptHas("[tools]", 3))

	c = r.conv()
	out = r.run("skill-read", c, "[skill] write the release notes", "")
	r.request("skill-read-followup", c, promptHas("[skill]", 1))

	c = r.conv()
	out = r.run("skill-dollar", c, "use $"+skillName+" for this week", "")
	r.rollout("skill-dollar", c, out.Turn.SessionID)
	r.request("skill-dollar-request", c, promptHas("$"+skillName, 0))

	c = r.conv()
	out = r.run("resume-turn1", c, "[first] what is in the notes?", "")
	out = r.run("resume-turn2", c, "[second] run it again", out.Turn.SessionID)
	r.rollout("resume", c, out.Turn.SessionID)
	r.request("resumed-turn-request", c, promptHas("[second]", 0))

	c = r.conv()
	out = r.run("error-429", c, "[busy] say hello", "")
	c = r.conv()
	out = r.run("error-500", c, "[broken] say hello", "")

	// A kill while a command runs: SIGTERM once the command started.
	c = r.conv()
	var buf bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	s := r.spec(c, "[wait] wait for the build", &watch{w: &buf, on: `"item.started"`, fire: cancel})
	out, err = r.a.Run(ctx, s)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	r.transcript("killed", c, buf.Bytes(), out)

	// A live session of three messages, then a compaction and a fourth.
	c = r.conv()
	l, err := r.a.StartLive(r.spec(c, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"[plain] say hello", "[skill] write the release notes", "[third] thanks"} {
		buf.Reset()
		out, err := l.Send(context.Background(), p, &buf, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		r.transcript(fmt.Sprintf("live-turn%d", i+1), c, buf.Bytes(), out)
	}
	buf.Reset()
	out, err = l.(*Live).Compact(context.Background(), &buf, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.transcript("live-compact", c, buf.Bytes(), out)
	r.request("compact-summary-request", c, promptHas(scripted.CodexSummaryRequest, 0))
	buf.Reset()
	out, err = l.Send(context.Background(), "[after] and now?", &buf, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.transcript("live-after-compact", c, buf.Bytes(), out)
	r.request("compact-continued-request", c, promptHas("[after]", 0))
	thread := out.Turn.SessionID
	l.Close()
	r.rollout("live", c, thread)

	// The session started again on its thread (a retried turn, a resume):
	// thread/resume replays the last turn's usage before the turn starts.
	s = r.spec(c, "", nil)
	s.Resume = thread
	l, err = r.a.StartLive(s)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	out, err = l.Send(context.Background(), "[restarted] one more", &buf, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.transcript("live-restarted", c, buf.Bytes(), out)
	l.Close()

	// A structured call: its request (the stand-in saw it; the caller's
	// folder is gone afterwards, so only the body is kept).
	j := testJail(t, bin)
	caller := Caller{Binary: bin, BaseEnv: []string{"PATH=" + os.Getenv("PATH")}, BaseURL: r.srv.URL(), Retries: 1, Timeout: time.Minute, Jail: &j}
	if _, err := caller.Structured(context.Background(), "judge the answer", recordSchema, ""); err != nil {
		t.Fatal(err)
	}
	r.request("structured-request", conv{dir: "/nowhere/work", home: "/nowhere/home", tmp: "/nowhere/tmp"}, func(q scripted.Request) bool { return q.Kind == scripted.KindJudge })

	names := make([]string, 0, len(r.index))
	for n := range r.index {
		names = append(names, n)
	}
	sort.Strings(names)
	idx, _ := json.MarshalIndent(map[string]any{"codex_version": v, "made_by": "make fixtures (go test -tags recordfixtures ./internal/codex -run TestRecordFixtures)", "transcripts": r.index}, "", "  ")
	r.write("internal/codex/testdata/transcripts/index.json", append(idx, '\n'))
	var reqNames []string
	for n, b := range r.reqSave {
		r.write(filepath.Join("internal/scripted/testdata/responses", n), b)
		reqNames = append(reqNames, n)
	}
	sort.Strings(reqNames)
	ri, _ := json.MarshalIndent(map[string]any{"codex_version": v, "made_by": "make fixtures (go test -tags recordfixtures ./internal/codex -run TestRecordFixtures)", "requests": reqNames}, "", "  ")
	r.write("internal/scripted/testdata/responses/index.json", append(ri, '\n'))
}
