package engine

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/fillers"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/term"
)

// Start runs the whole measurement and writes the run folder. An error
// means the tool could not do its job (the run folder, if made, holds what
// was done); a finished run's verdict is in its Outcome.
func Start(ctx context.Context, o Settings, stdio IO, h Hooks) (*record.Run, error) {
	inp, err := o.readInputs()
	if err != nil {
		return nil, err
	}
	sk, cfg, cfgPath, reviewed, sched, pool := inp.skill, inp.cfg, inp.cfgPath, inp.rubric, inp.sched, inp.pool
	// Recorded absolute (the checks above named them as given): a resume
	// from another working folder read them elsewhere (the fixture, the
	// config the sandbox leaves out of its copy and of the fixture's hash,
	// the rubric, the fillers).
	cfgPath, o.RubricPath, o.FillersDir = absDir(cfgPath), absDir(o.RubricPath), absDir(o.FillersDir)
	if cfg != nil {
		cfg.Fixture = absDir(cfg.Fixture)
	}
	driven, judgeAgent := AgentName(o.Agent), JudgeAgentName(o.JudgeAgent, o.Agent, stdio.Env)
	// Another agent signs in from the environment alone (its home is
	// hermetic): without its key or a stand-in, stop before any call.
	for i, name := range []string{driven, judgeAgent} {
		if flag := []string{"--agent", "--judge-agent"}[i]; name != agents.Claude && !agents.HasCredentials(name, stdio.Env) {
			return nil, exit.Errorf(exit.Tool, "%s %s: no credentials: %s (or set %s to a stand-in server)", flag, name, agents.CredentialsAdvice(name), agents.BaseURLVar[name])
		}
	}
	// The jail is tried while the CLIs' versions are checked: each waits
	// on a process of its own, some 30 ms, and a run starts no sooner
	// than both. An early return waits for the probe, whose process
	// outlives nothing.
	var jailKind, jailNote string
	var jailErr error
	jailChosen := make(chan struct{})
	go func() {
		defer close(jailChosen)
		jailKind, jailNote, jailErr = ChooseJail(ctx, o.Isolation, stdio.Env)
	}()
	defer func() { <-jailChosen }()
	// Claude's binary is the driven agent's or the judge's, when either is
	// claude; another agent's is found through the registry.
	var binary, version, otherBinary, otherVersion, otherVerified string
	if driven == agents.Claude || judgeAgent == agents.Claude {
		if binary, err = FindClaude(stdio.Env); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		version, err = claude.Version(ctx, binary, stdio.Env)
		if err != nil {
			return nil, beforeRun(ctx, exit.Errorf(exit.Tool, "checking the claude CLI: %v", err))
		}
		if claude.OlderThan(version, claude.MinVersion) {
			return nil, exit.Errorf(exit.Tool, "%s is claude %s, too old for the flags vibe-test needs (%s or newer): install the pinned version with `npm install -g @anthropic-ai/claude-code@%s`", binary, version, claude.MinVersion, claude.VerifiedVersion)
		}
	}
	other := driven
	if other == agents.Claude {
		other = judgeAgent
	}
	if other != agents.Claude {
		if otherBinary, err = FindAgent(other, stdio.Env); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		if otherVersion, otherVerified, err = agentVersion(ctx, other, otherBinary, stdio.Env); err != nil {
			return nil, beforeRun(ctx, exit.Errorf(exit.Tool, "checking the %s CLI: %v", other, err))
		}
	}
	<-jailChosen
	if jailErr != nil {
		return nil, beforeRun(ctx, exit.With(exit.Tool, jailErr))
	}
	hermetic := claude.HasCredentials(stdio.Env)
	model, modelSource, judgeModel := o.models(cfg, driven, judgeAgent)
	// The turns' parts: claude's, or the other agent's (always with a
	// fresh home of its own: it signs in from the environment alone).
	turnBinary, turnHermetic := binary, hermetic
	var drv agent.Agent
	if driven != agents.Claude {
		turnBinary, turnHermetic, drv = otherBinary, true, agents.For(driven, o.MaxRetries)
	}
	// Two other CLIs (--agent codex --judge-agent gemini, say): the
	// judge's is found and checked on its own.
	judgeBinary, judgeVersion, judgeVerified := otherBinary, "", ""
	if judgeAgent != agents.Claude && judgeAgent != other {
		if judgeBinary, err = FindAgent(judgeAgent, stdio.Env); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		if judgeVersion, judgeVerified, err = agentVersion(ctx, judgeAgent, judgeBinary, stdio.Env); err != nil {
			return nil, beforeRun(ctx, exit.Errorf(exit.Tool, "checking the %s CLI: %v", judgeAgent, err))
		}
	}
	cold := coldParts{agent: judgeAgent, binary: binary, hermetic: hermetic}
	if judgeAgent != agents.Claude {
		cold.binary, cold.hermetic = judgeBinary, true
	}
	// The agent model is pinned for the run: every turn passes the same
	// name, so a default that moves between turns (a new default, a plan
	// limit) cannot change the agent mid-run. Claude's is pinned by the
	// run's first session, which reports the name its CLI resolved
	// (conversation.ModelPin); until then it is the model as asked.
	// Another agent's model is the one named, else vibe-test's pinned
	// default for it (its CLI's own may route per prompt).
	resolved, modelAsked := model, ""
	if drv != nil {
		if resolved == "" {
			resolved = agents.DefaultModel(driven)
		}
	} else {
		resolved, modelAsked = "", model
	}
	tools := claude.AgentTools(sk.AllowedTools, o.AllowedTools)
	sessionMode := o.SessionMode
	if sessionMode == "" {
		sessionMode = claude.DefaultSessionMode
	}
	sessionWide := claude.SessionWide(sk.AllowedTools, o.AllowedTools)
	if drv != nil {
		sessionWide = nil
	}
	var notGranted []string
	sk.Warnings, notGranted = skillWarnings(sk, cfg, o, drv, driven, jailKind, sessionMode)
	for _, w := range Warnings(sk.Warnings, notGranted) {
		fmt.Fprintf(stdio.Stderr, "warning: %s\n", term.Line(w))
	}
	outDir, err := MakeOutDir(o.OutDir, sk.Name)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	release, err := LockFolder(outDir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	defer release()
	spec := JailSpec(jailKind, stdio.Env, turnBinary, turnHermetic, claude.AuthorConfigDir(),
		outDir, sk.Dir, filepath.Dir(cfgPath), CacheDir(o.CacheDir, stdio.Env))
	cold.jail = spec
	if cold.binary != turnBinary || cold.hermetic != turnHermetic {
		cold.jail = JailSpec(jailKind, stdio.Env, cold.binary, cold.hermetic, claude.AuthorConfigDir(),
			outDir, sk.Dir, filepath.Dir(cfgPath), CacheDir(o.CacheDir, stdio.Env))
	}
	run := &record.Run{
		SchemaVersion: record.SchemaVersion,
		Status:        record.StatusRunning,
		StartedAt:     time.Now().UTC(),
		Versions: record.Versions{
			VibeTest: Version, Claude: version, ClaudeVerified: claude.VerifiedVersion,
			ClaudeMismatch: version != claude.VerifiedVersion,
			RubricPrompt:   rubric.PromptVersion, JudgePrompt: judge.PromptVersion, RunSchema: record.SchemaVersion,
		},
		Skill: record.Skill{Name: sk.Name, DeclaredName: sk.DeclaredName, Path: sk.Path, Hash: sk.Hash,
			Warnings: sk.Warnings, ToolsNotGranted: notGranted},
		Config: record.Config{
			Conversations: o.Conversations, Concurrency: o.Concurrency, Model: resolved, ModelSource: modelSource, ModelAsked: modelAsked,
			JudgeModel: judgeModel, AllowedTools: tools, SessionWideTools: sessionWide, SessionMode: sessionMode,
			NoBaselineGate: o.NoBaselineGate, TurnTimeout: o.TurnTimeout.String(), MaxRetries: o.MaxRetries,
			ConfigFile: cfgPath, RubricFile: o.RubricPath, FillersDir: o.FillersDir, KeepSandbox: o.KeepSandbox,
			MaxBudgetUSD: o.MaxBudgetUSD, PassEnv: o.PassEnv, Rule: o.Rule, Alpha: o.Alpha, Effect: o.Effect, JudgeRepeats: o.JudgeRepeats, Controls: o.Controls, Args: o.Args,
		},
		Isolation: "author-config", Jail: jailKind, JailNote: jailNote,
	}
	if turnHermetic {
		run.Isolation = "hermetic"
	}
	if drv != nil {
		run.Config.Agent, run.Config.CostEstimated = driven, !drv.CostExact()
		run.Versions.Agent, run.Versions.AgentVerified = otherVersion, otherVerified
	}
	if judgeAgent != agents.Claude {
		run.Config.JudgeAgent = judgeAgent
		run.Versions.Agent, run.Versions.AgentVerified = otherVersion, otherVerified
		run.Versions.JudgeAgent, run.Versions.JudgeAgentVerified = judgeVersion, judgeVerified
	}
	if binary == "" {
		// Claude took no part: no version of it to stamp.
		run.Versions.ClaudeVerified, run.Versions.ClaudeMismatch = "", false
	}
	if otherVersion != "" && otherVersion != otherVerified {
		warnUnverified(stdio.Stderr, other, otherVersion, otherVerified)
	}
	if judgeVersion != "" && judgeVersion != judgeVerified {
		warnUnverified(stdio.Stderr, judgeAgent, judgeVersion, judgeVerified)
	}
	WarnNoJail(stdio.Stderr, jailKind, jailNote)
	if run.Versions.ClaudeMismatch {
		warnUnverified(stdio.Stderr, agents.Claude, version, claude.VerifiedVersion)
	}
	if o.UntilDecided {
		run.Sequential = &record.Sequential{Alpha: o.Alpha, Effect: o.Effect,
			Max: o.MaxConversations, Batch: o.Conversations, Decision: record.SeqContinue}
	}
	sess := openJournal(run, outDir)
	defer sess.close()
	if err := sess.commit(func() {}); err != nil {
		// Nothing is spent yet: stop before the first model call.
		return run, exit.With(exit.Tool, err)
	}
	fmt.Fprintf(stdio.Stderr, "vibe-test: run folder %s\n", outDir)
	fail := func(err error) (*record.Run, error) {
		_ = sess.commit(func() {
			run.Status, run.Error, run.FinishedAt = record.StatusError, err.Error(), time.Now().UTC()
			run.Outcome = record.Outcome{Exit: exit.Tool, Verdict: "error", Sentence: "No verdict: " + err.Error()}
			if ctx.Err() != nil {
				run.Status = record.StatusInterrupted
				run.Outcome = record.Outcome{Exit: exit.Interrupted, Verdict: "interrupted", Sentence: "Interrupted before the conversations began."}
			}
		})
		if ctx.Err() != nil {
			return run, exit.Errorf(exit.Interrupted, "interrupted; the run folder %s keeps what was done", outDir)
		}
		return run, exit.With(exit.Tool, err)
	}

	// The plan: the config's tasks, or drafted by one cold call.
	var pl *plan.Plan
	if cfg != nil {
		pl = plan.FromConfig(cfgPath, cfg)
	} else {
		fmt.Fprintln(stdio.Stderr, "vibe-test: no vibe-test.yaml beside the skill: drafting the base task and probes with one model call")
		caller, _, err := cold.caller(stdio.Env, o.PassEnv, o.MaxRetries, o.TurnTimeout, o.Grace)
		if err != nil {
			return fail(err)
		}
		var turn claude.Turn
		pl, turn, err = plan.Draft(ctx, caller, sk, judgeModel)
		sess.update(func() { run.Costs.Plan += turn.CostUSD })
		if err != nil {
			return fail(err)
		}
		// On stderr with the rest of what the run says as it goes: stdout
		// is the summary's, and with --json one JSON object.
		fmt.Fprintf(stdio.Stderr, "Drafted tasks (saved in plan.json; copy them into %s beside SKILL.md to keep them):\n%s\n", plan.ConfigName, indent(term.Clean(pl.YAML())))
	}
	pl.Model, pl.JudgeModel, pl.FillerSeed, pl.Schedule = resolved, judgeModel, o.Seed, sched
	if pl.FixtureHash, err = fixtureHash(pl, outDir, o.RubricPath, CacheDir(o.CacheDir, stdio.Env)); err != nil {
		return fail(err)
	}
	units := o.units()
	picks := make([][]fillers.Passage, len(units))
	for i, index := range units {
		if picks[i], err = pickFillers(sched, pool, o.Seed+int64(index-1)); err != nil {
			return fail(fmt.Errorf("choosing fillers: %w", err))
		}
		ids := make([]string, len(picks[i]))
		for k, p := range picks[i] {
			ids[k] = p.ID
		}
		pl.Fillers = append(pl.Fillers, ids)
	}
	sess.update(func() {
		run.Plan = pl
		run.Rubric = reviewed
		for i, index := range units {
			run.Conversations = append(run.Conversations, record.Conversation{
				Index: index, Status: record.StatusPending, Fillers: pl.Fillers[i], Turns: []record.Turn{},
			})
			run.Fresh = append(run.Fresh, record.FreshTriple(index))
		}
		for _, kind := range o.Controls {
			for i := 0; i < o.Conversations; i++ {
				c := record.Conversation{Index: i + 1, Control: kind, Status: record.StatusPending, Turns: []record.Turn{}}
				if kind == record.ControlNoSkill {
					c.Fillers = pl.Fillers[i] // the same fillers as the measured conversation
				}
				run.Controls = append(run.Controls, c)
			}
		}
	})
	if err := record.WriteJSON(filepath.Join(outDir, "plan.json"), pl); err != nil {
		return fail(err)
	}
	return drive(ctx, sess, driveInput{
		binary: turnBinary, env: stdio.Env, hermetic: turnHermetic, jail: spec, agent: drv, cold: cold, skill: sk, plan: pl, picks: picks,
		cacheDir: CacheDir(o.CacheDir, stdio.Env), opts: o, pool: pool, seed: o.Seed,
	}, stdio, h)
}

// models are the agent's model as asked, where it came from ("flag",
// "config", "cli-default"), and the judge's model as asked: the flags',
// else the config's. The config's models are claude's names: another
// agent runs its own default unless a flag names one.
func (o Settings) models(cfg *plan.Config, driven, judgeAgent string) (model, source, judgeModel string) {
	model, source, judgeModel = o.Model, "flag", o.JudgeModel
	if cfg != nil {
		if model == "" && cfg.Model != "" && driven == agents.Claude {
			model, source = cfg.Model, "config"
		}
		if judgeModel == "" && judgeAgent == agents.Claude {
			judgeModel = cfg.JudgeModel
		}
	}
	if model == "" {
		source = "cli-default"
	}
	return model, source, judgeModel
}

// inputs are what a run reads from disk before it starts anything: the
// skill, the config, a reviewed rubric, the schedule and its fillers.
type inputs struct {
	skill   *skill.Skill
	cfg     *plan.Config // nil: no config, the tasks are drafted
	cfgPath string
	rubric  *rubric.Rubric // nil: extracted (or cached)
	sched   *plan.Schedule
	pool    []fillers.Passage
}

// CheckInputs reads and checks a run's inputs as Start and DryRun do,
// and starts nothing: a suite checks every skill's before it writes its
// folder, so a bad one is the same line, and nothing written.
func CheckInputs(o Settings) error {
	_, err := o.readInputs()
	return err
}

// readInputs reads and checks a run's inputs, the same for the run and its
// --dry-run, so both refuse the same bad input with the same line (exit 3),
// and refuses an --out that exists.
func (o Settings) readInputs() (inputs, error) {
	var in inputs
	var err error
	// Read as the driven agent's CLI reads it: what it would never list
	// is refused here, where the run reported it as a baseline that
	// failed, blaming the skill for what the CLI did.
	if in.skill, err = skill.LoadAs(o.SkillPath, AgentName(o.Agent)); err != nil {
		return in, exit.With(exit.Tool, err)
	}
	if in.cfg, in.cfgPath, err = loadConfig(o, in.skill); err != nil {
		return in, exit.With(exit.Tool, err)
	}
	if o.RubricPath != "" {
		if in.rubric, err = rubric.Load(o.RubricPath); err != nil {
			return in, exit.With(exit.Tool, err)
		}
	}
	if in.sched, in.pool, err = o.scheduleAndPool(in.cfg, in.cfgPath); err != nil {
		return in, err
	}
	// A schedule the agent cannot play (gemini cannot compact).
	if err := CheckCompaction(o.Agent, in.sched, o, in.cfgPath); err != nil {
		return in, err
	}
	if err := CheckOutDir(o.OutDir); err != nil {
		return in, exit.With(exit.Tool, err)
	}
	// Before anything is paid for: every sandbox would be refused there.
	if p := sandbox.TempDirProblem(); p != "" {
		return in, exit.Errorf(exit.Tool, "%s", p)
	}
	return in, nil
}

// loadConfig finds the config: --config, else vibe-test.yaml beside SKILL.md.
func loadConfig(o Settings, sk *skill.Skill) (*plan.Config, string, error) {
	path := o.ConfigPath
	if path == "" {
		beside := filepath.Join(sk.Dir, plan.ConfigName)
		if _, err := os.Stat(beside); err != nil {
			return nil, "", nil
		}
		path = beside
	}
	cfg, err := plan.LoadConfig(path)
	if err != nil {
		return nil, "", err
	}
	return cfg, path, nil
}

// skillWarnings are what a run says about the skill before it starts, and a
// dry run with it: skill.Load's own, the hooks the driven agent (drv, nil
// for claude) does not run or that run without a jail, which file lists a
// paths: skill; and the tools the agent will not have.
func skillWarnings(sk *skill.Skill, cfg *plan.Config, o Settings, drv agent.Agent, driven, jailKind, sessionMode string) (warnings, notGranted []string) {
	warnings = slices.Clone(sk.Warnings)
	if drv == nil {
		notGranted = claude.NotGranted(append(slices.Clone(sk.AllowedTools), o.AllowedTools...))
	} else {
		notGranted = drv.NotGranted(claude.AgentTools(sk.AllowedTools, o.AllowedTools))
		if len(sk.Hooks) > 0 {
			// In place of the line on how Claude Code runs them: both read
			// "vibe-test runs them as the CLI does" and "does not run them".
			warnings = slices.DeleteFunc(warnings, func(w string) bool { return w == sk.HooksWarning })
			warnings = append(warnings, fmt.Sprintf("skill %s: its hooks (%s) are Claude Code's; --agent %s does not run them", sk.Name, strings.Join(sk.Hooks, ", "), driven))
		}
		// A skill written for Claude Code names its files where that CLI
		// installs it; this agent finds it elsewhere (as it would on the
		// author's machine), and the agent's commands there fail.
		if w := skill.ClaudePathWarning(sk, driven, drv.SkillDir(sk.Name)); w != "" {
			warnings = append(warnings, w)
		}
	}
	if len(sk.Hooks) > 0 && jailKind == jail.None && drv == nil {
		// Hooks are commands like the agent's Bash: without a jail both run
		// with the author's rights (the CLI runs them so too).
		warnings = append(warnings, fmt.Sprintf("skill %s: its hooks (%s) run with no jail, with your user's rights and view of this machine, like the agent's own commands", sk.Name, strings.Join(sk.Hooks, ", ")))
	}
	// A paths: skill is listed once a matching file is touched: which
	// fixture file would do it, and what resume mode loses.
	if sk.Paths != nil {
		warnings = append(warnings, skill.PathsNotes(sk, startFiles(cfg), sessionMode == claude.SessionResume)...)
	}
	return warnings, notGranted
}

// Warnings are the lines a run prints as "warning: ..." before it starts:
// the skill's, then a line per tool the agent will not have.
func Warnings(skillWarnings, notGranted []string) []string {
	out := slices.Clone(skillWarnings)
	for _, t := range notGranted {
		out = append(out, fmt.Sprintf("the agent will not have the tool %s; a skill step that needs it will fail", t))
	}
	return out
}

// startFiles are the paths a sandbox starts with (the fixture's files and
// the config's files:), relative and slash-separated.
func startFiles(cfg *plan.Config) []string {
	if cfg == nil {
		return nil
	}
	var out []string
	if cfg.Fixture != "" {
		_ = filepath.WalkDir(cfg.Fixture, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if rel, err := filepath.Rel(cfg.Fixture, p); err == nil {
					out = append(out, filepath.ToSlash(rel))
				}
			}
			return nil
		})
	}
	for rel := range cfg.Files {
		out = append(out, filepath.ToSlash(filepath.Clean(rel)))
	}
	return out
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// beforeRun is what a step that failed before the run began reports: an
// interrupt (exit 130) when the user stopped it, whatever that stop made
// the step say (a killed jail probe reads "cannot start a jail"), else err.
func beforeRun(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return exit.Errorf(exit.Interrupted, "interrupted before the run began")
	}
	return err
}

// warnUnverified says that an agent's CLI is not the version its parser
// was verified on.
func warnUnverified(w io.Writer, agent, version, verified string) {
	fmt.Fprintf(w, "warning: %s %s differs from %s, the version vibe-test's parser was verified on; results may be misread\n", agent, version, verified)
}

// fixtureHash hashes the plan's fixture as the run's sandboxes copy it
// (sandbox.FixtureHash), without vibe-test's own files they leave out: the
// run folder, the config, the rubric file and the cache. "" without a
// fixture.
func fixtureHash(p *plan.Plan, runDir, rubricFile, cacheDir string) (string, error) {
	if p.Fixture == "" {
		return "", nil
	}
	exclude := []string{runDir, rubricFile, cacheDir}
	if p.Source != "drafted" {
		exclude = append(exclude, p.Source)
	}
	h, err := sandbox.FixtureHash(p.Fixture, exclude)
	if err != nil {
		return "", fmt.Errorf("fixture %s: %w", p.Fixture, err)
	}
	return h, nil
}
