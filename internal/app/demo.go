package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/term"
)

// demoTurnTimeout bounds a demo turn: the scripted model answers at once.
const demoTurnTimeout = 2 * time.Minute

func demoFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Category: catOutput, Usage: "the run `folder`", DefaultText: "./vibe-runs/<UTC time>-stock-ledger"},
		&cli.StringFlag{Name: "personas", Category: catAgent, Value: "decaying,steady", Usage: "the scripted agent's persona per conversation: steady, decaying, never, escaping, noisy, forgetting"},
		&cli.BoolFlag{Name: "keep-sandbox", Category: catAgent, Usage: "keep each conversation's sandbox folder"},
		&cli.StringFlag{Name: "agent", Category: catAgent, Usage: "the CLI the scripted model plays to: `claude|codex|gemini` (the judge calls go through it too)", DefaultText: agents.Claude},
		&cli.StringFlag{Name: "session", Category: catAgent, Value: claude.DefaultSessionMode, Usage: "`interactive|resume`: as for a run"},
		&cli.BoolFlag{Name: "cases", Category: catInput, Usage: "the eval demo instead: a bundled case set, a baseline, then a shorter and a broken version of its skill against it (vibe-test eval)"},
	}
}

// DemoOptions are `vibe-test demo`'s.
type DemoOptions struct {
	Out         string   // the run folder ("": a new one under ./vibe-runs)
	Personas    []string // the scripted agent's, one per conversation
	KeepSandbox bool
	SessionMode string
	// Agent is the CLI driven (claude, codex, gemini); the judge calls go
	// through the same one.
	Agent string
	// Cases runs the eval demo (vibe-test eval) instead of the decay demo.
	Cases bool
}

func demoOptions(c *cli.Context) (DemoOptions, error) {
	if c.NArg() > 0 {
		return DemoOptions{}, exit.Errorf(exit.Tool, "demo: %q, expected no argument (the demo brings its own skill; --help lists its flags)", term.Line(c.Args().First()))
	}
	o := DemoOptions{
		Out: c.String("out"), Personas: strings.Split(c.String("personas"), ","),
		KeepSandbox: c.Bool("keep-sandbox"), SessionMode: c.String("session"), Cases: c.Bool("cases"),
		Agent: c.String("agent"),
	}
	if c.IsSet("agent") {
		if err := agents.Check("agent", o.Agent); err != nil {
			return o, exit.With(exit.Tool, err)
		}
	}
	if o.Cases && o.Agent != "" && o.Agent != agents.Claude {
		return o, exit.Errorf(exit.Tool, "--agent is the decay demo's; the eval demo (--cases) runs claude")
	}
	if o.Cases && c.IsSet("personas") {
		return o, exit.Errorf(exit.Tool, "--personas is the decay demo's; the eval demo (--cases) plays its own: a baseline, a shorter and a broken version")
	}
	if err := claude.CheckSessionMode(o.SessionMode); err != nil {
		return o, exit.With(exit.Tool, err)
	}
	return o, nil
}

// runDemo runs the bundled skill against the scripted model with the real
// CLI. It needs no credentials and makes no network call beyond 127.0.0.1.
// It exits 0 when the demo ran as designed and says which exit code a real
// run with these results would give.
func runDemo(ctx context.Context, o DemoOptions, stdio IO) error {
	if o.Cases {
		return runDemoCases(ctx, o, stdio)
	}
	personas := o.Personas
	var claudePath, claudeHow string
	var err error
	if o.Agent == "" || o.Agent == agents.Claude {
		claudePath, claudeHow, err = engine.LocateClaude(stdio.Env, engine.PinnedDirs())
		if err != nil {
			return exit.Errorf(exit.Tool, "the demo runs the real claude CLI: %v", err)
		}
	} else if claudePath, err = engine.FindAgent(o.Agent, stdio.Env); err != nil {
		return exit.Errorf(exit.Tool, "the demo runs the real %s CLI: %v", o.Agent, err)
	}
	// The script is built to check the personas; Serve builds it again.
	if _, err := demo.Script(personas, false); err != nil {
		return exit.With(exit.Tool, fmt.Errorf("--personas: %w", err))
	}
	srv, err := demo.ServeFor(engine.AgentName(o.Agent), personas)
	if err != nil {
		return exit.With(exit.Tool, fmt.Errorf("starting the scripted model: %w", err))
	}
	defer srv.Close()
	dir, err := os.MkdirTemp("", "stock-")
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	defer os.RemoveAll(dir)
	paths, err := demo.Materialize(dir)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	env := demo.Env(stdio.Env, srv.URL())
	fmt.Fprintf(stdio.Stderr, "vibe-test demo: scripted model on %s, personas %s (one per conversation, in order)\n", srv.URL(), strings.Join(personas, ", "))
	r, err := execute(ctx, engine.Settings{
		SkillPath: paths.Skill, ConfigPath: paths.Config, OutDir: o.Out,
		Args:          demo.Args(personas),
		Conversations: len(personas), Concurrency: 1, // in order, so conversation N gets persona N
		TurnTimeout: demoTurnTimeout, Grace: engine.DefaultGrace, MaxRetries: 1, Seed: 1,
		TurnRetries: 1, RetryBackoff: time.Second,
		KeepSandbox: o.KeepSandbox, CacheDir: dir + "/cache", SessionMode: o.SessionMode,
		Agent: o.Agent, JudgeAgent: o.Agent,
	}, Output{}, IO{Env: env, Stdout: stdio.Stdout, Stderr: stdio.Stderr, Styled: stdio.Styled})
	if exit.Code(err) == exit.Interrupted {
		// The demo's skill and scripted model die with this process, so
		// the run cannot be resumed: no sandbox is kept for it either.
		demo.Discard(r)
		return exit.Errorf(exit.Interrupted, "interrupted: a demo run cannot be resumed (its skill and scripted model existed only while it ran); run `%s demo` again", stdio.prog())
	}
	if err != nil {
		return err
	}
	if err := demo.Check(personas, r); err != nil {
		return exit.Errorf(exit.Tool, "the demo did not run as designed: %v", err)
	}
	fmt.Fprintf(stdio.Stdout, "\nThe demo ran as designed. A real run with these results would exit %d: %s\n", r.Outcome.Exit, term.Line(r.Outcome.Sentence))
	if o.Agent != "" && o.Agent != agents.Claude {
		fmt.Fprintf(stdio.Stdout, "(The costs are estimated from the scripted model's token counts at vibe-test's pinned %s prices; nothing was billed.)\n", o.Agent)
		fmt.Fprintf(stdio.Stdout, "\nNext, on your own skill: %s ./path/to/your-skill --agent %s (with %s set)\n%s: %s\n", stdio.prog(), o.Agent, agentKeyVar(o.Agent), o.Agent, claudePath)
		return nil
	}
	fmt.Fprintln(stdio.Stdout, "(The costs are what the CLI computes for the scripted model's token counts at list prices; nothing was billed.)")
	fmt.Fprint(stdio.Stdout, nextSteps(stdio.prog(), claudePath, pinnedHow(claudePath, claudeHow)))
	return nil
}

// nextSteps is the demo's last word: how to run the tool on one's own
// skill, with the claude it will use and how it finds it.
func nextSteps(prog, claudePath, how string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nNext, on your own skill (a real run needs ANTHROPIC_API_KEY, or a `claude` login):\n")
	fmt.Fprintf(&b, "  %s init ./path/to/your-skill   # drafts vibe-test.yaml (tasks and rubric) beside its SKILL.md: review it\n", prog)
	fmt.Fprintf(&b, "  %s ./path/to/your-skill        # runs the measurement\n", prog)
	other := ""
	if how != "VIBE_TEST_CLAUDE" {
		other = "; VIBE_TEST_CLAUDE=/path/to/claude picks another"
	}
	fmt.Fprintf(&b, "claude: %s (found via %s%s)\n", claudePath, how, other)
	return b.String()
}

// pinnedHow names the pinned install when PATH found claude there: `make
// demo` puts tools/ on PATH for itself only, and ./vibe-test finds the
// pinned copy without PATH.
func pinnedHow(path, how string) string {
	suffix := string(filepath.Separator) + filepath.Join(engine.PinnedDir, "claude")
	if how != "PATH" || !strings.HasSuffix(path, suffix) {
		return how
	}
	return "the pinned install in " + filepath.Join(strings.TrimSuffix(path, suffix), "tools")
}

// DemoEnv is demo.Env, for the tests and benchmarks that run vibe-test
// against the scripted model.
func DemoEnv(base []string, url string) []string { return demo.Env(base, url) }

// agentKeyVar names the key a real run of agent needs.
func agentKeyVar(agent string) string {
	if agent == agents.Gemini {
		return "GEMINI_API_KEY"
	}
	return "OPENAI_API_KEY"
}
