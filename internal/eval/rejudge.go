package eval

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/term"
)

// RejudgeSettings say what changes in a rejudge: the reader's and the
// grader's models ("" keeps the eval's).
type RejudgeSettings struct {
	ReaderModel string
	GraderModel string
	Concurrency int
}

// Rejudge reads and grades an eval's saved messages again, with the case
// set's keys and measures as they are now and the reader and grader
// given, into a new eval folder beside the cells, rejudge-N (never over
// anything). A stored baseline's cells that a different reader, grader,
// prompt, measure or key graded are graded again first, so the candidate
// and its baseline are graded alike; the others are copied. The new folder
// is an eval of its own: it is decided, and report shows it.
func Rejudge(ctx context.Context, dir string, rs RejudgeSettings, stdio IO) (*Result, error) {
	rec, err := LoadRecord(dir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	// The cells of an eval that did not complete decide nothing (report
	// exits 3 on it); graded again they would still be missing some.
	if rec.Status != StatusCompleted {
		return nil, exit.Errorf(exit.Tool, "%s: the eval did not complete (%s): `vibe-test resume %s` continues it; rejudge it then", dir, rec.Status, term.Arg(dir))
	}
	set, err := cases.Load(rec.Cases.Dir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	if err := CheckHygiene(ctx, set, stdio); err != nil {
		return nil, err
	}
	s := settingsOf(rec)
	s.ReaderModel, s.GraderModel = rs.ReaderModel, rs.GraderModel
	if rs.Concurrency > 0 {
		s.Concurrency = rs.Concurrency
	}
	tc, err := startTools(ctx, s, stdio, set, nil, &rec.Config)
	if err != nil {
		return nil, err
	}
	out, err := newRejudgeDir(dir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	nrec := *rec
	nrec.Status, nrec.Error, nrec.StartedAt, nrec.FinishedAt, nrec.Outcome = StatusRunning, "", time.Now().UTC(), time.Time{}, Outcome{}
	nrec.Versions.ReaderPrompt, nrec.Versions.GraderPrompt = ReaderPromptVersion, GraderPromptVersion
	nrec.Config.ReaderModel, nrec.Config.GraderModel = tc.readerModel, tc.graderModel
	red := redactor(stdio)
	nrec.Cases = setInfo(set, red.String)
	nrec.Runs = append([]RunInfo{}, rec.Runs...)
	for i := range nrec.Runs {
		nrec.Runs[i].Regraded = false // this rejudge's, set below; not the one it rejudges
	}
	nrec.Costs, nrec.Rejudged = Costs{}, true
	nrec.Notes = append(append([]string{}, rec.Notes...), fmt.Sprintf("rejudged from %s with reader %s and grader %s", dir, tc.readerModel, tc.graderModel))
	// The notes reach the summary, --json and report.html, which name no
	// holdout case (an editing agent may read them): a holdout case is
	// counted, not named.
	heldOut := 0
	for _, id := range slices.Sorted(maps.Keys(rec.Cases.CaseHashes)) {
		h, now := rec.Cases.CaseHashes[id], set.ByID(id)
		switch {
		case now == nil || now.Hash == h:
		case now.Holdout:
			heldOut++
		default:
			nrec.Notes = append(nrec.Notes, fmt.Sprintf("case %s changed since its messages were made: its key is read as it is now", id))
		}
	}
	if heldOut > 0 {
		nrec.Notes = append(nrec.Notes, fmt.Sprintf("%d holdout %s changed since its messages were made: its key is read as it is now", heldOut, plural(heldOut, "case", "cases")))
	}
	sess := &session{dir: out, set: set, rec: &nrec, stdio: stdio,
		read:  &reader{caller: tc.cold, model: tc.readerModel},
		grade: &grader{caller: tc.cold, model: tc.graderModel, goal: set.Goal, measures: set.Measures}}
	sess.gen = &generator{redactor: red}
	if err := SaveRecord(out, &nrec); err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	fmt.Fprintf(stdio.Stderr, "vibe-test rejudge: %s into %s\n", term.Line(dir), term.Line(out))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sess.cancel = cancel
	type task struct {
		run  int
		cell *Cell
	}
	var tasks []task
	regraded := map[int]bool{}
	for i, r := range rec.Runs {
		main, hold, err := loadRunCells(dir, r.Dir)
		if err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		for _, c := range append(main, hold...) {
			if r.Stored && !sess.stale(c) {
				if err := sess.keep(r, c, dir); err != nil {
					return nil, exit.With(exit.Tool, err)
				}
				continue
			}
			if r.Stored {
				regraded[i] = true
			}
			tasks = append(tasks, task{i, c})
		}
	}
	for _, i := range slices.Sorted(maps.Keys(regraded)) { // in table order, not the map's
		nrec.Runs[i].Regraded = true
		nrec.Notes = append(nrec.Notes, fmt.Sprintf("the stored %s was graded again first: a different reader, grader, prompt, measure or key graded it", rec.Runs[i].Label))
	}
	sem := make(chan struct{}, max(s.Concurrency, 1))
	var wg sync.WaitGroup
	// The stored baseline's cells come first: the candidate is decided
	// only against a baseline graded the same way.
	order := append(filter(tasks, func(t task) bool { return rec.Runs[t.run].Stored }), filter(tasks, func(t task) bool { return !rec.Runs[t.run].Stored })...)
loop:
	for _, t := range order {
		select {
		case <-ctx.Done():
			break loop
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func(t task) {
			defer wg.Done()
			defer func() { <-sem }()
			sess.regrade(ctx, rec.Runs[t.run], t.cell, dir)
		}(t)
	}
	wg.Wait()
	if ctx.Err() != nil && sess.fatal == nil {
		nrec.Status = StatusInterrupted
		_ = SaveRecord(out, &nrec)
		return nil, exit.Errorf(exit.Interrupted, "interrupted; the rejudge folder %s is incomplete: run `vibe-test rejudge %s` again", out, term.Arg(dir))
	}
	return sess.finishRejudge(ctx)
}

func filter[T any](list []T, keep func(T) bool) []T {
	var out []T
	for _, x := range list {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// stale: what graded a stored cell differs from what grades now.
func (s *session) stale(c *Cell) bool {
	cs := s.set.ByID(c.Case)
	if cs == nil {
		return true
	}
	return c.ReaderModel != s.read.model || c.GraderModel != s.grade.model ||
		c.ReaderPrompt != ReaderPromptVersion || c.GraderPrompt != GraderPromptVersion ||
		c.MeasuresHash != MeasuresHash(s.set) || c.KeyHash != KeyHash(cs)
}

// keep copies a cell as it is into the rejudge folder.
func (s *session) keep(r RunInfo, c *Cell, from string) error {
	cp := *c
	cp.Generator.Transcript = relTo(s.dir, from, c.Generator.Transcript)
	return saveCell(filepath.Join(s.dir, cellPath(r.Dir, c.Case, c.Repeat, c.Holdout)), &cp)
}

// regrade reads and grades one saved message again.
func (s *session) regrade(ctx context.Context, r RunInfo, c *Cell, from string) {
	cp := *c
	cp.Generator.Transcript = relTo(s.dir, from, c.Generator.Transcript)
	cp.Costs.Reader, cp.Costs.Grader = 0, 0
	cs, err := caseOf(s.set, c)
	switch {
	case err != nil:
		cp.Status, cp.Error = CellError, err.Error()
		cp.Grades = errorGrades(s.set.Measures, cp.Error)
	case c.Message == "":
		// Nothing was generated: the cell stays an error (resume the
		// original eval to make it).
		cp.Grades = errorGrades(s.set.Measures, firstNonEmpty(c.Error, "no message"))
	default:
		s.stamp(&cp, cs)
		cp.Status, cp.Error = CellOK, ""
		notes, cost, rerr := s.read.read(ctx, cs.Prompt, c.Message)
		cp.Costs.Reader = cost
		if rerr != nil {
			if ctx.Err() != nil {
				return
			}
			cp.Status, cp.Error = CellError, rerr.Error()
			cp.Reader, cp.Grades = nil, errorGrades(s.set.Measures, cp.Error)
			break
		}
		cp.Reader = redactNotes(notes, s.gen.redactor.String)
		grades, gcost := s.grade.grade(ctx, cs, c.Message, notes)
		if ctx.Err() != nil {
			return
		}
		cp.Costs.Grader = gcost
		cp.Grades = grades
	}
	if err := saveCell(filepath.Join(s.dir, cellPath(r.Dir, c.Case, c.Repeat, c.Holdout)), &cp); err != nil {
		s.stop(err)
		return
	}
	s.update(func() { s.rec.Costs.add(Costs{Reader: cp.Costs.Reader, Grader: cp.Costs.Grader}) })
}

func (s *session) finishRejudge(ctx context.Context) (*Result, error) {
	if s.fatal != nil {
		return nil, exit.With(exit.Tool, s.fatal)
	}
	res, err := Evaluate(s.dir, s.rec)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	s.update(func() {
		s.rec.Status, s.rec.FinishedAt = StatusCompleted, time.Now().UTC()
		s.rec.Outcome = Outcome{Exit: res.Exit, Verdict: res.Verdict, Sentence: res.Sentence}
	})
	res.Record = s.rec
	return res, nil
}

// newRejudgeDir claims dir/rejudge-N for the first free N.
func newRejudgeDir(dir string) (string, error) {
	for n := 1; n < 1000; n++ {
		p := filepath.Join(dir, "rejudge-"+strconv.Itoa(n))
		err := os.Mkdir(p, 0o700)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: 999 rejudge folders already", dir)
}
