package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/conversation"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/fillers"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/redact"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/term"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// driveInput is what running (or resuming) the conversations needs.
type driveInput struct {
	binary   string
	env      []string
	hermetic bool
	jail     *jail.Spec // nil: no jail
	// agent is the driven CLI when not claude (nil: claude); cold the
	// rubric, plan and judge calls' CLI.
	agent    agent.Agent
	cold     coldParts
	skill    *skill.Skill
	plan     *plan.Plan
	picks    [][]fillers.Passage // per conversation
	cacheDir string
	opts     Settings
	// pool and seed draw the fillers of conversations added later
	// (--until-decided).
	pool []fillers.Passage
	seed int64
}

// drive runs every conversation that is not finished yet, extracting the
// rubric (when the run has none) while the first turns run, then judges,
// decides, and writes the artifacts.
func drive(parent context.Context, s *journal, in driveInput, stdio IO, h Hooks) (*record.Run, error) {
	run, o := s.run, in.opts
	ctx, stop := context.WithCancelCause(parent)
	defer stop(nil)
	// run.json is what resume, report and rejudge read: every turn spent
	// past a failed write would be paid for and lost.
	s.stopOnError(func(err error) { stop(fmt.Errorf("the run record cannot be written, so the run stops: %w", err)) })
	caller, claudeCaller, err := in.cold.caller(in.env, o.PassEnv, o.MaxRetries, o.TurnTimeout, o.Grace)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	budget := &conversation.Budget{Limit: o.MaxBudgetUSD}
	if o.Shared != nil {
		budget = o.Shared.Budget // the suite's: every skill's spending counts
	}
	// What was spent so far, counted from the record: costs.total is
	// summed only as a run ends, so it held 0 for the plan just drafted,
	// and for every turn of a run killed before its end (a resume with
	// --max-budget-usd then spent the budget again).
	var spent float64
	s.update(func() {
		TallyCosts(run)
		spent = run.Costs.Total
	})
	if o.Shared == nil || !o.Shared.Counted {
		budget.Spend(spent)
	}

	limit := o.Concurrency
	total := len(run.Conversations) + len(run.Fresh) + len(run.Controls)
	if run.Sequential != nil {
		total = max(total, 2*run.Sequential.Batch)
	}
	if limit <= 0 || limit > total {
		limit = total
	}
	// The units left to run: how many judge processes to have ready.
	left := 0
	for _, arm := range [][]record.Conversation{run.Conversations, run.Fresh, run.Controls} {
		for i := range arm {
			if st := arm[i].Status; st != record.StatusCompleted && st != record.StatusBaselineFailed {
				left++
			}
		}
	}
	ready := min(limit, left, claude.PoolIdleMax)

	// The rubric overlaps turn 1; the gate waits for both. Once it is
	// ready, so is the judge, whose calls go to a pool of processes: one
	// for each unit left that runs at once (at most claude.PoolIdleMax) starts
	// then, ahead of the baseline's judgement the gate waits for.
	var rb *rubric.Rubric
	var rubricErr error
	var theJudge *judge.Judge
	var judges *claude.Pool
	rubricReady := make(chan struct{})
	go func() {
		defer close(rubricReady)
		defer func() {
			if rubricErr == nil && rb != nil {
				// Claude's judge calls share a pool of processes; another
				// agent's are one process each.
				var jc judge.Caller = caller
				if claudeCaller != nil {
					judges = claude.NewPool(*claudeCaller, judge.Schema, run.Config.JudgeModel, ready, min(limit, claude.PoolIdleMax))
					jc = judges
				}
				theJudge = &judge.Judge{Caller: jc, Rubric: rb, Model: run.Config.JudgeModel, Repeats: run.Config.JudgeRepeats}
			}
		}()
		s.view(func() { rb = run.Rubric })
		if rb != nil {
			if err := record.WriteJSON(filepath.Join(s.dir, "rubric.json"), rb); err != nil {
				stop(err)
			}
			return
		}
		var u rubric.Usage
		rb, u, rubricErr = rubric.Extract(ctx, caller, in.skill, run.Config.JudgeModel, RubricCache(in.cacheDir, in.cold.agent, in.env))
		budget.Spend(u.Cost)
		s.update(func() {
			run.Costs.Rubric += u.Cost
			run.Costs.RubricTokens += u.Tokens
			run.Rubric = rb
		})
		if rubricErr != nil {
			if ctx.Err() == nil { // an interrupt is not a rubric failure
				stop(rubricErr) // it says "extracting the rubric" itself
			}
			return
		}
		if err := record.WriteJSON(filepath.Join(s.dir, "rubric.json"), rb); err != nil {
			stop(err)
		}
	}()
	judgeFor := func(ctx context.Context) (*judge.Judge, error) {
		select {
		case <-rubricReady:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		if rubricErr != nil {
			return nil, rubricErr
		}
		return theJudge, nil
	}

	if len(run.Config.AllowedTools) == 0 {
		// A run recorded before the list was: the base tools and the skill's.
		s.update(func() { run.Config.AllowedTools = claude.AgentTools(in.skill.AllowedTools, nil) })
	}
	driver := &conversation.Driver{
		Agent: in.agent, BaseURL: agents.BaseURL(record.AgentOf(run.Config), in.env),
		Binary: in.binary, BaseEnv: in.env, PassEnv: o.PassEnv, Hermetic: in.hermetic,
		AuthorConfigDir: claude.AuthorConfigDir(), Jail: in.jail, Skill: in.skill, Plan: in.plan, Judge: judgeFor,
		RunDir: s.dir, Model: run.Config.Model, Tools: run.Config.AllowedTools, SessionWide: run.Config.SessionWideTools, SessionMode: record.SessionModeOf(run.Config), TurnTimeout: o.TurnTimeout, Grace: o.Grace,
		MaxRetries: o.MaxRetries, TurnRetries: o.TurnRetries, RetryBackoff: o.RetryBackoff,
		NoGate: run.Config.NoBaselineGate, KeepSandbox: o.KeepSandbox, Exclude: []string{o.RubricPath, in.cacheDir},
		Redactor: redact.FromEnv(in.env, slices.Concat(agents.CredentialVars(), o.PassEnv)), Budget: budget,
		Update: s.update, View: s.view, Flush: s.flush, Fatal: func(err error) { stop(err) },
	}
	if in.agent == nil {
		driver.Pin = conversation.NewModelPin(run.Config.ModelAsked, run.Config.Model, func(model string) {
			var p plan.Plan
			s.update(func() {
				run.Config.Model = model
				if run.Config.ModelAsked == model {
					run.Config.ModelAsked = ""
				}
				if run.Plan != nil {
					run.Plan.Model = model
					p = *run.Plan
				}
			})
			if p.Model != "" {
				_ = record.WriteJSON(filepath.Join(s.dir, "plan.json"), &p) // run.json holds it too
			}
		})
	}
	if h.Progress != nil {
		driver.Progress = h.Progress.Event
	}
	// A fresh triple starts once its conversation's turn 1 has run: their
	// CLIs starting together would share the cores turn 1 waits on. Only
	// where every unit has a slot at once: a triple waits holding its
	// slot, which under a tighter --concurrency (or a suite's shared
	// slots) another unit could use, and there the limit spaces the
	// starts out anyway.
	stagger := o.Shared == nil && limit >= total
	var baselinesMu sync.Mutex
	baselines := map[int]chan struct{}{}
	baselineOf := func(index int) chan struct{} {
		baselinesMu.Lock()
		defer baselinesMu.Unlock()
		if baselines[index] == nil {
			baselines[index] = make(chan struct{})
		}
		return baselines[index]
	}
	driver.BaselineDone = func(conv *record.Conversation) {
		ch := baselineOf(conv.Index)
		baselinesMu.Lock()
		defer baselinesMu.Unlock()
		select {
		case <-ch: // told already (Converse tells once; a second close would panic)
		default:
			close(ch)
		}
	}
	sem := make(chan struct{}, max(limit, 1))
	if o.Shared != nil {
		sem = o.Shared.Slots // one --concurrency over every skill of a suite
	}
	var wg sync.WaitGroup
	// launch takes a slot before starting the goroutine, so conversations
	// start in order (with --concurrency 1, conversation N runs N-th).
	launch := func(conv *record.Conversation, work func(*record.Conversation)) {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			work(conv)
		}()
	}
	// Each conversation goes with its fresh triple (the same probes, each
	// the first message of its own new session): the two arms the verdict
	// compares.
	startFrom := func(from int) {
		for i := from; i < len(run.Conversations); i++ {
			c := &run.Conversations[i]
			var baseline chan struct{} // nil: no conversation to wait for
			switch {
			case c.Status != record.StatusCompleted && c.Status != record.StatusBaselineFailed:
				passages := in.picks[i]
				baseline = baselineOf(c.Index)
				launch(c, func(conv *record.Conversation) { driver.Converse(ctx, conv, passages) })
			case c.Status == record.StatusCompleted && c.Unjudged():
				launch(c, func(conv *record.Conversation) { driver.JudgeLeft(ctx, conv) })
			}
			if i < len(run.Fresh) && (run.Fresh[i].Status != record.StatusCompleted || run.Fresh[i].Unjudged()) {
				launch(&run.Fresh[i], func(conv *record.Conversation) {
					if baseline != nil && stagger {
						select {
						case <-baseline:
						case <-ctx.Done():
						}
					}
					driver.Fresh(ctx, conv)
				})
			}
		}
	}
	startFrom(0)
	// Controls share the limit; they never decide the verdict (a stop in
	// one still stops the run: verdict.runStatus).
	noSkill := *driver
	noSkill.Skill, noSkill.NoGate, noSkill.BaselineDone = nil, true, nil
	for i := range run.Controls {
		c := &run.Controls[i]
		if c.Status == record.StatusCompleted {
			if c.Unjudged() {
				launch(c, func(conv *record.Conversation) { noSkill.JudgeLeft(ctx, conv) })
			}
			continue
		}
		launch(c, func(conv *record.Conversation) {
			switch conv.Control {
			case record.ControlNoSkill:
				noSkill.Converse(ctx, conv, in.picks[(conv.Index-1)%len(in.picks)])
			}
		})
	}
	wg.Wait()
	// --until-decided: look after each batch; add a batch (conversations
	// and their fresh triples) while the look says continue. Units are only
	// appended while none runs.
	for run.Sequential != nil && ctx.Err() == nil {
		// A batch the budget stopped is no look's data, and no batch may
		// follow it: the loop went on appending batches, each stopped at
		// once, to --max-conversations, then claimed "reached the cap" from
		// one conversation, and a resume with more budget ran them all
		// with no look between. A batch that finished whole gets its look
		// though the budget ran out in its last turns (skipping it left a
		// run that had shown decay at exit 0); if that look says go on,
		// the next batch stops at once, and the run is budget-exhausted.
		if stoppedByBudget(run, s) {
			break
		}
		var decision string
		var look record.Look
		s.update(func() {
			decision = verdict.Observe(run.Sequential, run)
			look = run.Sequential.Looks[len(run.Sequential.Looks)-1]
		})
		fmt.Fprintf(stdio.Stderr, "vibe-test: look after %s: diluted vs fresh drop %.0f points, p = %.3g (this look's level %.3g): %s\n",
			summary.Count(look.Conversations, "conversation"), 100*look.Drop, look.P, look.Level, decision)
		if decision != record.SeqContinue {
			break
		}
		from := len(run.Conversations)
		n := min(run.Sequential.Batch, run.Sequential.Max-from)
		var ids [][]string
		for i := from; i < from+n; i++ {
			// As the first batch's (pickFillers): a diluting schedule
			// takes the whole pool; 6 made the added conversations repeat
			// their fillers where the first ones did not.
			p, err := pickFillers(run.Plan.Schedule, in.pool, in.seed+int64(i))
			if err != nil {
				stop(fmt.Errorf("choosing fillers: %w", err))
				break
			}
			in.picks = append(in.picks, p)
			var pid []string
			for _, x := range p {
				pid = append(pid, x.ID)
			}
			ids = append(ids, pid)
		}
		s.update(func() {
			for k, pid := range ids {
				run.Conversations = append(run.Conversations, record.Conversation{
					Index: from + k + 1, Status: record.StatusPending, Fillers: pid, Turns: []record.Turn{},
				})
				run.Fresh = append(run.Fresh, record.FreshTriple(from+k+1))
				run.Plan.Fillers = append(run.Plan.Fillers, pid)
			}
		})
		startFrom(from)
		wg.Wait()
	}
	<-rubricReady
	if judges != nil {
		// Every conversation has returned: no judge call is left. The
		// processes exit while the run is decided and shown; the run
		// returns once they have.
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			judges.Close()
		}()
		defer func() { <-closed }()
	}

	if h.Progress != nil {
		h.Progress.Close()
	}
	cause := context.Cause(ctx)
	fatal := cause != nil && !errors.Is(cause, context.Canceled)
	if fatal {
		cause = redactCause(cause, driver.Redactor)
	}
	saveErr := s.commit(func() {
		run.FinishedAt = time.Now().UTC()
		var all []*record.Conversation
		for i := range run.Conversations {
			all = append(all, &run.Conversations[i])
		}
		for i := range run.Fresh {
			all = append(all, &run.Fresh[i])
		}
		for i := range run.Controls {
			all = append(all, &run.Controls[i])
		}
		for _, c := range all {
			if c.Status == record.StatusPending || c.Status == record.StatusRunning {
				c.Status = record.StatusInterrupted
				if fatal {
					c.Status, c.Error = record.StatusError, cause.Error()
				}
			}
		}
		TallyCosts(run)
		verdict.Decide(run)
		if fatal {
			run.Error = cause.Error()
			verdict.StoppedOnError(run)
		}
	})
	if saveErr != nil {
		if fatal {
			return run, exit.With(exit.Tool, cause) // what stopped the run: the first failed write, or before it
		}
		return run, exit.With(exit.Tool, saveErr)
	}
	if h.Show != nil {
		if err := h.Show(s.dir, run); err != nil {
			return run, exit.With(exit.Tool, err)
		}
	}
	if o.KeepSandbox {
		fmt.Fprint(stdio.Stderr, KeptSandboxes(run))
	}
	switch {
	case fatal:
		return run, exit.With(exit.Tool, cause)
	case parent.Err() != nil:
		return run, exit.Errorf(exit.Interrupted, "interrupted: `vibe-test resume %s` continues from the last completed turn", term.Arg(s.dir))
	}
	return run, nil
}

// stoppedByBudget says whether the budget stopped a unit of the run.
func stoppedByBudget(run *record.Run, s *journal) bool {
	stopped := false
	s.view(func() {
		for _, arm := range [][]record.Conversation{run.Conversations, run.Fresh, run.Controls} {
			for i := range arm {
				stopped = stopped || arm[i].Status == record.StatusBudgetExhausted
			}
		}
	})
	return stopped
}

// KeptSandboxes lists the sandboxes --keep-sandbox kept, one line each (a
// fresh session's sandbox lives only for its one turn).
func KeptSandboxes(run *record.Run) string {
	var b strings.Builder
	for _, arm := range [][]record.Conversation{run.Conversations, run.Controls} {
		for _, c := range arm {
			if c.Sandbox == "" {
				continue
			}
			name := fmt.Sprintf("conversation %d", c.Index)
			if c.Control != "" {
				name = fmt.Sprintf("%s control %d", c.Control, c.Index)
			}
			fmt.Fprintf(&b, "sandbox kept (%s): %s\n", name, c.Sandbox)
		}
	}
	if b.Len() == 0 {
		return "no sandbox was kept: no conversation got far enough to make one\n"
	}
	return b.String()
}

// TallyCosts sums the run's costs from its records, so a resumed run counts
// every attempt once (and a merged run each shard's turns once).
func TallyCosts(run *record.Run) {
	c := &run.Costs
	c.Agent, c.Judge, c.JudgeTokens = 0, 0, 0
	for t := range run.EveryTurn() {
		// Its earlier tries too: a turn that failed after retries spent
		// each of them; a compaction's summary calls are the agent's
		// session's; and its judging, when a completed turn was set aside
		// (its sandbox gone on resume).
		c.Agent += t.CostUSD + t.CompactionCost()
		for _, a := range t.Attempts {
			c.Agent += a.CostUSD
		}
		c.Judge += t.EarlierJudgeUSD
		c.JudgeTokens += t.EarlierJudgeTokens
		if t.Verdict != nil {
			c.Judge += t.Verdict.CostUSD
			c.JudgeTokens += t.Verdict.Tokens
		}
	}
	c.Total = c.Agent + c.Rubric + c.Plan + c.Judge
}

// redactCause is what stopped a run as run.json and stderr say it: it may
// quote a CLI's stderr (a cold call's first line), so it is redacted as
// the turns are; errors.Is and As still see the error it came from.
func redactCause(cause error, r *redact.Redactor) error {
	return redacted{msg: r.String(cause.Error()), err: cause}
}

// redacted is an error whose text was redacted.
type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }
