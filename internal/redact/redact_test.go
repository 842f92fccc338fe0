package redact

import (
	"bytes"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	r := FromEnv([]string{"ANTHROPIC_API_KEY=my-very-secret-value", "OTHER=visible-value-here"}, []string{"ANTHROPIC_API_KEY"})
	in := `{"result":"key my-very-secret-value and sk-ant-api03-AbCdEfGhIjKlMnOp and visible-value-here"}`
	out := r.String(in)
	if strings.Contains(out, "my-very-secret-value") || strings.Contains(out, "sk-ant-api03") {
		t.Fatalf("secret left: %s", out)
	}
	if !strings.Contains(out, "visible-value-here") {
		t.Error("redacted a value that was not a secret")
	}
}

func TestWriterCatchesSplitSecrets(t *testing.T) {
	var buf bytes.Buffer
	w := New("split-secret-123").NewWriter(&buf)
	w.Write([]byte(`{"a":"split-sec`))
	w.Write([]byte("ret-123\"}\n{\"b\":\"tail split-secret-123"))
	w.Flush()
	if strings.Contains(buf.String(), "split-secret-123") || strings.Count(buf.String(), Mask) != 2 {
		t.Fatalf("%s", buf.String())
	}
}
