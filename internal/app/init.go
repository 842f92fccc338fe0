package app

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/draft"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/term"
)

func initFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "force", Category: catOutput, Usage: "overwrite an existing vibe-test.yaml"},
		&cli.StringFlag{Name: "judge-model", Category: catDraft, Usage: "the model that drafts the tasks and extracts the rubric; written into the config as judge_model", DefaultText: "the CLI's"},
	}
}

// InitOptions are `vibe-test init`'s.
type InitOptions struct {
	Skill      string // the SKILL.md or its folder
	Force      bool   // replace an existing vibe-test.yaml
	JudgeModel string // "": the CLI's default
}

func initOptions(c *cli.Context) (InitOptions, error) {
	if c.NArg() != 1 {
		return InitOptions{}, exit.Errorf(exit.Tool, "init: expected one path to a SKILL.md or its folder, got %d arguments", c.NArg())
	}
	return InitOptions{Skill: c.Args().First(), Force: c.Bool("force"), JudgeModel: c.String("judge-model")}, nil
}

// runInit drafts a vibe-test.yaml beside a SKILL.md (draft.Write) and says
// what it holds, for review.
func runInit(ctx context.Context, o InitOptions, stdio IO) error {
	r, err := draft.Write(ctx, draft.Settings{Skill: o.Skill, Force: o.Force, JudgeModel: o.JudgeModel}, engineIO(stdio))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "wrote %s\n", r.Path)
	fmt.Fprintf(stdio.Stdout, "  %-20s %s\n", "base task (turn 1):", term.Clean(r.Plan.BaseTask))
	for i, p := range r.Plan.Probes {
		fmt.Fprintf(stdio.Stdout, "  %-20s %s\n", fmt.Sprintf("probe (turn %d):", plan.ProbeTurns[i]), term.Clean(p.Task))
	}
	fmt.Fprintf(stdio.Stdout, "  rubric: %d criteria (%s), in a comment block at the end of the file\n", len(r.Rubric.Criteria), r.Rubric.Source)
	run := "vibe-test " + r.Skill.Path
	// The draft reads the skill as text; a run under Claude Code (the
	// default agent) refuses what that CLI alone hides or skips
	// (disable-model-invocation, a SKILL.md over 1,000,000 bytes).
	if _, err := skill.Load(r.Skill.Path); err != nil {
		fmt.Fprintf(stdio.Stderr, "warning: a run under Claude Code (the default agent) refuses it: %s; the Codex and Gemini CLIs list it, so --agent codex or --agent gemini runs it\n", term.Line(err.Error()))
		run += " --agent codex"
	}
	fmt.Fprintf(stdio.Stdout, "model cost $%.4f. Review the file (a model wrote it), then run: %s\n", r.CostUSD, run)
	return nil
}
