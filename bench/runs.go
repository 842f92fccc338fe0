package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/app"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/fillers"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// seed is the filler seed of every run, so each repetition sends the same
// prompts and the 1- and 4-conversation runs share conversation 1's.
const seed = 1

type bench struct {
	o      options
	root   string
	claude string
	work   string
	paths  demo.Paths
}

// script is the scripted model of every measurement: the demo skill's
// judge and rubric answers and the steady persona, with the latency.
func (b *bench) script() (scripted.Script, error) {
	return b.scriptFor(scripted.PersonaSteady)
}

// scriptFor is script with another persona (S).
func (b *bench) scriptFor(persona string) (scripted.Script, error) {
	s, err := demo.Script([]string{persona}, false)
	s.Latency = b.o.latency
	return s, err
}

// vibeRun is one whole run through app.Main, in process.
type vibeRun struct {
	convs int
	dir   string
	wall  time.Duration
	cpu   cpuTimes
	run   *record.Run
	reqs  []scripted.Request
}

// runVibeTest runs the demo skill with n steady conversations (all at
// once, vibe-test's default concurrency) against a fresh scripted server,
// with a fresh rubric cache so the rubric call is made as on a first run.
func (b *bench) runVibeTest(ctx context.Context, rep, n int) (*vibeRun, error) {
	script, err := b.script()
	if err != nil {
		return nil, err
	}
	srv, err := scripted.Start(script)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	name := fmt.Sprintf("rep%d-%dconv", rep, n)
	out := filepath.Join(b.work, name, "run")
	var env []string
	for _, kv := range app.DemoEnv(os.Environ(), srv.URL()) {
		if !strings.HasPrefix(kv, "VIBE_TEST_") {
			env = append(env, kv)
		}
	}
	env = append(env, "VIBE_TEST_CLAUDE="+b.claude, "VIBE_TEST_CACHE_DIR="+filepath.Join(b.work, name, "cache"))
	args := []string{"vibe-test", b.paths.Skill, "--config", b.paths.Config, "--out", out,
		"--seed", strconv.Itoa(seed), "--conversations", strconv.Itoa(n),
		"--max-retries", "1", "--turn-timeout", "2m", "--session", b.o.session}
	if b.o.isolation != "" {
		args = append(args, "--isolation", b.o.isolation)
	}
	var stdout, stderr bytes.Buffer
	cpu0 := cpuNow()
	start := time.Now()
	code := app.Main(ctx, args, app.IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	wall := time.Since(start)
	cpu := cpuNow().sub(cpu0)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if code != 0 {
		return nil, fmt.Errorf("%d-conversation run exited %d, want 0 (steady persona):\n%s\n%s", n, code, tail(stdout.String(), 15), tail(stderr.String(), 10))
	}
	r, err := record.Load(out)
	if err != nil {
		return nil, err
	}
	for _, c := range r.Conversations {
		if len(c.Turns) != plan.Turns {
			return nil, fmt.Errorf("%d-conversation run: conversation %d has %d turns, want %d", n, c.Index, len(c.Turns), plan.Turns)
		}
	}
	return &vibeRun{convs: n, dir: out, wall: wall, cpu: cpu, run: r, reqs: srv.Requests()}, nil
}

// loopRun is the hand-written floor: claude -p, then --resume, 10 times
// (resume mode), or one claude process that gets the 10 prompts as
// stream-json messages (interactive mode).
type loopRun struct {
	mode, persona string
	wall          time.Duration // the whole loop: sandbox set-up, 10 turns, clean-up
	turns         time.Duration // the claude processes only
	cpu           cpuTimes
	agentCalls    int
	reqs          []scripted.Request
}

// loopPrompts are the 10 prompts and per-turn setup files the run of dir
// sent: base task and probes from its plan.json, the fillers from the
// fillers package with plan.json's seed (checked against the ids it
// recorded and against the prompts in run.json).
func loopPrompts(v *vibeRun) ([]string, []map[string]string, error) {
	raw, err := os.ReadFile(filepath.Join(v.dir, "plan.json"))
	if err != nil {
		return nil, nil, err
	}
	var pl plan.Plan
	if err := json.Unmarshal(raw, &pl); err != nil {
		return nil, nil, fmt.Errorf("plan.json: %w", err)
	}
	picks, err := fillers.Pick(fillers.Builtin(), 6, pl.FillerSeed) // conversation 1: seed + 0
	if err != nil {
		return nil, nil, err
	}
	if len(pl.Fillers) == 0 || len(pl.Fillers[0]) != len(picks) {
		return nil, nil, fmt.Errorf("plan.json records fillers %v, expected 6 for conversation 1", pl.Fillers)
	}
	prompts := make([]string, plan.Turns)
	setups := make([]map[string]string, plan.Turns)
	k := 0
	for turn := 1; turn <= plan.Turns; turn++ {
		if plan.Kind(turn) == plan.KindFiller {
			if picks[k].ID != pl.Fillers[0][k] {
				return nil, nil, fmt.Errorf("filler %d: seed %d picks %s, plan.json says %s", k+1, pl.FillerSeed, picks[k].ID, pl.Fillers[0][k])
			}
			prompts[turn-1] = picks[k].Text
			k++
			continue
		}
		prompts[turn-1] = pl.Task(turn)
		setups[turn-1] = pl.Setup(turn)
	}
	turns := v.run.Conversations[0].Turns
	for i, p := range prompts {
		if turns[i].Prompt != p {
			return nil, nil, fmt.Errorf("turn %d: the loop's prompt differs from the one run.json records", i+1)
		}
	}
	return prompts, setups, nil
}

// runLoop runs the prompts the way a user would by hand: a sandbox folder
// with the fixture and the skill at .claude/skills/stock-ledger/, a fresh
// HOME and CLAUDE_CONFIG_DIR, the isolation flags, and `claude -p` then
// `claude -p --resume <id>`; each turn's stream-json saved to a file.
//
// In interactive mode the turns go to one `claude -p --input-format
// stream-json` process instead, one message each, each after the last
// one's result.
func (b *bench) runLoop(ctx context.Context, rep int, prompts []string, setups []map[string]string, files map[string]string, mode, persona string) (*loopRun, error) {
	script, err := b.scriptFor(persona)
	if err != nil {
		return nil, err
	}
	srv, err := scripted.Start(script)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	logs := filepath.Join(b.work, fmt.Sprintf("rep%d-loop-%s-%s", rep, mode, persona))
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}

	lr := loopRun{mode: mode, persona: persona}
	cpu0 := cpuNow()
	start := time.Now()
	dir, err := os.MkdirTemp("", "repo-")
	if err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "home-")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cleanup := func() { os.RemoveAll(dir); os.RemoveAll(home) }
	demoDir := filepath.Dir(b.paths.Config)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(demoDir, "fixture"))); err != nil {
		cleanup()
		return nil, err
	}
	if err := os.CopyFS(filepath.Join(dir, ".claude", "skills", demo.SkillName), os.DirFS(filepath.Dir(b.paths.Skill))); err != nil {
		cleanup()
		return nil, err
	}
	write := func(fs map[string]string) error {
		for rel, content := range fs {
			p := filepath.Join(dir, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	if err := write(files); err != nil {
		cleanup()
		return nil, err
	}
	config := filepath.Join(home, ".claude")
	// The CLI's task files in the loop's own folder, as vibe-test's
	// sandboxes keep them: in the machine's /tmp/claude-<uid> they stayed.
	tmp := filepath.Join(home, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		cleanup()
		return nil, err
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAUDE_CONFIG_DIR=" + config, "TMPDIR=" + tmp,
		"TERM=dumb", "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-offline-placeholder",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
	}
	if mode == claude.SessionInteractive {
		if err := b.interactiveTurns(ctx, &lr, dir, env, logs, prompts, setups, write); err != nil {
			cleanup()
			return nil, err
		}
		prompts = nil // done
	}
	session := ""
	for i, prompt := range prompts {
		if err := write(setups[i]); err != nil {
			cleanup()
			return nil, err
		}
		args := []string{"-p", prompt, "--output-format", "stream-json", "--verbose",
			"--setting-sources", "project", "--strict-mcp-config", "--allowedTools"}
		args = append(args, claude.BaseTools...)
		if session != "" {
			args = append(args, "--resume", session)
		}
		t0 := time.Now()
		cmd := exec.CommandContext(ctx, b.claude, args...)
		cmd.Dir, cmd.Env = dir, env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		lr.turns += time.Since(t0)
		_ = os.WriteFile(filepath.Join(logs, fmt.Sprintf("turn-%02d.jsonl", i+1)), out, 0o644)
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("loop turn %d: %v: %s", i+1, err, tail(stderr.String(), 5))
		}
		id, ok := sessionOf(out)
		if !ok {
			cleanup()
			return nil, fmt.Errorf("loop turn %d: no successful result line", i+1)
		}
		session = id
	}
	cleanup()
	lr.wall = time.Since(start)
	lr.cpu = cpuNow().sub(cpu0)
	lr.reqs = srv.Requests()
	lr.agentCalls = agentCalls(lr.reqs)
	return &lr, nil
}

// interactiveTurns sends the prompts to one long-lived claude process, one
// stream-json message after each result, and waits for it to exit.
func (b *bench) interactiveTurns(ctx context.Context, lr *loopRun, dir string, env []string, logs string, prompts []string, setups []map[string]string, write func(map[string]string) error) error {
	t0 := time.Now()
	defer func() { lr.turns += time.Since(t0) }()
	s, err := claude.StartSession(claude.Invocation{Binary: b.claude, Args: claude.InteractiveArgs("", "", claude.BaseTools), Env: env, Dir: dir, Grace: 3 * time.Second})
	if err != nil {
		return err
	}
	defer s.Close()
	for i, prompt := range prompts {
		if err := write(setups[i]); err != nil {
			return err
		}
		var buf bytes.Buffer
		out, err := s.Send(ctx, prompt, &buf, 2*time.Minute)
		_ = os.WriteFile(filepath.Join(logs, fmt.Sprintf("turn-%02d.jsonl", i+1)), buf.Bytes(), 0o644)
		if err != nil {
			return fmt.Errorf("loop turn %d: %v", i+1, err)
		}
		if f := out.Turn.Failure(out.ExitCode); f != "" {
			return fmt.Errorf("loop turn %d: %s: %s", i+1, f, tail(s.Stderr(), 5))
		}
	}
	s.Close() // wait for it, so its CPU time is counted
	return nil
}

// sessionFigures are what S compares between the modes, read from the
// requests of one loop: agent API calls per turn; the skill as the model
// saw it by the end (the last request's history): the bytes of SKILL.md
// bodies injected after the first (each "Base directory for this skill"
// block but the first) and the invocations answered "already loaded".
type sessionFigures struct {
	requestsPerTurn float64
	skillReinjected int // bytes
	alreadyLoaded   int
}

func sessionFiguresOf(lr *loopRun) sessionFigures {
	f := sessionFigures{requestsPerTurn: float64(lr.agentCalls) / float64(plan.Turns)}
	var last []byte
	for _, r := range lr.reqs {
		if r.Kind == scripted.KindAgent && r.Status == 200 {
			last = r.Body
		}
	}
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(last, &req) != nil {
		return f
	}
	loads := 0
	for _, m := range req.Messages {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if m.Role != "user" || json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, bl := range blocks {
			switch {
			case bl.Type != "text":
			case strings.HasPrefix(bl.Text, "Base directory for this skill"):
				if loads++; loads > 1 {
					f.skillReinjected += len(bl.Text)
				}
			case strings.Contains(bl.Text, "is already loaded above"):
				f.alreadyLoaded++
			}
		}
	}
	return f
}

// sessionOf reads the session id from a turn's result line, and whether
// the turn succeeded.
func sessionOf(stream []byte) (string, bool) {
	for _, line := range bytes.Split(stream, []byte("\n")) {
		var ev struct {
			Type      string `json:"type"`
			IsError   bool   `json:"is_error"`
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Type == "result" {
			return ev.SessionID, !ev.IsError && ev.SessionID != ""
		}
	}
	return "", false
}

// tokens sums the scripted server's recorded usage (context + output) of
// answered requests by kind.
func tokens(reqs []scripted.Request) map[scripted.CallKind]int64 {
	t := map[scripted.CallKind]int64{}
	for _, r := range reqs {
		if r.Status == 200 {
			t[r.Kind] += r.Usage.Context() + r.Usage.Output
		}
	}
	return t
}

func agentCalls(reqs []scripted.Request) int {
	n := 0
	for _, r := range reqs {
		if r.Kind == scripted.KindAgent && r.Status == 200 {
			n++
		}
	}
	return n
}

// sessionCalls counts the answered agent requests of one session.
func sessionCalls(reqs []scripted.Request, session string) int {
	n := 0
	for _, r := range reqs {
		if r.Kind == scripted.KindAgent && r.Status == 200 && r.SessionID == session {
			n++
		}
	}
	return n
}

// agentTurnTime is the sum of the turns' durations (each claude process,
// start to exit) in conversation 1.
func agentTurnTime(r *record.Run) time.Duration {
	var d time.Duration
	for _, t := range r.Conversations[0].Turns {
		d += time.Duration(t.DurationMS) * time.Millisecond
	}
	return d
}
