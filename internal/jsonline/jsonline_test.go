package jsonline

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	deep := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	for _, tc := range []struct {
		name string
		line []byte
		want bool
	}{
		{"an event", []byte(`{"type":"result","usage":{"input_tokens":3}}`), true},
		{"not JSON", []byte(`{"type":`), false},
		{"nested to the limit", deep(MaxDepth), true},
		{"nested past it", deep(MaxDepth + 1), false},
		// Ten million levels overflowed the stack (a fatal error, not a
		// false): the scan refuses it first.
		{"ten million levels", deep(10_000_000), false},
		{"brackets in a long string", []byte(`{"text":"` + strings.Repeat("[", 2*MaxDepth) + `"}`), true},
		{"an escaped quote in a long string", []byte(`{"text":"\"` + strings.Repeat("[", 2*MaxDepth) + `"}`), true},
	} {
		if got := Valid(tc.line); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
