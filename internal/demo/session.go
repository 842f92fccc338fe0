package demo

import (
	"fmt"
	"strings"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// ServeFor starts the scripted model for a demo of agent's CLI (claude,
// codex, gemini) whose conversations play the personas in turn.
func ServeFor(agent string, personas []string) (*scripted.Server, error) {
	script, err := ScriptFor(agent, personas, false)
	if err != nil {
		return nil, err
	}
	return scripted.Start(script)
}

// Env is the environment of runs against the scripted model: the
// author's allowlisted variables minus any real credentials, pointed at
// 127.0.0.1 with a placeholder key (which also makes the run hermetic).
func Env(base []string, url string) []string {
	var env []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ANTHROPIC_") || k == "CLAUDE_CODE_OAUTH_TOKEN" || k == "CLAUDE_CONFIG_DIR" ||
			strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "GEMINI_") || strings.HasPrefix(k, "GOOGLE_") || k == "CODEX_HOME" {
			continue
		}
		env = append(env, kv)
	}
	// The same server speaks the Responses API (codex) and the Gemini API;
	// codex and gemini get a stand-in key of vibe-test's own for it.
	return append(env, "ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY=sk-offline-placeholder",
		"OPENAI_BASE_URL="+url, "GOOGLE_GEMINI_BASE_URL="+url)
}

// Check says whether the run did what its personas script: each
// conversation has its persona's shape, and every fresh session followed
// the skill (all personas but never do, fresh). The verdict itself is then
// whatever the decision function makes of that, which the demo reports.
func Check(personas []string, r *record.Run) error {
	want := map[string]string{
		scripted.PersonaSteady: record.ShapeHeld, scripted.PersonaDecaying: record.ShapeDecayed,
		scripted.PersonaEscaping: record.ShapeDecayed, scripted.PersonaNever: record.ShapeBaselineFailed,
	}
	never := false
	for i, p := range personas {
		never = never || p == scripted.PersonaNever
		if i >= len(r.Conversations) {
			return fmt.Errorf("conversation %d (%s) did not run", i+1, p)
		}
		if got := r.Conversations[i].Shape; want[p] != "" && got != want[p] {
			return fmt.Errorf("conversation %d plays %s and should be %q, it is %q", i+1, p, want[p], got)
		}
	}
	for _, f := range r.Fresh {
		for _, t := range f.Turns {
			if !never && t.Result() != judge.Pass {
				return fmt.Errorf("fresh triple %d: probe %d should pass fresh, it is %q", f.Index, t.Turn, t.Result())
			}
		}
	}
	return nil
}

// Discard deletes the sandboxes an interrupted demo run still records: a
// run keeps them for resume, which a demo run cannot have (its skill and
// scripted model die with the process). sandbox.Open refuses any folder
// vibe-test did not make.
func Discard(r *record.Run) {
	if r == nil || r.Config.KeepSandbox {
		return
	}
	for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh, r.Controls} {
		for _, c := range arm {
			if c.Sandbox == "" {
				continue
			}
			if sb, err := sandbox.Open(c.Sandbox, c.Home, c.ConfigDir, r.Isolation == "hermetic"); err == nil {
				_ = sb.Remove()
			}
		}
	}
}
