package engine

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/vibe-test/vibe-test/internal/record"
)

func loadRun(t *testing.T, dir string) *record.Run {
	t.Helper()
	r, err := record.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestJournalCommitIsOnDisk: commit returns after run.json holds the change.
func TestJournalCommitIsOnDisk(t *testing.T) {
	dir := t.TempDir()
	run := &record.Run{SchemaVersion: record.SchemaVersion, Status: record.StatusRunning}
	j := openJournal(run, dir)
	defer j.close()
	if err := j.commit(func() { run.Error = "first" }); err != nil {
		t.Fatal(err)
	}
	if got := loadRun(t, dir).Error; got != "first" {
		t.Fatalf("after commit run.json says %q, want %q", got, "first")
	}
}

// TestJournalCoalescesAndCloseSavesTheLast: a burst of updates from many
// goroutines is written as few records, and close leaves the last state on
// disk.
func TestJournalCoalescesAndCloseSavesTheLast(t *testing.T) {
	dir := t.TempDir()
	run := &record.Run{SchemaVersion: record.SchemaVersion, Status: record.StatusRunning}
	j := openJournal(run, dir)
	var wg sync.WaitGroup
	const goroutines, each = 8, 200
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				j.update(func() { run.Costs.Total++ })
			}
		}()
	}
	wg.Wait()
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	if got := loadRun(t, dir).Costs.Total; got != goroutines*each {
		t.Fatalf("after close run.json counts %v updates, want %d", got, goroutines*each)
	}
	// One write per journalEvery at most, and one at close: a tenth of
	// the updates is far more than the burst can take on any machine.
	if j.writes >= goroutines*each/10 {
		t.Errorf("%d updates took %d writes of run.json; they must coalesce", goroutines*each, j.writes)
	}
	t.Logf("%d updates, %d writes", goroutines*each, j.writes)
}

// TestJournalReportsAWriteError: a folder that cannot take run.json makes
// commit (and close) return the error instead of losing it.
func TestJournalReportsAWriteError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run := &record.Run{SchemaVersion: record.SchemaVersion}
	j := openJournal(run, dir)
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := j.commit(func() { run.Error = "x" }); err == nil {
		t.Fatal("commit into a removed folder returned no error")
	}
	if err := j.close(); err == nil {
		t.Fatal("close forgot the write error")
	}
}
