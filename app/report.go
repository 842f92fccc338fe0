package app

import (
	"github.com/urfave/cli/v2"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/result"
)

// reportCommand re-renders a saved run with the current code: no model call.
func reportCommand(c *cli.Context, stdio IO) error {
	if c.NArg() != 1 {
		return exit.Errorf(exit.Tool, "report: expected one RUN_DIR, got %d arguments", c.NArg())
	}
	dir := c.Args().First()
	r, err := result.Load(dir)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	result.Decide(r)
	if err := outputFrom(c, stdio).show(dir, r, stdio); err != nil {
		return exit.With(exit.Tool, err)
	}
	return outcomeError(r)
}
