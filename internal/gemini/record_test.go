package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// -record re-records the fixtures the parser tests read
// (testdata/transcripts) and the request bodies scripted's Gemini tests
// read (../scripted/testdata/gemini), with the pinned CLI against the
// scripted server and this package's own argv:
//
//	go test ./internal/gemini -run TestRecord -record
var record = flag.Bool("record", false, "re-record testdata/transcripts and ../scripted/testdata/gemini with the real CLI")

// The scripted model of the recordings (and of the real-CLI tests).
func recordRules() []scripted.Rule {
	bash := func(cmd string) scripted.ToolUse {
		return scripted.ToolUse{Name: "Bash", Input: map[string]any{"command": cmd, "description": "Run it"}}
	}
	return []scripted.Rule{
		{Kind: scripted.KindAgent, Contains: "@@plain@@", Steps: []scripted.Step{{Text: "A plain answer, in two chunks."}}},
		{Kind: scripted.KindAgent, Contains: "@@tools@@", Steps: []scripted.Step{
			{Text: "Looking around first.", ToolUses: []scripted.ToolUse{
				bash("printf 'alpha\\nbeta\\n' > a.txt; echo made; echo oops >&2; exit 3"),
				{Name: "Read", Input: map[string]any{"file_path": "missing.txt"}},
			}},
			{ToolUses: []scripted.ToolUse{
				{Name: "Write", Input: map[string]any{"file_path": "b.txt", "content": "old line\n"}},
				{Name: "Glob", Input: map[string]any{"pattern": "*.txt"}},
				{Name: "Grep", Input: map[string]any{"pattern": "alpha"}},
			}},
			{ToolUses: []scripted.ToolUse{
				{Name: "Edit", Input: map[string]any{"file_path": "b.txt", "old_string": "old", "new_string": "new"}},
				{Name: "Read", Input: map[string]any{"file_path": "b.txt"}},
			}},
			{Text: "All tools ran; the last answer."},
		}},
		{Kind: scripted.KindAgent, Contains: "@@skill@@", Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{{Name: "Skill", Input: map[string]any{"skill": skillName}}}},
			{Text: "Following the notes skill.", ToolUses: []scripted.ToolUse{bash("echo noted >> notes.log")}},
			{Text: "Noted, as the skill says."},
		}},
		{Kind: scripted.KindAgent, Contains: "@@skillenv@@", Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{{Name: "Skill", Input: map[string]any{"skill": skillName}}}},
			{Text: "Following the notes skill; the environment first.", ToolUses: []scripted.ToolUse{bash("env | sort")}},
			{ToolUses: []scripted.ToolUse{bash("echo noted >> notes.log")}},
			{Text: "Noted, as the skill says."},
		}},
		{Kind: scripted.KindAgent, Contains: "@@env@@", Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{bash("env | sort")}},
			{Text: "That is the environment."},
		}},
		{Kind: scripted.KindAgent, Contains: "@@deny@@", Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{bash("echo not granted"), bash("git status --short")}},
			{Text: "One of them was refused."},
		}},
		{Kind: scripted.KindAgent, Contains: "@@hold@@", Steps: []scripted.Step{
			{ToolUses: []scripted.ToolUse{bash("echo started; exec sleep 300")}},
			{Text: "never reached"},
		}},
		{Kind: scripted.KindAgent, Contains: "@@e429@@", Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 429, Count: 100}}}},
		{Kind: scripted.KindAgent, Contains: "@@e500@@", Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 500, Count: 100}}}},
		{Kind: scripted.KindAgent, Contains: "@@flaky@@", Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 503, Count: 1}, Text: "Answered after one retry."}}},
		{Kind: scripted.KindAgent, Contains: "@@stall@@", Steps: []scripted.Step{{Delay: 10 * time.Minute, Text: "too late"}}},
		{Kind: scripted.KindJudge, Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput",
			Input: map[string]any{"verdict": "pass", "score": 7}}}}}},
		{Kind: scripted.KindCold, Contains: "@@badjson@@", Steps: []scripted.Step{{Text: `{"verdict": "maybe"}`}}},
		{Kind: scripted.KindAgent, Steps: []scripted.Step{{Text: "Noted."}}},
	}
}

// judgeSchema has the title the scripted server reads a judge call by.
const judgeSchema = `{"title":"verdict","type":"object","additionalProperties":false,"properties":{"verdict":{"type":"string","enum":["pass","fail"]},"score":{"type":"integer"}},"required":["verdict","score"]}`

type recIndex struct {
	CLIVersion  string              `json:"gemini_cli_version"`
	MadeBy      string              `json:"made_by"`
	Transcripts map[string]recEntry `json:"transcripts,omitempty"`
	Requests    []string            `json:"requests,omitempty"`
}

type recEntry struct {
	Exit int `json:"exit"`
	// Context is the prompt size of the turn's last answered model call as
	// the server sent it (0 when none was answered).
	Context int64 `json:"context"`
}

type recorder struct {
	t     *testing.T
	a     Agent
	bin   string
	srv   *scripted.Server
	trans map[string]recEntry
	reqs  []string
	// fix maps this machine's temporary paths to fixed ones.
	fix         []string
	lastSession string
}

func TestRecord(t *testing.T) {
	if !*record {
		t.Log("pass -record to re-record the fixtures")
		return
	}
	bin := testenv.Gemini(t)
	r := &recorder{t: t, a: Agent{MaxAttempts: 2}, bin: bin, srv: startScript(t, recordRules()...), trans: map[string]recEntry{}}
	transDir := filepath.Join("testdata", "transcripts")
	reqDir := filepath.Join("..", "scripted", "testdata", "gemini")
	for _, d := range []string{transDir, reqDir} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// Resume mode: a plain turn, tools, a skill load, then a resumed turn.
	d, spec := r.conversation()
	first := r.turn(transDir, "plain", spec, "@@plain@@ say something")
	r.saveRequest(reqDir, "plain-first", first)
	spec.Resume = r.lastSession
	r.turn(transDir, "tools", spec, "@@tools@@ use every tool")
	seq := r.turn(transDir, "skill", spec, "@@skill@@ note this down")
	r.saveRequest(reqDir, "skill-listing-resumed", seq)
	r.saveRequest(reqDir, "skill-activated-followup", seq+1)
	seq = r.turn(transDir, "resumed", spec, "@@plain@@ and again")
	r.saveRequest(reqDir, "resumed-history", seq)
	_ = d

	// Faults, each in a new session.
	_, spec = r.conversation()
	r.turn(transDir, "err429", spec, "@@e429@@ rate limited")
	_, spec = r.conversation()
	r.turn(transDir, "err500", spec, "@@e500@@ server error")
	_, spec = r.conversation()
	r.turn(transDir, "retried", spec, "@@flaky@@ once")
	_, spec = r.conversation()
	spec.Tools = []string{"Bash(git status:*)", "Read"}
	if err := r.a.PrepareHome(spec); err != nil {
		t.Fatal(err)
	}
	r.turn(transDir, "denied", spec, "@@deny@@ try both")

	// A kill in the middle of a tool call.
	_, spec = r.conversation()
	w := newWatch(`"tool_use"`)
	spec.Prompt, spec.Stdout = "@@hold@@ wait", w
	first = len(r.srv.Requests()) + 1
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-w.seen; time.Sleep(500 * time.Millisecond); cancel() }()
	out, err := r.a.Run(ctx, spec)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	r.save(transDir, "killed", w.String(), out, first)

	// A live session of three messages.
	_, spec = r.conversation()
	l, err := r.a.StartLive(spec)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"@@skill@@ first message", "@@plain@@ second message", "@@tools@@ third message"} {
		var tr bytes.Buffer
		first := len(r.srv.Requests()) + 1
		out, err := l.Send(t.Context(), p, &tr, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		r.save(transDir, "live-"+string(rune('1'+i)), tr.String(), out, first)
	}
	l.Close()

	// A structured call.
	before := len(r.srv.Requests())
	c := Caller{Binary: bin, BaseEnv: baseEnv(), BaseURL: r.srv.URL(), Timeout: time.Minute, MaxAttempts: 2}
	if _, err := c.Structured(t.Context(), "Judge this: the notes were kept.", judgeSchema, ""); err != nil {
		t.Fatal(err)
	}
	r.saveRequest(reqDir, "structured-judge", before+1)

	version, err := Version(t.Context(), bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	made := "go test ./internal/gemini -run TestRecord -record"
	sort.Strings(r.reqs)
	writeJSON(t, filepath.Join(transDir, "index.json"), recIndex{CLIVersion: version, MadeBy: made, Transcripts: r.trans})
	writeJSON(t, filepath.Join(reqDir, "index.json"), recIndex{CLIVersion: version, MadeBy: made, Requests: r.reqs})
}

// conversation makes a fresh jailed conversation with the skill installed.
func (r *recorder) conversation() (cliDirs, agent.TurnSpec) {
	d := newDirs(r.t)
	installSkill(r.t, d.work)
	spec := turnSpec(r.t, r.a, r.bin, d, r.srv, baseEnv())
	r.fix = append(r.fix, d.work, "/tmp/work", d.home, "/tmp/home", d.tmp, "/tmp/jail-tmp")
	return d, spec
}

// turn runs one prompt, saves its transcript and returns the sequence
// number of its first request.
func (r *recorder) turn(dir, name string, spec agent.TurnSpec, prompt string) int {
	r.t.Helper()
	var tr bytes.Buffer
	spec.Prompt, spec.Stdout = prompt, &tr
	first := len(r.srv.Requests()) + 1
	out, err := r.a.Run(r.t.Context(), spec)
	if err != nil {
		r.t.Fatalf("%s: %v", name, err)
	}
	r.lastSession = out.Turn.SessionID
	r.save(dir, name, tr.String(), out, first)
	return first
}

// save writes a transcript, with the exit code and the context the server
// sent for the last call it answered from request first on.
func (r *recorder) save(dir, name, transcript string, out agent.Outcome, first int) {
	r.t.Helper()
	var ctx int64
	for _, q := range r.srv.Requests() {
		if q.Seq >= first && q.Status == 200 && q.Kind == scripted.KindAgent {
			ctx = q.Usage.Context()
		}
	}
	r.trans[name+".jsonl"] = recEntry{Exit: out.ExitCode, Context: ctx}
	if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(r.fixPaths(transcript)), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *recorder) saveRequest(dir, name string, seq int) {
	r.t.Helper()
	for _, q := range r.srv.Requests() {
		if q.Seq != seq {
			continue
		}
		body := r.fixPaths(string(q.Body))
		if !json.Valid([]byte(body)) {
			r.t.Fatalf("request %d: the rewritten body is not JSON", seq)
		}
		writeJSON(r.t, filepath.Join(dir, name+".json"), map[string]any{"seq": seq, "body": json.RawMessage(body)})
		r.reqs = append(r.reqs, name+".json")
		return
	}
	r.t.Fatalf("no request %d", seq)
}

func (r *recorder) fixPaths(s string) string {
	for i := 0; i+1 < len(r.fix); i += 2 {
		s = strings.ReplaceAll(s, r.fix[i], r.fix[i+1])
	}
	return s
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
