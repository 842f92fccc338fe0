package claude

import (
	"errors"
	"strings"
	"testing"
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
