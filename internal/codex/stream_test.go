package codex

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The parser's tests read the transcripts the pinned CLI wrote against
// the scripted server (testdata/transcripts, made by `make fixtures`;
// record_test.go says what each one did).

func parseFixture(t *testing.T, name string) Turn {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "transcripts", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	turn, err := ParseTurn(f)
	if err != nil {
		t.Fatal(err)
	}
	return turn
}

type fixtureIndex struct {
	Version     string `json:"codex_version"`
	Transcripts map[string]struct {
		Exit     int   `json:"exit"`
		Context  int64 `json:"context"`
		APICalls int   `json:"api_calls"`
	} `json:"transcripts"`
}

func readIndex(t *testing.T) fixtureIndex {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "transcripts", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx fixtureIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

func TestFixturesMadeByPinnedVersion(t *testing.T) {
	if v := readIndex(t).Version; v != VerifiedVersion {
		t.Fatalf("testdata/transcripts were recorded with codex %s, VerifiedVersion is %s: run make fixtures", v, VerifiedVersion)
	}
}

// Every transcript's success, by the rule "exit 0 and the turn completed",
// agrees with how its process ended.
func TestFailureRuleOnEveryFixture(t *testing.T) {
	for name, want := range readIndex(t).Transcripts {
		turn := parseFixture(t, name)
		failed := Failure(turn, want.Exit) != ""
		if failed != (want.Exit != 0) {
			t.Errorf("%s: exit %d but Failure = %q", name, want.Exit, Failure(turn, want.Exit))
		}
		if turn.BadLines != 0 {
			t.Errorf("%s: %d bad lines", name, turn.BadLines)
		}
		if turn.SessionID == "" {
			t.Errorf("%s: no thread id", name)
		}
	}
}

func TestPlainTurn(t *testing.T) {
	turn := parseFixture(t, "plain.jsonl")
	if turn.Text != "Hello there." || !turn.HasResult || turn.IsError || len(turn.Calls) != 0 {
		t.Fatalf("%+v", turn)
	}
	if turn.TerminalReason != "completed" {
		t.Errorf("terminal reason %q", turn.TerminalReason)
	}
	// The exec stream has no per-call usage: that comes from the rollout.
	if turn.APICalls != 0 || turn.ContextTokens != 0 {
		t.Errorf("usage from the stream alone: %d calls, %d context", turn.APICalls, turn.ContextTokens)
	}
}

func TestToolCallsUnderClaudesNames(t *testing.T) {
	turn := parseFixture(t, "tool-calls.jsonl")
	type call struct {
		name, input string
		isErr       bool
	}
	var got []call
	for _, c := range turn.Calls {
		if !c.HasResult {
			t.Errorf("call %s has no result", c.ID)
		}
		in := gjson.GetBytes(c.Input, "command").String() + gjson.GetBytes(c.Input, "file_path").String()
		got = append(got, call{c.Name, in, c.IsError})
	}
	// Parallel calls of one response are reported as they finish, in
	// either order from one recording to the next: compare each
	// response's pair sorted. A patch is one Write or Edit per file.
	sortPair := func(cs []call) {
		if len(cs) >= 2 && cs[0].input > cs[1].input {
			cs[0], cs[1] = cs[1], cs[0]
		}
	}
	if len(got) >= 4 {
		sortPair(got[0:2])
		sortPair(got[2:4])
	}
	want := []call{
		{"Bash", "cat notes.txt", false},
		{"Bash", "ls -a", false},
		{"Bash", "grep -rn -- note .", false},
		{"Bash", `shopt -s globstar nullglob; printf '%s\n' **/*.txt`, false},
		{"Write", "/tmp/work/out.txt", false},
		{"Edit", "/tmp/work/notes.txt", false},
		{"Bash", "echo out-line; echo oops >&2; exit 3", true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("calls:\n got %+v\nwant %+v", got, want)
	}
	if r := turn.Calls[6].Result; r != "out-line\noops\n" {
		t.Errorf("a failed command's output (stdout and stderr) = %q", r)
	}
	for _, c := range turn.Calls {
		if gjson.GetBytes(c.Input, "command").String() == "cat notes.txt" && !strings.Contains(c.Result, "first note") {
			t.Errorf("cat's output = %q", c.Result)
		}
	}
	// A preamble and the final text are separate messages: the last wins.
	if turn.Text != "All done." {
		t.Errorf("text %q", turn.Text)
	}
	if Failure(turn, 0) != "" {
		t.Errorf("a failed command failed the turn: %s", Failure(turn, 0))
	}
}

func TestSkillReadIsTheSignal(t *testing.T) {
	var a Agent
	if turn := parseFixture(t, "skill-read.jsonl"); !a.SkillLoaded(turn, skillName) {
		t.Errorf("the cat of SKILL.md was not taken as loading the skill: %+v", turn.Calls)
	} else if a.SkillLoaded(turn, "other-skill") {
		t.Error("another skill counted as loaded")
	}
	for _, name := range []string{"plain.jsonl", "tool-calls.jsonl", "skill-dollar.jsonl"} {
		if a.SkillLoaded(parseFixture(t, name), skillName) {
			t.Errorf("%s: skill loaded without a read", name)
		}
	}
}

func TestKilledTurn(t *testing.T) {
	turn := parseFixture(t, "killed.jsonl")
	if turn.HasResult || len(turn.Calls) != 1 || turn.Calls[0].HasResult {
		t.Fatalf("%+v", turn)
	}
	if got := gjson.GetBytes(turn.Calls[0].Input, "command").String(); got != "sleep 297" {
		t.Errorf("the running command = %q", got)
	}
	if f := Failure(turn, 143); !strings.Contains(f, "143") {
		t.Errorf("failure %q", f)
	}
}

func TestErrorTurns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
	}{{"error-429.jsonl", 429}, {"error-500.jsonl", 500}} {
		turn := parseFixture(t, tc.name)
		if !turn.HasResult || !turn.IsError || turn.TerminalReason != "api_error" || turn.APIErrorStatus != tc.status {
			t.Errorf("%s: %+v", tc.name, turn)
		}
		// Retries=1 when recorded: one "Reconnecting..." line.
		if turn.Retries != 1 {
			t.Errorf("%s: %d retries", tc.name, turn.Retries)
		}
		if f := Failure(turn, 1); !strings.Contains(f, "HTTP") || len(turn.Errors) != 1 {
			t.Errorf("%s: failure %q, errors %q", tc.name, f, turn.Errors)
		}
	}
}

func TestResumedTurnKeepsThread(t *testing.T) {
	one, two := parseFixture(t, "resume-turn1.jsonl"), parseFixture(t, "resume-turn2.jsonl")
	if one.SessionID == "" || one.SessionID != two.SessionID {
		t.Fatalf("threads %q and %q", one.SessionID, two.SessionID)
	}
	if len(two.Calls) != 1 || two.Calls[0].Result != "resumed\n" || two.Text != "Resumed and ran it." {
		t.Errorf("%+v", two)
	}
}

// A live session's transcripts carry their usage per call.
func TestLiveTurns(t *testing.T) {
	idx := readIndex(t)
	var a Agent
	thread := ""
	for _, name := range []string{"live-turn1.jsonl", "live-turn2.jsonl", "live-turn3.jsonl", "live-compact.jsonl", "live-after-compact.jsonl"} {
		turn := parseFixture(t, name)
		want := idx.Transcripts[name]
		if turn.APICalls != want.APICalls || turn.ContextTokens != want.Context {
			t.Errorf("%s: %d calls, context %d; recorded %d calls, context %d", name, turn.APICalls, turn.ContextTokens, want.APICalls, want.Context)
		}
		if thread == "" {
			thread = turn.SessionID
		} else if turn.SessionID != thread {
			t.Errorf("%s: thread %q, want %q", name, turn.SessionID, thread)
		}
		if !turn.HasResult || turn.IsError {
			t.Errorf("%s: %+v", name, turn)
		}
	}
	first := parseFixture(t, "live-turn1.jsonl")
	if first.Model != "gpt-5.5" || first.CLIVersion != VerifiedVersion || first.Text != "Hello there." {
		t.Errorf("the first turn (thread/start) says model %q, version %q, text %q", first.Model, first.CLIVersion, first.Text)
	}
	second := parseFixture(t, "live-turn2.jsonl")
	if !a.SkillLoaded(second, skillName) || len(second.Calls) != 2 || second.Calls[1].Name != "Bash" {
		t.Errorf("the skill turn: %+v", second.Calls)
	}
	// The last usage is the last call's: what the model saw at the end.
	if second.LastUsage.CacheRead == 0 || second.LastUsage.Input == 0 {
		t.Errorf("last usage %+v: the cached part is split off", second.LastUsage)
	}
	compact := parseFixture(t, "live-compact.jsonl")
	if len(compact.Compactions) != 1 || compact.Compactions[0].PreTokens == 0 || compact.Compactions[0].PostTokens == 0 {
		t.Errorf("compaction %+v", compact.Compactions)
	}
}

// A live session started again on its thread (a retried turn, a resume):
// thread/resume replays the turn before's last usage update before this
// turn starts. Read as a call, every restarted turn was charged the turn
// before's last call again (5 calls where the server answered 4).
func TestRestartedLiveTurnCountsItsOwnCalls(t *testing.T) {
	const name = "live-restarted.jsonl"
	b, err := os.ReadFile(filepath.Join("testdata", "transcripts", name))
	if err != nil {
		t.Fatal(err)
	}
	started := bytes.Index(b, []byte(`"method":"turn/started"`))
	if replay := bytes.Index(b, []byte(`"method":"thread/tokenUsage/updated"`)); replay < 0 || started < 0 || replay > started {
		t.Fatalf("%s: no usage update before turn/started: not the case this test is for", name)
	}
	turn := parseFixture(t, name)
	want := readIndex(t).Transcripts[name]
	if turn.APICalls != 1 || want.APICalls != 1 || turn.ContextTokens != want.Context || !turn.HasResult || turn.IsError {
		t.Errorf("%s: %d calls, context %d; recorded %d calls, context %d (%+v)", name, turn.APICalls, turn.ContextTokens, want.APICalls, want.Context, turn)
	}
	// The replay is sent on its own, not in order with the turn: moved to
	// just after turn/started it is still the turn before's (its turnId).
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	var replay []byte
	var moved [][]byte
	for _, l := range lines {
		if replay == nil && bytes.Contains(l, []byte(`"method":"thread/tokenUsage/updated"`)) {
			replay = l
			continue
		}
		moved = append(moved, l)
		if bytes.Contains(l, []byte(`"method":"turn/started"`)) {
			moved = append(moved, replay)
		}
	}
	p := newParser()
	for _, l := range moved {
		p.line(l)
	}
	if got := p.finish(); got.APICalls != 1 || got.ContextTokens != want.Context {
		t.Errorf("the replay after turn/started: %d calls, context %d; want 1, %d", got.APICalls, got.ContextTokens, want.Context)
	}
}

func TestCutStream(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "transcripts", "tool-calls.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cut := b[:len(b)/2]
	turn, err := ParseTurn(strings.NewReader(string(cut)))
	if err != nil {
		t.Fatal(err)
	}
	if turn.HasResult || turn.BadLines != 1 {
		t.Errorf("a stream cut mid-line: has result %v, %d bad lines", turn.HasResult, turn.BadLines)
	}
	if f := Failure(turn, 0); f == "" {
		t.Error("a cut stream passed")
	}
}

func TestClassifyError(t *testing.T) {
	for msg, want := range map[string]struct {
		reason string
		status int
	}{
		"unexpected status 503 Service Unavailable: x, url: http://h/v1/responses":    {"api_error", 503},
		"exceeded retry limit, last status: 429 Too Many Requests":                    {"api_error", 429},
		"unexpected status 401 Unauthorized: bad key":                                 {"api_error", 401},
		"We’re currently experiencing high demand, which may cause temporary errors.": {"api_error", 500},
		"Codex ran out of room in the model's context window. Start a new thread.":    {"prompt_too_long", 400},
		"Quota exceeded. Check your plan and billing details.":                        {"quota_exceeded", 429},
		"stream disconnected before completion: idle timeout waiting for SSE":         {"api_error", 0},
		"Connection failed: error sending request":                                    {"api_error", 0},
		"Missing environment variable: `LOCAL_MODEL_KEY`.":                            {"config_error", 0},
		`{"error":{"message":"bad","type":"invalid_request_error"}}`:                  {"api_error", 400},
		"something else": {"error", 0},
	} {
		r, s := classifyError(msg)
		if r != want.reason || s != want.status {
			t.Errorf("%q: %s %d, want %s %d", msg, r, s, want.reason, want.status)
		}
	}
}
