package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/term"
)

// runDemoCases is `vibe-test demo --cases`: the bundled case set of the
// reorder-ruling skill against the scripted model with the real CLI. It
// stores a baseline (two runs of the skill and the empty-skill control,
// and the instrument's check), then decides a shorter version (which
// rules as well, in fewer words: accepted) and a broken one (which compares
// the wrong way round: rejected) against it. No credentials, no
// network beyond 127.0.0.1; it exits 0 when all of that happened.
func runDemoCases(ctx context.Context, o DemoOptions, stdio IO) error {
	claudePath, claudeHow, err := engine.LocateClaude(stdio.Env, engine.PinnedDirs())
	if err != nil {
		return exit.Errorf(exit.Tool, "the demo runs the real claude CLI: %v", err)
	}
	script, err := demo.CasesScript()
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	srv, err := scripted.Start(script)
	if err != nil {
		return exit.With(exit.Tool, fmt.Errorf("starting the scripted model: %w", err))
	}
	defer srv.Close()
	dir, err := os.MkdirTemp("", "stock-")
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	defer os.RemoveAll(dir)
	paths, err := demo.MaterializeCases(dir)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	env := demo.Env(stdio.Env, srv.URL())
	if !strings.Contains(strings.Join(env, "\n"), "VIBE_TEST_CLAUDE=") {
		env = append(env, "VIBE_TEST_CLAUDE="+claudePath)
	}
	// The counts are the set's own: a hard-coded "2 holdout" outlived the
	// set's growth to 4.
	set, err := cases.Load(paths.Cases)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	fmt.Fprintf(stdio.Stderr, "vibe-test demo --cases: scripted model on %s; case set %s (%d main cases, %d holdout)\n", srv.URL(), paths.Cases, len(set.Cases), len(set.Holdout))
	out := func(name string) string {
		if o.Out == "" {
			return ""
		}
		return filepath.Join(o.Out, name)
	}
	base := eval.Settings{CasesDir: paths.Cases, Concurrency: 4, Timeout: demoTurnTimeout, Grace: engine.DefaultGrace,
		MaxRetries: 1, KeepSandbox: o.KeepSandbox}
	sio := IO{Env: env, Stdout: stdio.Stdout, Stderr: stdio.Stderr, Styled: stdio.Styled, argv0: stdio.argv0}
	run := func(title string, s eval.Settings) (*eval.Result, error) {
		fmt.Fprintf(stdio.Stdout, "\n=== %s ===\n", title)
		res, err := eval.Start(ctx, s, eval.IO{Env: env, Stderr: stdio.Stderr})
		if res != nil {
			if serr := showEval(res, Output{}, sio); serr != nil && err == nil {
				err = serr
			}
		}
		if exit.Code(err) == exit.Interrupted {
			return nil, exit.Errorf(exit.Interrupted, "interrupted: the eval demo cannot be resumed (its case set and scripted model existed only while it ran); run `%s demo --cases` again", stdio.prog())
		}
		return res, err
	}
	s := base
	s.SkillPath, s.Baseline, s.OutDir = paths.Skills[demo.VersionBaseline], "demo", out("baseline")
	baseline, err := run("1. the baseline: the skill twice, and the empty-skill control", s)
	if err != nil {
		return err
	}
	s = base
	s.SkillPath, s.Against, s.OutDir = paths.Skills[demo.VersionShorter], "demo", out("shorter")
	shorter, err := run("2. a shorter version of the skill, against the baseline", s)
	if err != nil {
		return err
	}
	s.SkillPath, s.OutDir = paths.Skills[demo.VersionBroken], out("broken")
	broken, err := run("3. a broken version (its comparison the wrong way round), against the baseline", s)
	if err != nil {
		return err
	}
	if err := eval.CheckDemo(baseline, shorter, broken); err != nil {
		return exit.Errorf(exit.Tool, "the eval demo did not run as designed: %v", err)
	}
	bw, sw := eval.MeanWords(baseline.Bases()[0].Main), eval.MeanWords(shorter.Candidates()[0].Main)
	var worse []string
	for _, m := range broken.Comparisons[0].Main.Measures {
		if m.Reject {
			worse = append(worse, m.Name)
		}
	}
	fmt.Fprintf(stdio.Stdout, "\nThe eval demo ran as designed: the control scored below the baseline and was rejected, the shorter version was accepted (exit %d; %.0f words a message against %.0f), and the broken one was rejected (exit %d; worse on %s).\n",
		shorter.Exit, sw, bw, broken.Exit, term.Line(strings.Join(worse, ", ")))
	fmt.Fprintln(stdio.Stdout, "(The costs are what the CLI computes for the scripted model's token counts at list prices; nothing was billed.)")
	fmt.Fprintf(stdio.Stdout, "\nNext, on your own skill: write a case set (docs/eval.md), then\n")
	fmt.Fprintf(stdio.Stdout, "  %s eval --check --cases ./cases\n  %s eval ./your-skill --cases ./cases --baseline v1\n  %s eval ./your-skill --cases ./cases --against v1\n", stdio.prog(), stdio.prog(), stdio.prog())
	fmt.Fprintf(stdio.Stdout, "claude: %s (found via %s)\n", claudePath, pinnedHow(claudePath, claudeHow))
	return nil
}
