package exit

import (
	"strings"
	"testing"
)

// The table names every code once, in order, each meaning on one line.
func TestCodes(t *testing.T) {
	want := []int{OK, Decay, Indeterminate, Tool, Interrupted}
	if len(Codes) != len(want) {
		t.Fatalf("%d codes in the table, want %d", len(Codes), len(want))
	}
	names := map[string]bool{}
	for i, c := range Codes {
		if c.Code != want[i] {
			t.Errorf("row %d: code %d, want %d", i, c.Code, want[i])
		}
		if c.Name == "" || names[c.Name] || c.Name != strings.ToLower(c.Name) {
			t.Errorf("code %d: name %q (lower case, unique)", c.Code, c.Name)
		}
		names[c.Name] = true
		if c.Meaning == "" || strings.ContainsAny(c.Meaning, "\n\t") {
			t.Errorf("code %d: meaning %q, want one line", c.Code, c.Meaning)
		}
	}
}
