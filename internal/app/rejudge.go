package app

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/rejudge"
)

func rejudgeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "rubric", Category: catVerdict, Usage: "judge against this rubric `FILE`", DefaultText: "the run's own rubric"},
		&cli.StringFlag{Name: "judge-model", Category: catVerdict, Usage: "the judge model", DefaultText: "the run's"},
		&cli.StringFlag{Name: "reader-model", Category: catVerdict, Usage: "an eval folder: the reader's model", DefaultText: "the eval's"},
		&cli.StringFlag{Name: "grader-model", Category: catVerdict, Usage: "an eval folder: the grader's model", DefaultText: "the eval's"},
	}
}

// RejudgeOptions are `vibe-test rejudge`'s.
type RejudgeOptions struct {
	Dir        string  // the run's folder, or a suite's
	Rubric     string  // a rubric file to judge against ("": the run's own)
	JudgeModel *string // the judge model (nil: the run's)
	// ReaderModel and GraderModel are an eval folder's ("": the eval's).
	ReaderModel, GraderModel string
}

func rejudgeOptions(c *cli.Context) (RejudgeOptions, error) {
	if c.NArg() != 1 {
		return RejudgeOptions{}, exit.Errorf(exit.Tool, "rejudge: expected one RUN_DIR, got %d arguments", c.NArg())
	}
	o := RejudgeOptions{Dir: c.Args().First(), Rubric: c.String("rubric"), ReaderModel: c.String("reader-model"), GraderModel: c.String("grader-model")}
	if c.IsSet("judge-model") {
		m := c.String("judge-model")
		o.JudgeModel = &m
	}
	return o, nil
}

// runRejudge judges a saved run's turns again from their transcripts (a
// suite's, skill by skill), writing verdicts-N.json beside run.json.
func runRejudge(ctx context.Context, o RejudgeOptions, stdio IO) error {
	if eval.IsEvalDir(o.Dir) {
		if o.Rubric != "" || o.JudgeModel != nil {
			return exit.Errorf(exit.Tool, "rejudge %s: an eval folder is graded by its case set, not a rubric: use --reader-model and --grader-model", o.Dir)
		}
		return rejudgeEval(ctx, o.Dir, eval.RejudgeSettings{ReaderModel: o.ReaderModel, GraderModel: o.GraderModel}, Output{}, stdio)
	}
	if o.ReaderModel != "" || o.GraderModel != "" {
		return exit.Errorf(exit.Tool, "rejudge %s: --reader-model and --grader-model are for an eval folder; a run's judge is --judge-model", o.Dir)
	}
	s := rejudge.Settings{Rubric: o.Rubric, JudgeModel: o.JudgeModel, Prog: stdio.prog()}
	return rejudge.Dir(ctx, o.Dir, s, engineIO(stdio))
}
