package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/redact"
)

// What stopped a run is saved in run.json and printed: a secret it quotes
// (a CLI's stderr line) is masked, and the error keeps what it wraps.
func TestRedactCause(t *testing.T) {
	cause := exit.With(exit.Tool, fmt.Errorf("extracting the rubric: claude: Invalid key sk-offline-secret-9876 for %w", errRefused))
	got := redactCause(cause, redact.New("sk-offline-secret-9876"))
	if strings.Contains(got.Error(), "secret-9876") || !strings.Contains(got.Error(), "Invalid key "+redact.Mask) {
		t.Errorf("cause %q", got.Error())
	}
	if !errors.Is(got, errRefused) || exit.Code(got) != exit.Tool {
		t.Errorf("the redacted cause lost what it wraps: is %v, exit %d", errors.Is(got, errRefused), exit.Code(got))
	}
}

var errRefused = errors.New("refused")
