package jsonline_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/codex"
	"github.com/vibe-test/vibe-test/internal/gemini"
)

// A line of ten million "[" (20 MB, under the parsers' 64 MB line limit)
// in a transcript read back by resume or rejudge ended vibe-test with a
// fatal stack overflow in each driver's parser; it is a bad line now.
func TestDriversSurviveDeepNesting(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(strings.Repeat("[", 10_000_000))
	b.WriteString(strings.Repeat("]", 10_000_000))
	b.WriteByte('\n')
	line := b.Bytes()
	if tc, err := claude.ParseTurn(bytes.NewReader(line)); err != nil || tc.BadLines != 1 {
		t.Errorf("claude: %v, %d bad lines", err, tc.BadLines)
	}
	if tc, err := codex.ParseTurn(bytes.NewReader(line)); err != nil || tc.BadLines != 1 {
		t.Errorf("codex: %v, %d bad lines", err, tc.BadLines)
	}
	if tc, err := gemini.ParseTurn(bytes.NewReader(line)); err != nil || tc.BadLines != 1 {
		t.Errorf("gemini: %v, %d bad lines", err, tc.BadLines)
	}
}
