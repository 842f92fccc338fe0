package agents

import (
	"context"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/codex"
	"github.com/vibe-test/vibe-test/internal/gemini"
)

// Version is the version name's CLI at binary reports (codex's and
// gemini's; claude's is claude.Version, which needs its environment).
func Version(ctx context.Context, name, binary string, env []string) (string, error) {
	switch name {
	case Codex:
		return codex.Version(ctx, binary)
	case Gemini:
		return gemini.Version(ctx, binary, env)
	}
	return claude.Version(ctx, binary, env)
}
