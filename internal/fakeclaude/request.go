package fakeclaude

import (
	"encoding/json"
	"strings"
)

// reminder rides before the first prompt as the CLI's does (a
// <system-reminder> block; scripted's classifier takes the last text block
// as the prompt).
const reminder = "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# currentDate\nToday's date is in the environment.\n</system-reminder>\n"

// instructions stand in for the CLI's system prompt, and padding brings a
// request to about the size of the real one (some 53 kB for an agent call,
// 9 kB for a cold call), so the usage figures the scripted API derives from
// the body size, and the costs, are of the same order.
const instructions = "You are a Claude agent, built on Anthropic's Claude Agent SDK.\n\nYou are an agent working with the user toward their goals, using your own judgment along the way. Prefer the dedicated file and search tools over shell commands when one fits. Independent tool calls can run in parallel in one response.\n"

const padUnit = "Keep answers short and direct; say what you did and what you found, and nothing you did not do. "

func padding(n int) string {
	return strings.Repeat(padUnit, n/len(padUnit))
}

// toolDef is a tool as the request offers it.
type toolDef struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
}

var toolSchemas = map[string]string{
	"Bash":  `{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"},"timeout":{"type":"number"}},"required":["command"]}`,
	"Read":  `{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"number"},"limit":{"type":"number"}},"required":["file_path"]}`,
	"Write": `{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"]}`,
	"Edit":  `{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["file_path","old_string","new_string"]}`,
	"Glob":  `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern"]}`,
	"Grep":  `{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"},"glob":{"type":"string"},"output_mode":{"type":"string"}},"required":["pattern"]}`,
	"Skill": `{"type":"object","properties":{"skill":{"type":"string"},"args":{"type":"string"}},"required":["skill"]}`,
}

func (f *fake) toolDefs() []toolDef {
	var defs []toolDef
	cold := true
	for _, name := range f.offered {
		switch name {
		case "StructuredOutput":
			schema := json.RawMessage(f.opts.jsonSchema)
			defs = append(defs, toolDef{Name: name, Description: "Use this tool to return your final response in the requested structured format. You MUST call this tool exactly once at the end of your response to provide the structured output.", InputSchema: schema})
			continue
		case "DeferredToolPlaceholder":
			continue
		}
		cold = false
		schema := toolSchemas[name]
		if schema == "" {
			schema = `{"type":"object","properties":{}}`
		}
		desc := "The " + name + " tool."
		if name == "Skill" {
			desc = "Execute a skill within the main conversation. When a skill matches the user's request, invoke it with this tool before answering."
		}
		defs = append(defs, toolDef{Name: name, Description: desc, InputSchema: json.RawMessage(schema)})
	}
	// The CLI sends this placeholder even with --tools "".
	placeholder := toolDef{Name: "DeferredToolPlaceholder", Description: "Reserved placeholder that keeps deferred tool loading active; never call this tool.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`), DeferLoading: true}
	if cold {
		return append([]toolDef{placeholder}, defs...)
	}
	return append(defs, placeholder)
}

// environment is the system-role message the CLI puts after the first
// prompt: the working folder and, for agent sessions, the skill listing.
func (f *fake) environment() string {
	var b strings.Builder
	b.WriteString("# Environment\nYou have been invoked in the following environment: \n - Primary working directory: ")
	b.WriteString(f.cwd)
	b.WriteString("\n - Is a git repository: false\n - Platform: linux\n - Shell: bash\n\nYou are powered by the model ")
	b.WriteString(f.model)
	b.WriteString(".\n\n")
	if f.hasTool("Skill") {
		b.WriteString(skillListing(f.skills))
	}
	return b.String()
}

func (f *fake) hasTool(name string) bool {
	for _, t := range f.offered {
		if t == name {
			return true
		}
	}
	return false
}

// requestBody is the Messages API request for the history so far.
func (f *fake) requestBody() []byte { return f.requestBodyOf(f.history) }

// requestBodyOf is the Messages API request for history.
func (f *fake) requestBodyOf(history []message) []byte {
	type wireMsg struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}
	var msgs []wireMsg
	for i, m := range history {
		msgs = append(msgs, wireMsg{Role: m.Role, Content: m.Content})
		if i == 0 {
			msgs = append(msgs, wireMsg{Role: "system", Content: f.environment()})
		}
	}
	pad := 46000
	if !f.hasTool("Bash") && !f.hasTool("Skill") {
		pad = 7000
	}
	system := []map[string]any{
		{"type": "text", "text": "x-anthropic-billing-header: cc_version=" + Version + "; cc_entrypoint=sdk-cli;"},
		{"type": "text", "text": instructions, "cache_control": map[string]string{"type": "ephemeral"}},
		{"type": "text", "text": padding(pad)},
	}
	if f.opts.appendSystem != "" {
		system = append(system, map[string]any{"type": "text", "text": f.opts.appendSystem})
	}
	meta, _ := json.Marshal(map[string]string{"device_id": "0", "account_uuid": "", "session_id": f.sessionID})
	req := map[string]any{
		"model":      f.model,
		"messages":   msgs,
		"system":     system,
		"tools":      f.toolDefs(),
		"metadata":   map[string]string{"user_id": string(meta)},
		"max_tokens": 32000,
		"stream":     true,
	}
	if f.opts.effort != "" {
		// As the CLI sends --effort (PROTOCOL.md §1); left out without the
		// flag, so the stand-in's other requests keep their sizes.
		req["output_config"] = map[string]string{"effort": f.opts.effort}
	}
	body, _ := marshal(req)
	return body
}
