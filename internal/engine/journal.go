package engine

import (
	"sync"
	"time"

	"github.com/vibe-test/vibe-test/internal/record"
)

// journalEvery is how stale run.json may get while a run goes on. Writing
// the whole record after every change made a run's cost grow with the
// square of its size (a 30-conversation run spent a quarter of its CPU
// re-encoding run.json); now a burst of changes from concurrent
// conversations costs one write. Before each try of a turn the engine
// flushes (conversation.Driver.Flush), so a SIGKILL, which lands while some
// turn runs, finds every turn completed before it on disk; what it can
// lose is a judge's verdict or a note from the last journalEvery, which a
// resume makes again. Every other stop (the end, an error, SIGINT) writes
// the record at once.
const journalEvery = 200 * time.Millisecond

// journal is a run record being written: every change goes through update
// (or commit), under one lock, and a writer saves run.json atomically
// behind it.
type journal struct {
	run *record.Run
	dir string

	mu      sync.Mutex // guards run and dirty
	dirty   bool
	writeMu sync.Mutex // orders the writes: a later snapshot never lands first
	writes  int        // under writeMu; the tests count them
	errMu   sync.Mutex
	saveErr error
	// onError hears the first write error at once: a run whose record
	// cannot be written must stop spending, not learn of it at its end.
	onError func(error)

	kick chan struct{}
	quit chan struct{}
	done chan struct{}
	once sync.Once
}

// openJournal starts journaling run into dir; close stops it.
func openJournal(run *record.Run, dir string) *journal {
	j := &journal{run: run, dir: dir, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go j.writer()
	return j
}

// update applies fn to the record under the lock; the writer saves it
// within journalEvery.
func (j *journal) update(fn func()) {
	j.mu.Lock()
	fn()
	j.run.MarkBypass()
	j.dirty = true
	j.mu.Unlock()
	select {
	case j.kick <- struct{}{}:
	default: // a write is already due
	}
}

// view reads the record under the lock, without a write.
func (j *journal) view(fn func()) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fn()
}

// commit applies fn and saves the record before returning: the moments a
// reader must find on disk (the run folder's first record, a run's end).
// It returns the first write error of the run.
func (j *journal) commit(fn func()) error {
	j.update(fn)
	j.save()
	return j.err()
}

// flush returns once run.json holds every change so far (a write error is
// kept for commit and close to report).
func (j *journal) flush() { j.save() }

// close stops the writer and saves what it had not.
func (j *journal) close() error {
	j.once.Do(func() {
		close(j.quit)
		<-j.done
	})
	j.save()
	return j.err()
}

func (j *journal) writer() {
	defer close(j.done)
	for {
		select {
		case <-j.kick:
		case <-j.quit:
			return
		}
		j.save()
		select {
		case <-time.After(journalEvery):
		case <-j.quit:
			return
		}
	}
}

// save writes the record if it changed since the last write.
func (j *journal) save() {
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	j.mu.Lock()
	if !j.dirty {
		j.mu.Unlock()
		return
	}
	b, err := record.Encode(j.run)
	j.dirty = false
	j.mu.Unlock()
	j.writes++
	if err == nil {
		err = record.SaveEncoded(j.dir, b)
	}
	if err != nil {
		j.errMu.Lock()
		first := j.saveErr == nil
		if first {
			j.saveErr = err
		}
		tell := j.onError
		j.errMu.Unlock()
		if first && tell != nil {
			tell(err)
		}
	}
}

// stopOnError has fn hear the first write error as it happens (at once,
// when one happened already).
func (j *journal) stopOnError(fn func(error)) {
	j.errMu.Lock()
	j.onError = fn
	err := j.saveErr
	j.errMu.Unlock()
	if err != nil {
		fn(err)
	}
}

func (j *journal) err() error {
	j.errMu.Lock()
	defer j.errMu.Unlock()
	return j.saveErr
}
