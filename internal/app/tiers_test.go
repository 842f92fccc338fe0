package app

import (
	"testing"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// The app tests run vibe-test end to end against scripted/ on one of two
// CLIs, chosen per test by calling one of these (the README's Tests section
// lists the tiers and how long each takes):
//
//   - realCLI, the pinned claude binary from tools/ for every agent turn:
//     for what only the real binary proves. Its argv and stream-json,
//     resume and the session file a rerun cuts back, signals and the Bash
//     strays a killed CLI leaves, the bubblewrap jail around it, the real
//     skill loader (allowed-tools, frontmatter the CLI accepts), a model
//     that changes mid-conversation, one steady run's costs, and the demo
//     (a decaying and a steady conversation) in both session modes. Some 1.8 CPU-seconds per claude process. The
//     rubric and judge calls around the turns go to the stand-in
//     (testenv.HybridClaude says when and why), whose cold calls the
//     fidelity test checks against the real CLI.
//   - fastCLI, internal/fakeclaude's stand-in: for tests whose subject is
//     vibe-test's own logic (statistics, outcomes and exit codes, reports,
//     resume bookkeeping at random stops, budgets, progress, compare,
//     rejudge, init, run folders, input errors). It speaks to the same scripted API and runs
//     the same tools in the same jail, in milliseconds per turn.
//     internal/fakeclaude's TestFakeMatchesRealCLI keeps the two in step.

// realCLI runs agent turns on the pinned claude CLI (skipped locally when
// it is missing, a failure where CI=true).
func realCLI(t *testing.T) string {
	t.Helper()
	return testenv.HybridClaude(t)
}

// realConversationCLI is realCLI for tests whose subject is the
// conversation (interactive mode) on the real binary: the jail around it,
// its signals and strays, its skill loader and tools, a model switch, the
// author's login, the demo. The fresh probes' one-shot sessions, which
// prove nothing more there, run on the stand-in
// (testenv.HybridLiveClaude); the steady run of TestDiluteToOnTheRealCLI
// keeps them real.
func realConversationCLI(t *testing.T) string {
	t.Helper()
	return testenv.HybridLiveClaude(t)
}

// fastCLI is the stand-in for it.
func fastCLI(t *testing.T) string {
	t.Helper()
	return testenv.FakeClaude(t)
}
