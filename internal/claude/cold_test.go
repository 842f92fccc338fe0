package claude

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A refused key in a cold call (rubric, plan, judge) is ErrCredentials with
// one line of advice naming the variables, not the CLI's "/login" text; other
// failures keep the CLI's reason.
func TestColdFailureCredentials(t *testing.T) {
	refused := Outcome{ExitCode: 1, Turn: parseFixture(t, "api-error-401.jsonl")}
	err := coldFailure(refused, 0)
	if !errors.Is(err, ErrCredentials) {
		t.Fatalf("401: %v, want ErrCredentials", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "HTTP 401") || !strings.Contains(msg, "ANTHROPIC_API_KEY") || strings.Contains(msg, "\n") {
		t.Errorf("401 message: %q", msg)
	}
	if strings.Contains(msg, "Please run /login") {
		t.Errorf("401 message quotes the CLI's interactive advice: %q", msg)
	}

	overloaded := Outcome{ExitCode: 1, Turn: parseFixture(t, "api-error-529.jsonl")}
	if err := coldFailure(overloaded, 0); err == nil || errors.Is(err, ErrCredentials) || !strings.Contains(err.Error(), "HTTP 529") {
		t.Errorf("529: %v", err)
	}
	ok := Outcome{Turn: parseFixture(t, "json-schema-stream.jsonl")}
	if err := coldFailure(ok, 0); err != nil {
		t.Errorf("a successful call: %v", err)
	}
}

// A one-shot cold call (the rubric's, the plan's, an eval's reader and
// grader) stopped by its timeout after one model call is priced from
// that call's usage by Price and marked estimated; a Price that knows no
// such model leaves it at $0, and a call that said its cost is the CLI's.
func TestStructuredPricesAStoppedCall(t *testing.T) {
	dir := t.TempDir()
	line := `{"type":"assistant","message":{"content":[{"text":"Hello.","type":"text"}],"id":"msg_1","model":"claude-opus-5-5","role":"assistant","type":"message","usage":{"cache_creation_input_tokens":13334,"cache_read_input_tokens":0,"input_tokens":6,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"s"}`
	cli := filepath.Join(dir, "claude")
	// exec: the CLI's process itself holds the stream and is what the
	// timeout stops.
	if err := os.WriteFile(cli, []byte("#!/bin/sh\necho '"+line+"'\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var seen []CallSpend
	price := func(spent []CallSpend) (float64, bool) {
		seen = spent
		return 0.25, len(spent) == 1 && spent[0].Model == "claude-opus-5-5"
	}
	c := Caller{Binary: cli, Env: func(string) []string { return []string{"PATH=/usr/bin:/bin"} }, Timeout: time.Second, Grace: 100 * time.Millisecond, Price: price}
	turn, err := c.Structured(t.Context(), "p", `{"type":"object"}`, "")
	if err == nil || turn.HasResult {
		t.Fatalf("a stopped call: err %v, result %v", err, turn.HasResult)
	}
	if !turn.CostEstimated || turn.CostUSD != 0.25 || len(seen) != 1 || seen[0].Usage.CacheCreation != 13334 {
		t.Errorf("priced $%v (estimated %v) from %+v, want $0.25 from the one call", turn.CostUSD, turn.CostEstimated, seen)
	}
	c.Price = func([]CallSpend) (float64, bool) { return 0, false }
	if turn, _ := c.Structured(t.Context(), "p", `{"type":"object"}`, ""); turn.CostEstimated || turn.CostUSD != 0 {
		t.Errorf("an unknown model: $%v (estimated %v), want $0", turn.CostUSD, turn.CostEstimated)
	}
	if got := (Caller{Price: price}).priced(Turn{HasResult: true, CostUSD: 0.1, Spent: seen}); got.CostEstimated || got.CostUSD != 0.1 {
		t.Errorf("a call with its result line: $%v (estimated %v), want the CLI's $0.1", got.CostUSD, got.CostEstimated)
	}
}
