package gemini

import (
	"strings"
	"testing"
)

func TestAnswerJSON(t *testing.T) {
	s, err := compileSchema(judgeSchema)
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		`{"verdict":"pass","score":7}`:                        `{"verdict":"pass","score":7}`,
		"```json\n{\"verdict\": \"fail\", \"score\": 1}\n```": `{"verdict":"fail","score":1}`,
	} {
		got, err := answerJSON(text, s)
		if err != nil || string(got) != want {
			t.Errorf("%q: %s %v", text, got, err)
		}
	}
	for text, msg := range map[string]string{
		"":                                       "without JSON",
		"I think it passes.":                     "without JSON",
		`{"verdict":"maybe","score":7}`:          "does not match",
		`{"verdict":"pass"}`:                     "does not match",
		`{"verdict":"pass","score":7,"extra":1}`: "does not match",
	} {
		if _, err := answerJSON(text, s); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", text, err, msg)
		}
	}
}

func TestFirstStderrLine(t *testing.T) {
	// The terminal warning as 0.61.0 writes it under TERM=dumb, which every
	// call has: it was quoted beside an unreachable server's error.
	got := firstStderrLine("Warning: 256-color support not detected.\nWarning: Basic terminal detected (TERM=dumb). Visual rendering will be limited. For the best experience, use a terminal emulator with truecolor support.\nRipgrep is not available.\n\nWhen using Gemini API, you must specify the GEMINI_API_KEY environment variable.\n")
	if !strings.HasPrefix(got, "When using Gemini API") {
		t.Errorf("%q", got)
	}
}
