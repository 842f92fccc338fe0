// Package engine runs a measurement: it starts a run (the skill, the plan,
// the run folder, the jail, the pinned model), drives every conversation and
// fresh triple, journals the run record (journal.go), decides, and
// resumes a run that stopped. It knows nothing of flags or terminals: the
// command line (package app) fills Settings, and passes hooks to hear
// progress and to show the finished run. A test can drive it the same way.
package engine

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/conversation"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
)

// Settings are one run's settings; the command line's flags map onto them
// one to one, and a test can fill them directly.
type Settings struct {
	SkillPath      string
	ConfigPath     string
	RubricPath     string
	OutDir         string
	Conversations  int
	Concurrency    int
	Model          string
	JudgeModel     string
	NoBaselineGate bool
	KeepSandbox    bool
	TurnTimeout    time.Duration
	Grace          time.Duration
	MaxRetries     int
	// FillersDir is a folder of the author's own passages (--fillers DIR).
	FillersDir string
	// FillerKind, DiluteTo, CompactBefore and MaxFillers override the
	// config's schedule field by field when set (--fillers work|passages,
	// --dilute-to, --compact-before, --max-fillers).
	FillerKind    string
	DiluteTo      []int64
	CompactBefore []int
	CompactAt     int64
	MaxFillers    int
	Seed          int64
	PassEnv       []string
	// AllowedTools are tools granted beyond the base list and the skill's
	// allowed-tools (--allowed-tools).
	AllowedTools []string
	// SessionMode is claude.SessionInteractive or claude.SessionResume
	// ("" is claude.DefaultSessionMode).
	SessionMode string
	Args        []string
	// Rule sets the exit code (record.RuleDilutedVsFresh or
	// record.RuleAnyProbeFailed).
	Rule         string
	Alpha        float64
	JudgeRepeats int
	Controls     []string
	// Sequential mode (--until-decided).
	UntilDecided     bool
	MaxConversations int
	// Effect is the drop in probe pass share the run aims to detect.
	Effect       float64
	MaxBudgetUSD float64
	TurnRetries  int
	RetryBackoff time.Duration
	// Agent is --agent: the CLI driven, claude (also "") , codex or
	// gemini. JudgeAgent is --judge-agent: the CLI of the rubric, plan
	// and judge calls ("": agents.DefaultJudge).
	Agent      string
	JudgeAgent string
	// Isolation is --isolation: "jail", "none", or "" for the jail where
	// bubblewrap works.
	Isolation string
	// CacheDir holds cached rubrics ("" = $VIBE_TEST_CACHE_DIR or the
	// user's cache folder).
	CacheDir string
	// Units are the 1-based conversation indices this run holds (a shard's
	// share, each with its fresh triple); nil is 1..Conversations. Fillers
	// are picked by Seed+index-1 whatever the share, so conversation 5 of
	// a shard is conversation 5 of the unsharded run.
	Units []int
	// Shared, when set, is a concurrency limit and a budget the run shares
	// with others (the skills of a suite); it replaces Concurrency and
	// MaxBudgetUSD.
	Shared *Shared
}

// Shared is what the runs of a suite draw on together.
type Shared struct {
	// Slots holds a token per conversation or fresh triple running, across
	// every run; its capacity is the suite's --concurrency.
	Slots chan struct{}
	// Budget is the suite's --max-budget-usd, spent by every run.
	Budget *conversation.Budget
	// Counted: Budget holds every run's recorded spending already (a
	// resumed suite counts them all before any run starts, so none runs
	// on a budget the others' records have not reached yet); a run then
	// adds only what it spends.
	Counted bool
}

// NewShared is a limit of concurrency units at once (0: no limit) and a
// budget of limitUSD (0: none).
func NewShared(concurrency int, limitUSD float64) *Shared {
	if concurrency <= 0 {
		concurrency = 1 << 16 // no limit worth counting
	}
	return &Shared{Slots: make(chan struct{}, concurrency), Budget: &conversation.Budget{Limit: limitUSD}}
}

// schedule is the run's schedule: the config's, with each flag given
// replacing its field; nil when neither asks for anything but the seed's.
func (o Settings) schedule(cfg *plan.Config) (*plan.Schedule, error) {
	s := plan.Schedule{}
	if cfg != nil && cfg.Schedule != nil {
		s = *cfg.Schedule.Schedule()
	}
	if o.FillerKind != "" {
		s.Fillers = o.FillerKind
	}
	if o.DiluteTo != nil {
		s.DiluteTo = o.DiluteTo
	}
	if o.CompactBefore != nil {
		s.CompactBefore = o.CompactBefore
	}
	if o.MaxFillers > 0 {
		s.MaxFillers = o.MaxFillers
	}
	if o.CompactAt > 0 {
		s.CompactAt = o.CompactAt
	}
	if s.MaxFillers > 0 && s.Fixed() {
		return nil, fmt.Errorf("--max-fillers (or schedule.max_fillers) only applies with --dilute-to: the seed's schedule always asks 6 fillers")
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	if s.Default() {
		return nil, nil
	}
	return &s, nil
}

// units are the conversation indices a run of o holds.
func (o Settings) units() []int {
	if o.Units != nil {
		return o.Units
	}
	u := make([]int, o.Conversations)
	for i := range u {
		u[i] = i + 1
	}
	return u
}

// Version of vibe-test, stamped into run.json.
var Version = "0.1.0-dev"

// IO is where a run reads its environment and writes its messages.
type IO struct {
	Env            []string
	Stdout, Stderr io.Writer
}

// Hooks are what the caller hears of a run. Any may be nil.
type Hooks struct {
	// Progress hears every step of every conversation, and Close when the
	// conversations are done (before Show).
	Progress Progress
	// Show renders the run once it is decided (summary, chart, JUnit).
	Show func(dir string, r *record.Run) error
}

// Progress is a live view of a run.
type Progress interface {
	Event(conversation.Event)
	Close()
}

// EnvValue is the value of key in env ("" when unset).
func EnvValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// ModelName names a model setting for people ("" is the CLI's default).
func ModelName(m string) string {
	if m == "" {
		return "the CLI's default"
	}
	return m
}
