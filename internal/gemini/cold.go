package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/jail"
)

// Caller makes cold structured calls (rubric, plan, judge): one-shot
// `gemini -p` runs with no tools in an empty folder and a throwaway home,
// the answer in the API's JSON mode and checked against the schema here.
// The CLI has no --json-schema: a settings override on the model adds
// responseMimeType application/json and the schema as responseJsonSchema
// to its requests (PROTOCOL §9); the CLI does not check the answer itself.
type Caller struct {
	Binary string
	// BaseEnv is the author's environment, filtered as a turn's (Env);
	// BaseURL points the calls at a stand-in; PassEnv as TurnSpec's.
	BaseEnv []string
	PassEnv []string
	BaseURL string
	Timeout time.Duration
	Grace   time.Duration
	// Jail, when set, runs each call in it with the call's folders as the
	// only writable places and an in-memory /tmp.
	Jail *jail.Spec
	// MaxAttempts as Agent's.
	MaxAttempts int
}

var _ agent.Structured = Caller{}

// structuredSystem replaces the CLI's agent system prompt (some 23,000
// characters about tools a cold call does not have) through
// GEMINI_SYSTEM_MD.
const structuredSystem = "You answer the user's request in one JSON value that matches the response schema you were given. Nothing else: no prose, no code fences.\n"

// CredentialsAdvice says what to do about ErrCredentials with this CLI.
const CredentialsAdvice = "check GEMINI_API_KEY (or GOOGLE_API_KEY, the other variable the CLI reads a key from; a hermetic home cannot use a Google login)"

// Structured runs one cold call and returns its turn with the answer in
// StructuredOutput. An answer that is not JSON, or does not match the
// schema, is an error; the turn is returned either way so its cost can be
// counted. A refused key is an error wrapping claude.ErrCredentials.
func (c Caller) Structured(ctx context.Context, prompt, schema, model string) (agent.Turn, error) {
	compiled, err := compileSchema(schema)
	if err != nil {
		return agent.Turn{}, fmt.Errorf("gemini: the schema does not compile: %w", err)
	}
	if model == "" {
		model = DefaultModel
	}
	root, err := os.MkdirTemp("", "work-")
	if err != nil {
		return agent.Turn{}, fmt.Errorf("creating a folder for the call: %w", err)
	}
	defer os.RemoveAll(root)
	dir, home := filepath.Join(root, "work"), filepath.Join(root, "home")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return agent.Turn{}, fmt.Errorf("creating a folder for the call: %w", err)
	}
	s := settings(home, nil, Agent{MaxAttempts: c.MaxAttempts}.attempts(), nil)
	s["tools"] = map[string]any{"core": []string{}}
	s["skills"] = map[string]any{"enabled": false}
	s["modelConfigs"] = map[string]any{"customOverrides": []any{map[string]any{
		"match": map[string]any{"model": model},
		"modelConfig": map[string]any{"generateContentConfig": map[string]any{
			"responseMimeType":   "application/json",
			"responseJsonSchema": json.RawMessage(schema),
			"temperature":        0,
		}},
	}}}
	if err := writeHome(home, s, "", ""); err != nil {
		return agent.Turn{}, err
	}
	system := filepath.Join(home, ".gemini", "system.md")
	if err := os.WriteFile(system, []byte(structuredSystem), 0o600); err != nil {
		return agent.Turn{}, fmt.Errorf("gemini: writing the system prompt: %w", err)
	}
	spec := agent.TurnSpec{Binary: c.Binary, Prompt: prompt, Model: model, Dir: dir, Home: home,
		BaseEnv: c.BaseEnv, PassEnv: c.PassEnv, BaseURL: c.BaseURL, Timeout: c.Timeout, Grace: c.Grace,
		Extra: []string{"GEMINI_SYSTEM_MD=" + system}}
	if c.Jail != nil {
		j := c.Jail.With("", dir, []string{dir, home}, nil)
		spec.Jail = &j
	}
	out, err := Agent{MaxAttempts: c.MaxAttempts}.Run(ctx, spec)
	if err != nil {
		return out.Turn, err
	}
	if err := coldFailure(out, spec.Timeout); err != nil {
		return out.Turn, err
	}
	answer, err := answerJSON(out.Turn.Text, compiled)
	if err != nil {
		return out.Turn, err
	}
	out.Turn.StructuredOutput = answer
	return out.Turn, nil
}

// answerJSON is the JSON of a JSON-mode answer, checked against the
// schema: the text itself, or inside one ```json fence.
func answerJSON(text string, schema *jsonschema.Schema) (json.RawMessage, error) {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
		s = strings.TrimSpace(s)
	}
	if s == "" || !json.Valid([]byte(s)) {
		return nil, fmt.Errorf("the model answered without JSON (text: %.120q)", text)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err == nil {
		err = schema.Validate(v)
	}
	if err != nil {
		return nil, fmt.Errorf("the model's JSON does not match the schema: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(s)); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}

func compileSchema(text string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("schema.json")
}

// coldFailure says why a cold call failed, or nil; a 401 or 403 becomes
// one line of advice.
func coldFailure(out agent.Outcome, timeout time.Duration) error {
	f := out.Turn.FailureOf("gemini", out.ExitCode)
	switch {
	case f == "":
		return nil
	case out.Turn.APIErrorStatus == 401 || out.Turn.APIErrorStatus == 403:
		return fmt.Errorf("%w (HTTP %d): %s", claude.ErrCredentials, out.Turn.APIErrorStatus, CredentialsAdvice)
	case out.TimedOut:
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		f = fmt.Sprintf("timed out after %s", timeout)
	}
	if line := firstStderrLine(out.Stderr); line != "" {
		f += " (stderr: " + line + ")"
	}
	return fmt.Errorf("%s", f)
}

// firstStderrLine is the first line of stderr that is not the CLI's
// start-up noise (colour and ripgrep warnings, PROTOCOL §1).
func firstStderrLine(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		// 0.61.0 writes its terminal warning after a "Warning: ".
		switch bare := strings.TrimPrefix(line, "Warning: "); {
		case line == "",
			strings.HasPrefix(line, "Warning: 256-color"),
			strings.HasPrefix(bare, "Basic terminal detected"),
			strings.HasPrefix(line, "Ripgrep is not available"),
			strings.HasPrefix(line, "[STARTUP]"):
			continue
		}
		return line
	}
	return ""
}
