package app

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/draft"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/plan"
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
	fmt.Fprintf(stdio.Stdout, "model cost $%.4f. Review the file (a model wrote it), then run: vibe-test %s\n", r.CostUSD, r.Skill.Path)
	return nil
}
