package fakeclaude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
)

// agentTools are the tools an agent session offers the model (the pinned
// CLI's list under vibe-test's argv, from scripted/testdata/requests).
var agentTools = []string{"Agent", "Bash", "Edit", "Glob", "Grep", "ListAgents", "Read", "ReportFindings",
	"ScheduleWakeup", "Skill", "ToolSearch", "Workflow", "DeferredToolPlaceholder", "Write"}

// initTools is the init event's tools list of the same session.
var initTools = []string{"Task", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree",
	"Glob", "Grep", "ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage",
	"Skill", "TaskStop", "ToolSearch", "WebFetch", "WebSearch", "Workflow", "Write"}

// toolOutcome is what running one tool_use gave.
type toolOutcome struct {
	content string
	isError bool
	denied  bool
	extra   []block // blocks that ride with the result (a skill's body)
	// structured is set when StructuredOutput accepted its input.
	structured json.RawMessage
}

// readOnly tools need no permission in the working folder.
var readOnly = map[string]bool{"Read": true, "Glob": true, "Grep": true}

// permitted says whether --allowedTools lets a call run without asking
// (and -p denies every question).
func (f *fake) permitted(name string, input json.RawMessage) bool {
	if name == "StructuredOutput" {
		return true
	}
	cmd := ""
	if name == "Bash" {
		var in struct{ Command string }
		_ = json.Unmarshal(input, &in)
		cmd = in.Command
	}
	// The project's settings (--setting-sources project) may ask or deny;
	// -p turns a question into a denial.
	if matchesAny(f.settings.Permissions.Deny, name, cmd) || matchesAny(f.settings.Permissions.Ask, name, cmd) {
		return false
	}
	if readOnly[name] || matchesAny(f.settings.Permissions.Allow, name, cmd) {
		return true
	}
	if name == "Skill" {
		// A skill without allowed-tools loads without asking; one with
		// them is a permission request.
		sk, ok := f.skills[skillName(input)]
		if !ok || !sk.hasAllowedTools {
			return true
		}
	}
	return matchesAny(f.opts.allowed, name, cmd)
}

// matchesAny says whether a permission rule (Tool, or Bash(prefix:*) and
// Bash(exact command)) covers the call.
func matchesAny(rules []string, name, cmd string) bool {
	for _, a := range rules {
		tool, pattern, hasPattern := strings.Cut(a, "(")
		if tool != name {
			continue
		}
		if !hasPattern {
			return true
		}
		pattern = strings.TrimSuffix(pattern, ")")
		if prefix, ok := strings.CutSuffix(pattern, ":*"); ok {
			if cmd == prefix || strings.HasPrefix(cmd, prefix+" ") {
				return true
			}
		} else if cmd == pattern {
			return true
		}
	}
	return false
}

// settings is the part of .claude/settings.json (and settings.local.json)
// the stand-in honours.
type settings struct {
	Permissions struct {
		Allow []string `json:"allow"`
		Ask   []string `json:"ask"`
		Deny  []string `json:"deny"`
	} `json:"permissions"`
}

func loadSettings(cwd string) settings {
	var all settings
	for _, name := range []string{"settings.json", "settings.local.json"} {
		b, err := os.ReadFile(filepath.Join(cwd, ".claude", name))
		if err != nil {
			continue
		}
		var s settings
		if json.Unmarshal(b, &s) == nil {
			all.Permissions.Allow = append(all.Permissions.Allow, s.Permissions.Allow...)
			all.Permissions.Ask = append(all.Permissions.Ask, s.Permissions.Ask...)
			all.Permissions.Deny = append(all.Permissions.Deny, s.Permissions.Deny...)
		}
	}
	return all
}

func deniedMessage(name string, input json.RawMessage, cwd string) string {
	var in struct {
		FilePath string `json:"file_path"`
		Skill    string `json:"skill"`
	}
	_ = json.Unmarshal(input, &in)
	switch {
	case (name == "Write" || name == "Edit") && in.FilePath != "":
		return fmt.Sprintf("Claude requested permissions to write to %s, but you haven't granted it yet.", absPath(in.FilePath, cwd))
	case name == "Skill":
		return "Execute skill: " + strings.TrimPrefix(in.Skill, "/")
	}
	return fmt.Sprintf("Claude requested permissions to use %s, but you haven't granted it yet.", name)
}

func skillName(input json.RawMessage) string {
	var in struct{ Skill string }
	_ = json.Unmarshal(input, &in)
	return strings.TrimPrefix(in.Skill, "/")
}

// runTool executes one call in the working folder.
func (f *fake) runTool(ctx context.Context, b block) toolOutcome {
	errOut := func(format string, args ...any) toolOutcome {
		return toolOutcome{content: fmt.Sprintf(format, args...), isError: true}
	}
	known := false
	for _, t := range f.offered {
		known = known || t == b.Name
	}
	if !known {
		return errOut("<tool_use_error>Error: No such tool available: %s</tool_use_error>", b.Name)
	}
	if !f.permitted(b.Name, b.Input) {
		return toolOutcome{content: deniedMessage(b.Name, b.Input, f.cwd), isError: true, denied: true}
	}
	switch b.Name {
	case "Bash":
		return f.bash(ctx, b.Input)
	case "Read":
		return f.read(b.Input)
	case "Write":
		return f.write(b.Input)
	case "Edit":
		return f.edit(b.Input)
	case "Glob":
		return f.glob(b.Input)
	case "Grep":
		return f.grep(b.Input)
	case "Skill":
		return f.skill(b.Input)
	case "StructuredOutput":
		return f.structuredOutput(b.Input)
	}
	return errOut("<tool_use_error>Error: No such tool available: %s</tool_use_error>", b.Name)
}

func absPath(p, cwd string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cwd, p)
}

// bash runs the command with bash (sh where there is none) in its own
// session, as the CLI does: a SIGKILL of the CLI leaves it running.
func (f *fake) bash(ctx context.Context, input json.RawMessage) toolOutcome {
	var in struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(input, &in); err != nil || in.Command == "" {
		return toolOutcome{content: "<tool_use_error>InputValidationError: Bash failed due to the following issue:\nThe required parameter `command` is missing</tool_use_error>", isError: true}
	}
	shell := "/bin/sh"
	if p, err := exec.LookPath("bash"); err == nil {
		shell = p
	}
	cmd := exec.Command(shell, "-c", in.Command)
	cmd.Dir = f.cwd
	// Output goes to files, not pipes: a command that leaves a background
	// process holding its stdout must not keep the call open (the CLI
	// returns when the shell exits). Unlinked at once, read back through
	// their descriptors: a stand-in killed mid-call (the timeout tests'
	// SIGKILL) left them in the temp folder.
	stdout, err := os.CreateTemp("", "out-")
	if err != nil {
		return toolOutcome{content: err.Error(), isError: true}
	}
	os.Remove(stdout.Name())
	defer stdout.Close()
	stderr, err := os.CreateTemp("", "err-")
	if err != nil {
		return toolOutcome{content: err.Error(), isError: true}
	}
	os.Remove(stderr.Name())
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// The command may run (and be seen running) before Start returns, so
	// a SIGTERM in between must wait for its pid rather than find none.
	if err := f.startChild(cmd); err != nil {
		return toolOutcome{content: err.Error(), isError: true}
	}
	err = cmd.Wait()
	f.setChild(0)
	outText, _ := readBack(stdout)
	errText, _ := readBack(stderr)
	out := strings.TrimRight(string(outText), "\n")
	if e := strings.TrimRight(string(errText), "\n"); e != "" {
		if out != "" {
			out += "\n"
		}
		out += e
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code := exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		msg := fmt.Sprintf("Exit code %d", code)
		if out != "" {
			msg += "\n" + out
		}
		return toolOutcome{content: msg, isError: true}
	}
	if err != nil {
		return toolOutcome{content: err.Error(), isError: true}
	}
	if out == "" {
		out = "(Bash completed with no output)"
	}
	return toolOutcome{content: out}
}

// readBack reads a file the command wrote through f, from its start.
func readBack(f *os.File) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

func (f *fake) read(input json.RawMessage) toolOutcome {
	var in struct {
		FilePath string `json:"file_path"`
		Offset   int    `json:"offset"`
		Limit    int    `json:"limit"`
	}
	_ = json.Unmarshal(input, &in)
	p := absPath(in.FilePath, f.cwd)
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return toolOutcome{content: "File does not exist. Note: your current working directory is " + f.cwd + ".", isError: true}
	case st.IsDir():
		return toolOutcome{content: "EISDIR: illegal operation on a directory, read '" + p + "'", isError: true}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return toolOutcome{content: err.Error(), isError: true}
	}
	lines := strings.Split(string(b), "\n")
	start := max(in.Offset, 1)
	var out strings.Builder
	for i := start - 1; i < len(lines); i++ {
		if in.Limit > 0 && i-(start-1) >= in.Limit {
			break
		}
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		fmt.Fprintf(&out, "%d\t%s", i+1, lines[i])
	}
	return toolOutcome{content: out.String()}
}

const fileStateNote = " (file state is current in your context — no need to Read it back)"

func (f *fake) write(input json.RawMessage) toolOutcome {
	var in struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	_ = json.Unmarshal(input, &in)
	p := absPath(in.FilePath, f.cwd)
	_, statErr := os.Stat(p)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return toolOutcome{content: err.Error(), isError: true}
	}
	if err := os.WriteFile(p, []byte(in.Content), 0o644); err != nil {
		return toolOutcome{content: err.Error(), isError: true}
	}
	if statErr == nil {
		return toolOutcome{content: "The file " + p + " has been updated successfully." + fileStateNote}
	}
	return toolOutcome{content: "File created successfully at: " + p + fileStateNote}
}

func (f *fake) edit(input json.RawMessage) toolOutcome {
	var in struct {
		FilePath   string `json:"file_path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	_ = json.Unmarshal(input, &in)
	p := absPath(in.FilePath, f.cwd)
	b, err := os.ReadFile(p)
	if err != nil {
		return toolOutcome{content: "<tool_use_error>File does not exist.</tool_use_error>", isError: true}
	}
	s := string(b)
	n := strings.Count(s, in.OldString)
	switch {
	case in.OldString == "" || n == 0:
		return toolOutcome{content: "<tool_use_error>String to replace not found in file.\nString: " + in.OldString + "</tool_use_error>", isError: true}
	case n > 1 && !in.ReplaceAll:
		return toolOutcome{content: fmt.Sprintf("<tool_use_error>Found %d matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: %s</tool_use_error>", n, in.OldString), isError: true}
	}
	if in.ReplaceAll {
		s = strings.ReplaceAll(s, in.OldString, in.NewString)
	} else {
		s = strings.Replace(s, in.OldString, in.NewString, 1)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		return toolOutcome{content: err.Error(), isError: true}
	}
	return toolOutcome{content: "The file " + p + " has been updated successfully." + fileStateNote}
}

// globRE turns a glob with ** into a regular expression over slash paths.
func globRE(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '*' && i+1 < len(pattern) && pattern[i+1] == '*':
			i++
			if i+1 < len(pattern) && pattern[i+1] == '/' {
				i++
				b.WriteString("(?:.*/)?")
			} else {
				b.WriteString(".*")
			}
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// walkFiles lists regular files under root (relative slash paths), sorted,
// skipping .git.
func walkFiles(root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func (f *fake) glob(input json.RawMessage) toolOutcome {
	var in struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	_ = json.Unmarshal(input, &in)
	root := f.cwd
	if in.Path != "" {
		root = absPath(in.Path, f.cwd)
	}
	re, err := globRE(in.Pattern)
	if err != nil {
		return toolOutcome{content: err.Error(), isError: true}
	}
	var hits []string
	for _, p := range walkFiles(root) {
		if re.MatchString(p) {
			hits = append(hits, p)
		}
	}
	if len(hits) == 0 {
		return toolOutcome{content: "No files found"}
	}
	return toolOutcome{content: strings.Join(hits, "\n")}
}

func (f *fake) grep(input json.RawMessage) toolOutcome {
	var in struct {
		Pattern    string `json:"pattern"`
		Path       string `json:"path"`
		Glob       string `json:"glob"`
		OutputMode string `json:"output_mode"`
		I          bool   `json:"-i"`
	}
	_ = json.Unmarshal(input, &in)
	expr := in.Pattern
	if in.I {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return toolOutcome{content: err.Error(), isError: true}
	}
	var globRe *regexp.Regexp
	if in.Glob != "" {
		g := in.Glob
		if !strings.Contains(g, "/") {
			g = "**/" + g
		}
		globRe, _ = globRE(g)
	}
	root := f.cwd
	if in.Path != "" {
		root = absPath(in.Path, f.cwd)
	}
	var files, lines []string
	for _, p := range walkFiles(root) {
		if globRe != nil && !globRe.MatchString(p) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil || bytes.IndexByte(b, 0) >= 0 {
			continue
		}
		matched := false
		for i, l := range strings.Split(string(b), "\n") {
			if re.MatchString(l) {
				matched = true
				lines = append(lines, fmt.Sprintf("%s:%d:%s", p, i+1, l))
			}
		}
		if matched {
			files = append(files, p)
		}
	}
	if in.OutputMode == "content" {
		if len(lines) == 0 {
			return toolOutcome{content: "No matches found"}
		}
		return toolOutcome{content: strings.Join(lines, "\n")}
	}
	if len(files) == 0 {
		return toolOutcome{content: "No files found"}
	}
	word := "files"
	if len(files) == 1 {
		word = "file"
	}
	return toolOutcome{content: fmt.Sprintf("Found %d %s\n%s", len(files), word, strings.Join(files, "\n"))}
}

// skill loads a project skill: a short tool result, and the SKILL.md body
// as a text block in the same user message (PROTOCOL §9).
func (f *fake) skill(input json.RawMessage) toolOutcome {
	var in struct {
		Skill string `json:"skill"`
		Args  string `json:"args"`
	}
	_ = json.Unmarshal(input, &in)
	name := strings.TrimPrefix(in.Skill, "/")
	sk, ok := f.skills[name]
	if !ok {
		return toolOutcome{content: "<tool_use_error>Unknown skill: " + name + "</tool_use_error>", isError: true}
	}
	if sk.disabled {
		return toolOutcome{content: "<tool_use_error>Skill " + name + " cannot be used with Skill tool due to disable-model-invocation</tool_use_error>", isError: true}
	}
	text := "Base directory for this skill: " + sk.dir + "\n\n" + sk.body
	if in.Args != "" {
		text += "\n\nARGUMENTS: " + in.Args
	}
	return toolOutcome{content: "Launching skill: " + name, extra: []block{{Type: "text", Text: text}}}
}
