package record

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/jsonerr"
)

// SuiteSchemaVersion of suite.json; bump it on any change an older reader
// would misread.
const SuiteSchemaVersion = 1

// SuiteFile is the suite index's name in a suite folder.
const SuiteFile = "suite.json"

// Suite is suite.json: the index of a suite folder, one entry per skill,
// each pointing at the skill's own run folder (which holds the truth: the
// entry is what the table shows, copied from its run.json).
type Suite struct {
	SchemaVersion int       `json:"schema_version"`
	Status        string    `json:"status"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at,omitzero"`
	// Seed is the filler seed every skill's run used.
	Seed int64 `json:"seed"`
	// Shard is set on a shard's folder: which share of the suite it ran.
	Shard *ShardPlan `json:"shard,omitempty"`
	// Merged names the shard folders a merged suite was made from.
	Merged   []string     `json:"merged_from,omitempty"`
	Skills   []SuiteEntry `json:"skills"`
	ExitCode int          `json:"exit_code"`
}

// ShardPlan is one shard's share of a suite: the suite's units (skill,
// conversation index) sorted by skill name and index, dealt round-robin
// over Count shards; Units are the ones shard Index (1-based) holds.
type ShardPlan struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// Skills are the whole suite's skills and conversation counts, so a
	// merge can recompute every shard's share and name the missing ones.
	Skills []ShardSkill `json:"skills"`
	Units  []Unit       `json:"units"`
}

// ShardSkill is a skill of a sharded suite and its conversations.
type ShardSkill struct {
	Name          string `json:"name"`
	Hash          string `json:"hash"`
	Conversations int    `json:"conversations"`
}

// Unit is a conversation of a skill, with its fresh triple.
type Unit struct {
	Skill string `json:"skill"`
	Index int    `json:"index"` // the conversation's 1-based index in the whole suite
}

// SuiteEntry is one skill of a suite.
type SuiteEntry struct {
	Name string `json:"name"`
	Path string `json:"path"` // the SKILL.md
	// RunDir is the skill's run folder, relative to the suite folder.
	RunDir   string  `json:"run_dir"`
	Status   string  `json:"status"`
	ExitCode int     `json:"exit_code"`
	Verdict  string  `json:"verdict"`
	Diluted  Rate    `json:"diluted"`
	Fresh    Rate    `json:"fresh"`
	CostUSD  float64 `json:"cost_usd"`
	// EffectiveTurn: see Stats.EffectiveTurn.
	EffectiveTurn int    `json:"effective_turn,omitempty"`
	Error         string `json:"error,omitempty"`
	// GateBypassed: a baseline failed under --no-baseline-gate; every
	// artifact of the suite stamps it, as the skill's own do.
	GateBypassed bool `json:"gate_bypassed,omitempty"`
	// CostEstimated: the skill's agent costs are estimated from token
	// counts (config.cost_estimated: codex, gemini).
	CostEstimated bool `json:"cost_estimated,omitempty"`
	// Jail is the skill's run's (run.json's "jail"): "none" when its agent
	// ran unjailed, which every artifact of the suite says, as a run's do.
	Jail string `json:"jail,omitempty"`
}

// NeverBegan marks an entry whose skill stopped before its run began
// without saying why (pending or running when its process died): nothing
// was measured, so the suite cannot pass on it. An entry that says why
// (a refused skill, exit 3) is kept. It was left pending with exit 0, and
// a suite killed before any skill began resumed as completed, exit 0.
func (e *SuiteEntry) NeverBegan() {
	if e.Status != StatusPending && e.Status != StatusRunning {
		return
	}
	e.Status, e.ExitCode = StatusError, exit.Tool
	e.Error = "stopped before its conversations began, so nothing was measured: run it again on its own"
}

// Rate is how many judged probes passed of how many.
type Rate struct {
	Passed int `json:"passed"`
	Probes int `json:"probes"`
}

// Share is the passed share (0 with no probes).
func (r Rate) Share() float64 {
	if r.Probes == 0 {
		return 0
	}
	return float64(r.Passed) / float64(r.Probes)
}

// String is "3/9 (33%)", or "-" with no probes: the suite's table and page
// show a rate so.
func (r Rate) String() string {
	if r.Probes == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", r.Passed, r.Probes, 100*r.Share())
}

// EntryOf fills a suite entry's results from the skill's finished run.
func EntryOf(e SuiteEntry, r *Run) SuiteEntry {
	e.Status, e.ExitCode, e.Verdict = r.Status, r.Outcome.Exit, r.Outcome.Verdict
	c := r.Outcome.Stats.Comparison
	e.Diluted = Rate{Passed: c.Diluted.Passed, Probes: c.Diluted.Probes}
	e.Fresh = Rate{Passed: c.Fresh.Passed, Probes: c.Fresh.Probes}
	e.CostUSD = r.Costs.Total
	e.EffectiveTurn = r.Outcome.Stats.EffectiveTurn
	e.GateBypassed = r.GateBypassed
	e.CostEstimated = r.Config.CostEstimated
	e.Jail = r.Jail
	return e
}

// Settle sets the suite's exit code, the worst of its skills' (a shard's
// verdicts are partial: only what stopped one, 3 or 130, counts), and its
// status from it; interrupted says the suite itself was stopped. A suite
// and its report both settle it so: report recomputed the exit code and
// kept the status suite.json had.
func (s *Suite) Settle(interrupted bool) {
	var codes []int
	for _, e := range s.Skills {
		c := e.ExitCode
		if s.Shard != nil && c != exit.Tool && c != exit.Interrupted {
			c = exit.OK
		}
		codes = append(codes, c)
	}
	s.ExitCode = WorstExit(codes...)
	switch {
	case interrupted || s.ExitCode == exit.Interrupted:
		s.Status = StatusInterrupted
	case s.ExitCode == exit.Tool:
		s.Status = StatusError
	default:
		s.Status = StatusCompleted
	}
}

// worstOrder ranks exit codes for a suite, most telling first: an
// interrupt (the rest is unfinished), a tool error (a skill has no
// verdict), decay, then a skill that does not work fresh, then no decay.
var worstOrder = []int{exit.Interrupted, exit.Tool, exit.Decay, exit.Indeterminate, exit.OK}

// WorstExit is a suite's exit code: the first of 130, 3, 1, 2, 0 that any
// of codes is (an unknown code counts as a tool error).
func WorstExit(codes ...int) int {
	rank := func(c int) int {
		for i, w := range worstOrder {
			if c == w {
				return i
			}
		}
		return -1
	}
	worst := exit.OK
	for _, c := range codes {
		if rank(c) < 0 {
			c = exit.Tool
		}
		if rank(c) < rank(worst) {
			worst = c
		}
	}
	return worst
}

// SaveSuite writes dir's suite.json atomically.
func SaveSuite(dir string, s *Suite) error {
	// Lists are lists, empty or not: a shard with no conversation of its
	// own wrote "skills": null and "units": null, which
	// schema/suite.schema.json refuses.
	if s.Skills == nil {
		s.Skills = []SuiteEntry{}
	}
	if p := s.Shard; p != nil {
		if p.Skills == nil {
			p.Skills = []ShardSkill{}
		}
		if p.Units == nil {
			p.Units = []Unit{}
		}
	}
	return WriteJSON(filepath.Join(dir, SuiteFile), s)
}

// LoadSuite reads dir's suite.json.
func LoadSuite(dir string) (*Suite, error) {
	path := filepath.Join(dir, SuiteFile)
	b, err := readRecord(path, "the folder of a suite of skills")
	if err != nil {
		return nil, err
	}
	var s Suite
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, jsonerr.Format(path, b, err, "a suite index")
	}
	if s.SchemaVersion > SuiteSchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d is newer than this vibe-test reads (%d): upgrade vibe-test", path, s.SchemaVersion, SuiteSchemaVersion)
	}
	if s.SchemaVersion < 1 {
		return nil, fmt.Errorf("%s: schema_version missing, expected %d", path, SuiteSchemaVersion)
	}
	return &s, nil
}

// IsSuite reports whether dir is a suite folder.
func IsSuite(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, SuiteFile))
	return err == nil
}
