// Command record regenerates the fixtures the parser and classifier tests
// read: stream-json transcripts (claude/testdata/transcripts) and request
// bodies (scripted/testdata/requests), made by the real claude CLI talking to
// the scripted server with the project's own argv (claude.AgentArgs,
// claude.StructuredArgs). `make fixtures` runs it from the repository root;
// each folder gets an index.json saying which CLI version made the files.
//
// Paths of the throwaway folders are rewritten to fixed ones (/tmp/work,
// /home/user, /tmp/claude-config) so the files do not carry this machine's
// temporary names. Session ids, timestamps and durations change on every
// recording; tests must not depend on them.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

const (
	transcriptDir = "internal/claude/testdata/transcripts"
	requestDir    = "internal/scripted/testdata/requests"
	skillName     = "stock-ledger"
	skillMD       = "---\nname: stock-ledger\ndescription: Counts the warehouse stock with the census script before any answer about stock.\n---\n" +
		"# Stock ledger\n\nRun `bash .claude/skills/stock-ledger/scripts/census.sh` and report its total. Never edit ledger.csv by hand.\n"
	// forkMD is a skill that runs as a sub-agent (context: fork).
	forkName = "ledger-audit"
	forkMD   = "---\nname: ledger-audit\ndescription: Audits the warehouse ledger in a separate context.\ncontext: fork\n---\n" +
		"# Ledger audit\n\nRun `bash .claude/skills/stock-ledger/scripts/census.sh`, read notes.txt, and report the total.\n"
	// hookedMD declares hooks: one after each Bash call, one at the end of
	// the turn; both write in the working folder.
	hookedName = "hooked-ledger"
	hookedMD   = "---\nname: hooked-ledger\ndescription: Counts the stock with hooks that log each step.\nhooks:\n" +
		"  PostToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: echo post >> hook.log\n" +
		"  Stop:\n    - hooks:\n        - type: command\n          command: echo stop >> hook.log\n---\n" +
		"# Hooked ledger\n\nRun `echo counted` and report.\n"
	// schema has no title, so the scripted server treats the call as cold.
	schema = `{"type":"object","additionalProperties":false,"properties":{"verdict":{"type":"string","enum":["pass","fail"]},"score":{"type":"integer"}},"required":["verdict","score"]}`
)

func main() {
	bin := flag.String("claude", "tools/node_modules/.bin/claude", "the claude CLI to record with")
	only := flag.String("only", "", "record only these cases (comma-separated names; resume and compact are cases too), keeping the other fixtures and merging index.json")
	flag.Parse()
	if err := run(*bin, *only); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

// entry is what index.json says about one transcript: the exit code the
// CLI gave and the context size of the last answered call as the server
// sent it (the iterations figure where the case sends iterations).
type entry struct {
	Exit    int   `json:"exit"`
	Context int64 `json:"context"`
}

type index struct {
	ClaudeVersion string           `json:"claude_version"`
	MadeBy        string           `json:"made_by"`
	Transcripts   map[string]entry `json:"transcripts,omitempty"`
	Requests      []string         `json:"requests,omitempty"`
}

// recorder holds what one recording session shares.
type recorder struct {
	bin     string
	version string
	trans   map[string]entry
	reqs    []string
}

func run(bin, only string) error {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	out, err := exec.Command(abs, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w (run `make tools`)", abs, err)
	}
	r := &recorder{bin: abs, version: strings.TrimSpace(string(out)), trans: map[string]entry{}}
	want := func(name string) bool { return only == "" || slices.Contains(strings.Split(only, ","), name) }
	if only == "" {
		for _, d := range []string{transcriptDir, requestDir} {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
	} else if err := r.keep(); err != nil {
		return err
	}
	for _, c := range cases() {
		if !want(c.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "record: %s\n", c.name)
		if err := r.record(c); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	if want("resume") {
		if err := r.resume(); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	}
	if want("compact") {
		if err := r.compact(); err != nil {
			return fmt.Errorf("compact: %w", err)
		}
	}
	madeBy := "make fixtures (go run ./internal/scripted/cmd/record)"
	if err := writeJSON(filepath.Join(transcriptDir, "index.json"), index{ClaudeVersion: r.version, MadeBy: madeBy, Transcripts: r.trans}); err != nil {
		return err
	}
	sort.Strings(r.reqs)
	r.reqs = slices.Compact(r.reqs)
	return writeJSON(filepath.Join(requestDir, "index.json"), index{ClaudeVersion: r.version, MadeBy: madeBy, Requests: r.reqs})
}

// keep starts from the fixtures already recorded (-only): their index
// entries stay, so the ones recorded now are merged in. They must have
// been made by the same CLI version.
func (r *recorder) keep() error {
	for _, d := range []string{transcriptDir, requestDir} {
		b, err := os.ReadFile(filepath.Join(d, "index.json"))
		if err != nil {
			return fmt.Errorf("-only needs the recorded fixtures: %w", err)
		}
		var idx index
		if err := json.Unmarshal(b, &idx); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(d, "index.json"), err)
		}
		if idx.ClaudeVersion != r.version {
			return fmt.Errorf("%s was recorded with claude %q, this is %q: record everything again (no -only)", d, idx.ClaudeVersion, r.version)
		}
		for k, v := range idx.Transcripts {
			r.trans[k] = v
		}
		r.reqs = append(r.reqs, idx.Requests...)
	}
	return nil
}

// A recording case: one CLI invocation against its own server.
type recCase struct {
	name    string
	prompt  string
	rule    func(work string) scripted.Rule
	args    func(work, prompt string) []string // nil: claude.AgentArgs
	proxy   proxyMode
	retries string
	// kill, when set, signals the CLI once ready returns.
	kill  syscall.Signal
	ready func(ctx context.Context, work string, p *proxy, out *lineLog) error
	// save names the request bodies to keep: request number (1-based) →
	// file name in scripted/testdata/requests.
	save map[int]string
	// sub, when set, is a rule put before rule's: a sub-agent's (it
	// matches first, by scripted.SubagentMark and its prompt).
	sub func(work string) scripted.Rule
	// files are more files for the working folder (a skill of the case's).
	files map[string]string
}

func step(text string, uses ...scripted.ToolUse) scripted.Step {
	return scripted.Step{Text: text, ToolUses: uses}
}

func bash(cmd, desc string) scripted.ToolUse {
	return scripted.ToolUse{Name: "Bash", Input: map[string]string{"command": cmd, "description": desc}}
}

func agentRule(steps ...scripted.Step) func(string) scripted.Rule {
	return func(string) scripted.Rule { return scripted.Rule{Kind: scripted.KindAgent, Steps: steps} }
}

func apiError(status int) func(string) scripted.Rule {
	return agentRule(scripted.Step{Error: &scripted.HTTPError{Status: status, Count: 100}})
}

func structured(prompt string) []string { return claude.StructuredArgs(prompt, schema, "") }

func cases() []recCase {
	midTool := func(ctx context.Context, work string, _ *proxy, out *lineLog) error {
		// The command touches .started before it blocks on the gate.
		return waitFor(ctx, func() bool {
			_, err := os.Stat(filepath.Join(work, ".started"))
			return err == nil
		})
	}
	gated := agentRule(
		step("Running the census.", bash("touch .started && cat gate", "Run the census")),
		step("Done."))
	midStream := func(ctx context.Context, _ string, p *proxy, out *lineLog) error {
		select {
		case <-p.stalled:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	midStreamPartial := func(ctx context.Context, w string, p *proxy, out *lineLog) error {
		if err := midStream(ctx, w, p, out); err != nil {
			return err
		}
		// Let the CLI print what it has been sent before the signal (it
		// holds a text delta back until the next event, so the block's
		// start is the last line to wait for).
		return waitFor(ctx, func() bool { return out.contains(`"content_block_start"`) })
	}
	return []recCase{
		{name: "plain-text", prompt: "@@iso@@ hello", rule: agentRule(step("Hello! The repository holds a README and some notes.")),
			save: map[int]string{1: "skill-listing-first-request.json"}},
		{name: "append-system-prompt-file", prompt: "@@iso@@ hello", rule: agentRule(step("Hello.")),
			args: func(work, prompt string) []string {
				return append(claude.AgentArgs(prompt, "", "", claude.BaseTools), "--append-system-prompt-file", filepath.Join(work, "extra.md"))
			},
			save: map[int]string{1: "append-system-prompt-file-request.json"}},
		{name: "tool-calls", prompt: "@@tools@@ look around", rule: func(work string) scripted.Rule {
			return scripted.Rule{Kind: scripted.KindAgent, Steps: []scripted.Step{
				step("Let me look around.",
					bash("ls", "List files"),
					scripted.ToolUse{Name: "Read", Input: map[string]string{"file_path": filepath.Join(work, "notes.txt")}},
					scripted.ToolUse{Name: "Glob", Input: map[string]string{"pattern": "**/*.go"}},
					scripted.ToolUse{Name: "Grep", Input: map[string]string{"pattern": "TODO"}}),
				step("",
					scripted.ToolUse{Name: "Edit", Input: map[string]string{"file_path": filepath.Join(work, "notes.txt"), "old_string": "first note", "new_string": "1st note"}},
					scripted.ToolUse{Name: "Write", Input: map[string]string{"file_path": filepath.Join(work, "out.txt"), "content": "done\n"}},
					bash("echo oops >&2; exit 3", "Fail on purpose"),
					scripted.ToolUse{Name: "Read", Input: map[string]string{"file_path": filepath.Join(work, "missing.txt")}}),
				step("All tools done."),
			}}
		}},
		{name: "skill-invoked", prompt: "@@skill@@ please check the stock",
			rule: agentRule(step("", scripted.ToolUse{Name: "Skill", Input: map[string]string{"skill": skillName, "args": "--check"}}), step("Checked.")),
			save: map[int]string{2: "skill-invoked-followup-request.json"}},
		{name: "slash-skill", prompt: "/" + skillName + " @@iso@@ go", rule: agentRule(step("Ran it.")),
			save: map[int]string{1: "slash-skill-prompt-request.json"}},
		// A context: fork skill runs as a sub-agent: its tool calls reach
		// the stream tagged with the Skill call's id (parent_tool_use_id),
		// its texts do not; the parent gets one tool result.
		{name: "fork-skill", prompt: "@@fork@@ audit the ledger",
			files: map[string]string{".claude/skills/" + forkName + "/SKILL.md": forkMD},
			sub: func(work string) scripted.Rule {
				return scripted.Rule{Kind: scripted.KindAgent, BodyHas: scripted.SubagentMark, Contains: "Ledger audit", Steps: []scripted.Step{
					step("Auditing the ledger.", bash("bash .claude/skills/stock-ledger/scripts/census.sh", "Run the census")),
					step("", scripted.ToolUse{Name: "Read", Input: map[string]string{"file_path": filepath.Join(work, "notes.txt")}}),
					step("AUDIT: total 42, notes read."),
				}}
			},
			rule: agentRule(step("", scripted.ToolUse{Name: "Skill", Input: map[string]string{"skill": forkName}}), step("The audit found a total of 42.")),
			save: map[int]string{2: "fork-skill-subagent-request.json"}},
		// A skill's frontmatter hooks run from its Skill call on; with
		// --include-hook-events each run is a hook_started and a
		// hook_response event.
		{name: "skill-hooks", prompt: "@@hooks@@ count with the hooks",
			files: map[string]string{".claude/skills/" + hookedName + "/SKILL.md": hookedMD},
			rule: agentRule(step("", scripted.ToolUse{Name: "Skill", Input: map[string]string{"skill": hookedName}}),
				step("", bash("echo counted", "Count")), step("Counted, with the hooks.")),
			args: func(_, prompt string) []string {
				return append(claude.AgentArgs(prompt, "", "", claude.BaseTools), claude.HookEvents)
			}},
		{name: "skill-unknown", prompt: "@@skill@@ use the other skill",
			rule: agentRule(step("", scripted.ToolUse{Name: "Skill", Input: map[string]string{"skill": "no-such-skill"}}), step("That skill does not exist."))},
		{name: "permission-denied", prompt: "@@denied@@ write a file",
			rule: func(work string) scripted.Rule {
				return scripted.Rule{Kind: scripted.KindAgent, Steps: []scripted.Step{
					step("", scripted.ToolUse{Name: "Write", Input: map[string]string{"file_path": filepath.Join(work, "new.txt"), "content": "x\n"}},
						bash("touch made-by-bash", "Make a file")),
					step("I was not allowed to write."),
				}}
			},
			// Only Read is allowed: Write and Bash are refused.
			args: func(_, prompt string) []string {
				return claude.AgentArgs(prompt, "", "", []string{"Read"})
			}},
		{name: "api-error-401", prompt: "@@err@@ hi", rule: apiError(401)},
		{name: "api-error-429", prompt: "@@err@@ hi", rule: apiError(429)},
		{name: "api-error-500", prompt: "@@err@@ hi", rule: apiError(500)},
		{name: "api-error-529", prompt: "@@err@@ hi", rule: apiError(529)},
		{name: "api-error-400-prompt-too-long", prompt: "@@err@@ hi", rule: apiError(400)},
		{name: "killed-midstream-sigterm", prompt: "@@slow@@ hi", rule: agentRule(step("A long answer that never ends")),
			proxy: stallAfterDelta, kill: syscall.SIGTERM, ready: midStream},
		{name: "killed-midstream-sigterm-partial-messages", prompt: "@@slow@@ hi", rule: agentRule(step("A long answer that never ends")),
			proxy: stallAfterDelta, kill: syscall.SIGTERM, ready: midStreamPartial,
			args: func(_, prompt string) []string {
				return append(claude.AgentArgs(prompt, "", "", claude.BaseTools), "--include-partial-messages")
			}},
		{name: "killed-midtool-sigterm", prompt: "@@hang@@ run it", rule: gated, kill: syscall.SIGTERM, ready: midTool},
		{name: "killed-midtool-sigkill", prompt: "@@hang@@ run it", rule: gated, kill: syscall.SIGKILL, ready: midTool},
		{name: "max-turns", prompt: "@@loop@@ go",
			rule: agentRule(step("", bash("echo a", "a")), step("", bash("echo b", "b")), step("Finished.")),
			args: func(_, prompt string) []string {
				return append(claude.AgentArgs(prompt, "", "", claude.BaseTools), "--max-turns", "1")
			}},
		{name: "max-budget", prompt: "@@spend@@ go",
			rule: agentRule(step("", bash("echo a", "a")), step("Finished.")),
			args: func(_, prompt string) []string {
				return append(claude.AgentArgs(prompt, "", "", claude.BaseTools), "--max-budget-usd", "0.001")
			}},
		{name: "usage-no-iterations", prompt: "@@usage@@ go", rule: agentRule(step("", bash("echo a", "a")), step("Counted."))},
		{name: "usage-iterations", prompt: "@@usage@@ go", rule: agentRule(step("", bash("echo a", "a")), step("Counted.")),
			proxy: addIterations},
		{name: "usage-partial-messages", prompt: "@@usage@@ go", rule: agentRule(step("", bash("echo a", "a")), step("Counted.")),
			args: func(_, prompt string) []string {
				return append(claude.AgentArgs(prompt, "", "", claude.BaseTools), "--include-partial-messages")
			}},
		{name: "json-schema-stream", prompt: "@@cold@@ judge", args: func(_, p string) []string { return structured(p) },
			rule: func(string) scripted.Rule {
				return scripted.Rule{Kind: scripted.KindCold, Steps: []scripted.Step{
					step("", scripted.ToolUse{Name: "StructuredOutput", Input: map[string]any{"verdict": "pass", "score": 7}})}}
			}},
		{name: "json-schema-invalid-then-valid", prompt: "@@cold@@ judge", args: func(_, p string) []string { return structured(p) },
			rule: func(string) scripted.Rule {
				return scripted.Rule{Kind: scripted.KindCold, Steps: []scripted.Step{
					step("", scripted.ToolUse{Name: "StructuredOutput", Input: map[string]any{"verdict": "maybe", "score": "high"}}),
					step("", scripted.ToolUse{Name: "StructuredOutput", Input: map[string]any{"verdict": "fail", "score": 2}})}}
			}},
		{name: "json-schema-never-calls-tool", prompt: "@@cold@@ judge", args: func(_, p string) []string { return structured(p) },
			rule: func(string) scripted.Rule {
				return scripted.Rule{Kind: scripted.KindCold, Steps: []scripted.Step{
					step("I think it passes."), step("Still just text: it passes.")}}
			},
			save: map[int]string{2: "json-schema-enforce-request.json"}},
	}
}

// cli is one isolated CLI home: HOME, CLAUDE_CONFIG_DIR and a working
// folder holding a small project with the skill installed.
type cli struct {
	bin, home, config, work string
}

func newCLI(bin string) (*cli, error) {
	c := &cli{bin: bin}
	for _, d := range []*string{&c.home, &c.config, &c.work} {
		p, err := os.MkdirTemp("", "rec-")
		if err != nil {
			return nil, err
		}
		*d = p
	}
	files := map[string]string{
		"README.md":   "# Warehouse\n",
		"notes.txt":   "first note\nTODO: count the stock\n",
		"src/main.go": "package main\n\nfunc main() {}\n",
		"extra.md":    "Always answer briefly.\n",
		".claude/skills/" + skillName + "/SKILL.md":          skillMD,
		".claude/skills/" + skillName + "/scripts/census.sh": "echo total 42\n",
	}
	if err := writeFiles(c.work, files); err != nil {
		return nil, err
	}
	if err := syscall.Mkfifo(filepath.Join(c.work, "gate"), 0o600); err != nil {
		return nil, err
	}
	return c, nil
}

// writeFiles writes files (relative path → content) under dir.
func writeFiles(dir string, files map[string]string) error {
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (c *cli) close() {
	for _, d := range []string{c.home, c.config, c.work} {
		_ = os.RemoveAll(d)
	}
}

// clean rewrites the throwaway paths to fixed ones.
func (c *cli) clean(b []byte) []byte {
	for _, p := range [][2]string{{c.work, "/tmp/work"}, {c.config, "/tmp/claude-config"}, {c.home, "/home/user"}} {
		b = bytes.ReplaceAll(b, []byte(p[0]), []byte(p[1]))
		// The CLI names a folder's sessions and tasks after its path with
		// every other character a "-" (sandbox.SessionDir).
		b = bytes.ReplaceAll(b, []byte(dashed(p[0])), []byte(dashed(p[1])))
	}
	return b
}

func dashed(path string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, path)
}

// command is the environment of PROTOCOL §1: an allowlist, nothing of the
// recording machine's own environment.
func (c *cli) command(ctx context.Context, url, retries string, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir = c.work
	cmd.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + c.home,
		"TERM=dumb",
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + url,
		"ANTHROPIC_API_KEY=sk-fixture",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CONFIG_DIR=" + c.config,
		"CLAUDE_CODE_MAX_RETRIES=" + retries,
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// invoke runs one CLI invocation and returns its stdout and exit code
// (128+signal when a signal ended it).
func (c *cli) invoke(url, retries string, args []string, kill syscall.Signal, ready func(context.Context, *lineLog) error) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := c.command(ctx, url, retries, args)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	out := newLineLog(stdout)
	var readyErr error
	if ready != nil {
		if readyErr = ready(ctx, out); readyErr == nil {
			readyErr = cmd.Process.Signal(kill)
		}
	}
	<-out.done
	waitErr := cmd.Wait()
	// Release a tool still blocked on the gate (a SIGKILL leaves it
	// running: PROTOCOL §5); opening without a reader fails harmlessly.
	if f, err := os.OpenFile(filepath.Join(c.work, "gate"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
	if readyErr != nil {
		return nil, 0, fmt.Errorf("waiting to signal: %w (stderr: %s; stdout: %s)", readyErr, stderr.String(), c.clean(out.bytes()))
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(waitErr, &ee):
		ws := ee.Sys().(syscall.WaitStatus)
		code = ee.ExitCode()
		if ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	case waitErr != nil:
		return nil, 0, waitErr
	}
	return out.bytes(), code, nil
}

func (r *recorder) record(c recCase) error {
	env, err := newCLI(r.bin)
	if err != nil {
		return err
	}
	defer env.close()
	if err := writeFiles(env.work, c.files); err != nil {
		return err
	}
	rules := []scripted.Rule{c.rule(env.work)}
	if c.sub != nil {
		rules = append([]scripted.Rule{c.sub(env.work)}, rules...)
	}
	srv, err := scripted.Start(scripted.Script{Rules: rules})
	if err != nil {
		return err
	}
	defer srv.Close()
	url := srv.URL()
	var p *proxy
	if c.proxy != passThrough {
		if p, err = startProxy(url, c.proxy); err != nil {
			return err
		}
		defer p.close()
		url = p.url()
	}
	args := claude.AgentArgs(c.prompt, "", "", claude.BaseTools)
	if c.args != nil {
		args = c.args(env.work, c.prompt)
	}
	retries := c.retries
	if retries == "" {
		retries = "1"
	}
	var ready func(context.Context, *lineLog) error
	if c.ready != nil {
		ready = func(ctx context.Context, out *lineLog) error { return c.ready(ctx, env.work, p, out) }
	}
	out, code, err := env.invoke(url, retries, args, c.kill, ready)
	if err != nil {
		return err
	}
	if len(out) == 0 {
		return errors.New("the CLI printed nothing")
	}
	reqs := srv.Requests()
	e := entry{Exit: code, Context: lastContext(reqs)}
	if c.proxy == addIterations {
		e.Context = p.lastIterations()
	}
	name := c.name + ".jsonl"
	if err := os.WriteFile(filepath.Join(transcriptDir, name), env.clean(out), 0o644); err != nil {
		return err
	}
	r.trans[name] = e
	return r.saveRequests(env, reqs, c.save)
}

// resume records three turns of one session and an unknown session id.
func (r *recorder) resume() error {
	env, err := newCLI(r.bin)
	if err != nil {
		return err
	}
	defer env.close()
	srv, err := scripted.Start(scripted.Script{Rules: []scripted.Rule{
		{Kind: scripted.KindAgent, Steps: []scripted.Step{step("", bash("echo turn", "Say which turn")), step("Turn done.")}},
	}})
	if err != nil {
		return err
	}
	defer srv.Close()
	session := ""
	for i, prompt := range []string{"@@resume@@ one", "@@resume@@ two", "@@resume@@ three"} {
		out, code, err := env.invoke(srv.URL(), "1", claude.AgentArgs(prompt, session, "", claude.BaseTools), 0, nil)
		if err != nil {
			return err
		}
		turn, err := claude.ParseTurn(bytes.NewReader(out))
		if err != nil || turn.SessionID == "" || code != 0 {
			return fmt.Errorf("turn %d: exit %d, session %q, %v", i+1, code, turn.SessionID, err)
		}
		session = turn.SessionID
		name := fmt.Sprintf("resume-turn%d.jsonl", i+1)
		if err := os.WriteFile(filepath.Join(transcriptDir, name), env.clean(out), 0o644); err != nil {
			return err
		}
		r.trans[name] = entry{Exit: code, Context: lastContext(srv.Requests())}
	}
	out, code, err := env.invoke(srv.URL(), "1", claude.AgentArgs("@@resume@@ four", "00000000-0000-4000-8000-000000000000", "", claude.BaseTools), 0, nil)
	if err != nil {
		return err
	}
	r.trans["resume-missing-session.jsonl"] = entry{Exit: code}
	return os.WriteFile(filepath.Join(transcriptDir, "resume-missing-session.jsonl"), env.clean(out), 0o644)
}

// compact records /compact on a session whose last turn used a tool: the
// command's stream (compact.jsonl), the summary request (the CLI joins its
// instructions to the last tool results) and the next turn's request,
// which starts from the continuation message.
func (r *recorder) compact() error {
	env, err := newCLI(r.bin)
	if err != nil {
		return err
	}
	defer env.close()
	srv, err := scripted.Start(scripted.Script{Rules: []scripted.Rule{
		{Kind: scripted.KindAgent, Contains: scripted.SummaryRequest, Steps: []scripted.Step{
			step("<analysis>\nTwo turns.\n</analysis>\n\n<summary>\nThe user asked for a look around; the census ran.\n</summary>")}},
		{Kind: scripted.KindAgent, Steps: []scripted.Step{step("", bash("echo census", "Run the census")), step("Census done.")}},
	}})
	if err != nil {
		return err
	}
	defer srv.Close()
	session := ""
	for _, prompt := range []string{"@@compact@@ look around", "/compact", "@@compact@@ and now?"} {
		out, code, err := env.invoke(srv.URL(), "1", claude.AgentArgs(prompt, session, "", claude.BaseTools), 0, nil)
		if err != nil {
			return err
		}
		turn, err := claude.ParseTurn(bytes.NewReader(out))
		if err != nil || turn.SessionID == "" || code != 0 {
			return fmt.Errorf("%q: exit %d, session %q, %v", prompt, code, turn.SessionID, err)
		}
		session = turn.SessionID
		if prompt == "/compact" {
			if err := os.WriteFile(filepath.Join(transcriptDir, "compact.jsonl"), env.clean(out), 0o644); err != nil {
				return err
			}
			r.trans["compact.jsonl"] = entry{Exit: code}
		}
	}
	// Requests: the turn's two calls, the summary, the next turn's call.
	return r.saveRequests(env, srv.Requests(), map[int]string{3: "compact-summary-request.json", 4: "compact-continued-request.json"})
}

func lastContext(reqs []scripted.Request) int64 {
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Status == http.StatusOK {
			return reqs[i].Usage.Context()
		}
	}
	return 0
}

func (r *recorder) saveRequests(env *cli, reqs []scripted.Request, save map[int]string) error {
	for n, name := range save {
		if n > len(reqs) {
			return fmt.Errorf("request %d for %s: only %d requests", n, name, len(reqs))
		}
		b, err := json.MarshalIndent(map[string]json.RawMessage{"body": env.clean(reqs[n-1].Body)}, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(requestDir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
		r.reqs = append(r.reqs, name)
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// waitFor polls cond every 10 ms until it holds or ctx ends. The recorder
// has no event to wait on for a file the CLI's tool makes; this is a
// recording tool, not a test, so polling is fine here.
func waitFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// lineLog collects the CLI's stdout as it arrives.
type lineLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
}

func newLineLog(r io.Reader) *lineLog {
	l := &lineLog{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadBytes('\n')
			l.mu.Lock()
			l.buf.Write(line)
			l.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return l
}

func (l *lineLog) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Contains(l.buf.Bytes(), []byte(s))
}

func (l *lineLog) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.buf.Bytes()...)
}

// proxyMode says how the proxy between the CLI and the scripted server
// changes the answer stream: the scripted server answers in one go and
// sends no usage.iterations, and two cases need otherwise.
type proxyMode int

const (
	passThrough     proxyMode = iota
	stallAfterDelta           // stop forwarding after the first content_block_delta, until the client goes away
	addIterations             // add usage.iterations (one "message" element) to message_delta
)

type proxy struct {
	mode    proxyMode
	target  string
	ln      net.Listener
	srv     *http.Server
	stalled chan struct{}
	once    sync.Once
	mu      sync.Mutex
	lastIt  int64
}

func startProxy(target string, mode proxyMode) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{mode: mode, target: target, ln: ln, stalled: make(chan struct{})}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *proxy) url() string { return "http://" + p.ln.Addr().String() }
func (p *proxy) close()      { _ = p.srv.Close() }

func (p *proxy) lastIterations() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastIt
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	br := bufio.NewReader(resp.Body)
	event := ""
	var start map[string]any // the message_start usage
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			s := string(line)
			switch {
			case strings.HasPrefix(s, "event: "):
				event = strings.TrimSpace(strings.TrimPrefix(s, "event: "))
			case strings.HasPrefix(s, "data: ") && event == "message_start" && p.mode == addIterations:
				var d struct {
					Message struct {
						Usage map[string]any `json:"usage"`
					} `json:"message"`
				}
				_ = json.Unmarshal([]byte(s[len("data: "):]), &d)
				start = d.Message.Usage
			case strings.HasPrefix(s, "data: ") && event == "message_delta" && p.mode == addIterations:
				line = p.withIterations(line, start)
			}
			_, _ = w.Write(line)
			_ = rc.Flush()
			if p.mode == stallAfterDelta && event == "content_block_delta" && strings.HasPrefix(s, "data: ") {
				p.once.Do(func() { close(p.stalled) })
				<-r.Context().Done()
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// withIterations adds usage.iterations to a message_delta data line. The
// figures are the call's message_start usage plus a compaction-like offset
// (cache reads grow by 1000), so a reader that takes them from the wrong
// place gets a different context size.
func (p *proxy) withIterations(line []byte, start map[string]any) []byte {
	var d map[string]any
	if err := json.Unmarshal(line[len("data: "):], &d); err != nil {
		return line
	}
	num := func(k string) int64 { f, _ := start[k].(float64); return int64(f) }
	in, cc, cr := num("input_tokens"), num("cache_creation_input_tokens"), num("cache_read_input_tokens")+1000
	usage, _ := d["usage"].(map[string]any)
	if usage == nil {
		usage = map[string]any{}
		d["usage"] = usage
	}
	usage["iterations"] = []map[string]any{{"type": "message", "input_tokens": in, "output_tokens": usage["output_tokens"],
		"cache_creation_input_tokens": cc, "cache_read_input_tokens": cr}}
	b, err := json.Marshal(d)
	if err != nil {
		return line
	}
	p.mu.Lock()
	p.lastIt = in + cc + cr
	p.mu.Unlock()
	return append(append([]byte("data: "), b...), '\n')
}
