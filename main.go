// Command vibe-test measures whether a Claude Code agent still follows a
// skill (SKILL.md) after ten turns of conversation. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/vibe-test/vibe-test/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args, app.IO{
		Env:    os.Environ(),
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Styled: app.IsTerminal(os.Stdout),
	})
	stop()
	os.Exit(code)
}
