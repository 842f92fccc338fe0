// Package eval runs a case-based eval (`vibe-test eval`, seed 000's
// method): did this version of a skill make its decisions worse, on cases
// whose answers are known?
//
// For every case of a case set (package cases) and every repeat, three
// roles run:
//
//   - the generator: the agent under test, `claude -p` in the jail (or
//     codex or gemini, --agent: roles_agent.go), in a fresh copy of the
//     case's fixture outside any git repository, with the skill appended
//     to its system prompt (--append-system-prompt-file, as the seed did)
//     or installed as a project skill, read-only tools, the run's model
//     and effort; its final message is the result;
//   - the reader: a cold structured call that plays the user, seeing only
//     the case's prompt and the message: the decision it would make, the
//     problem rebuilt, its follow-up questions, its answer to the close;
//   - the grader: a cold structured call with the message, the reader's
//     notes and, per measure, the question and the key fields it uses
//     (never the skill, never which run): pass, fail or n/a, each with a
//     quote that must occur in the message or the notes; a quote that does
//     not is asked again once, then the measure is a grade error.
//
// The reader and the grader run on --judge-agent's CLI (claude's cold
// calls, or codex's and gemini's agent.Structured).
//
// The word count and the diagnostics are deterministic. Each cell is a
// file of its own, written when it is done (record.go), so an interrupted
// eval resumes where it stopped. A run is one pass over the case set:
// `--baseline NAME` makes two base runs and an empty-skill control and
// stores them in the case set (baseline.go), then checks the instrument;
// `--against NAME` runs the candidate and decides against them
// (decide.go, through package evalstats); `--grid` runs the generator at
// several models and efforts against one baseline.
package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/evalstats"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/readfile"
	"github.com/vibe-test/vibe-test/internal/redact"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/term"
	"github.com/vibe-test/vibe-test/internal/yamlerr"
)

// Defaults of the settings a flag can change.
const (
	DefaultConcurrency = 4
	DefaultTimeout     = 10 * time.Minute
	DefaultAlpha       = 0.05
	DefaultMargin      = 0.1
	ControlEmpty       = "empty"
)

// Settings are one eval's settings; the command line's flags map onto
// them, and a test can fill them directly. Zero values take the case
// set's defaults.
type Settings struct {
	SkillPath   string
	CasesDir    string // --cases; "" reads `cases:` from vibe-test.yaml beside SKILL.md
	Repeats     int
	Model       string
	Effort      string
	ReaderModel string
	GraderModel string
	Tools       []string
	Deliver     string
	Control     bool   // --control empty
	Baseline    string // --baseline NAME: make it
	Against     string // --against NAME: decide against it
	Grid        []Point
	Rule        string
	Alpha       float64
	Margin      float64
	Concurrency int
	Timeout     time.Duration
	Grace       time.Duration
	MaxRetries  int
	Isolation   string
	OutDir      string
	KeepSandbox bool
	Args        []string
	// Agent is the generator's CLI (--agent: claude, codex, gemini; ""
	// the case set's, else claude); JudgeAgent the reader's and grader's
	// (--judge-agent; "" the case set's, else agents.DefaultJudge).
	Agent      string
	JudgeAgent string
	// RetryBackoff is the wait before a generator call that failed on a
	// transient API error is tried again, doubled each time (0: 10 s).
	RetryBackoff time.Duration
}

// IO is where an eval reads its environment and says what it does.
type IO struct {
	Env    []string
	Stderr io.Writer // progress and warnings
}

// FindCases is the case set's folder: dir when given, else the `cases:`
// of vibe-test.yaml beside the skill (relative to that file).
func FindCases(dir string, sk *skill.Skill) (string, error) {
	if dir != "" {
		return dir, nil
	}
	if sk == nil {
		return "", fmt.Errorf("no case set: pass --cases DIR (or a skill whose vibe-test.yaml says `cases: ../cases`)")
	}
	cfg := filepath.Join(sk.Dir, plan.ConfigName)
	b, err := readfile.Regular(cfg, plan.MaxConfigSize)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no case set: pass --cases DIR, or write %s beside SKILL.md with `cases: ../cases` (a folder outside the skill's)", cfg)
	}
	if err != nil {
		return "", fmt.Errorf("no case set: pass --cases DIR, or fix %s's `cases:` (%v)", cfg, firstLine(err.Error()))
	}
	var c struct {
		Cases string `yaml:"cases"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return "", yamlerr.Format(cfg, 0, err)
	}
	if strings.TrimSpace(c.Cases) == "" {
		// A misspelt field ("casez:", "Cases:") read as none at all.
		var fields map[string]any
		_ = yaml.Unmarshal(b, &fields)
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			if k != "cases" && nearlyCases(k) {
				return "", fmt.Errorf("no case set: %s has no `cases:` field, but a `%s:` field; expected `cases: ../cases` (a folder outside the skill's), or pass --cases DIR", cfg, term.Line(k))
			}
		}
		return "", fmt.Errorf("no case set: %s has no `cases:` field; add `cases: ../cases` (a folder outside the skill's) or pass --cases DIR", cfg)
	}
	if filepath.IsAbs(c.Cases) {
		return c.Cases, nil
	}
	return filepath.Join(filepath.Dir(cfg), c.Cases), nil
}

// LoadSet reads the case set for s and refuses one inside the skill's
// folder (installed with the skill, its keys would reach the generator).
func LoadSet(s Settings) (*cases.Set, *skill.Skill, error) {
	var sk *skill.Skill
	if s.SkillPath != "" {
		var err error
		// As text: delivered in the system prompt (the default) no CLI
		// reads its frontmatter; readSkill reads it as the generator's
		// CLI once the settings say it is installed as a skill.
		if sk, err = skill.LoadAs(s.SkillPath, skill.AsText); err != nil {
			return nil, nil, exit.With(exit.Tool, err)
		}
	}
	dir, err := FindCases(s.CasesDir, sk)
	if err != nil {
		return nil, sk, exit.With(exit.Tool, err)
	}
	set, err := cases.Load(dir)
	if err != nil {
		return nil, sk, exit.With(exit.Tool, err)
	}
	if sk != nil && (set.Dir == sk.Dir || strings.HasPrefix(set.Dir, sk.Dir+string(filepath.Separator))) {
		return nil, sk, exit.Errorf(exit.Tool, "%s: the case set is inside the skill's folder %s, expected it outside (the skill's files travel with it, and its keys would reach the agent)", set.Dir, sk.Dir)
	}
	return set, sk, nil
}

// readSkill reads the skill again as the generator's CLI reads it when it
// is installed as a skill (LoadSet read it as text, as it is delivered in
// the system prompt, where no CLI reads its frontmatter), refusing one
// that CLI would never list, and prints its warnings: the CLI's reading
// of an installed skill, as a run of the decay measurement does, and for
// either a file too large or not UTF-8.
func readSkill(sk *skill.Skill, s Settings, stdio IO) (*skill.Skill, error) {
	if s.Deliver != cases.DeliverSkill && len(sk.Raw) > skill.MaxSize {
		return nil, exit.Errorf(exit.Tool, "%s: %d bytes: over the %d bytes vibe-test appends to an agent's system prompt (expected at most that)", sk.Path, len(sk.Raw), skill.MaxSize)
	}
	if agent := firstNonEmpty(s.Agent, agents.Claude); s.Deliver == cases.DeliverSkill && sk.ReadAs != agent {
		again, err := skill.LoadAs(sk.Path, agent)
		if err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		sk = again
	}
	for _, w := range sk.Warnings {
		fmt.Fprintf(stdio.Stderr, "warning: %s\n", term.Line(w))
	}
	// As a run says it (engine): the generator finds the skill where its
	// CLI looks, not where Claude Code installs it.
	if a := firstNonEmpty(s.Agent, agents.Claude); a != agents.Claude && s.Deliver == cases.DeliverSkill {
		if w := skill.ClaudePathWarning(sk, a, agents.For(a, 0).SkillDir(sk.Name)); w != "" {
			fmt.Fprintf(stdio.Stderr, "warning: %s\n", term.Line(w))
		}
	}
	return sk, nil
}

// CheckHygiene runs the case set's hygiene check and prints each problem
// on a line of its own; an error (exit 3) when there is any.
func CheckHygiene(ctx context.Context, set *cases.Set, stdio IO) error {
	problems, notes := cases.Hygiene(ctx, set, stdio.Env)
	for _, n := range notes {
		fmt.Fprintf(stdio.Stderr, "note: %s\n", term.Line(n))
	}
	for _, p := range problems {
		fmt.Fprintf(stdio.Stderr, "%s\n", p)
	}
	if len(problems) > 0 {
		return exit.Errorf(exit.Tool, "the case set %s has %d %s (above): fix them before any model call", set.Dir, len(problems), plural(len(problems), "problem", "problems"))
	}
	return nil
}

// checkDecidable refuses a case set no decision can be made on
// (cases.DecisionProblems), each problem on a line of its own, exit 3.
func checkDecidable(set *cases.Set, stdio IO) error {
	problems := cases.DecisionProblems(set)
	for _, p := range problems {
		fmt.Fprintf(stdio.Stderr, "%s\n", p)
	}
	if len(problems) > 0 {
		return exit.Errorf(exit.Tool, "the case set %s is too small to decide on (above): --baseline and --against need at least 2 cases in each part; without them the eval measures", set.Dir)
	}
	return nil
}

// DecisionNotes are cases.DecisionProblems as --check says them: fine for
// measuring, refused by --baseline and --against.
func DecisionNotes(set *cases.Set) []string {
	var out []string
	for _, p := range cases.DecisionProblems(set) {
		out = append(out, p.String()+": it measures, but --baseline and --against refuse it")
	}
	return out
}

// gridRoles keeps, on a --grid against base, the reader's and grader's
// models as the baseline had them unless given: the grid varies the
// generator, and --model (the points' default) made them --model's too,
// which the baseline check then refused.
func (s Settings) gridRoles(given Settings, base *Baseline) Settings {
	if len(s.Grid) == 0 {
		return s
	}
	if given.ReaderModel == "" {
		s.ReaderModel = base.ReaderModel
	}
	if given.GraderModel == "" {
		s.GraderModel = base.GraderModel
	}
	return s
}

// resolved are the settings with the case set's defaults filled in. The
// case set's models are its agents' (defaults.agent, else claude; and
// defaults.judge_agent, else that): a run with another agent (or judge
// agent) gets that agent's default model unless a flag names one.
func (s Settings) resolved(set *cases.Set, env []string) Settings {
	d := set.Defaults
	setAgent := firstNonEmpty(d.Agent, agents.Claude)
	setJudge := firstNonEmpty(d.JudgeAgent, setAgent)
	if s.Agent == "" {
		s.Agent = setAgent
	}
	if s.JudgeAgent == "" {
		s.JudgeAgent = firstNonEmpty(d.JudgeAgent, agents.DefaultJudge(s.Agent, env))
	}
	if s.Repeats == 0 {
		s.Repeats = d.Repeats
	}
	if s.Model == "" && s.Agent == setAgent {
		s.Model = d.Model
	}
	if s.Effort == "" {
		s.Effort = d.Effort
	}
	// The reader's and grader's models: the case set's, else the
	// generator's when the same agent answers them (--model included), else
	// the case set's model when its judge is its agent. Another agent's
	// model means nothing to the judge's CLI.
	setReader, setGrader, setModel, genModel := "", "", "", ""
	if s.JudgeAgent == setJudge {
		setReader, setGrader = d.ReaderModel, d.GraderModel
		if setJudge == setAgent {
			setModel = d.Model
		}
	}
	if s.JudgeAgent == s.Agent {
		genModel = s.Model
	}
	if s.ReaderModel == "" {
		s.ReaderModel = firstNonEmpty(setReader, genModel, setModel)
	}
	if s.GraderModel == "" {
		s.GraderModel = firstNonEmpty(setGrader, genModel, setModel)
	}
	if len(s.Tools) == 0 {
		s.Tools = slices.Clone(d.Tools)
	}
	if s.Deliver == "" {
		s.Deliver = d.Deliver
	}
	if s.Rule == "" {
		s.Rule = evalstats.RulePaired
	}
	if s.Alpha == 0 {
		s.Alpha = DefaultAlpha
	}
	if s.Margin == 0 {
		s.Margin = DefaultMargin
	}
	if s.Concurrency <= 0 {
		s.Concurrency = DefaultConcurrency
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Grace <= 0 {
		s.Grace = engine.DefaultGrace
	}
	return s
}

// mode is what the settings ask for.
func (s Settings) mode() string {
	switch {
	case s.Baseline != "":
		return ModeBaseline
	case s.Against != "":
		return ModeAgainst
	}
	return ModeRun
}

// Check validates settings that go together, before anything is read.
func (s Settings) Check() error {
	if s.Agent != "" {
		if err := agents.Check("agent", s.Agent); err != nil {
			return err
		}
	}
	if s.JudgeAgent != "" {
		if err := agents.Check("judge-agent", s.JudgeAgent); err != nil {
			return err
		}
	}
	switch {
	case s.Baseline != "" && s.Against != "":
		return errors.New("--baseline and --against do not go together: make the baseline first, then run candidates against it")
	case len(s.Grid) > 0 && s.Against == "":
		return errors.New("--grid needs --against NAME: each model and effort is run against one stored baseline")
	case s.Baseline != "" && !validName(s.Baseline):
		return fmt.Errorf("--baseline: %q, expected a name of letters, digits, '.', '-' or '_' that does not begin with '.'", s.Baseline)
	case s.Against != "" && !validName(s.Against):
		return fmt.Errorf("--against: %q, expected a baseline's name (a folder in the case set's baselines/)", s.Against)
	case s.Repeats < 0 || s.Repeats > 20:
		return fmt.Errorf("--repeats: %d, expected 1 to 20", s.Repeats)
	case s.Effort != "" && !slices.Contains(cases.Efforts, s.Effort):
		return fmt.Errorf("--effort: %q, expected one of %s", s.Effort, strings.Join(cases.Efforts, ", "))
	case s.Deliver != "" && s.Deliver != cases.DeliverSystemPrompt && s.Deliver != cases.DeliverSkill:
		return fmt.Errorf("--deliver: %q, expected %s or %s", s.Deliver, cases.DeliverSystemPrompt, cases.DeliverSkill)
	case s.Rule != "" && s.Rule != evalstats.RulePaired && s.Rule != evalstats.RuleSeed:
		return fmt.Errorf("--rule: %q, expected %s or %s", s.Rule, evalstats.RulePaired, evalstats.RuleSeed)
	case s.Alpha != 0 && !(s.Alpha > 0 && s.Alpha < 0.5): // NaN fails it
		return fmt.Errorf("--alpha: %v, expected a level between 0 and 0.5", s.Alpha)
	case s.Margin != 0 && !(s.Margin > 0 && s.Margin < 1):
		return fmt.Errorf("--margin: %v, expected a drop between 0 and 1 (0.1 = ten points of the total)", s.Margin)
	case s.Concurrency < 0:
		return fmt.Errorf("--concurrency: %d, expected 1 or more", s.Concurrency)
	case s.MaxRetries < 0 || s.MaxRetries > 20:
		return fmt.Errorf("--max-retries: %d, expected 0 to 20", s.MaxRetries)
	case s.Isolation != "" && s.Isolation != engine.IsolationJail && s.Isolation != engine.IsolationNone:
		return fmt.Errorf("--isolation: %q, expected %q or %q", s.Isolation, engine.IsolationJail, engine.IsolationNone)
	}
	for _, p := range s.Grid {
		if p.Effort != "" && !slices.Contains(cases.Efforts, p.Effort) {
			return fmt.Errorf("--grid: effort %q, expected one of %s", p.Effort, strings.Join(cases.Efforts, ", "))
		}
	}
	return nil
}

// runPlan is one run the eval makes: what the generator is given.
type runPlan struct {
	info RunInfo
	v    version
}

// session is a live eval: its folder, record and the roles.
type session struct {
	dir    string
	set    *cases.Set
	rec    *Record
	plans  []runPlan
	gen    *generator
	read   *reader
	grade  *grader
	stdio  IO
	mu     sync.Mutex
	fatal  error
	cancel context.CancelCauseFunc
}

// admit loads what settings name and refuses, before any model call, an
// eval that could not run: settings out of range, no skill, a case set
// that fails its hygiene, or one too small to decide on when a baseline is
// stored or compared against. Start and DryRun both ask it, so that a dry
// run never quotes a bill for an eval that would be refused.
func admit(ctx context.Context, s Settings, stdio IO) (*cases.Set, *skill.Skill, error) {
	if err := s.Check(); err != nil {
		return nil, nil, exit.With(exit.Tool, err)
	}
	set, sk, err := LoadSet(s)
	if err != nil {
		return nil, nil, err
	}
	if sk == nil {
		return nil, nil, exit.Errorf(exit.Tool, "no skill given: expected a path to a SKILL.md or its folder (or --check to check the case set alone)")
	}
	// Before anything is paid for: every generator's sandbox would be
	// refused there.
	if p := sandbox.TempDirProblem(); p != "" {
		return nil, nil, exit.Errorf(exit.Tool, "%s", p)
	}
	if err := CheckHygiene(ctx, set, stdio); err != nil {
		return nil, nil, err
	}
	if s.Baseline != "" || s.Against != "" {
		if err := checkDecidable(set, stdio); err != nil {
			return nil, nil, err
		}
	}
	return set, sk, nil
}

// Start runs an eval from settings and returns its result. An error means
// the tool could not do its job (the eval folder, if made, keeps what was
// done); a finished eval's verdict is in Result.Exit.
func Start(ctx context.Context, s Settings, stdio IO) (*Result, error) {
	set, sk, err := admit(ctx, s, stdio)
	if err != nil {
		return nil, err
	}
	given := s
	s = s.resolved(set, stdio.Env)
	if sk, err = readSkill(sk, s, stdio); err != nil {
		return nil, err
	}
	var base *Baseline
	if err := checkNewBaseline(set, s.Baseline); err != nil {
		return nil, err
	}
	if s.Against != "" {
		if base, err = LoadBaseline(set, s.Against); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		s = s.gridRoles(given, base)
	}
	if err := engine.CheckOutDir(s.OutDir); err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	tc, err := startTools(ctx, s, stdio, set, sk, nil)
	if err != nil {
		return nil, err
	}
	cfg := configOf(s, tc)
	if base != nil {
		env := Environment(tc.jailKind, tc.hermetic || tc.agent != agents.Claude) // as the record says it
		if err := base.Compatible(set, cfg, tc.agent, tc.judgeAgent, tc.versions(), env, len(s.Grid) > 0); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
	}
	plans := planRuns(s, sk, tc, base)
	dir, err := engine.MakeFolder(s.OutDir, "eval-"+sk.Name, RecordFile)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	release, err := engine.LockFolder(dir)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	defer release()
	rec := &Record{
		SchemaVersion: SchemaVersion, Kind: Kind, Status: StatusRunning, StartedAt: time.Now().UTC(), Mode: s.mode(),
		Versions: tc.versions(),
		Skill:    skillInfo(sk),
		Cases:    setInfo(set, redactor(stdio).String),
		Config:   cfg,
		Jail:     tc.jailKind, JailNote: tc.jailNote, Hermetic: tc.hermetic || tc.agent != agents.Claude,
	}
	rec.setAgents(tc)
	for _, p := range plans {
		rec.Runs = append(rec.Runs, p.info)
	}
	if base != nil {
		// The baseline's cells are copied in: the eval folder decides (and
		// is reported, rejudged) on its own, whatever becomes of the
		// baseline later.
		if err := base.CopyInto(dir); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		rec.Notes = append(rec.Notes, base.Notes(set, sk)...)
	}
	if err := SaveRecord(dir, rec); err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	fmt.Fprintf(stdio.Stderr, "vibe-test eval: folder %s\n", term.Line(dir))
	sess := newSession(dir, set, rec, plans, tc, s, stdio)
	return sess.drive(ctx)
}

// tools are what startTools found: the CLIs, the jail, the models.
type tools struct {
	binary, version    string // claude's, when an eval role runs it
	jailKind, jailNote string
	hermetic           bool
	jail               *jail.Spec
	model, modelAsked  string
	readerModel        string
	graderModel        string
	grid               []Point // resolved
	caller             claude.Caller
	// agent drives the generator, judgeAgent the reader and the grader.
	// For an agent other than claude, drv is its driver, agentBinary,
	// agentVersion and agentJail its CLI and jail, baseURL its stand-in;
	// cold is the reader's and grader's caller, whichever agent it is.
	agent, judgeAgent string
	drv               agent.Agent
	agentBinary       string
	agentJail         *jail.Spec
	baseURL           string
	cold              claude.Structured
	cliVersions       map[string]string // agent name → its CLI's version
}

// versions are the programs and prompts the eval runs with.
func (tc *tools) versions() Versions {
	return Versions{VibeTest: engine.Version, Claude: tc.version, Codex: tc.cliVersions[agents.Codex], Gemini: tc.cliVersions[agents.Gemini],
		ReaderPrompt: ReaderPromptVersion, GraderPrompt: GraderPromptVersion}
}

// startTools finds the CLIs, checks them, chooses the jail and pins the
// models (no model call). pinned, when set, holds models resolved before
// (a resume, a rejudge): a role whose setting is "" keeps its model.
// Claude's models are resolved to the ids they stand for; another agent's
// are recorded as given ("" is that CLI's default).
func startTools(ctx context.Context, s Settings, stdio IO, set *cases.Set, sk *skill.Skill, pinned *Config) (*tools, error) {
	tc := &tools{agent: firstNonEmpty(s.Agent, agents.Claude), judgeAgent: firstNonEmpty(s.JudgeAgent, agents.Claude), cliVersions: map[string]string{}}
	var err error
	// Another agent without credentials is named first: the fix it needs
	// says more than a missing claude would.
	for _, name := range []string{tc.agent, tc.judgeAgent} {
		if name != agents.Claude && !agents.HasCredentials(name, stdio.Env) {
			flag := "--agent"
			if name != tc.agent {
				flag = "--judge-agent"
			}
			if pinned != nil {
				// A resume or a rejudge: the agents are the eval's.
				flag = map[string]string{"--agent": "the eval's agent", "--judge-agent": "the eval's judge agent"}[flag]
			}
			return nil, exit.Errorf(exit.Tool, "%s %s: no credentials: %s (or set %s to a stand-in server)", flag, name, agents.CredentialsAdvice(name), agents.BaseURLVar[name])
		}
	}
	needClaude := tc.agent == agents.Claude || tc.judgeAgent == agents.Claude
	if needClaude {
		if tc.binary, err = engine.FindClaude(stdio.Env); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
		if tc.version, err = claude.Version(ctx, tc.binary, stdio.Env); err != nil {
			return nil, beforeRun(ctx, exit.Errorf(exit.Tool, "checking the claude CLI: %v", err))
		}
		if claude.OlderThan(tc.version, claude.MinVersion) {
			return nil, exit.Errorf(exit.Tool, "%s is claude %s, too old for the flags vibe-test needs (%s or newer): install the pinned version with `npm install -g @anthropic-ai/claude-code@%s`", tc.binary, tc.version, claude.MinVersion, claude.VerifiedVersion)
		}
	}
	binaries := map[string]string{}
	for _, name := range []string{tc.agent, tc.judgeAgent} {
		if name == agents.Claude || binaries[name] != "" {
			continue
		}
		flag := "--agent"
		if name != tc.agent {
			flag = "--judge-agent"
		}
		if pinned != nil {
			// A resume or a rejudge: the agents are the eval's.
			flag = map[string]string{"--agent": "the eval's agent", "--judge-agent": "the eval's judge agent"}[flag]
		}
		bin, err := agents.FindBinary(name, stdio.Env, engine.PinnedDirs())
		if err != nil {
			return nil, exit.Errorf(exit.Tool, "%s %s: %v", flag, name, err)
		}
		v, err := agents.Version(ctx, name, bin, stdio.Env)
		if err != nil {
			return nil, beforeRun(ctx, exit.Errorf(exit.Tool, "checking the %s CLI (%s): %v", name, bin, err))
		}
		binaries[name], tc.cliVersions[name] = bin, v
	}
	if tc.jailKind, tc.jailNote, err = engine.ChooseJail(ctx, s.Isolation, stdio.Env); err != nil {
		return nil, beforeRun(ctx, exit.With(exit.Tool, err))
	}
	engine.WarnNoJail(stdio.Stderr, tc.jailKind, tc.jailNote)
	if needClaude {
		tc.hermetic = claude.HasCredentials(stdio.Env)
	}
	// The jail hides the case set (keys, holdout, baselines), the skill's
	// folder and the eval folder's parent from every call; each generator
	// call adds its own workspace.
	named := []string{set.Dir}
	if sk != nil {
		named = append(named, sk.Dir)
	}
	if s.OutDir != "" {
		if abs, err := filepath.Abs(s.OutDir); err == nil {
			named = append(named, filepath.Dir(abs))
		}
	}
	if needClaude {
		tc.jail = engine.JailSpec(tc.jailKind, stdio.Env, tc.binary, tc.hermetic, claude.AuthorConfigDir(), named...)
		tc.caller = engine.ColdCaller(tc.binary, stdio.Env, tc.hermetic, s.MaxRetries, s.Timeout, s.Grace)
		tc.caller.Jail = tc.jail
		tc.cold = tc.caller
	}
	if tc.agent != agents.Claude {
		tc.drv = agents.For(tc.agent, s.MaxRetries)
		tc.agentBinary = binaries[tc.agent]
		tc.agentJail = engine.JailSpec(tc.jailKind, stdio.Env, tc.agentBinary, true, "", named...)
		tc.baseURL = agents.BaseURL(tc.agent, stdio.Env)
	}
	if tc.judgeAgent != agents.Claude {
		j := engine.JailSpec(tc.jailKind, stdio.Env, binaries[tc.judgeAgent], true, "", named...)
		if tc.cold, err = agents.Cold(tc.judgeAgent, agents.ColdOptions{Binary: binaries[tc.judgeAgent], Env: stdio.Env,
			Retries: s.MaxRetries, Timeout: s.Timeout, Grace: s.Grace, Jail: j}); err != nil {
			return nil, exit.With(exit.Tool, err)
		}
	}
	resolveAs := func(name, m, role string) (string, error) {
		if name != agents.Claude {
			return m, nil
		}
		r, err := tc.caller.ResolveModel(ctx, m)
		if err != nil {
			return "", beforeRun(ctx, exit.Errorf(exit.Tool, "resolving the %s model (%s): %v", role, engine.ModelName(m), err))
		}
		return r, nil
	}
	resolve := func(m, role string) (string, error) { return resolveAs(tc.judgeAgent, m, role) }
	resolveGen := func(m, role string) (string, error) { return resolveAs(tc.agent, m, role) }
	if pinned != nil {
		tc.model, tc.modelAsked, tc.grid = pinned.Model, pinned.ModelAsked, pinned.Grid
		tc.readerModel, tc.graderModel = pinned.ReaderModel, pinned.GraderModel
		if s.ReaderModel != "" {
			if tc.readerModel, err = resolve(s.ReaderModel, "reader"); err != nil {
				return nil, err
			}
		}
		if s.GraderModel != "" {
			if tc.graderModel, err = resolveSame(s.GraderModel, s.ReaderModel, tc.readerModel, func(m string) (string, error) { return resolve(m, "grader") }); err != nil {
				return nil, err
			}
		}
		return tc, nil
	}
	if tc.model, err = resolveGen(s.Model, "generator"); err != nil {
		return nil, err
	}
	if s.Model != "" && s.Model != tc.model {
		tc.modelAsked = s.Model
	}
	resolveReader := func(m string) (string, error) { return resolve(m, "reader") }
	if tc.agent == tc.judgeAgent {
		tc.readerModel, err = resolveSame(s.ReaderModel, s.Model, tc.model, resolveReader)
	} else {
		// The generator's resolution is another agent's.
		tc.readerModel, err = resolveReader(s.ReaderModel)
	}
	if err != nil {
		return nil, err
	}
	if tc.graderModel, err = resolveSame(s.GraderModel, s.ReaderModel, tc.readerModel, func(m string) (string, error) { return resolve(m, "grader") }); err != nil {
		return nil, err
	}
	for _, p := range s.Grid {
		// An axis the grid leaves out is the eval's, as for the effort.
		m, err := resolveGen(firstNonEmpty(p.Model, s.Model), "grid")
		if err != nil {
			return nil, err
		}
		tc.grid = append(tc.grid, Point{Model: m, Effort: firstNonEmpty(p.Effort, s.Effort)})
	}
	return tc, nil
}

// resolveSame resolves m, reusing a resolution already made for the same
// name (one CLI process fewer).
func resolveSame(m, same, resolvedSame string, resolve func(string) (string, error)) (string, error) {
	if m == same {
		return resolvedSame, nil
	}
	return resolve(m)
}

func configOf(s Settings, tc *tools) Config {
	return Config{
		Repeats: s.Repeats, Model: tc.model, ModelAsked: tc.modelAsked, Effort: s.Effort,
		ReaderModel: tc.readerModel, GraderModel: tc.graderModel, Tools: s.Tools, Deliver: s.Deliver,
		Control: s.Control, Baseline: s.Baseline, Against: s.Against,
		Rule: s.Rule, Alpha: s.Alpha, Margin: s.Margin, Concurrency: s.Concurrency,
		Timeout: s.Timeout.String(), MaxRetries: s.MaxRetries, KeepSandbox: s.KeepSandbox,
		Isolation: s.Isolation, Grid: tc.grid, Args: s.Args,
	}
}

// planRuns are the runs an eval makes, in the order tables show them:
// the control, the base runs, the candidates.
func planRuns(s Settings, sk *skill.Skill, tc *tools, base *Baseline) []runPlan {
	cand := version{skill: sk, text: sk.Raw, model: tc.model, effort: s.Effort}
	control := version{model: tc.model, effort: s.Effort}
	runInfo := func(label, dir, arm string, v version) RunInfo {
		h := ""
		if v.skill != nil {
			h = v.skill.Hash
		}
		return RunInfo{Label: label, Dir: dir, Arm: arm, Model: v.model, Effort: v.effort, SkillHash: h}
	}
	var out []runPlan
	switch s.mode() {
	case ModeBaseline:
		out = append(out,
			runPlan{runInfo("control", "control", ArmControl, control), control},
			runPlan{runInfo("base 1", "base-1", ArmBase, cand), cand},
			runPlan{runInfo("base 2", "base-2", ArmBase, cand), cand})
	default:
		storedControl := false
		if base != nil {
			for _, r := range base.Runs {
				storedControl = storedControl || r.Arm == ArmControl
			}
		}
		if s.Control && !storedControl {
			out = append(out, runPlan{runInfo("control", "control", ArmControl, control), control})
		}
		if base != nil {
			for _, r := range base.Runs {
				out = append(out, runPlan{info: RunInfo{Label: r.Label, Dir: filepath.Join("baseline", r.Dir), Arm: r.Arm, Model: r.Model,
					Effort: r.Effort, SkillHash: r.SkillHash, Stored: true, Source: filepath.Join(base.Dir, r.Dir)}})
			}
		}
		if len(tc.grid) > 0 {
			for i, p := range tc.grid {
				v := cand
				v.model, v.effort = p.Model, p.Effort
				out = append(out, runPlan{runInfo(p.Label(), fmt.Sprintf("grid-%d", i+1), ArmCandidate, v), v})
			}
		} else {
			out = append(out, runPlan{runInfo("candidate", "candidate", ArmCandidate, cand), cand})
		}
	}
	return out
}

func newSession(dir string, set *cases.Set, rec *Record, plans []runPlan, tc *tools, s Settings, stdio IO) *session {
	return &session{
		dir: dir, set: set, rec: rec, plans: plans, stdio: stdio,
		gen: &generator{
			binary: tc.binary, env: stdio.Env, hermetic: tc.hermetic, authorConfig: claude.AuthorConfigDir(), jail: tc.jail,
			timeout: s.Timeout, grace: s.Grace, maxRetries: s.MaxRetries, tools: s.Tools, deliver: s.Deliver,
			keepSandbox: s.KeepSandbox, exclude: []string{dir}, redactor: redactor(stdio),
			retries: 2, backoff: cmp.Or(s.RetryBackoff, 10*time.Second),
			agent: tc.agent, drv: tc.drv, agentBinary: tc.agentBinary, agentJail: tc.agentJail, baseURL: tc.baseURL,
		},
		read:  &reader{caller: tc.cold, model: tc.readerModel},
		grade: &grader{caller: tc.cold, model: tc.graderModel, goal: set.Goal, measures: set.Measures},
	}
}

// job is one cell to make.
type job struct {
	run    int
	c      *cases.Case
	repeat int
}

// drive makes every cell not yet done, then decides and finishes the
// record.
func (s *session) drive(ctx context.Context) (*Result, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.cancel = cancel
	jobs := s.pending()
	s.update(func() {
		for i := range s.rec.Runs {
			if !s.rec.Runs[i].Stored {
				s.rec.Runs[i].Cells = s.rec.Config.Repeats * len(s.set.All())
			}
		}
	})
	sem := make(chan struct{}, s.rec.Config.Concurrency)
	var wg sync.WaitGroup
loop:
	for _, j := range jobs {
		select {
		case <-ctx.Done():
			break loop
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func(j job) {
			defer wg.Done()
			defer func() { <-sem }()
			s.cell(ctx, j)
		}(j)
	}
	wg.Wait()
	return s.finish(ctx)
}

// pending are the cells without a finished file, repeat by repeat (an
// interrupted eval has whole first repeats), main cases before holdout.
func (s *session) pending() []job {
	var out []job
	for r := 1; r <= s.rec.Config.Repeats; r++ {
		for _, c := range s.set.All() {
			for i, p := range s.plans {
				if p.info.Stored {
					continue
				}
				cell, err := loadCell(filepath.Join(s.dir, cellPath(p.info.Dir, c.ID, r, c.Holdout)))
				if err == nil && cell != nil && cell.Status == CellOK {
					continue
				}
				out = append(out, job{run: i, c: c, repeat: r})
			}
		}
	}
	return out
}

// cell makes one cell: generate, read, grade, the deterministic checks;
// its file is written when it is done, errors included.
func (s *session) cell(ctx context.Context, j job) {
	p := s.plans[j.run]
	rel := cellPath(p.info.Dir, j.c.ID, j.repeat, j.c.Holdout)
	cell := &Cell{SchemaVersion: SchemaVersion, Run: p.info.Label, Case: j.c.ID, Repeat: j.repeat, Holdout: j.c.Holdout,
		CaseHash: j.c.Hash, Status: CellOK}
	s.stamp(cell, j.c)
	var turn claude.Turn
	var err error
	// counted is what the cell's file already counts (resume summed it into
	// the record): the record adds only what this try spends. Under s.mu
	// (s.update).
	var counted Costs
	spent := func() {
		s.rec.Runs[j.run].Costs.add(cell.Costs.minus(counted))
		s.rec.Costs.add(cell.Costs.minus(counted))
	}
	prev, _ := loadCell(filepath.Join(s.dir, rel))
	if prev != nil && (prev.Status == CellInterrupted || prev.Status == CellError) && prev.Message != "" {
		// Its message came back before an interrupt, or before its reading
		// failed (a failed generation keeps none): read and graded now, not
		// generated (and paid for) again. Drawn again, the messages a
		// reader could not handle would be replaced by ones it can, a
		// sample leaning to the easy ones. What the stopped or failed
		// reading or grading spent is kept too.
		turn.Text = prev.Message
		cell.Generator, cell.Costs, counted = prev.Generator, prev.Costs, prev.Costs
	} else {
		if prev != nil {
			// A failed try made again: its file is replaced by this one,
			// which keeps what the failed try spent (resume sums the record
			// from the files; it dropped the failed try's costs).
			cell.Costs, counted = prev.Costs, prev.Costs
		}
		transcript := freeName(s.dir, strings.TrimSuffix(rel, ".json")+".generator.jsonl")
		var info GenInfo
		turn, info, err = s.gen.generate(ctx, j.c, p.v, filepath.Join(s.dir, transcript))
		info.Transcript = transcript
		cell.Generator = info
		cell.Costs.Generator += turn.CostUSD
		if turn.CostEstimated {
			s.update(func() { s.rec.CostEstimated = true })
		}
	}
	fail := func(err error) {
		cell.Status, cell.Error = CellError, s.gen.redactor.String(err.Error())
		cell.Grades = errorGrades(s.set.Measures, cell.Error)
	}
	// Stopped once the message came back: the cell is kept as interrupted
	// (a generation that was cut keeps no file: resume makes it again).
	// It used to keep none, and resume paid for the generation again while
	// the totals counted it once.
	interrupted := func() {
		cell.Status, cell.Error = CellInterrupted, "interrupted before it was read and graded"
		cell.Message = s.gen.redactor.String(turn.Text)
		cell.Grades = errorGrades(s.set.Measures, cell.Error)
		_ = saveCell(filepath.Join(s.dir, rel), cell) // as good as lost: resume generates it again
		// Spent, though not done: the interrupted record counts it.
		s.update(spent)
	}
	switch {
	case ctx.Err() != nil && (err != nil || turn.Text == ""):
		return // interrupted: no file, so a resume makes it again
	case ctx.Err() != nil:
		interrupted()
		return
	case err != nil:
		fail(err)
	default:
		cell.Message = s.gen.redactor.String(turn.Text)
		cell.Words = cases.Words(cell.Message)
		for _, d := range s.set.Diagnostics {
			ok, detail := d.Check.Run(cell.Message)
			cell.Diagnostics = append(cell.Diagnostics, DiagResult{ID: d.ID, Pass: ok, Detail: detail})
		}
		notes, cost, rerr := s.read.read(ctx, j.c.Prompt, turn.Text)
		cell.Costs.Reader += cost
		if rerr != nil {
			if ctx.Err() != nil {
				interrupted()
				return
			}
			fail(rerr)
			break
		}
		cell.Reader = redactNotes(notes, s.gen.redactor.String)
		grades, gcost := s.grade.grade(ctx, j.c, turn.Text, notes)
		cell.Costs.Grader += gcost
		if ctx.Err() != nil {
			cell.Reader = nil
			interrupted()
			return
		}
		for i := range grades {
			grades[i].Quote = s.gen.redactor.String(grades[i].Quote)
			grades[i].Error = s.gen.redactor.String(grades[i].Error)
		}
		cell.Grades = grades
	}
	if errors.Is(err, claude.ErrCredentials) || errors.Is(err, agents.ErrSkillNotLoaded) {
		s.stop(err)
	}
	if serr := saveCell(filepath.Join(s.dir, rel), cell); serr != nil {
		s.stop(fmt.Errorf("writing %s: %w", rel, serr))
		return
	}
	s.update(func() {
		ri := &s.rec.Runs[j.run]
		ri.Done++
		if cell.Status != CellOK {
			ri.Errors++
		}
		spent()
		// Under the lock: cells finish at once, their lines must not mix.
		fmt.Fprintf(s.stdio.Stderr, "%s\n", progressLine(s.rec, j, cell))
	})
}

// stamp records what reads and grades the cell.
func (s *session) stamp(cell *Cell, c *cases.Case) {
	cell.ReaderModel, cell.GraderModel = s.read.model, s.grade.model
	cell.ReaderPrompt, cell.GraderPrompt = ReaderPromptVersion, GraderPromptVersion
	cell.MeasuresHash, cell.KeyHash = MeasuresHash(s.set), KeyHash(c)
}

// progressLine is one finished cell, for the live log on stderr, fit for
// a terminal. A holdout case is named by its place, not its id: an
// editing agent may read this log.
func progressLine(rec *Record, j job, c *Cell) string {
	name := c.Case
	if c.Holdout {
		name = "holdout case"
	}
	passed, graded, errs := 0, 0, 0
	for _, g := range c.Grades {
		switch g.Result {
		case ResultPass:
			passed++
			graded++
		case ResultFail:
			graded++
		case ResultError:
			errs++
		}
	}
	status := fmt.Sprintf("%d/%d measures passed, %d words", passed, graded, c.Words)
	if errs > 0 {
		// "1/1 passed" read as a clean cell beside an error and an n/a.
		status = fmt.Sprintf("%d/%d measures passed, %d %s, %d words", passed, graded, errs, plural(errs, "grade error", "grade errors"), c.Words)
	}
	if c.Status != CellOK {
		status = "error: " + firstLine(c.Error)
	}
	if c.Holdout {
		status = "done"
		if c.Status != CellOK {
			status = "error"
		}
	}
	// A CLI's error may carry an escape sequence (an API error body that
	// retitles the window): the line is cleaned as every other.
	return term.Line(fmt.Sprintf("  %-12s %-16s repeat %d  %s  $%.4f", rec.Runs[j.run].Label, name, j.repeat, status, c.Costs.Total()))
}

// stop ends the whole eval (refused credentials, a write that failed).
func (s *session) stop(err error) {
	s.mu.Lock()
	if s.fatal == nil {
		s.fatal = err
	}
	s.mu.Unlock()
	s.cancel(err)
}

// update changes the record under the lock and saves it.
func (s *session) update(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
	if err := SaveRecord(s.dir, s.rec); err != nil && s.fatal == nil {
		s.fatal = err
	}
}

// finish decides (when every cell is done) and closes the record.
func (s *session) finish(ctx context.Context) (*Result, error) {
	s.mu.Lock()
	fatal := s.fatal
	s.mu.Unlock()
	cause := context.Cause(ctx)
	interrupted := fatal == nil && ctx.Err() != nil && (cause == nil || errors.Is(cause, context.Canceled))
	res, err := Evaluate(s.dir, s.rec)
	if err != nil && fatal == nil {
		fatal = err
	}
	s.update(func() {
		s.rec.FinishedAt = time.Now().UTC()
		switch {
		case interrupted:
			s.rec.Status = StatusInterrupted
			s.rec.Outcome = Outcome{Exit: exit.Interrupted, Verdict: "interrupted", Sentence: fmt.Sprintf("Interrupted: `vibe-test resume %s` makes the cells still missing.", term.Arg(s.dir))}
		case fatal != nil:
			s.rec.Status, s.rec.Error = StatusError, fatal.Error()
			s.rec.Outcome = Outcome{Exit: exit.Tool, Verdict: evalstats.ToolFail, Sentence: "No verdict: " + fatal.Error()}
		default:
			s.rec.Status = StatusCompleted
			s.rec.Outcome = Outcome{Exit: res.Exit, Verdict: res.Verdict, Sentence: res.Sentence}
		}
	})
	if res != nil {
		res.Record = s.rec
		res.TakeStatus()
	}
	switch {
	case interrupted:
		return res, exit.Errorf(exit.Interrupted, "interrupted; `vibe-test resume %s` continues the eval", term.Arg(s.dir))
	case fatal != nil:
		return res, exit.With(exit.Tool, fatal)
	}
	if s.rec.Mode == ModeBaseline && res.Exit != exit.Tool {
		dir, err := WriteBaseline(s.set, s.rec.Config.Baseline, s.dir, s.rec)
		if err != nil {
			// The record says so too: report exited with the instrument's
			// code (0 or 2) for an eval whose baseline was never stored.
			s.update(func() {
				s.rec.Status, s.rec.Error = StatusError, err.Error()
				s.rec.Outcome = Outcome{Exit: exit.Tool, Verdict: evalstats.ToolFail, Sentence: "No verdict: the baseline was not stored: " + err.Error()}
			})
			res.TakeStatus()
			return res, exit.With(exit.Tool, err)
		}
		fmt.Fprintf(s.stdio.Stderr, "vibe-test eval: baseline %q stored in %s (small files: commit them with the case set)\n", s.rec.Config.Baseline, dir)
	}
	return res, nil
}

// checkNewBaseline refuses a --baseline name already stored ("" is none):
// the eval would make its cells, then refuse to store them.
func checkNewBaseline(set *cases.Set, name string) error {
	if name == "" {
		return nil
	}
	if _, err := os.Stat(BaselineDir(set, name)); err == nil {
		return exit.Errorf(exit.Tool, "--baseline %s: %s exists, expected a new name (a stored baseline is never written over; delete the folder to make it again)", name, BaselineDir(set, name))
	}
	// It is stored once every cell is made: a case set that takes no new
	// folder (read-only, another user's) is found now, not after the
	// runs it would have cost.
	parent := filepath.Join(set.Dir, cases.BaselinesDir)
	if _, err := os.Stat(parent); err != nil {
		parent = set.Dir
	}
	if err := atomicfile.CanCreateIn(parent); err != nil {
		return exit.Errorf(exit.Tool, "--baseline %s: %s takes no new folder (%v), expected a case set the baseline can be stored in", name, parent, err)
	}
	return nil
}

// freeName is rel, or rel with -N before its extension for the first N
// that names no file in dir: a transcript is never written over.
func freeName(dir, rel string) string {
	ext := filepath.Ext(rel)
	base := strings.TrimSuffix(rel, ext)
	for n := 1; ; n++ {
		name := rel
		if n > 1 {
			name = fmt.Sprintf("%s-%d%s", base, n, ext)
		}
		if _, err := os.Lstat(filepath.Join(dir, name)); os.IsNotExist(err) {
			return name
		}
	}
}

func errorGrades(ms []cases.Measure, msg string) []Grade {
	out := make([]Grade, len(ms))
	for i, m := range ms {
		out[i] = Grade{Measure: m.ID, Result: ResultError, Error: msg}
	}
	return out
}

func redactNotes(n *Notes, clean func(string) string) *Notes {
	c := *n
	c.Decision, c.Rebuild, c.CloseAnswer = clean(c.Decision), clean(c.Rebuild), clean(c.CloseAnswer)
	c.FollowUps = nil
	for _, q := range n.FollowUps {
		c.FollowUps = append(c.FollowUps, clean(q))
	}
	if c.FollowUps == nil {
		c.FollowUps = []string{}
	}
	return &c
}

// redactor keeps the eval's secrets (the credential variables' values of
// its environment, and key-shaped strings) out of what it saves and prints.
func redactor(stdio IO) *redact.Redactor {
	return redact.FromEnv(stdio.Env, agents.CredentialVars())
}

func skillInfo(sk *skill.Skill) SkillInfo {
	return SkillInfo{Name: sk.Name, Path: sk.Path, Hash: sk.Hash, Lines: strings.Count(sk.Raw, "\n"), Words: cases.Words(sk.Raw)}
}

// setInfo is what the record keeps of the case set, its author's words
// (the goal, the measures' names) through clean: a key pasted into
// cases.yaml reached eval.json, report.html, JUnit, Markdown and the
// terminal, which print them from the record. The hashes are of the set
// as it is.
func setInfo(set *cases.Set, clean func(string) string) SetInfo {
	si := SetInfo{Dir: set.Dir, Hash: set.Hash, MeasuresHash: MeasuresHash(set), Goal: clean(set.Goal), CaseHashes: map[string]string{}}
	for _, m := range set.Measures {
		si.Measures = append(si.Measures, MeasureInfo{ID: m.ID, Name: clean(m.Name), Label: clean(m.Label())})
	}
	for _, c := range set.Cases {
		si.Main = append(si.Main, c.ID)
		si.CaseHashes[c.ID] = c.Hash
	}
	for _, c := range set.Holdout {
		si.Holdout = append(si.Holdout, c.ID)
		si.CaseHashes[c.ID] = c.Hash
	}
	return si
}

// beforeRun is what a step that failed before the eval began reports: an
// interrupt when the user stopped it.
func beforeRun(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return exit.Errorf(exit.Interrupted, "interrupted before the eval began")
	}
	return err
}

func validName(s string) bool {
	if s == "" || s == "." || s == ".." || strings.HasPrefix(s, ".") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// nearlyCases says whether a config's field name is "cases" mistyped: the
// same but for case, or one letter changed, added or dropped.
func nearlyCases(k string) bool {
	k = strings.ToLower(k)
	const want = "cases"
	switch {
	case k == want:
		return true
	case len(k) == len(want):
		diff := 0
		for i := range k {
			if k[i] != want[i] {
				diff++
			}
		}
		return diff == 1
	case len(k) == len(want)+1:
		for i := range k {
			if k[:i]+k[i+1:] == want {
				return true
			}
		}
	case len(k) == len(want)-1:
		for i := range want {
			if want[:i]+want[i+1:] == k {
				return true
			}
		}
	}
	return false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
