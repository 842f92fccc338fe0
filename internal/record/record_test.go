package record

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
)

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	r := &Run{SchemaVersion: SchemaVersion, Status: StatusCompleted, Conversations: []Conversation{{Index: 1, Status: StatusCompleted, Turns: []Turn{{Turn: 1, Kind: "base", Status: TurnOK, Verdict: &judge.Verdict{Result: judge.Pass}}}}}}
	if err := Save(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil || got.Conversations[0].Turns[0].Result() != judge.Pass {
		t.Fatalf("%v %+v", err, got)
	}
	if _, err := Load(filepath.Join(dir, "nope")); err == nil {
		t.Error("loaded a missing run")
	}
	if err := WriteJSON(filepath.Join(dir, "run.json"), map[string]int{"schema_version": 99}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("newer schema: %v", err)
	}
}
