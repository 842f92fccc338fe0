package record

import (
	"strings"
	"testing"
)

func TestNoteModel(t *testing.T) {
	var c Conversation
	add := func(n int, models ...string) {
		tr := Turn{Turn: n, AnsweredBy: models}
		c.NoteModel(&tr)
		c.Turns = append(c.Turns, tr)
	}
	for n := 1; n <= 7; n++ {
		add(n, "claude-opus-5-5")
	}
	if c.ModelChange != "" {
		t.Fatalf("no change yet, got %q", c.ModelChange)
	}
	add(8, "claude-haiku-4-5")
	add(9, "claude-opus-5-5")
	if c.ModelChange != "the model changed at turn 8: claude-opus-5-5 answered turn 7, claude-haiku-4-5 turn 8" {
		t.Errorf("model change %q (the first change is kept)", c.ModelChange)
	}
	var d Conversation
	tr := Turn{Turn: 1, AnsweredBy: []string{"a", "b"}}
	d.NoteModel(&tr)
	if !strings.Contains(d.ModelChange, "inside turn 1: a then b") {
		t.Errorf("change inside a turn: %q", d.ModelChange)
	}
}
