package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/jsonerr"
	"github.com/vibe-test/vibe-test/internal/readfile"
)

// RecordFile is an eval folder's record: what ran, with which settings,
// and how it ended. The cells are files of their own beside it.
const RecordFile = "eval.json"

// SchemaVersion is eval.json's (and a cell file's) version.
const SchemaVersion = 1

// Kind marks eval.json as an eval's record.
const Kind = "eval"

// Statuses of an eval and of a cell.
const (
	StatusRunning     = "running"
	StatusCompleted   = "completed"
	StatusInterrupted = "interrupted"
	StatusError       = "error"
	CellOK            = "ok"
	CellError         = "error"
	// CellInterrupted: the generator's message came back, its reading or
	// grading was stopped. Kept, with what the generation cost, so resume
	// reads and grades it without generating (and paying) again.
	CellInterrupted = "interrupted"
)

// Arms of a run.
const (
	ArmBase      = "base"
	ArmControl   = "control"
	ArmCandidate = "candidate"
)

// Modes of an eval.
const (
	ModeRun      = "run"      // the candidate (and a control), no decision
	ModeBaseline = "baseline" // --baseline NAME: two base runs and the control, stored
	ModeAgainst  = "against"  // --against NAME: the candidate decided against a stored baseline
)

// Grade results as cell files hold them.
const (
	ResultPass  = "pass"
	ResultFail  = "fail"
	ResultNA    = "n/a"
	ResultError = "error"
)

// Record is eval.json.
type Record struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"`
	Status        string    `json:"status"`
	Error         string    `json:"error,omitempty"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at,omitzero"`
	Mode          string    `json:"mode"`
	// Rejudged: the messages are another eval's, read and graded again
	// here; their generation was paid for there.
	Rejudged bool      `json:"rejudged,omitempty"`
	Versions Versions  `json:"versions"`
	Skill    SkillInfo `json:"skill"`
	Cases    SetInfo   `json:"cases"`
	Config   Config    `json:"config"`
	// Jail is "bubblewrap" or "none"; JailNote says why there is none.
	Jail     string `json:"jail"`
	JailNote string `json:"jail_note,omitempty"`
	Hermetic bool   `json:"hermetic"`
	// Agent is the generator's CLI, JudgeAgent the reader's and grader's
	// ("" in an older record: claude). CostEstimated: some of the costs
	// are estimated from token counts at a pinned price table (codex,
	// gemini), not the CLI's own figure.
	Agent         string    `json:"agent,omitempty"`
	JudgeAgent    string    `json:"judge_agent,omitempty"`
	CostEstimated bool      `json:"cost_estimated,omitempty"`
	Runs          []RunInfo `json:"runs"`
	Costs         Costs     `json:"costs"`
	Outcome       Outcome   `json:"outcome"`
	Notes         []string  `json:"notes,omitempty"`
}

// Versions are the programs and prompts an eval ran with.
type Versions struct {
	VibeTest     string `json:"vibe_test"`
	Claude       string `json:"claude"`
	Codex        string `json:"codex,omitempty"`
	Gemini       string `json:"gemini,omitempty"`
	ReaderPrompt string `json:"reader_prompt"`
	GraderPrompt string `json:"grader_prompt"`
}

// SkillInfo is the candidate skill (for --baseline: the base skill).
type SkillInfo struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Lines int    `json:"lines"`
	Words int    `json:"words"`
}

// SetInfo is the case set an eval ran on.
type SetInfo struct {
	Dir          string            `json:"dir"`
	Hash         string            `json:"hash"`
	MeasuresHash string            `json:"measures_hash"`
	Goal         string            `json:"goal"`
	Measures     []MeasureInfo     `json:"measures"`
	Main         []string          `json:"main"`
	Holdout      []string          `json:"holdout,omitempty"`
	CaseHashes   map[string]string `json:"case_hashes"`
}

// MeasureInfo names a measure.
type MeasureInfo struct {
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	Label string `json:"label"`
}

// Config is what an eval was asked to do, resolved.
type Config struct {
	Repeats     int      `json:"repeats"`
	Model       string   `json:"model"` // the generator's, resolved
	ModelAsked  string   `json:"model_asked,omitempty"`
	Effort      string   `json:"effort,omitempty"`
	ReaderModel string   `json:"reader_model"` // resolved
	GraderModel string   `json:"grader_model"` // resolved
	Tools       []string `json:"tools"`
	Deliver     string   `json:"deliver"`
	Control     bool     `json:"control,omitempty"`
	Baseline    string   `json:"baseline,omitempty"` // --baseline NAME
	Against     string   `json:"against,omitempty"`  // --against NAME
	Rule        string   `json:"rule"`
	Alpha       float64  `json:"alpha"`
	Margin      float64  `json:"margin"`
	Concurrency int      `json:"concurrency"`
	Timeout     string   `json:"timeout"`
	MaxRetries  int      `json:"max_retries"`
	KeepSandbox bool     `json:"keep_sandbox,omitempty"`
	Isolation   string   `json:"isolation,omitempty"`
	Grid        []Point  `json:"grid,omitempty"`
	Args        []string `json:"args,omitempty"`
}

// Point is one generator setting of --grid.
type Point struct {
	Model  string `json:"model"`
	Effort string `json:"effort,omitempty"`
}

// Label names a grid point in tables.
func (p Point) Label() string {
	if p.Effort == "" {
		return p.Model
	}
	return p.Model + " " + p.Effort
}

// AgentName is the generator's CLI ("" in a record older than the
// field: claude).
func (r *Record) AgentName() string { return firstNonEmpty(r.Agent, agents.Claude) }

// JudgeAgentName is the reader's and grader's CLI.
func (r *Record) JudgeAgentName() string { return firstNonEmpty(r.JudgeAgent, agents.Claude) }

// CLIVersions are the CLIs that played the roles, each with its version
// ("codex 0.171.0"): the generator's, then the reader's and grader's when
// another.
func (r *Record) CLIVersions() []string {
	version := map[string]string{agents.Claude: r.Versions.Claude, agents.Codex: r.Versions.Codex, agents.Gemini: r.Versions.Gemini}
	var out []string
	for _, name := range []string{r.AgentName(), r.JudgeAgentName()} {
		if entry := strings.TrimSpace(name + " " + version[name]); !slices.Contains(out, entry) {
			out = append(out, entry)
		}
	}
	return out
}

// setAgents records which CLIs play the roles, and whether their costs
// are estimated.
func (r *Record) setAgents(tc *tools) {
	r.Agent, r.JudgeAgent = tc.agent, tc.judgeAgent
	r.CostEstimated = tc.agent != agents.Claude || tc.judgeAgent != agents.Claude
}

// RunInfo is one generation pass over the case set: its cells are in
// Dir (relative to the eval folder; the holdout cells under holdout/Dir).
type RunInfo struct {
	Label     string `json:"label"`
	Dir       string `json:"dir"`
	Arm       string `json:"arm"`
	Model     string `json:"model"`
	Effort    string `json:"effort,omitempty"`
	SkillHash string `json:"skill_hash,omitempty"` // "" for the control
	// Stored: the run's cells are a baseline's, read from Source.
	Stored bool   `json:"stored,omitempty"`
	Source string `json:"source,omitempty"`
	// Regraded: a rejudge read and graded this stored run's cells again
	// (its reader and grader costs are the rejudge's).
	Regraded bool  `json:"regraded,omitempty"`
	Cells    int   `json:"cells"`
	Done     int   `json:"done"`
	Errors   int   `json:"errors"`
	Costs    Costs `json:"costs"`
}

// Costs are dollars by role, as the CLI counted them.
type Costs struct {
	Generator float64 `json:"generator"`
	Reader    float64 `json:"reader"`
	Grader    float64 `json:"grader"`
}

// Total is every role's.
func (c Costs) Total() float64 { return c.Generator + c.Reader + c.Grader }

func (c *Costs) add(o Costs) {
	c.Generator += o.Generator
	c.Reader += o.Reader
	c.Grader += o.Grader
}

// minus is c less o, role by role.
func (c Costs) minus(o Costs) Costs {
	return Costs{c.Generator - o.Generator, c.Reader - o.Reader, c.Grader - o.Grader}
}

// Outcome is how an eval ended: its exit code and the one sentence.
type Outcome struct {
	Exit     int    `json:"exit"`
	Verdict  string `json:"verdict"`
	Sentence string `json:"sentence"`
}

// Cell is one repeat of one case in one run: the generated message, what
// the reader made of it, and its grades. Written as a file of its own the
// moment it is done.
type Cell struct {
	SchemaVersion int          `json:"schema_version"`
	Run           string       `json:"run"`
	Case          string       `json:"case"`
	Repeat        int          `json:"repeat"`
	Holdout       bool         `json:"holdout,omitempty"`
	CaseHash      string       `json:"case_hash"`
	Status        string       `json:"status"`
	Error         string       `json:"error,omitempty"`
	Message       string       `json:"message"`
	Words         int          `json:"words"`
	Diagnostics   []DiagResult `json:"diagnostics,omitempty"`
	Reader        *Notes       `json:"reader,omitempty"`
	Grades        []Grade      `json:"grades"`
	Generator     GenInfo      `json:"generator"`
	ReaderModel   string       `json:"reader_model,omitempty"`
	GraderModel   string       `json:"grader_model,omitempty"`
	// What graded the cell besides the models: the prompts' versions, the
	// measures (MeasuresHash) and the key (KeyHash). Rejudge grades a
	// stored cell again when any of them differs from now.
	ReaderPrompt string `json:"reader_prompt,omitempty"`
	GraderPrompt string `json:"grader_prompt,omitempty"`
	MeasuresHash string `json:"measures_hash,omitempty"`
	KeyHash      string `json:"key_hash,omitempty"`
	// Costs include the failed tries resume made the cell again after.
	Costs Costs `json:"costs"`
}

// GenInfo is what the generator call did.
type GenInfo struct {
	Model      string   `json:"model,omitempty"` // what answered
	Effort     string   `json:"effort,omitempty"`
	APICalls   int      `json:"api_calls"`
	ToolCalls  []string `json:"tool_calls,omitempty"` // tool names, in order
	DurationMS int64    `json:"duration_ms"`
	// Transcript is the raw stream, relative to the eval folder; "" in a
	// stored baseline (its cells keep the message only).
	Transcript string `json:"transcript,omitempty"`
	Attempts   int    `json:"attempts"`
}

// Notes are the reader's: the cold call that plays the user.
type Notes struct {
	Decision    string   `json:"decision"`
	Rebuild     string   `json:"rebuild"`
	FollowUps   []string `json:"follow_ups"`
	CloseAnswer string   `json:"close_answer"`
}

// Grade is one measure's grade of the message.
type Grade struct {
	Measure  string `json:"measure"`
	Result   string `json:"result"` // pass, fail, n/a, error
	Quote    string `json:"quote,omitempty"`
	Error    string `json:"error,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
}

// DiagResult is one diagnostic's verdict on the message: it never decides.
type DiagResult struct {
	ID     string `json:"id"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail,omitempty"`
}

// cellPath is where a cell's file lives, relative to the folder holding
// its run: <run dir>/<case>/<repeat>.json, under holdout/ for a holdout
// case.
func cellPath(runDir, caseID string, repeat int, holdout bool) string {
	p := filepath.Join(runDir, caseID, strconv.Itoa(repeat)+".json")
	if holdout {
		p = filepath.Join(HoldoutCellsDir, p)
	}
	return p
}

// SaveRecord writes eval.json atomically.
func SaveRecord(dir string, r *Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, RecordFile), append(b, '\n'), 0o600)
}

// IsEvalDir says whether dir holds an eval's record.
func IsEvalDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, RecordFile))
	return err == nil
}

// LoadRecord reads an eval folder's eval.json.
func LoadRecord(dir string) (*Record, error) {
	path := filepath.Join(dir, RecordFile)
	b, err := readfile.Regular(path, 64<<20)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file, expected the folder of a `vibe-test eval`", path)
		}
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, jsonerr.Format(path, b, err, "the record of a `vibe-test eval`")
	}
	if r.Kind != Kind {
		return nil, fmt.Errorf("%s: kind %q, expected %q (the record of a `vibe-test eval`)", path, r.Kind, Kind)
	}
	if r.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, newer than this vibe-test reads (%d): update vibe-test", path, r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}

// saveCell writes a cell's file atomically (its folder made as needed).
func saveCell(path string, c *Cell) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), 0o600)
}

// loadCell reads one cell file; a missing file is (nil, nil).
func loadCell(path string) (*Cell, error) {
	b, err := readfile.Regular(path, 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Cell
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, jsonerr.Format(path, b, err, "a graded cell of `vibe-test eval`")
	}
	// A result read as none of these counted as n/a, silently: a stored
	// "PASS" left the measure out of one side and could flip the verdict.
	for i, g := range c.Grades {
		switch g.Result {
		case ResultPass, ResultFail, ResultNA, ResultError:
		default:
			return nil, fmt.Errorf("%s: field \"grades[%d].result\": %q, expected %q, %q, %q or %q", path, i, g.Result, ResultPass, ResultFail, ResultNA, ResultError)
		}
	}
	return &c, nil
}

// HoldoutCellsDir is the folder, beside a run's own, of its holdout cells.
const HoldoutCellsDir = "holdout"

// loadRunCells reads every cell of a run below root (the eval folder, or
// a baseline's), main and holdout, sorted by case and repeat.
func loadRunCells(root, runDir string) (main, holdout []*Cell, err error) {
	for _, part := range []struct {
		dir  string
		into *[]*Cell
	}{{filepath.Join(root, runDir), &main}, {filepath.Join(root, HoldoutCellsDir, runDir), &holdout}} {
		cases, rerr := os.ReadDir(part.dir)
		if errors.Is(rerr, fs.ErrNotExist) {
			continue
		}
		if rerr != nil {
			return nil, nil, rerr
		}
		for _, ce := range cases {
			if !ce.IsDir() {
				continue
			}
			files, rerr := os.ReadDir(filepath.Join(part.dir, ce.Name()))
			if rerr != nil {
				return nil, nil, rerr
			}
			for _, f := range files {
				if !strings.HasSuffix(f.Name(), ".json") || f.IsDir() {
					continue
				}
				c, lerr := loadCell(filepath.Join(part.dir, ce.Name(), f.Name()))
				if lerr != nil {
					return nil, nil, lerr
				}
				if c != nil {
					*part.into = append(*part.into, c)
				}
			}
		}
	}
	for _, list := range [][]*Cell{main, holdout} {
		sort.Slice(list, func(i, j int) bool {
			if list[i].Case != list[j].Case {
				return list[i].Case < list[j].Case
			}
			return list[i].Repeat < list[j].Repeat
		})
	}
	return main, holdout, nil
}
