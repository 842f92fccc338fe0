package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vibe-test/vibe-test/internal/jail"
)

// Structured is the one seam for structured cold calls (the rubric, the
// judge, the drafted plan): Caller is the real one, tests pass fakes.
type Structured interface {
	Structured(ctx context.Context, prompt, schema, model string) (Turn, error)
}

// Caller makes cold calls: one-shot `claude -p` invocations with no tools,
// no skill and an empty working folder, answering JSON that matches a schema
// (the rubric, the judge, the drafted plan).
type Caller struct {
	Binary string
	// Env builds the environment for a call whose fresh folder is dir; it
	// decides about HOME and CLAUDE_CONFIG_DIR (hermetic or the author's).
	Env     func(dir string) []string
	Timeout time.Duration
	Grace   time.Duration
	// Jail, when set, runs each call in it with the call's folder as the
	// only writable place and an in-memory /tmp.
	Jail *jail.Spec
	// Price, when set, prices a call's Spent at list prices: a call
	// stopped before its result line (a timeout, a kill) was billed for
	// the requests it made, and the CLI says a cost only in that line.
	Price func([]CallSpend) (float64, bool)
}

// priced is t with a cost priced from its usage when the CLI said none.
func (c Caller) priced(t Turn) Turn { return t.PricedBy(c.Price) }

// PricedBy is t with its cost priced from its calls' usage (Spent) by
// price, and marked estimated, when the CLI said none: it says a cost in
// its result line alone, and a turn or call stopped before it (a timeout,
// a kill, an interrupt) was billed for the requests it made. A turn with
// its result line, no price, or a price that knows no such model (ok
// false) stays as it is.
func (t Turn) PricedBy(price func([]CallSpend) (float64, bool)) Turn {
	if t.HasResult || price == nil {
		return t
	}
	if cost, ok := price(t.Spent); ok && cost > 0 {
		t.CostUSD, t.CostEstimated = cost, true
	}
	return t
}

// ErrCredentials: the API refused the key or login (HTTP 401 or 403).
// Retrying only burns time, so every caller stops at once on it.
var ErrCredentials = errors.New("the API refused the credentials")

// CredentialsAdvice says what to do about ErrCredentials. The CLI's own
// text ("Please run /login") fits an interactive user, not a headless run.
const CredentialsAdvice = "check ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, or run `claude` and /login"

// Structured runs one cold call and returns the parsed turn. A turn that
// failed, or that ended without structured_output (the CLI returns success
// even then, when the model never calls the StructuredOutput tool), is an
// error; the turn is returned either way so its cost can be counted. A
// refused key is an error wrapping ErrCredentials.
func (c Caller) Structured(ctx context.Context, prompt, schema, model string) (Turn, error) {
	dir, err := os.MkdirTemp("", "work-")
	if err != nil {
		return Turn{}, fmt.Errorf("creating a folder for the call: %w", err)
	}
	defer os.RemoveAll(dir)
	inv := Invocation{
		Binary:  c.Binary,
		Args:    StructuredArgs(prompt, schema, model),
		Env:     c.Env(dir),
		Dir:     dir,
		Timeout: c.Timeout,
		Grace:   c.Grace,
	}
	if c.Jail != nil {
		j := c.Jail.With("", dir, []string{dir}, nil)
		inv.Jail = &j
	}
	out, err := Run(ctx, inv)
	out.Turn = c.priced(out.Turn)
	if err != nil {
		return out.Turn, err
	}
	return out.Turn, structuredFailure(out, c.Timeout)
}

// structuredFailure says why a structured call's outcome is no answer, or
// nil.
func structuredFailure(out Outcome, timeout time.Duration) error {
	if err := coldFailure(out, timeout); err != nil {
		return err
	}
	if len(out.Turn.StructuredOutput) == 0 || !json.Valid(out.Turn.StructuredOutput) {
		return fmt.Errorf("the model answered without structured output (text: %.120q)", out.Turn.Text)
	}
	return nil
}

// coldFailure says why a cold call failed, or nil. A 401 or 403 becomes
// one line of advice instead of the CLI's text.
func coldFailure(out Outcome, timeout time.Duration) error {
	f := out.Turn.Failure(out.ExitCode)
	switch {
	case f == "":
		return nil
	case out.Turn.APIErrorStatus == 401 || out.Turn.APIErrorStatus == 403:
		return fmt.Errorf("%w (HTTP %d): %s", ErrCredentials, out.Turn.APIErrorStatus, CredentialsAdvice)
	case out.TimedOut:
		f = fmt.Sprintf("timed out after %s", timeout)
	}
	return fmt.Errorf("%s%s", f, stderrHint(out.Stderr))
}

func stderrHint(stderr string) string {
	if stderr == "" {
		return ""
	}
	return " (stderr: " + firstLine(stderr) + ")"
}

// ResolveModel asks the CLI which model it would run for model ("" = its
// default) without a model call: the local /cost command of a session that
// is not saved prints the init event, whose model is the resolved full name
// (an alias such as sonnet becomes claude-sonnet-5-5; the default is what
// this login or key gets). Verified on 2.1.328 against an unreachable API:
// no request is made.
func (c Caller) ResolveModel(ctx context.Context, model string) (string, error) {
	dir, err := os.MkdirTemp("", "work-")
	if err != nil {
		return "", fmt.Errorf("creating a folder for the call: %w", err)
	}
	defer os.RemoveAll(dir)
	args := []string{"-p", "/cost", "--output-format", "stream-json", "--verbose",
		"--setting-sources", "project", "--strict-mcp-config", "--no-session-persistence"}
	if model != "" {
		args = append(args, "--model", model)
	}
	inv := Invocation{Binary: c.Binary, Args: args, Env: c.Env(dir), Dir: dir, Timeout: c.Timeout, Grace: c.Grace}
	if c.Jail != nil {
		// In the jail like every other call: with the author's login, the
		// CLI would otherwise update their ~/.claude.json on the way.
		j := c.Jail.With("", dir, []string{dir}, nil)
		inv.Jail = &j
	}
	out, err := Run(ctx, inv)
	if err != nil {
		return "", err
	}
	if out.Turn.Model == "" {
		return "", fmt.Errorf("claude printed no init event (exit %d)%s", out.ExitCode, stderrHint(out.Stderr))
	}
	return out.Turn.Model, nil
}
