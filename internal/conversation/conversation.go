// Package conversation drives one conversation: its plan's schedule of
// turns on one session in its own sandbox, either as messages to one
// long-lived `claude -p --input-format stream-json` process (interactive
// mode, a person's session) or as one `claude -p [--resume]` process a turn
// (resume mode). Turn 1 is the base task; on the seed's schedule turns 2–5,
// 7 and 9 are fillers and turns 6, 8 and 10 ask the probes; a diluted-to
// schedule asks fillers until each probe's context level, and the CLI's
// /compact runs before the turns the schedule names. Each turn's stream is saved as it arrives; the baseline is
// judged before turn 2 (the gate), the probes are judged while the next
// turn runs. It also asks each probe fresh (Fresh: the fresh triple).
//
// A conversation can be continued from its last completed turn (resume):
// everything it needs (session id, sandbox, config dir) is in its record.
package conversation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/estimate"
	"github.com/vibe-test/vibe-test/internal/fillers"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/redact"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/term"
)

// GateMessage is what a conversation stopped by the baseline gate says.
const GateMessage = "the baseline probe (turn 1, before dilution) already fails, so a decay curve from it is meaningless; fix the skill or base prompt first (or pass --no-baseline-gate)"

// gateMessage is what the gate says of a failed baseline: a set-up problem
// (a required step ran and failed) is named as one, with its output.
func gateMessage(v *judge.Verdict) string {
	if v.SetupProblem != "" {
		return "the baseline (turn 1) hit a " + v.SetupProblem + "; the sandbox lacks what the skill needs (a fixture file, a script, a tool), so nothing can be measured: fix the set-up in vibe-test.yaml (fixture, files) first"
	}
	return GateMessage
}

// DefaultTurnTimeout is how long a turn may run before it is stopped
// (SIGTERM, then SIGKILL): --turn-timeout's default, and what a saved run
// with no readable timeout is resumed with.
const DefaultTurnTimeout = 10 * time.Minute

// ErrCredentials stops the whole run: retrying a refused key only burns time.
// It is claude.ErrCredentials, so cold calls and agent turns say the same.
var ErrCredentials = claude.ErrCredentials

// Driver holds what every conversation of a run shares.
type Driver struct {
	Binary string
	// Agent, when set, is the CLI driven instead of claude (codex,
	// gemini): its skill folder, its home, its turns (agent.go). nil is
	// claude's own path, unchanged.
	Agent agent.Agent
	// BaseURL is the stand-in model server Agent talks to ("" for its
	// vendor's API); claude reads its own from the environment.
	BaseURL         string
	BaseEnv         []string // the author's environment, filtered by allowlist per turn
	PassEnv         []string
	Hermetic        bool
	AuthorConfigDir string
	// Jail, when set, is the run's jail: each turn runs in it with its
	// sandbox, temp dir and config writable (nil: no jail).
	Jail  *jail.Spec
	Skill *skill.Skill // nil: the no-skill control
	Plan  *plan.Plan
	// Judge returns the judge once the rubric is ready (it is extracted
	// while turn 1 runs); an error stops the run.
	Judge  func(ctx context.Context) (*judge.Judge, error)
	RunDir string
	// Model is the agent model every turn passes with --model, so no turn
	// falls back to a default of its own; Pin, when set, holds it instead:
	// the model as asked until the run's first session reports the one it
	// stands for (claude's turns).
	Model string
	Pin   *ModelPin
	// Tools is the agent's --allowedTools list; SessionWide those of them
	// the CLI would grant only while the skill runs (claude.SessionWide),
	// whose uses outside that window each turn records.
	Tools       []string
	SessionWide []string
	// SessionMode is how a conversation's turns reach the CLI:
	// claude.SessionResume (one process per turn) or
	// claude.SessionInteractive (one process per conversation, each turn
	// one user message; "" means resume, a record from before the modes).
	SessionMode string
	TurnTimeout time.Duration
	Grace       time.Duration
	MaxRetries  int // CLAUDE_CODE_MAX_RETRIES: the CLI's own retries
	// TurnRetries is how often a turn is rerun after the CLI's own retries
	// gave up on a transient API error; RetryBackoff is the first wait,
	// doubled each time.
	TurnRetries  int
	RetryBackoff time.Duration
	NoGate       bool
	KeepSandbox  bool
	// Exclude are vibe-test's own files (config, rubric file, run folder),
	// never copied into a sandbox from a fixture or skill folder.
	Exclude  []string
	Redactor *redact.Redactor
	Budget   *Budget
	// Update applies fn to the run record under the run's lock, and
	// run.json follows; every change to a conversation goes through it.
	Update func(fn func())
	// View reads the run record under the run's lock (nil: Update).
	View func(fn func())
	// Flush, when set, returns once run.json holds every change made so
	// far. Update may write behind; before each try of a turn (what a
	// SIGKILL interrupts) the record must be on disk, so that a resume
	// knows every completed turn and cuts the stopped one back.
	Flush func()
	// Fatal stops the whole run (refused credentials, no rubric).
	Fatal func(error)
	// Progress, when set, hears what each conversation is doing.
	Progress func(Event)
	// BaselineDone, when set, hears once that a conversation has no
	// baseline turn to run any more (its turn 1 ended, or the
	// conversation did): its fresh triple starts then, so that on a
	// machine of few cores the two do not start their CLIs at once.
	BaselineDone func(conv *record.Conversation)
}

// Event is one step of a conversation, for live progress.
type Event struct {
	Conv    int
	Control string
	Turn    int
	Of      int    // the schedule's turns (0: a diluted-to schedule, which decides as it goes)
	Kind    string // base, filler, probe
	Phase   string // agent, judge, done, judged
	Context int64
	Result  string // the verdict, when judged
	Spent   float64
}

func (d *Driver) emit(conv *record.Conversation, turn int, kind, phase string, ctxTokens int64, res string) {
	if d.Progress == nil {
		return
	}
	of := 0
	if d.Plan.Schedule.Fixed() {
		of = plan.Turns
	}
	d.Progress(Event{Conv: conv.Index, Control: conv.Control, Turn: turn, Of: of, Kind: kind, Phase: phase,
		Context: ctxTokens, Result: res, Spent: d.Budget.Spent()})
}

// Budget is the run's spending limit, shared by its conversations.
type Budget struct {
	mu    sync.Mutex
	Limit float64 // 0 = none
	spent float64
}

// Spend records a cost.
func (b *Budget) Spend(usd float64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.spent += usd
	b.mu.Unlock()
}

// Exhausted reports whether no new turn may start.
func (b *Budget) Exhausted() bool {
	if b == nil || b.Limit <= 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent >= b.Limit
}

// Spent is the total so far.
func (b *Budget) Spent() float64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}

// stopped says how a cancelled context ended the conversation: the user's
// interrupt, or a fatal error elsewhere in the run.
func stopped(ctx context.Context) (status, msg string) {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return record.StatusError, cause.Error()
	}
	return record.StatusInterrupted, "interrupted"
}

// Converse runs, or continues, one conversation into conv, whose Index and
// Fillers are set. Turns already completed are kept; an unfinished one is
// moved to conv.Abandoned and run again.
func (d *Driver) Converse(ctx context.Context, conv *record.Conversation, passages []fillers.Passage) {
	setStatus := func(status, msg string) {
		d.Update(func() { conv.Status, conv.Error = status, d.Redactor.String(msg) })
	}
	baselineDone := sync.OnceFunc(func() {
		if d.BaselineDone != nil {
			d.BaselineDone(conv)
		}
	})
	defer baselineDone()
	sb, err := d.openSandbox(conv)
	if err != nil {
		setStatus(record.StatusError, err.Error())
		return
	}
	keep := d.KeepSandbox
	defer func() {
		// An interrupted conversation keeps its sandbox for resume, and so
		// does one stopped by a transient error (rate limits, overload, a
		// timeout), or by a fatal error of the run's (a run record that
		// cannot be written, a refused key): resume continues its session
		// rather than restarting it. Removed after a full disk stopped the
		// run, resume ran every turn again from turn 1.
		if !keep && conv.Status != record.StatusInterrupted && ctx.Err() == nil {
			// run.json must say how the conversation ended before its
			// sandbox goes: a SIGKILL between the two would otherwise
			// leave a record of a running conversation whose session
			// is gone, which resume can only restart from turn 1.
			if d.Flush != nil {
				d.Flush()
			}
			sb.Remove()
			d.Update(func() { conv.Sandbox, conv.Home, conv.Tmp = "", "", "" })
		}
	}()
	convDir := filepath.Join(d.RunDir, conv.DirName())
	if err := os.MkdirAll(convDir, record.DirMode); err != nil {
		setStatus(record.StatusError, fmt.Sprintf("creating %s: %v", convDir, err))
		return
	}

	// Keep completed turns; set aside an unfinished or failed last one.
	done := 0
	d.Update(func() {
		for done < len(conv.Turns) && conv.Turns[done].Status == record.TurnOK && conv.Turns[done].Turn == done+1 {
			done++
		}
		conv.Abandoned = append(conv.Abandoned, conv.Turns[done:]...)
		conv.Turns = conv.Turns[:done]
		conv.Status, conv.Error = record.StatusRunning, ""
	})
	if done > 0 {
		baselineDone() // a resume past turn 1
	}
	// In interactive mode one process carries the turns; it ends with the
	// conversation, or with the first turn that does not succeed.
	var live *liveSession
	if d.SessionMode == claude.SessionInteractive {
		live = &liveSession{}
		defer live.close()
	}

	var judging sync.WaitGroup
	defer judging.Wait()
	// Turns completed before a resume but never judged are judged now.
	for i := 0; i < done; i++ {
		if conv.Turns[i].NeedsJudging() {
			if !d.judgeSaved(ctx, conv, i) {
				setStatus(stopped(ctx))
				return
			}
		}
	}
	if done >= 1 && !d.NoGate {
		switch base := &conv.Turns[0]; {
		case base.Verdict != nil && base.Verdict.Result == judge.Fail:
			setStatus(record.StatusBaselineFailed, gateMessage(base.Verdict))
			return
		case base.Verdict != nil && base.Verdict.Result == judge.JudgeError:
			// Judged again and failed again: the gate has no verdict to
			// rule with, as on the first run (it went on to the probes).
			setStatus(record.StatusError, "judging the baseline failed: "+base.Verdict.Error)
			keep = true
			return
		}
	}

	// The gate's judgement of the baseline, while it is pending: the
	// filler after the baseline runs meanwhile (see settleGate).
	var gate *pendingGate
	defer func() {
		if gate != nil && !d.settleGate(ctx, conv, gate, setStatus) {
			switch {
			case gate.verdict.Result == judge.Fail:
				// A return while the filler ran: the gate still rules, and
				// a conversation it stopped is never resumed.
				keep = d.KeepSandbox
			case gate.keep:
				keep = true
			}
		}
	}()
	sched := d.Plan.Schedule
	for {
		var st standing
		d.view(func() { st = standingOf(conv.Turns) })
		step, more := sched.Next(st.Progress)
		if gate != nil && (!more || step.Kind != plan.KindFiller || step.Compact || gate.ruled()) {
			g := gate
			gate = nil
			if !d.settleGate(ctx, conv, g, setStatus) {
				keep = keep || g.keep
				return
			}
		}
		if !more {
			break
		}
		if gate != nil {
			gate.overlapped = true
		}
		turn := step.Turn
		if ctx.Err() != nil {
			setStatus(stopped(ctx))
			return
		}
		if d.Budget.Exhausted() {
			setStatus(record.StatusBudgetExhausted, fmt.Sprintf("budget of $%.2f spent before turn %d", d.Budget.Limit, turn))
			// `resume --max-budget-usd` with more continues the session:
			// without its sandbox it restarted from turn 1, paying again
			// for every turn done.
			keep = true
			return
		}
		rec := record.Turn{Turn: turn, Kind: step.Kind, Probe: step.Probe, AfterCompaction: st.compacted}
		switch step.Kind {
		case plan.KindFiller:
			if len(passages) == 0 {
				setStatus(record.StatusError, fmt.Sprintf("turn %d: no filler left to ask", turn))
				return
			}
			// A diluted-to schedule may need more fillers than the pool
			// holds: they come round again in the same order.
			p := passages[st.fillersAsked%len(passages)]
			rec.Prompt, rec.FillerID = p.Text, p.ID
			if err := sb.WriteFiles(p.Files); err != nil {
				setStatus(record.StatusError, fmt.Sprintf("turn %d filler files: %v", turn, err))
				return
			}
		case plan.KindBase:
			rec.Prompt = d.Plan.BaseTask
		case plan.KindProbe:
			rec.Prompt = d.Plan.ProbeTask(step.Probe)
			rec.ContextBefore = st.Context
			rec.Level, rec.LevelNotReached = sched.Level(step.Probe), step.Short
			if err := sb.WriteFiles(d.Plan.ProbeSetup(step.Probe)); err != nil {
				setStatus(record.StatusError, fmt.Sprintf("turn %d setup: %v", turn, err))
				return
			}
		}
		rec.Transcript = d.transcriptName(conv, turn)
		// Turn 1 starts a new session on every try; a later turn resumes
		// the conversation's session, cut back before each try to where
		// the last completed turn left it.
		resume := conv.SessionID
		var rewind func(reason string) error
		var costBefore float64
		if turn == 1 {
			resume = ""
		} else {
			rewind = live.rewindOnStart(d.rewinder(sb, conv, turn))
			if n := len(conv.Turns); n > 0 {
				costBefore = conv.Turns[n-1].SessionCostUSD
			}
		}
		d.emit(conv, turn, rec.Kind, "agent", 0, "")
		out, outOfBudget := d.runTurn(ctx, sb, resume, costBefore, &rec, rewind, live, step.Compact)
		baselineDone()
		d.emit(conv, turn, rec.Kind, "done", rec.ContextTokens, rec.Status)
		if ctx.Err() != nil && rec.Status != record.TurnOK {
			// Stopped by the user or a fatal error: the turn is unfinished,
			// not a failure; resume runs it again.
			rec.Status, rec.Error = record.TurnError, "stopped before the turn ended"
			d.Update(func() { conv.Abandoned = append(conv.Abandoned, rec) })
			setStatus(stopped(ctx))
			return
		}
		if outOfBudget {
			// As a budget spent before a turn: `resume --max-budget-usd`
			// with more tries the turn again, in the kept sandbox.
			d.Update(func() { conv.Abandoned = append(conv.Abandoned, rec) })
			setStatus(record.StatusBudgetExhausted, fmt.Sprintf("budget of $%.2f spent before turn %d could be tried again (%s)", d.Budget.Limit, turn, rec.Error))
			keep = true
			return
		}
		if rec.Status != record.TurnOK {
			d.Update(func() { conv.Abandoned = append(conv.Abandoned, rec) })
			setStatus(record.StatusError, fmt.Sprintf("turn %d: %s", turn, rec.Error))
			// A stream cut before its result (a connection lost, a CLI that
			// died) keeps the sandbox too: removed, resume restarted the
			// conversation from turn 1 and paid for its turns again.
			if rec.Status == record.TurnTimedOut || transient(out.Turn) || !out.Turn.HasResult {
				keep = true
				d.Update(func() {
					conv.Notes = append(conv.Notes, fmt.Sprintf("turn %d stopped on an error a new try may not meet: the sandbox is kept, and `vibe-test resume` continues the session from turn %d", turn, turn))
				})
			}
			return
		}
		d.recordSessionBytes(sb, conv, &rec, out.Turn.SessionID)
		idx := 0
		d.Update(func() {
			if conv.SessionID == "" {
				conv.SessionID = out.Turn.SessionID
			}
			idx = len(conv.Turns)
			conv.NoteModel(&rec)
			conv.Turns = append(conv.Turns, rec)
		})
		switch {
		case rec.Kind == plan.KindBase:
			// The gate needs the baseline's verdict before any probe; the
			// next filler runs while it is judged.
			gate = &pendingGate{done: make(chan struct{})}
			judging.Add(1)
			go func(g *pendingGate, idx int, prompt string, t claude.Turn) {
				defer judging.Done()
				defer close(g.done)
				g.verdict, g.ok = d.judgeTurn(ctx, conv, idx, prompt, t)
			}(gate, idx, rec.Prompt, out.Turn)
		case rec.Kind == plan.KindProbe:
			// Judge while the next turn runs.
			judging.Add(1)
			go func(idx int, prompt string, t claude.Turn) {
				defer judging.Done()
				d.judgeTurn(ctx, conv, idx, prompt, t)
			}(idx, rec.Prompt, out.Turn)
		}
	}
	// The last turn is done: the live process can go while its probe is
	// judged, rather than after.
	live.close()
	judging.Wait()
	if ctx.Err() != nil {
		setStatus(stopped(ctx))
		return
	}
	setStatus(record.StatusCompleted, "")
}

// model is the --model value of a turn starting now.
func (d *Driver) model() string {
	if d.Pin != nil && d.Agent == nil {
		return d.Pin.Arg()
	}
	return d.Model
}

// pendingGate is the baseline's judgement on its way. The gate only has to
// rule before the first probe: the fillers after the baseline ask nothing
// of the skill, so they run while the baseline is judged rather than after,
// and the judge call leaves the conversation's critical path. The gate
// rules as soon as the verdict is in, and before any probe at the latest:
// a failing baseline still stops the conversation before any probe, having
// cost the fillers asked meanwhile (one, when the judge answers within a
// filler's time).
type pendingGate struct {
	done    chan struct{}
	verdict judge.Verdict
	ok      bool // false: stopped before a verdict (resume judges it)
	// overlapped: a turn ran while the judgement was pending.
	overlapped bool
	// keep: the stop it ruled is one resume continues (a judge error), so
	// the sandbox stays.
	keep bool
}

// ruled says whether the verdict is in, without waiting for it.
func (g *pendingGate) ruled() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// settleGate waits for the baseline's judgement and applies the gate:
// whether the conversation goes on. A stop sets its status, whatever an
// overlapping filler did: a failed baseline is what stopped it.
func (d *Driver) settleGate(ctx context.Context, conv *record.Conversation, g *pendingGate, setStatus func(status, msg string)) bool {
	<-g.done
	switch {
	case !g.ok:
		setStatus(stopped(ctx))
	case g.verdict.Result == judge.JudgeError:
		setStatus(record.StatusError, "judging the baseline failed: "+g.verdict.Error)
		g.keep = true // resume judges the baseline again and goes on
	case g.verdict.Result == judge.Fail && !d.NoGate:
		if g.overlapped {
			d.Update(func() {
				turns := "turn 2 (a filler)"
				if n := len(conv.Turns); n > 2 {
					turns = fmt.Sprintf("turns 2-%d (fillers)", n)
				}
				conv.Notes = append(conv.Notes, turns+" ran while the baseline was judged; no probe was asked after the baseline failed")
			})
		}
		setStatus(record.StatusBaselineFailed, gateMessage(&g.verdict))
	default:
		return true
	}
	return false
}

// standing is where a conversation stands after its completed turns: what
// the schedule decides the next turn from, and what that turn's record
// needs besides.
type standing struct {
	plan.Progress
	fillersAsked int  // fillers asked in all: the next one's place in the conversation's list
	compacted    bool // the session was compacted, by vibe-test or the CLI
}

func standingOf(turns []record.Turn) standing {
	st := standing{Progress: plan.Progress{Turns: len(turns)}}
	for i := range turns {
		t := &turns[i]
		for _, c := range t.Compactions {
			st.Compacted = st.Compacted || c.Trigger == "manual"
		}
		st.compacted = st.compacted || t.AfterCompaction || len(t.Compactions) > 0
		switch t.Kind {
		case plan.KindFiller:
			st.Fillers++
			st.fillersAsked++
		case plan.KindProbe:
			st.Probes++
			st.Fillers = 0
		default:
			st.Fillers = 0
		}
	}
	if n := len(turns); n > 0 {
		st.Context = turns[n-1].ContextTokens
	}
	return st
}

// openSandbox reuses the conversation's recorded sandbox when it still
// exists and vibe-test made it (resume), or makes a new one. A recorded
// path vibe-test did not make (run.json can be edited) is neither used nor
// removed.
func (d *Driver) openSandbox(conv *record.Conversation) (*sandbox.Sandbox, error) {
	if conv.Sandbox != "" {
		sb, err := sandbox.Open(conv.Sandbox, conv.Home, d.AuthorConfigDir, d.Hermetic)
		if err == nil {
			// Without a jail an agent process of the interrupted run may
			// still run here (after a SIGKILL of vibe-test): never two
			// agents in one sandbox. In the jail none outlives its run.
			if d.Jail == nil {
				sb.KillStrays()
			}
			d.Update(func() { conv.Tmp = sb.Tmp })
			return sb, nil
		}
		if errors.Is(err, sandbox.ErrForeign) {
			d.Update(func() { conv.Notes = append(conv.Notes, err.Error()) })
		}
	}
	if len(conv.Turns) > 0 && d.Hermetic {
		// The session lived in the lost config dir: it cannot be resumed,
		// so the conversation starts again from turn 1.
		d.Update(func() {
			conv.Abandoned = append(conv.Abandoned, conv.Turns...)
			conv.Turns, conv.SessionID = nil, ""
			conv.Notes = append(conv.Notes, "sandbox was gone on resume; restarted from turn 1")
		})
	}
	sb, err := sandbox.New(d.sandboxOptions())
	if err != nil {
		return nil, err
	}
	d.Update(func() { conv.Sandbox, conv.Home, conv.ConfigDir, conv.Tmp = sb.Dir, sb.Home, sb.ConfigDir, sb.Tmp })
	return sb, nil
}

func (d *Driver) sandboxOptions() sandbox.Options {
	exclude := append([]string{d.RunDir}, d.Exclude...)
	if d.Plan.Source != "drafted" {
		exclude = append(exclude, d.Plan.Source) // the config file
	}
	o := sandbox.Options{
		Skill: d.Skill, Fixture: d.Plan.Fixture, Files: d.Plan.Files,
		Hermetic: d.Hermetic, AuthorConfigDir: d.AuthorConfigDir, Exclude: exclude,
	}
	if d.Agent != nil {
		// Another CLI reads only its own home (always a fresh one) and
		// finds the skill in its own project folder.
		o.Hermetic = true
		if d.Skill != nil {
			o.SkillDir = d.Agent.SkillDir(d.Skill.Name)
		}
	}
	return o
}

// transcriptName names a turn's transcript, relative to the run folder. A
// turn run again (resume after an unfinished or failed turn, or a restart
// from turn 1 when the sandbox was lost) gets a new name, so no transcript
// is overwritten and each abandoned record keeps pointing at its own file.
// Only this conversation's goroutine adds records to conv, so reading them
// here needs no lock.
func (d *Driver) transcriptName(conv *record.Conversation, turn int) string {
	// Only this goroutine grows conv.Turns and conv.Abandoned, but judging
	// goroutines write verdicts into them meanwhile: read the one field by
	// index, never copy whole records.
	used := map[string]bool{}
	for _, list := range [][]record.Turn{conv.Turns, conv.Abandoned} {
		for i := range list {
			used[list[i].Transcript] = true
		}
	}
	for n := 1; ; n++ {
		name := fmt.Sprintf("turn-%02d.jsonl", turn)
		if n > 1 {
			name = fmt.Sprintf("turn-%02d.run-%d.jsonl", turn, n)
		}
		rel := filepath.Join(conv.DirName(), name)
		if _, err := os.Lstat(filepath.Join(d.RunDir, rel)); errors.Is(err, fs.ErrNotExist) && !used[rel] {
			return rel
		}
	}
}

// runTurn runs one turn, retrying what is worth retrying: a transient API
// error after the CLI's own retries gave up (with backoff), and a timeout
// (once). Each failed attempt's transcript is kept beside the turn's.
// rewind, when set, is called before every try with why the turn runs
// (again): "resume" for the first try, else the last try's status.
// costBefore is the session's running cost when the last completed turn
// ended (see turnCost).
// live, when set, is the conversation's interactive session: the turn is
// sent to its process, started (resuming the session) when there is none.
// compact runs the CLI's /compact on the session before every try (a rerun
// was cut back to before the last one).
// The bool says the turn failed in a way worth another try, which the
// budget, spent by then, did not allow.
func (d *Driver) runTurn(ctx context.Context, sb *sandbox.Sandbox, resume string, costBefore float64, rec *record.Turn, rewind func(reason string) error, live *liveSession, compact bool) (claude.Outcome, bool) {
	backoff := d.RetryBackoff
	timeouts := 0
	reason := "resume"
	for attempt := 1; ; attempt++ {
		if rewind != nil {
			if err := rewind(reason); err != nil {
				rec.Status, rec.Error = record.TurnError, err.Error()
				return claude.Outcome{}, false
			}
		}
		rec.Compactions = nil
		before := costBefore
		if compact {
			c, sessionCost, err := d.compact(ctx, sb, resume, costBefore, rec, live)
			if c != nil {
				rec.Compactions = append(rec.Compactions, *c)
			}
			if err != nil {
				rec.Status, rec.Error = record.TurnError, d.Redactor.String(err.Error())
				return claude.Outcome{}, false
			}
			rec.AfterCompaction = true
			before = sessionCost
		}
		out, err := d.attempt(ctx, sb, resume, before, rec, live)
		if err != nil {
			// It may quote the CLI (gemini's session handshake error), as a
			// failed turn's own error does, which is redacted too.
			rec.Status, rec.Error = record.TurnError, d.Redactor.String(err.Error())
			return out, false
		}
		if rec.Status == record.TurnOK || ctx.Err() != nil {
			return out, false
		}
		t := out.Turn
		switch status := t.APIErrorStatus; {
		case status == 401 || status == 403:
			d.Fatal(fmt.Errorf("%w (HTTP %d) at turn %d: %s; then `vibe-test resume %s`", ErrCredentials, status, rec.Turn, agents.CredentialsAdvice(d.agentName()), term.Arg(d.RunDir)))
			return out, false
		case rec.Status == record.TurnTimedOut:
			timeouts++
			if timeouts > 1 {
				return out, false
			}
		case t.TerminalReason == "prompt_too_long":
			rec.Status = record.TurnPromptTooLong
			return out, false
		case transient(t):
			if attempt > d.TurnRetries {
				return out, false
			}
		default:
			return out, false
		}
		if d.Budget.Exhausted() {
			// A new try would be paid for past --max-budget-usd: the turn
			// stops as its failed try left it, and the caller says why.
			return out, true
		}
		// Keep the failed attempt and try again.
		kept := fmt.Sprintf("%s.attempt-%d", rec.Transcript, attempt)
		_ = os.Rename(filepath.Join(d.RunDir, rec.Transcript), filepath.Join(d.RunDir, kept))
		rec.Attempts = append(rec.Attempts, record.Attempt{Transcript: kept, Status: rec.Status, Error: rec.Error, ExitCode: rec.ExitCode, CostUSD: rec.CostUSD + rec.CompactionCost(), CostEstimated: rec.CostEstimated, DurationMS: rec.DurationMS})
		reason = rec.Status
		if rec.Status != record.TurnTimedOut {
			select {
			case <-ctx.Done():
				// Stopped while waiting to try again: the try just kept is
				// the turn's last, as without a retry. Kept, it was counted
				// twice (as the turn and its attempt) and the turn named a
				// transcript that had been renamed.
				_ = os.Rename(filepath.Join(d.RunDir, kept), filepath.Join(d.RunDir, rec.Transcript))
				rec.Attempts = rec.Attempts[:len(rec.Attempts)-1]
				return out, false
			case <-time.After(backoff):
			}
			backoff *= 2
		}
	}
}

// compactPrompt is the CLI's own slash command that compacts a session: it
// summarises the conversation so far and keeps the latest messages
// verbatim, as a long session does when it nears the context window. The
// model only ever sees the CLI's summary request, never this text.
const compactPrompt = "/compact"

// compact runs /compact on the conversation's session before rec's prompt
// (the same process in interactive mode, a `claude -p /compact --resume`
// in resume mode), saving its stream beside the turn's. It returns the
// compaction, and the session's running cost after it, which the turn's
// own cost is counted from. A /compact the CLI did not carry out is an
// error: a probe asked on an uncompacted session would be recorded as one
// asked after compaction.
func (d *Driver) compact(ctx context.Context, sb *sandbox.Sandbox, resume string, costBefore float64, rec *record.Turn, live *liveSession) (*record.Compaction, float64, error) {
	crec := record.Turn{Turn: rec.Turn, Kind: "compact", Prompt: compactPrompt,
		Transcript: d.freeName(strings.TrimSuffix(rec.Transcript, ".jsonl") + ".compact")}
	out, err := d.attempt(ctx, sb, resume, costBefore, &crec, live)
	c := &record.Compaction{Trigger: "manual", Transcript: crec.Transcript, CostUSD: crec.CostUSD, DurationMS: crec.DurationMS}
	if err != nil {
		return c, 0, fmt.Errorf("compacting the session before turn %d: %w", rec.Turn, err)
	}
	if crec.Status != record.TurnOK {
		return c, 0, fmt.Errorf("compacting the session before turn %d: %s", rec.Turn, crec.Error)
	}
	t := out.Turn
	if t.LocalCommand != "compact" || len(t.Compactions) == 0 {
		return c, 0, fmt.Errorf("compacting the session before turn %d: the CLI ran no compaction (no compact_boundary event; see %s)", rec.Turn, crec.Transcript)
	}
	last := t.Compactions[len(t.Compactions)-1]
	c.Trigger, c.PreTokens, c.PostTokens = last.Trigger, last.PreTokens, last.PostTokens
	sessionCost := crec.SessionCostUSD
	if sessionCost < costBefore {
		sessionCost = costBefore + crec.CostUSD
	}
	return c, sessionCost, nil
}

// freeName is base + ".jsonl", or base + "-N.jsonl" for the first N that
// names no file yet (relative to the run folder): a compaction run again
// keeps the earlier try's stream.
func (d *Driver) freeName(base string) string {
	for n := 1; ; n++ {
		name := base + ".jsonl"
		if n > 1 {
			name = fmt.Sprintf("%s-%d.jsonl", base, n)
		}
		if _, err := os.Lstat(filepath.Join(d.RunDir, name)); errors.Is(err, fs.ErrNotExist) {
			return name
		}
	}
}

// rewinder returns the rewind of a turn after the first: before each try
// the session file is cut back to its length when the last completed turn
// ended, and every cut is recorded. Without that length (a record from an
// older vibe-test) the session is left as it is.
func (d *Driver) rewinder(sb *sandbox.Sandbox, conv *record.Conversation, turn int) func(reason string) error {
	// Only this conversation's goroutine appends to conv.Turns (the judges
	// write verdicts only), so reading it here needs no lock.
	var keep int64
	if n := len(conv.Turns); n > 0 {
		keep = conv.Turns[n-1].SessionBytes
	}
	return func(reason string) error {
		if keep == 0 {
			return nil
		}
		path, err := d.sessionFile(sb, conv.SessionID)
		if err != nil {
			return err
		}
		removed, lines, err := rewindSession(path, keep)
		if err != nil || removed == 0 {
			return err
		}
		d.Update(func() {
			conv.Rewinds = append(conv.Rewinds, record.Rewind{Turn: turn, RemovedBytes: removed, RemovedLines: lines, Reason: reason})
			conv.Notes = append(conv.Notes, fmt.Sprintf("turn %d ran again (%s): its stopped try had saved %d session lines (%d bytes); cut back to the end of turn %d, so the model saw the prompt once", turn, reason, lines, removed, turn-1))
		})
		return nil
	}
}

// recordSessionBytes keeps the session file's length after a completed
// turn in rec, the point a rerun of the next turn is cut back to.
func (d *Driver) recordSessionBytes(sb *sandbox.Sandbox, conv *record.Conversation, rec *record.Turn, id string) {
	path, err := d.sessionFile(sb, id)
	if err == nil {
		rec.SessionBytes, err = sessionBytes(path)
	}
	if err != nil {
		d.Update(func() {
			conv.Notes = append(conv.Notes, fmt.Sprintf("turn %d: the session file's length is unknown (%v); a rerun of turn %d cannot be cut back to it", rec.Turn, err, rec.Turn+1))
		})
	}
}

// turnCost is what one turn cost. The CLI's total_cost_usd is the session's
// running total, restored when a session is resumed (the captured
// resume-turn2 fixture reports turn 1's cost plus its own), so a turn's own
// cost is the difference from where the last completed turn left it. A
// total below that (a try with no result, or a session the CLI started
// counting afresh) is taken as the turn's own.
func turnCost(total, before float64) float64 {
	if total >= before {
		return total - before
	}
	return total
}

// transient: an API error the CLI gave up on that a later try may pass
// (rate limits, overload, server errors), or a stream cut without a result.
func transient(t claude.Turn) bool {
	if !t.HasResult {
		return false // killed or cut: recorded as an error, not retried blindly
	}
	if t.TerminalReason != "api_error" {
		return false
	}
	switch s := t.APIErrorStatus; {
	case s == 429, s == 529, s >= 500:
		return true
	case s == 0:
		return true // connection errors carry no status
	}
	return false
}

// attempt runs one invocation, saving its stream (redacted) as it arrives.
// With live, the prompt goes to the conversation's long-lived process as
// one user message (a new process, resuming the session, when the last one
// ended); a turn that does not succeed ends that process.
func (d *Driver) attempt(ctx context.Context, sb *sandbox.Sandbox, resume string, costBefore float64, rec *record.Turn, live *liveSession) (claude.Outcome, error) {
	if d.Flush != nil {
		d.Flush()
	}
	path := filepath.Join(d.RunDir, rec.Transcript)
	// O_EXCL: a transcript is never written over (transcriptName found a
	// free name).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, record.FileMode)
	if err != nil {
		return claude.Outcome{}, fmt.Errorf("creating transcript: %w", err)
	}
	defer f.Close()
	// Codex and gemini stream texts in pieces: a secret split across two
	// is masked in both.
	w := d.Redactor.NewStreamWriter(f, agents.Pieces(d.agentName()))
	envOpts := claude.EnvOptions{
		Extra:   []string{"CLAUDE_CODE_MAX_RETRIES=" + strconv.Itoa(d.MaxRetries)},
		PassEnv: d.PassEnv,
	}
	if sb.Tmp != "" {
		// The jail mounts it at /tmp and says so; without one, TMPDIR
		// still keeps the CLI's leftovers in the sandbox's own temp dir.
		envOpts.Extra = append(envOpts.Extra, "TMPDIR="+sb.Tmp)
	}
	if d.Hermetic {
		envOpts.Home, envOpts.ConfigDir = sb.Home, sb.ConfigDir
	}
	inv := claude.Invocation{
		Binary:  d.Binary,
		Args:    d.agentArgs(claude.AgentArgs(rec.Prompt, resume, d.model(), d.Tools)),
		Env:     claude.Env(d.BaseEnv, envOpts),
		Dir:     sb.Dir,
		Stdout:  w,
		Timeout: d.TurnTimeout,
		Grace:   d.Grace,
	}
	if d.Jail != nil {
		j, err := d.jailFor(sb)
		if err != nil {
			return claude.Outcome{}, err
		}
		inv.Jail = &j
	}
	start := time.Now()
	var out claude.Outcome
	var runErr error
	switch {
	case d.Agent != nil:
		out, runErr = d.agentRun(ctx, sb, resume, rec.Prompt, rec.Kind == "compact", w, live)
	case live != nil:
		out, runErr = live.send(ctx, inv, resume, d, rec.Prompt)
	default:
		out, runErr = claude.Run(ctx, inv)
	}
	// The CLI's Bash child can outlive a killed CLI: the CLI starts it with setsid.
	if out.TimedOut || ctx.Err() != nil {
		sb.KillStrays()
	}
	rec.DurationMS = time.Since(start).Milliseconds()
	if err := w.Flush(); err != nil && runErr == nil {
		runErr = fmt.Errorf("writing transcript: %w", err)
	}
	if err := f.Sync(); err != nil && runErr == nil {
		runErr = fmt.Errorf("syncing transcript: %w", err)
	}
	t := out.Turn
	total := d.sessionCost(t.CostUSD, costBefore)
	cost := turnCost(total, costBefore)
	estimated := false
	if d.Agent == nil && cost == 0 {
		// A try stopped before the CLI's result line (a turn timeout, a
		// kill, an interrupt) was billed for the calls it made all the
		// same, and counted $0 here and against the budget: priced from
		// the stream's usage at the catalogue's list prices, marked
		// estimated; the session's running total stays the CLI's.
		if p := t.PricedBy(estimate.SpentCost); p.CostEstimated {
			cost, estimated = p.CostUSD, true
		}
	}
	d.Budget.Spend(cost)
	rec.ExitCode = out.ExitCode
	rec.ToolCalls = record.CallsOf(t, d.Redactor.Bytes)
	rec.ToolCallCount = t.OwnCalls()
	rec.SubagentCallCount = len(t.Calls) - rec.ToolCallCount
	// Only a successful call of the skill under test counts; a denied one
	// is its own signal (the agent wanted the skill and was refused it).
	rec.SkillInvoked, rec.SkillDenied = false, false
	if d.Skill != nil && d.Agent != nil {
		// The agent's own signal (a read of SKILL.md, activate_skill).
		for _, name := range []string{d.Skill.Name, d.Skill.DeclaredName, d.Skill.ListedAs} {
			rec.SkillInvoked = rec.SkillInvoked || (name != "" && d.Agent.SkillLoaded(t, name))
		}
	} else if d.Skill != nil {
		for _, name := range []string{d.Skill.Name, d.Skill.DeclaredName} {
			if name == "" {
				continue
			}
			ok, denied := t.SkillUse(name)
			rec.SkillInvoked = rec.SkillInvoked || ok
			rec.SkillDenied = rec.SkillDenied || len(denied) > 0
		}
		rec.OutsideSkillGrant = t.OutsideSkillGrant([]string{d.Skill.Name, d.Skill.DeclaredName}, d.SessionWide)
	}
	for _, c := range t.Compactions {
		if rec.Kind == "compact" {
			break // the compaction this invocation was run for
		}
		// The CLI compacted on its own in the middle of the turn.
		rec.Compactions = append(rec.Compactions, record.Compaction{Trigger: c.Trigger, PreTokens: c.PreTokens, PostTokens: c.PostTokens})
	}
	rec.Hooks = nil
	for _, h := range t.Hooks {
		rec.Hooks = append(rec.Hooks, record.Hook{Name: h.Name, Outcome: h.Outcome, ExitCode: h.ExitCode})
	}
	rec.AnsweredBy = t.AnsweredBy
	rec.APICalls = t.APICalls
	rec.SubagentAPICalls, rec.SubagentModels = t.SubagentAPICalls, t.SubagentModels
	rec.ContextTokens = t.ContextTokens
	rec.CostUSD, rec.SessionCostUSD, rec.CostEstimated = cost, total, estimated
	rec.Retries = t.Retries
	if runErr != nil {
		return out, runErr
	}
	rec.Status, rec.Error = record.TurnOK, ""
	switch {
	case out.TimedOut:
		rec.Status, rec.Error = record.TurnTimedOut, fmt.Sprintf("timed out after %s", d.TurnTimeout)
	default:
		if f := agents.Failure(d.agentName(), t, out.ExitCode); f != "" {
			rec.Status, rec.Error = record.TurnError, d.Redactor.String(f)
		} else if d.Agent == nil {
			if err := d.Pin.check(t.Model); err != nil {
				rec.Status, rec.Error = record.TurnError, err.Error()
			}
		}
	}
	if why := d.skillLoadFailure(out.Stderr); why != "" && ctx.Err() == nil {
		// The model never saw the skill: whatever the turn did, or how it
		// failed, says nothing of it, and every other turn would say the
		// same.
		rec.Status, rec.Error = record.TurnError, why
		d.Fatal(fmt.Errorf("turn %d: %s", rec.Turn, why))
	}
	return out, nil
}

// skillLoadFailure says, when the agent's CLI said it could not load the
// skill under test, that it did and why ("" else): vibe-test's reading of
// SKILL.md let it run, so the two readings differ.
func (d *Driver) skillLoadFailure(stderr string) string {
	if d.Skill == nil {
		return ""
	}
	why := agents.SkillLoadFailure(d.agentName(), stderr, d.Skill.Name)
	if why == "" {
		return ""
	}
	return d.Redactor.String(agents.SkillNotLoaded(d.agentName(), why).Error())
}

// jailFor is the jail of one turn: the sandbox and its temp dir writable;
// hermetic, its fresh home (with the config dir); with the author's login,
// only this sandbox's session folder of the author's config dir, writable
// (the run's spec hides the rest of the config dir and puts back the
// credentials file, read-only).
func (d *Driver) jailFor(sb *sandbox.Sandbox) (jail.Spec, error) {
	writable := []string{sb.Dir}
	if sb.Hermetic {
		writable = append(writable, sb.Home)
	} else if sb.ConfigDir != "" {
		sessions := sandbox.SessionDir(sb.ConfigDir, sb.Dir)
		if err := os.MkdirAll(sessions, 0o700); err != nil {
			return jail.Spec{}, fmt.Errorf("creating the session folder: %w", err)
		}
		writable = append(writable, sessions)
	}
	return d.Jail.With(sb.Tmp, sb.Dir, writable, nil), nil
}

// view reads the run record under its lock.
func (d *Driver) view(fn func()) {
	if d.View == nil {
		d.Update(fn)
		return
	}
	d.View(fn)
}

// judgeTurn judges conv.Turns[idx] and stores the verdict. It returns
// false when the run must stop (no rubric).
func (d *Driver) judgeTurn(ctx context.Context, conv *record.Conversation, idx int, prompt string, t claude.Turn) (judge.Verdict, bool) {
	j, err := d.Judge(ctx)
	if err != nil {
		d.Fatal(err)
		return judge.Verdict{}, false
	}
	turn, kind := 0, ""
	d.view(func() { turn, kind = conv.Turns[idx].Turn, conv.Turns[idx].Kind })
	d.emit(conv, turn, kind, "judge", 0, "")
	v := j.Judge(ctx, prompt, t)
	v.Redact(d.Redactor.String)
	d.Budget.Spend(v.CostUSD)
	if ctx.Err() != nil && v.Result == judge.JudgeError {
		// Stopped while judging: no verdict rather than a false judge
		// error; resume judges the turn. What it spent is kept.
		d.Update(func() { conv.Turns[idx].SpentJudging(&v) })
		return v, false
	}
	d.Update(func() {
		t := &conv.Turns[idx]
		if old := t.Verdict; old != nil {
			// A verdict judged again (a judge error, on resume): the first
			// judging was paid for too.
			t.SpentJudging(old)
		}
		t.Verdict = &v
	})
	d.emit(conv, turn, kind, "judged", 0, v.Result)
	if v.Refused {
		// As a refused agent turn: every turn run from here would be paid
		// for and could not be judged.
		d.Fatal(fmt.Errorf("judging turn %d: %s; then `vibe-test resume %s`", turn, v.Error, term.Arg(d.RunDir)))
		return v, false
	}
	return v, true
}

// judgeSaved judges a completed turn from its saved transcript (resume).
func (d *Driver) judgeSaved(ctx context.Context, conv *record.Conversation, idx int) bool {
	t, err := d.parseSaved(filepath.Join(d.RunDir, conv.Turns[idx].Transcript))
	if err != nil {
		d.Fatal(fmt.Errorf("reading a saved transcript: %w", err))
		return false
	}
	_, ok := d.judgeTurn(ctx, conv, idx, conv.Turns[idx].Prompt, t)
	return ok
}

// JudgeLeft judges again, on resume, a completed conversation's judged
// turns that have no verdict or a judge error (record.Conversation's
// Unjudged), from their saved transcripts: no turn runs, no sandbox is
// needed. Without it a judge error in a finished conversation stayed
// for good, and a second resume said there was nothing to resume.
func (d *Driver) JudgeLeft(ctx context.Context, conv *record.Conversation) {
	for i := range conv.Turns {
		if conv.Turns[i].NeedsJudging() {
			if !d.judgeSaved(ctx, conv, i) {
				return
			}
		}
	}
}

// Fresh runs one fresh triple, the fresh arm's unit: each probe task as
// the first message of its own new session in its own new sandbox, with
// the skill installed and the probe's setup files written, then judged.
// The verdict compares these with the same probes asked diluted. There is
// no gate: the probes are the comparison, whatever the baseline did.
func (d *Driver) Fresh(ctx context.Context, conv *record.Conversation) {
	setStatus := func(status, msg string) {
		d.Update(func() { conv.Status, conv.Error = status, d.Redactor.String(msg) })
	}
	if err := os.MkdirAll(filepath.Join(d.RunDir, conv.DirName()), record.DirMode); err != nil {
		setStatus(record.StatusError, err.Error())
		return
	}
	d.Update(func() { conv.Status = record.StatusRunning })
	if conv.Sandbox != "" {
		// A probe's sandbox a killed run left (below): its session is
		// never continued, each fresh probe being a new one, so it goes.
		if sb, err := sandbox.Open(conv.Sandbox, conv.Home, d.AuthorConfigDir, d.Hermetic); err == nil {
			_ = sb.Remove()
		}
		d.Update(func() { conv.Sandbox, conv.Home = "", "" })
	}
	for k := 1; k <= len(d.Plan.Probes); k++ {
		// A fresh probe has no place in a schedule; it keeps the turn its
		// probe has in the seed's, and its number pairs it.
		turn := plan.ProbeTurns[k-1]
		if t := conv.ProbeAt(k); t != nil {
			// Done before a resume; a stop that came while it was being
			// judged left it without a verdict, which it gets now (as a
			// conversation's turns do).
			if t.Verdict == nil || t.Verdict.Result == judge.JudgeError {
				idx := slices.IndexFunc(conv.Turns, func(x record.Turn) bool { return x.ProbeNumber() == k })
				if !d.judgeSaved(ctx, conv, idx) {
					setStatus(stopped(ctx))
					return
				}
			}
			continue
		}
		if ctx.Err() != nil {
			setStatus(stopped(ctx))
			return
		}
		if d.Budget.Exhausted() {
			setStatus(record.StatusBudgetExhausted, fmt.Sprintf("budget of $%.2f spent", d.Budget.Limit))
			return
		}
		sb, err := sandbox.New(d.sandboxOptions())
		if err != nil {
			setStatus(record.StatusError, err.Error())
			return
		}
		// Recorded while it is in use: a run killed meanwhile (SIGKILL)
		// left it in the temp folder for good; resume removes it now.
		d.Update(func() { conv.Sandbox, conv.Home = sb.Dir, sb.Home })
		if d.Flush != nil {
			d.Flush()
		}
		removeSandbox := func() {
			sb.Remove()
			d.Update(func() { conv.Sandbox, conv.Home = "", "" })
		}
		rec := record.Turn{Turn: turn, Kind: plan.KindProbe, Probe: k, Prompt: d.Plan.ProbeTask(k), Transcript: d.transcriptName(conv, turn)}
		if err := sb.WriteFiles(d.Plan.ProbeSetup(k)); err != nil {
			removeSandbox()
			setStatus(record.StatusError, err.Error())
			return
		}
		out, outOfBudget := d.runTurn(ctx, sb, "", 0, &rec, nil, nil, false) // a new session on every try
		removeSandbox()
		if rec.Status != record.TurnOK {
			d.Update(func() { conv.Abandoned = append(conv.Abandoned, rec) })
			if ctx.Err() != nil {
				setStatus(stopped(ctx))
			} else if outOfBudget {
				setStatus(record.StatusBudgetExhausted, fmt.Sprintf("budget of $%.2f spent before probe %d (turn %d) could be tried again (%s)", d.Budget.Limit, k, turn, rec.Error))
			} else {
				setStatus(record.StatusError, fmt.Sprintf("probe %d (turn %d): %s", k, turn, rec.Error))
			}
			return
		}
		rec.SessionID = out.Turn.SessionID
		idx := 0
		d.Update(func() { idx = len(conv.Turns); conv.Turns = append(conv.Turns, rec) })
		if _, ok := d.judgeTurn(ctx, conv, idx, rec.Prompt, out.Turn); !ok {
			setStatus(stopped(ctx))
			return
		}
	}
	setStatus(record.StatusCompleted, "")
}

// agentArgs adds what the skill asks of an agent turn's argv: the hook
// events, when it declares hooks, so each run of one is recorded.
func (d *Driver) agentArgs(args []string) []string {
	if d.Skill != nil && len(d.Skill.Hooks) > 0 {
		return append(args, claude.HookEvents)
	}
	return args
}
