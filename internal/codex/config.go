package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vibe-test/vibe-test/internal/proc"
)

// Config is what the agent's config.toml says beyond the turn's own
// settings: how it reaches a model and how often it retries.
type Config struct {
	// BaseURL is a stand-in Responses API (scripted/), e.g.
	// http://127.0.0.1:PORT: codex POSTs BaseURL/v1/responses. "" means
	// OpenAI's API with the author's OPENAI_API_KEY.
	BaseURL string
	Model   string // "" leaves codex's default (the stand-in: DefaultModel)
	Effort  string // model_reasoning_effort; "" leaves the model's default
	// Instructions are appended to codex's system prompt
	// (developer_instructions: the first part of its second developer
	// message; the base prompt stays, PROTOCOL.md §5.3).
	Instructions string
	// Retries is both retry layers of the provider (request_max_retries,
	// stream_max_retries); a 500 makes (Retries+1)² requests.
	Retries int
	// IdleTimeoutMS is stream_idle_timeout_ms (0: codex's 300000). A
	// server that never sends headers is not bounded by it: the turn's
	// wall-clock timeout is.
	IdleTimeoutMS int
	// Structured trims the tools and context for a cold structured call.
	Structured bool
}

// DefaultModel is the model a stand-in conversation asks for when none is
// given: a slug of the bundled catalog, so the request has the shape of a
// real one and codex prints no "model metadata not found" warning.
const DefaultModel = "gpt-5.5"

// Provider names and the variables that carry their keys. The stand-in's
// key is a fixed dummy: the author's real key never goes to it.
const (
	standInProvider = "local"
	standInKeyVar   = "LOCAL_MODEL_KEY"
	standInKey      = "sk-local-stand-in"
	openAIProvider  = "openai_api"
	// OpenAIKeyVar is the variable that carries the author's key to
	// OpenAI's API.
	OpenAIKeyVar = "OPENAI_API_KEY"
)

// CodexHome is where codex keeps its config and sessions in a home.
func CodexHome(home string) string { return filepath.Join(home, ".codex") }

// configTOML is the hermetic config.toml (PROTOCOL.md §1, every key
// accepted by --strict-config on the pinned CLI).
func configTOML(c Config) string {
	var b strings.Builder
	kv := func(k string, v any) { fmt.Fprintf(&b, "%s = %s\n", k, tomlValue(v)) }
	model := c.Model
	if model == "" && c.BaseURL != "" {
		model = DefaultModel
	}
	if model != "" {
		kv("model", model)
	}
	if c.BaseURL != "" {
		kv("model_provider", standInProvider)
	} else {
		kv("model_provider", openAIProvider)
	}
	if c.Effort != "" {
		kv("model_reasoning_effort", c.Effort)
	}
	// exec's default too; in the config because resume has no flag for
	// it, and the sandbox mode for the same reason.
	kv("approval_policy", "never")
	// Codex's own sandbox stays off, as claude has none: in vibe-test's
	// jail it cannot start as root (no uid map after --cap-drop ALL), and
	// outside it its helper (codex-linux-sandbox, linked into CODEX_HOME)
	// is not made when CODEX_HOME lies in a temp dir, where the homes of
	// vibe-test's sandboxes do, so every command would fail with "bwrap:
	// execvp codex-linux-sandbox" (PROTOCOL.md §9; seen on 0.171.0).
	// The jail is the isolation.
	kv("sandbox_mode", "danger-full-access")
	kv("web_search", "disabled")
	kv("check_for_update_on_startup", false)
	if c.Instructions != "" {
		kv("developer_instructions", c.Instructions)
	}
	if c.Structured {
		// A cold call: the prompt and the schema, no skills listing, no
		// permissions or environment text (PROTOCOL.md §8).
		kv("include_permissions_instructions", false)
		kv("include_environment_context", false)
		kv("include_apps_instructions", false)
	}
	b.WriteString("\n[agents]\nenabled = false\n")
	b.WriteString("\n[analytics]\nenabled = false\n")
	b.WriteString("\n[feedback]\nenabled = false\n")
	b.WriteString("\n[features]\n")
	// Without this an unreachable server is retried forever.
	b.WriteString("unbounded_connection_retries = false\n")
	b.WriteString("goals = false\n")
	// Plugins: with them on, every conversation's fresh home asks GitHub
	// for the curated marketplace (`git ls-remote
	// https://github.com/openai/plugins.git`, seen on 0.171.0 in the jail),
	// a network call the measurement has no use for; none is installed
	// in a fresh home, so the model sees the same either way.
	b.WriteString("plugins = false\n")
	if c.Structured {
		for _, f := range []string{"shell_tool", "unified_exec", "view_image", "multi_agent", "apps"} {
			fmt.Fprintf(&b, "%s = false\n", f)
		}
	}
	b.WriteString("\n[skills]\n")
	if c.Structured {
		b.WriteString("include_instructions = false\n")
	}
	b.WriteString("\n[skills.bundled]\nenabled = false\n")
	name, url, key := openAIProvider, "https://api.openai.com/v1", OpenAIKeyVar
	if c.BaseURL != "" {
		name, url, key = standInProvider, strings.TrimSuffix(c.BaseURL, "/")+"/v1", standInKeyVar
	}
	// The provider's key stays out of the agent's commands' environment
	// (codex passes them its own otherwise); what the author passes by
	// name reaches them, as claude's Bash gets it. A command can still
	// read codex's own environment in /proc, as it can claude's.
	b.WriteString("\n[shell_environment_policy]\n")
	kv("exclude", []string{key})
	fmt.Fprintf(&b, "\n[model_providers.%s]\n", name)
	kv("name", name)
	kv("base_url", url)
	kv("wire_api", "responses")
	kv("env_key", key)
	kv("request_max_retries", max(c.Retries, 0))
	kv("stream_max_retries", max(c.Retries, 0))
	if c.IdleTimeoutMS > 0 {
		kv("stream_idle_timeout_ms", c.IdleTimeoutMS)
	}
	return b.String()
}

// tomlValue writes a string as a TOML basic string (a JSON string is one),
// a list of strings as an array, and numbers and booleans as they are.
func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		return jsonString(x)
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = jsonString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return fmt.Sprint(x)
	}
}

func jsonString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// writeConfig writes config.toml into a fresh or existing CODEX_HOME.
func writeConfig(codexHome string, c Config) error {
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return fmt.Errorf("creating the codex home: %w", err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(configTOML(c)), 0o600); err != nil {
		return fmt.Errorf("writing the codex config: %w", err)
	}
	return nil
}

// passThrough are the variables a codex process may inherit from the
// author's environment: what it needs to find its helpers, speak the
// user's locale and reach an API through a proxy. Everything else stays
// out, the author's secrets among it.
var passThrough = []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR"}

// EnvOptions says how to build a codex process's environment.
type EnvOptions struct {
	Home    string   // HOME; CODEX_HOME is its .codex
	StandIn bool     // the stand-in's dummy key instead of OPENAI_API_KEY
	PassEnv []string // names the author asked to pass
	Extra   []string // KEY=VALUE set last
}

// Env builds the environment by allowlist from base (normally
// os.Environ()). The author's OPENAI_API_KEY passes only to OpenAI's API,
// never to a stand-in.
func Env(base []string, o EnvOptions) []string {
	allowed := map[string]bool{}
	for _, k := range passThrough {
		allowed[k] = true
	}
	for _, k := range o.PassEnv {
		allowed[k] = true
	}
	if !o.StandIn {
		allowed[OpenAIKeyVar] = true
	}
	vars := map[string]string{}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if ok && allowed[k] {
			vars[k] = v
		}
	}
	if o.StandIn {
		delete(vars, OpenAIKeyVar) // even when passed by name
		vars[standInKeyVar] = standInKey
	}
	vars["TERM"] = "dumb"
	vars["NO_COLOR"] = "1"
	if vars["LANG"] == "" {
		vars["LANG"] = "C.UTF-8"
	}
	if vars["PATH"] == "" {
		vars["PATH"] = "/usr/local/bin:/usr/bin:/bin"
	}
	vars["HOME"] = o.Home
	vars["CODEX_HOME"] = CodexHome(o.Home)
	return proc.Environ(vars, o.Extra)
}

// HasCredentials reports whether the environment carries an OpenAI API
// key, the one way this package signs codex in (a ChatGPT login in the
// author's own ~/.codex is never read: the home is hermetic).
func HasCredentials(base []string) bool {
	for _, kv := range base {
		if k, v, _ := strings.Cut(kv, "="); k == OpenAIKeyVar && v != "" {
			return true
		}
	}
	return false
}
