package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func writeSession(t *testing.T, home, name string, lines ...string) string {
	t.Helper()
	dir := filepath.Join(home, ".gemini", "tmp", "work", "chats")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const sid = "0123abcd-0000-4000-8000-000000000001"

// What a turn appended: its model calls once each (the copy with tool
// calls wins), the tool responses; not a resume's $set of the history,
// not a record re-appended from before the turn, not a line being written.
func TestTurnRecords(t *testing.T) {
	home := t.TempDir()
	header := `{"sessionId":"` + sid + `","kind":"main"}`
	old := `{"id":"m1","type":"gemini","content":"turn one","tokens":{"input":100},"toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"old"}}]}`
	path := writeSession(t, home, "session-2026-12-02T10-00-0123abcd.jsonl", header, old, "")
	before := takeSnapshot(home)
	appended := []string{header,
		`{"$set":{"messages":[{"id":"m1","type":"gemini","content":"history"}]}}`,
		`{"id":"u2","type":"user","content":[{"text":"prompt two"}]}`,
		`{"id":"m2","type":"gemini","content":"","tokens":{"input":200}}`,
		`{"id":"m2","type":"gemini","content":"","tokens":{"input":200},"toolCalls":[{"id":"c2","name":"run_shell_command","args":{"command":"new"},"status":"success"}]}`,
		`{"id":"r2","type":"user","content":[{"functionResponse":{"id":"c2","name":"run_shell_command","response":{"output":"done"}}}]}`,
		old,
		`{"id":"m3","type":"gemini","content":"final","tokens":{"input":300}}`,
		`{"id":"m4","type":"gemini","content":"being wri`}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Join(appended, "\n"))
	f.Close()
	writeSession(t, home, "session-2026-12-02T10-01-0123abcd.jsonl", header)

	recs, file, err := turnRecords(home, sid, before)
	if err != nil {
		t.Fatal(err)
	}
	if file != path {
		t.Errorf("file %s, want %s", file, path)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, gjson.GetBytes(r, "id").String())
	}
	if got := strings.Join(ids, ","); got != "m2,r2,m3" {
		t.Fatalf("records %s, want m2,r2,m3", got)
	}
	if !gjson.GetBytes(recs[0], "toolCalls").Exists() {
		t.Error("the first copy of m2 kept, not the one with its tool calls")
	}
	if got, _ := SessionFile(home, sid); got != path {
		t.Errorf("SessionFile %s, want the one with the records", got)
	}
	if _, err := SessionFile(home, "../../etc"); err == nil {
		t.Error("a path for an id that is none")
	}
}

// keepForLoad moves the history out of this minute's file name, once.
func TestKeepForLoad(t *testing.T) {
	home := t.TempDir()
	writeSession(t, home, "session-2026-12-02T10-00-0123abcd.jsonl", `{"sessionId":"`+sid+`"}`, `{"id":"m1","type":"gemini"}`, "")
	for i := 0; i < 2; i++ {
		if err := keepForLoad(home, sid); err != nil {
			t.Fatal(err)
		}
	}
	got, err := SessionFile(home, sid)
	if err != nil || filepath.Base(got) != "session-2000-01-01T00-00-0123abcd.jsonl" {
		t.Errorf("session file %s %v", got, err)
	}
	// A failed load leaves its fresh file (header and session context)
	// beside the history; the next load must not find it: with it there the
	// pinned CLI's load failed and the CLI removed the history, so a second
	// rerun of a live turn lost the conversation.
	writeSession(t, home, "session-2026-12-02T10-05-0123abcd.jsonl", `{"sessionId":"`+sid+`"}`, `{"$set":{"x":1}}`, "")
	if err := keepForLoad(home, sid); err != nil {
		t.Fatal(err)
	}
	if files := sessionFiles(home, sid); len(files) != 1 || filepath.Base(files[0]) != "session-2000-01-01T00-00-0123abcd.jsonl" {
		t.Errorf("after a second load's keep: %v, want the history alone", files)
	}
}
