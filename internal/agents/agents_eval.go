package agents

import (
	"context"
	"io"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/codex"
	"github.com/vibe-test/vibe-test/internal/gemini"
)

// Failure says why name's turn failed, or "" when it succeeded, in that
// CLI's own terms (codex's success needs its turn.completed line; claude's
// and gemini's read their result line).
func Failure(name string, t agent.Turn, exitCode int) string {
	if name == Codex {
		return codex.Failure(t, exitCode)
	}
	return t.Failure(exitCode)
}

// Version is the version name's CLI at binary reports (codex's and
// gemini's; claude's is claude.Version, which needs its environment).
func Version(ctx context.Context, name, binary string, env []string) (string, error) {
	switch name {
	case Codex:
		return codex.Version(ctx, binary)
	case Gemini:
		return gemini.Version(ctx, binary, env)
	}
	return claude.Version(ctx, binary, claude.Env(env, claude.EnvOptions{}))
}

// ParseTurn reads a transcript name's CLI wrote (a saved generator
// stream) back into its turn.
func ParseTurn(name string, r io.Reader) (agent.Turn, error) {
	switch name {
	case Codex:
		return codex.ParseTurn(r)
	case Gemini:
		return gemini.ParseTurn(r)
	}
	return claude.ParseTurn(r)
}
