package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/jail"
)

// Caller makes cold structured calls through codex (the rubric, the plan,
// the judge): one `codex exec --output-schema` in an empty folder with a
// fresh home, no shell, no skills listing, the answer validated here
// against the schema, since codex does not (PROTOCOL.md §8).
type Caller struct {
	Binary  string
	BaseEnv []string
	PassEnv []string
	// BaseURL is a stand-in Responses API; "" is OpenAI's with
	// OPENAI_API_KEY.
	BaseURL string
	Retries int
	Timeout time.Duration
	Grace   time.Duration
	// Jail, when set, runs each call in it with the call's folder as the
	// only writable place.
	Jail *jail.Spec
}

// ErrCredentials is claude's: a refused key stops every caller at once,
// whichever agent made the call.
var ErrCredentials = claude.ErrCredentials

// CredentialsAdvice says what to do about ErrCredentials.
const CredentialsAdvice = "check OPENAI_API_KEY (codex runs with a hermetic home, so only the key in the environment signs it in)"

// structuredInstructions replace codex's coding-agent prompt for a cold
// call. The project's prompts were written for claude's StructuredOutput
// tool; with a response format the JSON object is that answer.
const structuredInstructions = "Answer the user's request with one JSON object that matches the required response format, and nothing else. Where the request says to answer with the StructuredOutput tool, that JSON object is the answer."

// StructuredArgs is the argv of a cold call: the schema from a file, the
// prompt after "--".
func StructuredArgs(prompt, schemaFile, model string) []string {
	args := []string{"exec", "--json", "--strict-config", "--skip-git-repo-check", "--output-schema", schemaFile}
	if model != "" {
		args = append(args, "-m", model)
	}
	return append(args, "--", prompt)
}

// Structured runs one cold call. A turn that failed, or whose final text
// is not JSON matching schema, is an error; the turn is returned either
// way so its cost can be counted. A refused key (HTTP 401 or 403) is an
// error wrapping ErrCredentials.
func (c Caller) Structured(ctx context.Context, prompt, schema, model string) (Turn, error) {
	compiled, err := compileSchema(schema)
	if err != nil {
		return Turn{}, err
	}
	strict, err := strictSchema([]byte(schema))
	if err != nil {
		return Turn{}, err
	}
	root, err := os.MkdirTemp("", "call-")
	if err != nil {
		return Turn{}, fmt.Errorf("creating a folder for the call: %w", err)
	}
	defer os.RemoveAll(root)
	dir, home := filepath.Join(root, "work"), filepath.Join(root, "home")
	schemaFile := filepath.Join(root, "format.json")
	for _, d := range []string{dir, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return Turn{}, fmt.Errorf("creating a folder for the call: %w", err)
		}
	}
	if err := os.WriteFile(schemaFile, strict, 0o600); err != nil {
		return Turn{}, fmt.Errorf("writing the schema for the call: %w", err)
	}
	cfg := configTOML(Config{BaseURL: c.BaseURL, Model: model, Retries: c.Retries, Structured: true})
	cfg = "instructions = " + jsonString(structuredInstructions) + "\n" + cfg
	if err := os.MkdirAll(CodexHome(home), 0o700); err != nil {
		return Turn{}, fmt.Errorf("creating the codex home: %w", err)
	}
	if err := os.WriteFile(filepath.Join(CodexHome(home), "config.toml"), []byte(cfg), 0o600); err != nil {
		return Turn{}, fmt.Errorf("writing the codex config: %w", err)
	}
	bin, err := Native(c.Binary)
	if err != nil {
		return Turn{}, err
	}
	inv := Invocation{
		Binary:  bin,
		Args:    StructuredArgs(prompt, schemaFile, model),
		Env:     Env(c.BaseEnv, EnvOptions{Home: home, StandIn: c.BaseURL != "", PassEnv: c.PassEnv}),
		Dir:     dir,
		Timeout: c.Timeout,
		Grace:   c.Grace,
	}
	if c.Jail != nil {
		j := c.Jail.With("", dir, []string{root}, nil)
		inv.Jail = &j
	}
	out, _, err := run(ctx, inv)
	if thread := out.Turn.SessionID; thread != "" {
		if path, rerr := RolloutFile(CodexHome(home), thread); rerr == nil {
			if ro, rerr := ReadRollout(path); rerr == nil {
				ro.apply(&out.Turn)
			}
		}
	}
	if err != nil {
		return out.Turn, err
	}
	if f := Failure(out.Turn, out.ExitCode); f != "" {
		switch s := out.Turn.APIErrorStatus; {
		case s == 401 || s == 403:
			return out.Turn, fmt.Errorf("%w (HTTP %d): %s", ErrCredentials, s, CredentialsAdvice)
		case out.TimedOut:
			f = fmt.Sprintf("timed out after %s", c.Timeout)
		}
		if line := stderrLine(out.Stderr); line != "" {
			f += " (stderr: " + line + ")"
		}
		return out.Turn, errors.New(f)
	}
	answer, err := checkAnswer(out.Turn.Text, compiled, []byte(schema))
	if err != nil {
		return out.Turn, err
	}
	out.Turn.StructuredOutput = answer
	return out.Turn, nil
}

// checkAnswer validates the model's final text against the schema: JSON,
// one value, the optional fields strictSchema made nullable dropped where
// the model sent null, then the original schema. It returns the answer as
// compact JSON.
func checkAnswer(text string, compiled *jsonschema.Schema, schema []byte) (json.RawMessage, error) {
	quoted := fmt.Sprintf("%.120q", text)
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the model answered without structured output: not JSON (text: %s)", quoted)
	}
	if dec.More() {
		return nil, fmt.Errorf("the model answered without structured output: more than one JSON value (text: %s)", quoted)
	}
	var s any
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("the output schema is not JSON: %v", err)
	}
	v = dropNulls(v, s)
	if err := compiled.Validate(v); err != nil {
		return nil, fmt.Errorf("the model's answer does not match the schema: %s (text: %s)", firstLineOf(err.Error()), quoted)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func compileSchema(schema string) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("the output schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("format.json", doc); err != nil {
		return nil, fmt.Errorf("the output schema: %v", err)
	}
	sch, err := c.Compile("format.json")
	if err != nil {
		return nil, fmt.Errorf("the output schema does not compile: %v", err)
	}
	return sch, nil
}

// strictSchema rewrites a JSON Schema into the form OpenAI's strict
// structured outputs accept, which codex always asks for (strict: true):
// every object lists all its properties as required and allows no others,
// and a property that was optional becomes nullable instead (anyOf with
// null), which dropNulls undoes in the answer. Everything else, the title
// the stand-in routes by among it, is kept. From OpenAI's structured
// outputs guide; not verified against the real API (only the stand-in was
// reachable).
func strictSchema(schema []byte) ([]byte, error) {
	var s any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("the output schema is not JSON: %v", err)
	}
	b, err := json.Marshal(strictNode(s))
	if err != nil {
		return nil, err
	}
	return b, nil
}

func strictNode(n any) any {
	m, ok := n.(map[string]any)
	if !ok {
		return n
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	if props, ok := m["properties"].(map[string]any); ok {
		required := stringsOf(m["required"])
		np := make(map[string]any, len(props))
		names := make([]string, 0, len(props))
		for name, p := range props {
			names = append(names, name)
			sp := strictNode(p)
			if !slices.Contains(required, name) {
				sp = map[string]any{"anyOf": []any{sp, map[string]any{"type": "null"}}}
			}
			np[name] = sp
		}
		slices.Sort(names)
		out["properties"] = np
		out["required"] = names
		out["additionalProperties"] = false
	}
	if items, ok := m["items"]; ok {
		out["items"] = strictNode(items)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := m[k].([]any); ok {
			nl := make([]any, len(list))
			for i, e := range list {
				nl[i] = strictNode(e)
			}
			out[k] = nl
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if defs, ok := m[k].(map[string]any); ok {
			nd := make(map[string]any, len(defs))
			for name, d := range defs {
				nd[name] = strictNode(d)
			}
			out[k] = nd
		}
	}
	return out
}

// dropNulls removes, from an answer, the null values of properties the
// original schema s left optional (strictSchema made them nullable).
func dropNulls(v any, s any) any {
	sm, _ := s.(map[string]any)
	switch x := v.(type) {
	case map[string]any:
		props, _ := sm["properties"].(map[string]any)
		required := stringsOf(sm["required"])
		for k, e := range x {
			if e == nil && props != nil && props[k] != nil && !slices.Contains(required, k) {
				delete(x, k)
				continue
			}
			if props != nil {
				x[k] = dropNulls(e, props[k])
			}
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e, sm["items"])
		}
	}
	return v
}

func stringsOf(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// stderrNoise starts the lines codex writes to stderr on calls that went
// well as on those that failed, which say nothing about why one failed:
// its warning on every start whose CODEX_HOME lies under /tmp, as a call's
// home does by default (PROTOCOL.md §9), and its note that the prompt is
// read from stdin, as a cold call's is.
var stderrNoise = []string{
	"WARNING: proceeding, even though we could not create PATH aliases",
	"Reading additional input from stdin",
	"Reading prompt from stdin",
}

// stderrLine is the first line of stderr that may say why a call failed:
// quoting the noise instead put it beside every failure ("Connection
// failed: error sending request (stderr: WARNING: proceeding, ...)").
func stderrLine(stderr string) string {
	for line := range strings.Lines(stderr) {
		line = strings.TrimSpace(line)
		noise := slices.ContainsFunc(stderrNoise, func(p string) bool { return strings.HasPrefix(line, p) })
		if line != "" && !noise {
			return line
		}
	}
	return ""
}
