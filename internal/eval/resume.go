package eval

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/term"
)

// Resume continues an interrupted eval, or one whose cells failed: the
// cells without a finished file (and those that failed) are made with the
// settings the eval recorded,
// then it decides as if it had never stopped. It refuses when the skill,
// a case or the CLI changed since: the cells would not measure one thing.
func Resume(ctx context.Context, dir string, stdio IO) (*Result, error) {
	rec, err := LoadRecord(dir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	// Read first: a folder that is no eval's is said to be so. Locked
	// before anything is made: a live eval's cells would be made twice.
	release, err := engine.LockFolder(dir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	defer release()
	if rec.Rejudged {
		// Its cells are read and graded messages, which resume would
		// generate afresh into it.
		return nil, exit.Errorf(exit.Tool, "%s: a rejudge's folder is not resumed: `vibe-test rejudge %s` grades the messages again in a new one", dir, term.Arg(filepath.Dir(dir)))
	}
	if rec.Status == StatusCompleted && failedCells(rec) == 0 {
		return nil, exit.Errorf(exit.Tool, "%s: the eval completed, nothing to resume (`vibe-test report %s` shows it again)", dir, term.Arg(dir))
	}
	set, sk, err := LoadSet(Settings{SkillPath: rec.Skill.Path, CasesDir: rec.Cases.Dir})
	if err != nil {
		return nil, err
	}
	var changed []string
	if sk.Hash != rec.Skill.Hash {
		changed = append(changed, fmt.Sprintf("the skill %s (hash %s, the eval's %s)", sk.Path, short(sk.Hash), short(rec.Skill.Hash)))
	}
	if MeasuresHash(set) != rec.Cases.MeasuresHash {
		changed = append(changed, "cases.yaml's goal or measures")
	}
	held := 0 // holdout cases are counted, not named
	for _, c := range set.All() {
		h, ok := rec.Cases.CaseHashes[c.ID]
		switch {
		case (!ok || h != c.Hash) && c.Holdout:
			held++
		case !ok:
			changed = append(changed, "case "+c.ID+" (new)")
		case h != c.Hash:
			changed = append(changed, "case "+c.ID)
		}
	}
	if held > 0 {
		changed = append(changed, fmt.Sprintf("%d holdout %s (new or changed)", held, plural(held, "case", "cases")))
	}
	changed = append(changed, movedCases(set, rec.Cases.CaseHashes, rec.Cases.Holdout)...)
	if len(set.All()) != len(rec.Cases.CaseHashes) {
		changed = append(changed, "the set of cases")
	}
	if len(changed) > 0 {
		return nil, exit.Errorf(exit.Tool, "%s: cannot resume: changed since the eval started: %s; run the eval again instead", dir, strings.Join(changed, "; "))
	}
	if err := CheckHygiene(ctx, set, stdio); err != nil {
		return nil, err
	}
	s := settingsOf(rec)
	// As a new eval does: every cell's sandbox would be refused there.
	if p := sandbox.TempDirProblem(); p != "" {
		return nil, exit.Errorf(exit.Tool, "%s", p)
	}
	if sk, err = readSkill(sk, s, stdio); err != nil {
		return nil, err
	}
	tc, err := startTools(ctx, s, stdio, set, sk, &rec.Config)
	if err != nil {
		return nil, err
	}
	now := tc.versions()
	for _, v := range [][3]string{{"claude", now.Claude, rec.Versions.Claude}, {"codex", now.Codex, rec.Versions.Codex}, {"gemini", now.Gemini, rec.Versions.Gemini}} {
		if v[1] != v[2] {
			return nil, exit.Errorf(exit.Tool, "%s: cannot resume: %s is %s now, the eval ran %s; run the eval again instead", dir, v[0], orNone(v[1]), orNone(v[2]))
		}
	}
	plans := plansOf(rec, sk)
	fmt.Fprintf(stdio.Stderr, "vibe-test eval: resuming %s\n", term.Line(dir))
	rec.Status, rec.Error, rec.Outcome, rec.FinishedAt = StatusRunning, "", Outcome{}, time.Time{}
	// The counts are made again from the files.
	for i := range rec.Runs {
		if rec.Runs[i].Stored {
			continue
		}
		rec.Runs[i].Done, rec.Runs[i].Errors, rec.Runs[i].Costs = 0, 0, Costs{}
	}
	rec.Costs = Costs{}
	for i, r := range rec.Runs {
		if r.Stored {
			continue
		}
		main, hold, err := loadRunCells(dir, r.Dir)
		if err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		for _, c := range append(main, hold...) {
			if c.Status == CellOK {
				rec.Runs[i].Done++
			}
			rec.Runs[i].Costs.add(c.Costs)
			rec.Costs.add(c.Costs)
		}
	}
	sess := newSession(dir, set, rec, plans, tc, s, stdio)
	return sess.drive(ctx)
}

// failedCells counts the cells this eval made that failed (a stored
// baseline's are not its own: running it again cannot mend them). An eval
// that completed with some is resumed: it told its user to.
func failedCells(rec *Record) int {
	n := 0
	for _, r := range rec.Runs {
		if !r.Stored {
			n += r.Errors
		}
	}
	return n
}

// settingsOf are the settings an eval recorded.
func settingsOf(rec *Record) Settings {
	timeout, _ := time.ParseDuration(rec.Config.Timeout)
	return Settings{
		SkillPath: rec.Skill.Path, CasesDir: rec.Cases.Dir, Repeats: rec.Config.Repeats,
		Model: rec.Config.Model, Effort: rec.Config.Effort, Tools: rec.Config.Tools, Deliver: rec.Config.Deliver,
		Control: rec.Config.Control, Baseline: rec.Config.Baseline, Against: rec.Config.Against,
		Rule: rec.Config.Rule, Alpha: rec.Config.Alpha, Margin: rec.Config.Margin,
		Concurrency: max(rec.Config.Concurrency, 1), Timeout: max(timeout, time.Minute), MaxRetries: rec.Config.MaxRetries,
		Isolation: rec.Config.Isolation, KeepSandbox: rec.Config.KeepSandbox, Args: rec.Config.Args,
		Agent: rec.AgentName(), JudgeAgent: rec.JudgeAgentName(),
	}.withDefaults()
}

// withDefaults fills what a record may lack.
func (s Settings) withDefaults() Settings {
	if s.Grace <= 0 {
		s.Grace = engine.DefaultGrace
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Concurrency <= 0 {
		s.Concurrency = DefaultConcurrency
	}
	return s
}

// plansOf are the runs an eval recorded, with what each gives the
// generator.
func plansOf(rec *Record, sk *skill.Skill) []runPlan {
	var out []runPlan
	for _, r := range rec.Runs {
		p := runPlan{info: r}
		switch {
		case r.Stored:
		case r.Arm == ArmControl:
			p.v = version{model: r.Model, effort: r.Effort}
		default:
			p.v = version{skill: sk, text: sk.Raw, model: r.Model, effort: r.Effort}
		}
		out = append(out, p)
	}
	return out
}

// caseOf finds a cell's case in the set.
func caseOf(set *cases.Set, c *Cell) (*cases.Case, error) {
	cs := set.ByID(c.Case)
	if cs == nil {
		return nil, fmt.Errorf("case %s of the saved cells is no longer in the case set %s", c.Case, set.Dir)
	}
	return cs, nil
}

// relTo makes a path of dir's relative to another folder inside it.
func relTo(from, dir, rel string) string {
	if rel == "" {
		return ""
	}
	r, err := filepath.Rel(from, filepath.Join(dir, rel))
	if err != nil {
		return rel
	}
	return r
}
