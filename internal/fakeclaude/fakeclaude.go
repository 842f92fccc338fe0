// Package fakeclaude is a small stand-in for the pinned Claude Code CLI
// (claude.VerifiedVersion) for the argv vibe-test passes: `-p PROMPT
// --output-format stream-json --verbose` with --allowedTools, --resume,
// --model, --json-schema/--tools "" for cold calls, --no-session-persistence,
// and --input-format stream-json for a long-lived session.
//
// It is what the fast tier of the tests runs instead of the real CLI: it
// speaks to the same Messages API (ANTHROPIC_BASE_URL, normally package
// scripted) with the same kinds of request (tools, prompts, the skill
// listing, the skill's body after a Skill call), runs the tools the model
// asks for in the working folder (Bash in its own session, Read, Write,
// Edit, Glob, Grep, Skill, StructuredOutput), keeps the session as one JSON
// line per message in $CLAUDE_CONFIG_DIR/projects/<cwd>/<id>.jsonl so
// --resume works (and a cut-back file is what the next turn sees), and
// prints the stream-json events claude.ParseTurn reads: init, one assistant
// event per content block, user tool results, permission_denied, api_retry
// and the result with usage, total_cost_usd (the session's running total,
// as the CLI restores it on resume), session_id and is_error.
//
// The prompt "/compact" compacts the session as the CLI's command does
// (compact.go): summary calls to the API, a compact_boundary event, the
// history replaced by a continuation message and the last answer, all
// appended to the session file. The message "/clear" in a live session
// starts a new conversation in the same process (clear.go), as the judge's
// pooled processes (claude.Pool) use it between calls.
//
// It is not the CLI: no real system prompt, no hooks, no MCP, no subagents
// (a context: fork skill runs inline, its body after the Skill call),
// no automatic compaction, no read-before-write rule, tools run one after
// another.
// What only the real binary proves (argv acceptance, signals and strays,
// the jail, the real skill loader) stays on the real-CLI tier; the fidelity
// test in this package runs one conversation through both and compares
// what vibe-test reads.
package fakeclaude

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Version is the CLI version the fake answers for.
const Version = "2.1.328"

// defaultModel is what the pinned CLI runs with no --model (its init event
// in claude/testdata/transcripts).
const defaultModel = "claude-opus-5-5"

var aliases = map[string]string{
	"default": defaultModel, "opus": defaultModel, "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-4-5",
}

type fake struct {
	opts      options
	env       map[string]string
	out       io.Writer
	outMu     sync.Mutex
	cwd       string
	configDir string
	sessionID string
	session   string // the session file; "" when not persisted
	history   []message
	model     string
	api       *client
	// sessionUsage sums every answered call of the session, this
	// invocation's and those read back on resume: total_cost_usd.
	sessionUsage usage
	maxRetries   int
	skills       map[string]projectSkill
	settings     settings
	offered      []string
	schema       *schema
	fresh        bool // the session started in this process
	cleared      bool // /clear ran: the next prompt carries its record

	childMu sync.Mutex
	child   int
}

// Main runs the fake with the process's arguments (without the program
// name) and returns its exit code. A SIGTERM or SIGINT kills the running
// tool's process group and exits at once with 128+signal, as the CLI does.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	o, err := parseArgs(args)
	delegate(o, err, args, environ)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if o.version {
		fmt.Fprintln(stdout, Version+" (Claude Code)")
		return 0
	}
	if !o.print {
		fmt.Fprintln(stderr, "this stand-in runs only with -p (print mode)")
		return 1
	}
	if o.outputFormat != "stream-json" {
		fmt.Fprintln(stderr, "this stand-in prints only --output-format stream-json")
		return 1
	}
	f := &fake{opts: o, out: stdout, env: map[string]string{}}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			f.env[k] = v
		}
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(stop)
	go func() {
		sig, ok := <-stop
		if !ok {
			return
		}
		f.killChild()
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
	code, err := f.run(context.Background(), stdin)
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
	}
	return code
}

// AgentCLIFile, beside the stand-in's executable, names a real claude
// binary (absolute, or relative to the stand-in's folder) and makes the stand-in a hybrid (testenv.HybridClaude): agent
// turns become the real CLI (exec, so the same process gets the signals
// and runs in the same jail), while cold calls (--json-schema), the local
// /cost and --version stay with the stand-in.
const AgentCLIFile = "agent-cli"

func delegate(o options, parseErr error, args, environ []string) {
	if parseErr == nil && (o.version || o.jsonSchema != "" || strings.TrimSpace(o.prompt) == "/cost") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(exe), AgentCLIFile))
	if err != nil {
		return
	}
	target := strings.TrimSpace(string(b))
	if !filepath.IsAbs(target) {
		// From the stand-in's folder, in the real CLI's npm tree, wherever
		// the jail shows that tree.
		target = filepath.Join(filepath.Dir(exe), target)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(exe), LiveOnlyFile)); err == nil && o.inputFormat != "stream-json" {
		return // a one-shot session (a fresh probe) stays with the stand-in
	}
	_ = syscall.Exec(target, append([]string{target}, args...), environ)
}

// LiveOnlyFile, beside AgentCLIFile, narrows the hybrid to live sessions
// (--input-format stream-json: a conversation in interactive mode): one-shot
// agent sessions, the fresh probes, stay with the stand-in too. For tests
// whose subject is the conversation on the real CLI, its fresh sessions
// are some 6 CPU-seconds of node each that prove nothing more.
const LiveOnlyFile = "agent-cli-live-only"

// startChild starts cmd and records its pid under the lock killChild takes.
func (f *fake) startChild(cmd *exec.Cmd) error {
	f.childMu.Lock()
	defer f.childMu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	f.child = cmd.Process.Pid
	return nil
}

func (f *fake) setChild(pid int) {
	f.childMu.Lock()
	f.child = pid
	f.childMu.Unlock()
}

func (f *fake) killChild() {
	f.childMu.Lock()
	defer f.childMu.Unlock()
	if f.child > 0 {
		_ = syscall.Kill(-f.child, syscall.SIGKILL)
	}
}

// emit prints one stream-json event as one line, in one write.
func (f *fake) emit(ev map[string]any) {
	b, err := marshal(ev)
	if err != nil {
		return
	}
	f.outMu.Lock()
	defer f.outMu.Unlock()
	_, _ = f.out.Write(append(b, '\n'))
}

func (f *fake) run(ctx context.Context, stdin io.Reader) (int, error) {
	var err error
	if f.cwd, err = os.Getwd(); err != nil {
		return 1, err
	}
	f.configDir = f.env["CLAUDE_CONFIG_DIR"]
	if f.configDir == "" {
		f.configDir = filepath.Join(f.env["HOME"], ".claude")
	}
	f.maxRetries = 10
	if n, err := strconv.Atoi(f.env["CLAUDE_CODE_MAX_RETRIES"]); err == nil && n >= 0 {
		f.maxRetries = n
	}
	f.model = f.opts.model
	if f.model == "" {
		f.model = f.env["ANTHROPIC_MODEL"]
	}
	if a, ok := aliases[f.model]; ok || f.model == "" {
		f.model = a
		if f.model == "" {
			f.model = defaultModel
		}
	}
	if f.opts.jsonSchema != "" {
		if f.schema, err = compileSchema(f.opts.jsonSchema); err != nil {
			return 1, fmt.Errorf("--json-schema: %v", err)
		}
	}
	if f.opts.appendFile != "" {
		b, err := os.ReadFile(f.opts.appendFile)
		if err != nil {
			return 1, fmt.Errorf("--append-system-prompt-file: %v", err)
		}
		f.opts.appendSystem = string(b)
	}
	f.skills = findSkills(f.cwd)
	f.settings = loadSettings(f.cwd)
	f.offered = f.toolNames()

	// The session: resumed from its file, or new.
	switch {
	case f.opts.resume != "":
		f.sessionID = f.opts.resume
		if !f.load() {
			f.emit(map[string]any{"type": "result", "subtype": "error_during_execution", "duration_ms": 0, "duration_api_ms": 0,
				"is_error": true, "num_turns": 0, "stop_reason": nil, "session_id": f.sessionID, "total_cost_usd": 0,
				"usage": resultUsage(usage{}), "permission_denials": []any{}, "uuid": newUUID(),
				"errors": []string{"No conversation found with session ID: " + f.sessionID}})
			return 1, nil
		}
	case f.opts.sessionID != "":
		f.sessionID, f.fresh = f.opts.sessionID, true
	default:
		f.sessionID, f.fresh = newUUID(), true
	}
	if !f.opts.noPersist {
		f.session = filepath.Join(f.configDir, "projects", nonAlnum.ReplaceAllString(f.cwd, "-"), f.sessionID+".jsonl")
	}

	f.api = &client{base: f.env["ANTHROPIC_BASE_URL"], session: f.sessionID, http: &http.Client{}}
	if f.api.base == "" {
		f.api.base = "https://api.anthropic.com"
	}
	switch {
	case f.env["ANTHROPIC_API_KEY"] != "":
		f.api.key = f.env["ANTHROPIC_API_KEY"]
	case f.env["ANTHROPIC_AUTH_TOKEN"] != "":
		f.api.bearer = f.env["ANTHROPIC_AUTH_TOKEN"]
	case f.env["CLAUDE_CODE_OAUTH_TOKEN"] != "":
		f.api.bearer = f.env["CLAUDE_CODE_OAUTH_TOKEN"]
	default:
		f.api.bearer = storedLogin(f.configDir)
	}

	if f.opts.inputFormat == "stream-json" {
		return f.interactive(ctx, stdin), nil
	}
	if f.opts.prompt == "" && stdin != nil {
		// -p with no prompt reads it from stdin, as the CLI does (vibe-test
		// pipes a prompt too long for one argument).
		b, err := io.ReadAll(stdin)
		if err != nil {
			return 1, fmt.Errorf("reading the prompt from stdin: %v", err)
		}
		f.opts.prompt = string(b)
	}
	if isCompact([]block{{Type: "text", Text: f.opts.prompt}}) {
		// A local command that calls the API: status events come before init.
		if !f.ok() {
			return 1, nil
		}
		return f.compact(ctx), nil
	}
	f.emitInit()
	if strings.TrimSpace(f.opts.prompt) == "/cost" {
		// A local command: no model call (how claude.ResolveModel learns
		// the model).
		f.emitResult(time.Now(), usage{}, 0, "Total cost: $0.0000", "completed", false, nil, nil)
		return 0, nil
	}
	if f.opts.prompt == "" {
		return 1, fmt.Errorf("input must be provided either through stdin or as a prompt argument when using --print")
	}
	if !f.ok() {
		return 1, nil
	}
	return f.turn(ctx, []block{{Type: "text", Text: f.opts.prompt}}), nil
}

// ok reports whether there are credentials; without, the CLI answers
// "Not logged in" and makes no call.
func (f *fake) ok() bool {
	if f.api.key != "" || f.api.bearer != "" {
		return true
	}
	msg := "Not logged in · Please run /login"
	f.emit(map[string]any{"type": "assistant", "message": syntheticMessage(msg), "parent_tool_use_id": nil,
		"session_id": f.sessionID, "uuid": newUUID(), "error": "authentication_failed", "is_api_error_message": true})
	f.emitResult(time.Now(), usage{}, 0, msg, "api_error", true, nil, nil)
	return false
}

func storedLogin(configDir string) string {
	b, err := os.ReadFile(filepath.Join(configDir, ".credentials.json"))
	if err != nil {
		return ""
	}
	var c struct {
		ClaudeAiOauth struct {
			AccessToken string `json:"accessToken"`
		} `json:"claudeAiOauth"`
	}
	_ = json.Unmarshal(b, &c)
	return c.ClaudeAiOauth.AccessToken
}

// interactive reads one user message per stdin line and answers each with
// its own events and result, until stdin closes.
func (f *fake) interactive(ctx context.Context, stdin io.Reader) int {
	if !f.ok() {
		return 1
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	code := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var in struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(line), &in); err != nil || in.Type != "user" {
			continue
		}
		var content []block
		var s string
		if json.Unmarshal(in.Message.Content, &s) == nil {
			content = []block{{Type: "text", Text: s}}
		} else if json.Unmarshal(in.Message.Content, &content) != nil {
			continue
		}
		if isCompact(content) {
			code = f.compact(ctx)
			continue
		}
		if isClear(content) {
			code = f.clear()
			continue
		}
		f.emitInit()
		code = f.turn(ctx, content)
	}
	return code
}

func (f *fake) toolNames() []string {
	var names []string
	if f.opts.toolsSet {
		for _, t := range f.opts.tools {
			if t != "" {
				names = append(names, t)
			}
		}
	} else {
		names = append(names, agentTools...)
	}
	if f.opts.jsonSchema != "" {
		names = append(names, "StructuredOutput")
	}
	return names
}

func (f *fake) emitInit() {
	tools := initTools
	if f.opts.toolsSet {
		tools = nil
		for _, t := range f.opts.tools {
			if t != "" {
				tools = append(tools, t)
			}
		}
	}
	if f.opts.jsonSchema != "" {
		tools = append(append([]string{}, tools...), "StructuredOutput")
	}
	if tools == nil {
		tools = []string{}
	}
	keySource := "none"
	if f.api.key != "" {
		keySource = "ANTHROPIC_API_KEY"
	}
	skills := skillNames(f.skills)
	f.emit(map[string]any{"type": "system", "subtype": "init", "cwd": f.cwd, "session_id": f.sessionID,
		"tools": tools, "mcp_servers": []any{}, "model": f.model, "permissionMode": "default",
		"slash_commands": skills, "apiKeySource": keySource, "claude_code_version": Version,
		"output_style": "default", "agents": []string{"general-purpose"}, "skills": skills, "plugins": []any{},
		"uuid": newUUID()})
}

// turn sends one prompt and runs the agentic loop until the model stops.
// It returns the process's exit code for a -p run.
func (f *fake) turn(ctx context.Context, prompt []block) int {
	start := time.Now()
	if f.cleared {
		prompt = append(append([]block{}, clearRecord...), prompt...)
		f.cleared = false
	}
	if len(f.history) == 0 {
		prompt = append([]block{{Type: "text", Text: reminder}}, prompt...)
	}
	f.add(message{Role: "user", Content: prompt})
	var turnUsage usage
	var denials []map[string]any
	var structured json.RawMessage
	enforced := false
	lastText := ""
	calls := 0
	for {
		if f.opts.maxTurns > 0 && calls >= f.opts.maxTurns {
			f.emitResultFull(start, turnUsage, calls, "", "max_turns", true, denials, nil, "error_max_turns",
				[]string{fmt.Sprintf("Reached maximum number of turns (%d)", f.opts.maxTurns)})
			return 1
		}
		calls++
		m, reqID, err := f.callWithRetries(ctx, f.requestBody())
		if err != nil {
			ae := err.(*apiError)
			text := syntheticText(ae, f.api.base)
			ev := map[string]any{"type": "assistant", "message": syntheticMessage(text), "parent_tool_use_id": nil,
				"session_id": f.sessionID, "uuid": newUUID(), "error": errorName(ae.Status), "is_api_error_message": true}
			if ae.Status != 0 {
				ev["api_error_status"], ev["api_error_type"] = ae.Status, ae.Type
			}
			f.emit(ev)
			reason := "api_error"
			if ae.Status == 400 && strings.Contains(strings.ToLower(ae.Message), "prompt is too long") {
				reason = "prompt_too_long"
			}
			r := f.resultEvent(start, turnUsage, calls, text, reason, true, denials, nil)
			r["api_error_status"] = nullIfZero(ae.Status)
			if ae.Type != "" {
				r["api_error_type"] = ae.Type
			}
			r["stop_reason"] = "stop_sequence"
			f.emit(r)
			return 1
		}
		startOut := int64(1)
		for _, b := range m.Content {
			shown := b
			if shown.Type == "tool_use" && len(shown.Input) == 0 {
				shown.Input = json.RawMessage("{}")
			}
			u := *m.Usage
			u.Output = startOut
			f.emit(map[string]any{"type": "assistant", "message": map[string]any{
				"id": m.ID, "type": "message", "role": "assistant", "model": m.Model, "content": []block{shown},
				"stop_reason": nil, "stop_sequence": nil, "usage": u, "context_management": nil},
				"parent_tool_use_id": nil, "session_id": f.sessionID, "uuid": newUUID(),
				"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "request_id": reqID})
		}
		f.add(m)
		turnUsage.add(*m.Usage)
		f.sessionUsage.add(*m.Usage)
		var uses []block
		for _, b := range m.Content {
			switch b.Type {
			case "tool_use":
				uses = append(uses, b)
			case "text":
				lastText = b.Text
			}
		}
		if len(m.Content) > 0 && len(uses) == 0 {
			lastText = ""
			for _, b := range m.Content {
				if b.Type == "text" {
					lastText += b.Text
				}
			}
		}
		if f.opts.maxBudget > 0 && f.sessionUsage.cost() >= f.opts.maxBudget {
			f.emitResultFull(start, usage{}, calls, "", "budget_exhausted", true, denials, nil, "error_max_budget_usd",
				[]string{fmt.Sprintf("Reached maximum budget ($%g)", f.opts.maxBudget)})
			return 1
		}
		if len(uses) == 0 {
			if f.opts.jsonSchema != "" && structured == nil && !enforced {
				enforced = true
				nudge := block{Type: "text", Text: "[structured-output-enforce] You MUST call the StructuredOutput tool to complete this request. Call this tool now."}
				f.add(message{Role: "user", Content: []block{nudge}})
				f.emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []block{nudge}},
					"parent_tool_use_id": nil, "session_id": f.sessionID, "uuid": newUUID(), "isSynthetic": true})
				continue
			}
			break
		}
		var results []block
		for _, u := range uses {
			out := f.runTool(ctx, u)
			if out.denied {
				f.emit(map[string]any{"type": "system", "subtype": "permission_denied", "tool_name": u.Name,
					"tool_use_id": u.ID, "message": out.content, "uuid": newUUID(), "session_id": f.sessionID})
				var in any
				_ = json.Unmarshal(u.Input, &in)
				denials = append(denials, map[string]any{"tool_name": u.Name, "tool_use_id": u.ID, "tool_input": in})
			}
			isErr := out.isError
			rb := block{Type: "tool_result", ToolUseID: u.ID, Content: out.content}
			if isErr || u.Name == "Bash" {
				rb.IsError = &isErr
			}
			f.emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []block{rb}},
				"parent_tool_use_id": nil, "session_id": f.sessionID, "uuid": newUUID(),
				"timestamp": time.Now().UTC().Format(time.RFC3339Nano)})
			results = append(results, rb)
			for _, x := range out.extra {
				f.emit(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []block{x}},
					"parent_tool_use_id": nil, "session_id": f.sessionID, "uuid": newUUID(), "isSynthetic": true})
				results = append(results, x)
			}
			if out.structured != nil {
				structured = out.structured
			}
		}
		f.add(message{Role: "user", Content: results})
		if structured != nil {
			break
		}
	}
	f.emitResult(start, turnUsage, calls, lastText, "completed", false, denials, structured)
	return 0
}

func (f *fake) emitResult(start time.Time, u usage, calls int, text, reason string, isErr bool, denials []map[string]any, structured json.RawMessage) {
	f.emit(f.resultEvent(start, u, calls, text, reason, isErr, denials, structured))
}

func (f *fake) emitResultFull(start time.Time, u usage, calls int, text, reason string, isErr bool, denials []map[string]any, structured json.RawMessage, subtype string, errs []string) {
	r := f.resultEvent(start, u, calls, text, reason, isErr, denials, structured)
	r["subtype"] = subtype
	r["errors"] = errs
	delete(r, "result")
	f.emit(r)
}

func (f *fake) resultEvent(start time.Time, u usage, calls int, text, reason string, isErr bool, denials []map[string]any, structured json.RawMessage) map[string]any {
	if denials == nil {
		denials = []map[string]any{}
	}
	total := f.sessionUsage.cost()
	r := map[string]any{"type": "result", "subtype": "success", "is_error": isErr,
		"duration_ms": time.Since(start).Milliseconds(), "duration_api_ms": time.Since(start).Milliseconds(),
		"num_turns": calls, "result": text, "stop_reason": "end_turn", "session_id": f.sessionID,
		"total_cost_usd": total, "usage": resultUsage(u),
		"modelUsage": map[string]any{f.model: map[string]any{
			"inputTokens": f.sessionUsage.Input, "outputTokens": f.sessionUsage.Output,
			"cacheReadInputTokens": f.sessionUsage.CacheRead, "cacheCreationInputTokens": f.sessionUsage.CacheCreation,
			"costUSD": total}},
		"permission_denials": denials, "terminal_reason": reason, "api_error_status": nil, "uuid": newUUID()}
	if structured != nil {
		r["structured_output"] = structured
		r["stop_reason"] = "tool_use"
	}
	return r
}

func resultUsage(u usage) map[string]any {
	return map[string]any{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheCreation,
		"cache_read_input_tokens": u.CacheRead, "output_tokens": u.Output, "service_tier": "standard",
		"iterations": []any{}}
}

func syntheticMessage(text string) map[string]any {
	return map[string]any{"id": newUUID(), "model": "<synthetic>", "role": "assistant", "type": "message",
		"stop_reason": "stop_sequence", "stop_sequence": "", "content": []block{{Type: "text", Text: text}},
		"usage": resultUsage(usage{})}
}

// add appends a message to the history and, one JSON line each, to the
// session file: the prompt before its call, each answer and each tool
// result as they come, so a stopped turn leaves what the CLI's would.
func (f *fake) add(m message) {
	f.history = append(f.history, m)
	f.appendLine(map[string]any{"type": m.Role, "message": m, "sessionId": f.sessionID,
		"cwd": f.cwd, "uuid": newUUID(), "timestamp": time.Now().UTC().Format(time.RFC3339Nano)})
}

// appendLine appends one JSON line to the session file, if there is one.
func (f *fake) appendLine(v map[string]any) {
	if f.session == "" {
		return
	}
	line, err := marshal(v)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(f.session), 0o700); err != nil {
		return
	}
	fh, err := os.OpenFile(f.session, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	_, _ = fh.Write(append(line, '\n'))
	_ = fh.Close()
}

// load reads a session back; a line cut short by a kill is skipped, and a
// tool call left without its result gets the CLI's interrupted result. A
// compact boundary starts the history again; every call's usage, the
// summary calls' (side lines) included, counts toward the session's cost.
func (f *fake) load() bool {
	path := filepath.Join(f.configDir, "projects", nonAlnum.ReplaceAllString(f.cwd, "-"), f.sessionID+".jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		var rec struct {
			Type        string  `json:"type"`
			Subtype     string  `json:"subtype"`
			IsSidechain bool    `json:"isSidechain"`
			Message     message `json:"message"`
		}
		if line == "" || json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec.Message.Usage != nil {
			f.sessionUsage.add(*rec.Message.Usage)
		}
		switch {
		case rec.Type == "system" && rec.Subtype == "compact_boundary":
			f.history = nil
		case rec.Message.Role != "" && !rec.IsSidechain:
			f.history = append(f.history, rec.Message)
		}
	}
	if n := len(f.history); n > 0 && f.history[n-1].Role == "assistant" {
		var results []block
		yes := true
		for _, b := range f.history[n-1].Content {
			if b.Type == "tool_use" {
				results = append(results, block{Type: "tool_result", ToolUseID: b.ID, Content: "[Request interrupted by user for tool use]", IsError: &yes})
			}
		}
		if results != nil {
			f.history = append(f.history, message{Role: "user", Content: results})
		}
	}
	return true
}

// marshal encodes as JavaScript's JSON.stringify does: <, > and & stay
// as they are (encoding/json would escape them, and a rubric's check on
// ">> ledger.log" reads the raw input).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

var nonAlnum = regexp.MustCompile(`[^a-zA-Z0-9]`)

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
