// Package draft writes a first vibe-test.yaml beside a SKILL.md, for its
// author to review: the base task and three probes drafted by one cold
// model call (plan.Draft), the rubric extracted beside it (or read from the
// cache) and shown as a comment block, and a header that explains every
// key. The file is checked to load before it takes the config's name, and
// an existing config is never replaced unless asked.
package draft

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/term"
)

// Settings of a draft.
type Settings struct {
	Skill string // the SKILL.md or its folder
	// Force replaces an existing vibe-test.yaml.
	Force bool
	// JudgeModel drafts the tasks and extracts the rubric, and is written
	// into the config as judge_model; "" is the CLI's default.
	JudgeModel string
}

// Result is what was drafted and where it went.
type Result struct {
	Path    string // the vibe-test.yaml written
	Skill   *skill.Skill
	Plan    *plan.Plan
	Rubric  *rubric.Rubric
	CostUSD float64 // both model calls
}

// Write drafts the config of the skill s names and writes it beside its
// SKILL.md. stdio.Stderr hears when the model calls start.
func Write(ctx context.Context, s Settings, stdio engine.IO) (Result, error) {
	// As text: the draft reads its body and description, whichever agent
	// the skill is meant for (a run refuses what its CLI would not list).
	sk, err := skill.LoadAs(s.Skill, skill.AsText)
	if err != nil {
		return Result{}, exit.With(exit.Tool, err)
	}
	target := filepath.Join(sk.Dir, plan.ConfigName)
	force := s.Force
	if st, err := os.Lstat(target); err == nil {
		switch {
		case !force:
			return Result{}, exit.Errorf(exit.Tool, "%s: already exists, not overwritten (pass --force to replace it)", target)
		case st.IsDir():
			// --force cannot rename over a folder: refused after the model
			// calls, it cost them.
			return Result{}, exit.Errorf(exit.Tool, "%s: a folder, expected a file to replace (--force replaces a file only)", target)
		}
	}
	// The config is written through a temporary file beside SKILL.md:
	// a folder that takes none (read-only, another user's) is found now,
	// before the two model calls it would have cost.
	if err := atomicfile.CanCreateIn(sk.Dir); err != nil {
		return Result{}, exit.Errorf(exit.Tool, "%s: the skill's folder takes no new file (%v), expected one %s can be written in", sk.Dir, err, plan.ConfigName)
	}
	binary, err := engine.FindClaude(stdio.Env)
	if err != nil {
		return Result{}, exit.With(exit.Tool, err)
	}
	model := s.JudgeModel
	caller := engine.ColdCaller(binary, stdio.Env, claude.HasCredentials(stdio.Env), 2, 10*time.Minute, engine.DefaultGrace)
	fmt.Fprintf(stdio.Stderr, "vibe-test: drafting the tasks and extracting the rubric of %s (model %s)\n", term.Line(sk.Name), engine.ModelName(model))

	var (
		pl        *plan.Plan
		planTurn  claude.Turn
		rb        *rubric.Rubric
		usage     rubric.Usage
		planErr   error
		rubricErr error
		wg        sync.WaitGroup
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		pl, planTurn, planErr = plan.Draft(ctx, caller, sk, model)
	}()
	go func() {
		defer wg.Done()
		rb, usage, rubricErr = rubric.Extract(ctx, caller, sk, model, engine.RubricCache(engine.CacheDir("", stdio.Env), agents.Claude, stdio.Env))
	}()
	wg.Wait()
	if ctx.Err() != nil {
		return Result{}, exit.Errorf(exit.Interrupted, "interrupted: nothing written")
	}
	// A refused key fails both calls the same way: say it once.
	for _, err := range []error{planErr, rubricErr} {
		if errors.Is(err, claude.ErrCredentials) {
			return Result{}, exit.With(exit.Tool, err)
		}
	}
	switch {
	case planErr != nil && rubricErr != nil:
		// Two causes on one line, told apart.
		return Result{}, exit.Errorf(exit.Tool, "%v; and %v", planErr, rubricErr)
	case planErr != nil:
		return Result{}, exit.With(exit.Tool, planErr)
	case rubricErr != nil:
		return Result{}, exit.With(exit.Tool, rubricErr)
	}

	text := ConfigText(sk, pl, rb, model, time.Now().UTC())
	// The file is checked to load before it takes the config's name.
	tmp, err := atomicfile.WriteTemp(sk.Dir, "."+plan.ConfigName+".*", []byte(text))
	if err != nil {
		return Result{}, exit.With(exit.Tool, err)
	}
	defer os.Remove(tmp)
	if _, err := plan.LoadConfig(tmp); err != nil {
		return Result{}, exit.Errorf(exit.Tool, "the drafted config does not load (a vibe-test bug): %v", err)
	}
	if force {
		err = os.Rename(tmp, target)
	} else {
		err = atomicfile.LinkNew(tmp, target, []byte(text), record.FileMode)
		if errors.Is(err, fs.ErrExist) {
			return Result{}, exit.Errorf(exit.Tool, "%s: already exists, not overwritten (pass --force to replace it)", target)
		}
	}
	if err != nil {
		return Result{}, exit.Errorf(exit.Tool, "writing %s: %v", target, err)
	}
	return Result{Path: target, Skill: sk, Plan: pl, Rubric: rb, CostUSD: planTurn.CostUSD + usage.Cost}, nil
}
