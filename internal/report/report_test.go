package report

import (
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/record"
)

// A run that failed while drafting its tasks is redrawn as it was saved:
// status error, its cause in the sentence, exit 3, not "completed".
func TestRedecideKeepsAnEarlyError(t *testing.T) {
	r := &record.Run{Status: record.StatusError, Error: "drafting the tasks: the API refused the credentials (HTTP 401)"}
	Redecide(r)
	if r.Status != record.StatusError || r.Outcome.Exit != 3 || !strings.Contains(r.Outcome.Sentence, "HTTP 401") {
		t.Errorf("status %s, outcome %+v", r.Status, r.Outcome)
	}
	saved := &record.Run{Status: record.StatusError, Error: "x", Outcome: record.Outcome{Exit: 3, Verdict: "error", Sentence: "No verdict: x"}}
	Redecide(saved)
	if saved.Outcome.Sentence != "No verdict: x" {
		t.Errorf("the saved outcome was replaced: %+v", saved.Outcome)
	}
	// A run that stopped on an error mid-way stays an error after Decide.
	mid := &record.Run{Status: record.StatusError, Error: "refused", Conversations: []record.Conversation{{Index: 1, Status: record.StatusCompleted}}}
	Redecide(mid)
	if mid.Status != record.StatusError {
		t.Errorf("mid-run error redrawn as %s", mid.Status)
	}
}
