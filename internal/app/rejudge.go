package app

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/rejudge"
)

func rejudgeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "rubric", Category: catVerdict, Usage: "judge against this rubric `FILE`", DefaultText: "the run's own rubric"},
		&cli.StringFlag{Name: "judge-model", Category: catVerdict, Usage: "the judge model", DefaultText: "the run's"},
	}
}

// RejudgeOptions are `vibe-test rejudge`'s.
type RejudgeOptions struct {
	Dir        string  // the run's folder, or a suite's
	Rubric     string  // a rubric file to judge against ("": the run's own)
	JudgeModel *string // the judge model (nil: the run's)
}

func rejudgeOptions(c *cli.Context) (RejudgeOptions, error) {
	if c.NArg() != 1 {
		return RejudgeOptions{}, exit.Errorf(exit.Tool, "rejudge: expected one RUN_DIR, got %d arguments", c.NArg())
	}
	o := RejudgeOptions{Dir: c.Args().First(), Rubric: c.String("rubric")}
	if c.IsSet("judge-model") {
		m := c.String("judge-model")
		o.JudgeModel = &m
	}
	return o, nil
}

// runRejudge judges a saved run's turns again from their transcripts (a
// suite's, skill by skill), writing verdicts-N.json beside run.json.
func runRejudge(ctx context.Context, o RejudgeOptions, stdio IO) error {
	s := rejudge.Settings{Rubric: o.Rubric, JudgeModel: o.JudgeModel, Prog: stdio.prog()}
	return rejudge.Dir(ctx, o.Dir, s, engineIO(stdio))
}
