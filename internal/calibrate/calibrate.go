// Package calibrate measures, by simulation, how often vibe-test's verdict
// is wrong. It builds run records the way the engine would write them
// (conversations with their baseline, fillers and probes, fresh triples,
// judge verdicts, errors, uncertain turns) from a model of an agent whose
// pass rate is known, and pushes each record through verdict.Decide: the
// very function that sets the exit code. With no dilution effect, every
// exit 1 is a false alarm; with a known drop, every exit 1 is a hit.
//
// The model of an agent, per scenario:
//   - each conversation (and each fresh session) draws its own pass rate
//     from a Beta distribution with mean Q and intra-class correlation Rho,
//     so conversations differ from each other and the probes of one
//     conversation are alike (Rho 0: every turn an independent draw at Q);
//   - the probes differ in difficulty (Offsets), the same diluted and
//     fresh;
//   - diluted probes lose Drop from their pass rate (0: no dilution effect);
//   - the judge flips a verdict with probability JudgeNoise; a turn ends in
//     an error (stopping its conversation, as the driver does) with
//     probability TurnErrors, its verdict is a judge error with probability
//     JudgeErrors and uncertain with probability Uncertain.
//
// Nothing here calls a model: a grid of thousands of runs takes seconds.
package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/vibe-test/vibe-test/internal/compare"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/simrand"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// Scenario is one cell of a calibration grid.
type Scenario struct {
	N          int     // conversations (and fresh triples)
	Q          float64 // mean per-turn pass rate, fresh
	Rho        float64 // intra-class correlation of a conversation's turns
	Offsets    [3]float64
	Drop       float64 // lost by each diluted probe (0 = no decay)
	JudgeNoise float64
	TurnErrors float64
	// DilutedProbeErrors is the chance a diluted conversation's probe turn
	// ends in an error (stopping the conversation, as the driver does), on
	// top of TurnErrors: an agent whose long sessions fail more often than
	// its fresh ones, the case where the arms lose different probes.
	DilutedProbeErrors float64
	JudgeErrors        float64
	Uncertain          float64
	Bypass             bool   // --no-baseline-gate
	Rule               string // "" = the default rule
	Alpha              float64
	// Sequential, when Max > 0: --until-decided with batches of N up to
	// Max conversations.
	Max int
	// Schedule, when set, lays the conversations out as the driver does on
	// it: fillers of random size (2k to 8k tokens of context each) until
	// each probe's level, so the probes fall at different turns in
	// different conversations, and a compaction where it asks for one.
	Schedule *plan.Schedule
	// BaseOffset moves the base task's pass rate from the conversation's
	// own (a base task harder than the probes: more conversations stopped
	// at the gate).
	BaseOffset float64
	// CandidateN, when > 0, is the candidate run's number of conversations
	// in CompareAA (the base run has N): versions compared at unequal
	// sizes.
	CandidateN int
	// Criteria, when > 0, gives every verdict that many must-criteria, each
	// passing at Q^(1/Criteria) (so a turn, which passes when all do, passes
	// at about Q), for the compare rule's A/A calibration.
	Criteria int
}

// Result counts the exit codes of simulated runs.
type Result struct {
	Runs  int
	Exits map[int]int
	// MeanConversations is the mean number of conversations run (differs
	// from N only for sequential scenarios).
	MeanConversations float64
}

// Rate is the share of runs that exited with code.
func (r Result) Rate(code int) float64 { return float64(r.Exits[code]) / float64(r.Runs) }

// MCError is the Monte Carlo standard error of a rate p over the runs.
func (r Result) MCError(p float64) float64 { return math.Sqrt(p * (1 - p) / float64(r.Runs)) }

// Run simulates runs of a scenario (deterministic for a seed) and counts
// what verdict.Decide made of each.
func Run(s Scenario, runs int, seed uint64) Result {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	res := Result{Runs: runs, Exits: map[int]int{}}
	sim := newSimulator(s)
	total := 0
	for range runs {
		r := sim.run(rng)
		// The exit code is all a grid counts: the simulated power that
		// words an exit-0 verdict is skipped (it cannot change the code).
		verdict.DecideWith(r, verdict.Options{ExitOnly: true})
		res.Exits[r.Outcome.Exit]++
		total += len(r.Conversations)
	}
	res.MeanConversations = float64(total) / float64(runs)
	return res
}

// simulator makes the run records of one scenario. A grid makes millions
// of records and decides each before making the next, so the simulator
// keeps their storage (turns, verdicts, conversations, the run itself)
// and hands it out again for each run: a record is valid until the next
// run is made. The storage is cleared (in bulk) before it is handed out
// again, so a record is the same as one made in new memory.
type simulator struct {
	s Scenario
	// steps is the fixed schedule's step after each number of completed
	// turns, asked of the schedule once (its steps depend on nothing
	// else); nil for a schedule that reads the progress.
	steps    []plan.Step
	turns    []record.Turn
	verdicts []judge.Verdict
	criteria []judge.CriterionVerdict
	convs    []record.Conversation
	fresh    []record.Conversation
	rec      record.Run
	plan     plan.Plan
	// root is the last Criteria-th root judged took, of rootOf.
	rootOf, root float64
	rooted       bool
}

func newSimulator(s Scenario) *simulator {
	m := &simulator{s: s}
	if sc := s.Schedule; sc.Fixed() && (sc == nil || sc.CompactAt == 0) {
		for p := (plan.Progress{}); ; p.Turns++ {
			step, more := sc.Next(p)
			if !more {
				break
			}
			m.steps = append(m.steps, step)
		}
	}
	return m
}

// next is the schedule's step after the progress p (in buf, when the
// schedule is asked).
func (m *simulator) next(p *plan.Progress, buf *plan.Step) (*plan.Step, bool) {
	if m.steps == nil {
		var more bool
		*buf, more = m.s.Schedule.Next(*p)
		return buf, more
	}
	if p.Turns < len(m.steps) {
		return &m.steps[p.Turns], true
	}
	return nil, false
}

// take is room for n values of an arena (length 0, capacity n). Storage
// that ran out is replaced, not copied: the values handed out so far keep
// theirs.
func take[T any](arena *[]T, n int) []T {
	k := len(*arena)
	if k+n > cap(*arena) {
		*arena, k = make([]T, 0, max(2*cap(*arena), n, 256)), 0
	}
	*arena = (*arena)[:k+n]
	return (*arena)[k : k : k+n]
}

// verdict is a zero verdict.
func (m *simulator) verdict() *judge.Verdict {
	return &take(&m.verdicts, 1)[:1][0]
}

// simulateRun makes one run record in memory of its own.
func simulateRun(rng *rand.Rand, s Scenario) *record.Run {
	return newSimulator(s).run(rng)
}

// run makes one run record: fixed-n, or batch by batch through
// verdict.Observe exactly as the engine's --until-decided loop does. It
// is valid until the next call.
func (m *simulator) run(rng *rand.Rand) *record.Run {
	s := m.s
	// The last run's storage, zero again: what is handed out below is
	// zero, and only its non-zero fields are set.
	clear(m.turns)
	clear(m.verdicts)
	clear(m.convs)
	clear(m.fresh)
	m.turns, m.verdicts, m.criteria = m.turns[:0], m.verdicts[:0], m.criteria[:0]
	alpha := s.Alpha
	if alpha == 0 {
		alpha = 0.05
	}
	m.plan = plan.Plan{Schedule: s.Schedule}
	m.rec = record.Run{SchemaVersion: record.SchemaVersion,
		Config: record.Config{Alpha: alpha, Effect: record.DefaultEffect, NoBaselineGate: s.Bypass, Rule: s.Rule},
		Plan:   &m.plan}
	r := &m.rec
	size := max(s.N, s.Max)
	if len(m.convs) < size {
		m.convs, m.fresh = make([]record.Conversation, size), make([]record.Conversation, size)
	}
	r.Conversations, r.Fresh = m.convs[:0], m.fresh[:0]
	add := func(k int) {
		for range k {
			i := len(r.Conversations)
			r.Conversations, r.Fresh = r.Conversations[:i+1], r.Fresh[:i+1]
			m.conversation(rng, &r.Conversations[i], i+1)
			m.freshTriple(rng, &r.Fresh[i], i+1)
		}
	}
	if s.Max == 0 {
		add(s.N)
		return r
	}
	r.Sequential = &record.Sequential{Alpha: alpha, Max: s.Max, Batch: s.N, Effect: record.DefaultEffect}
	for {
		add(min(s.N, s.Max-len(r.Conversations)))
		if verdict.ObserveWith(r.Sequential, r, verdict.Options{ExitOnly: true}) != record.SeqContinue {
			return r
		}
	}
}

// clamp is math.Min(1, math.Max(0, p)): the builtins give the same for
// every p (NaN and -0 included), inline.
func clamp(p float64) float64 { return min(1, max(0, p)) }

// judged makes t, a zero turn, one judged turn's record: status, and a
// verdict as the judge (with its noise, errors and disagreements) would
// give it. It says false when the turn itself ended in an error.
func (m *simulator) judged(rng *rand.Rand, t *record.Turn, turn int, kind string, rate float64) bool {
	s := &m.s
	t.Turn, t.Kind, t.Status, t.ToolCallCount = turn, kind, record.TurnOK, 3
	if rng.Float64() < s.TurnErrors {
		t.Status, t.Error = record.TurnError, "simulated error"
		return false
	}
	v := m.verdict()
	v.Result = judge.Fail
	var pass bool
	if s.Criteria > 0 {
		// Each criterion on its own; the turn passes when all of them do.
		pass = true
		// A conversation's judged turns share its rate when the probes do
		// not differ: the root is taken once for them.
		if rate != m.rootOf || !m.rooted {
			m.rootOf, m.root, m.rooted = rate, math.Pow(rate, 1/float64(s.Criteria)), true
		}
		each := m.root
		v.Criteria = take(&m.criteria, s.Criteria)
		for c := range s.Criteria {
			ok := rng.Float64() < each
			if rng.Float64() < s.JudgeNoise {
				ok = !ok
			}
			res := judge.Fail
			if ok {
				res = judge.Pass
			}
			pass = pass && ok
			v.Criteria = append(v.Criteria, judge.CriterionVerdict{ID: criterionID(c), Kind: "must", Result: res, Source: "judge"})
		}
	} else {
		pass = rng.Float64() < rate
		if rng.Float64() < s.JudgeNoise {
			pass = !pass
		}
	}
	if pass {
		v.Result = judge.Pass
	}
	switch u := rng.Float64(); {
	case u < s.JudgeErrors:
		v.Result = judge.JudgeError
	case u < s.JudgeErrors+s.Uncertain:
		v.Result = judge.Uncertain
	}
	t.Verdict = v
	return true
}

// grow is c's next turn, zero, made room for at the end of its Turns (a
// record is built in place: a turn is 432 bytes).
func grow(c *record.Conversation) *record.Turn {
	if k := len(c.Turns); k < cap(c.Turns) {
		c.Turns = c.Turns[:k+1]
	} else {
		c.Turns = append(c.Turns, record.Turn{})
	}
	return &c.Turns[len(c.Turns)-1]
}

// abandon moves c's last turn, which ended in an error, to its Abandoned
// and stops the conversation.
func (m *simulator) abandon(c *record.Conversation) {
	k := len(c.Turns) - 1
	c.Abandoned = append(take(&m.turns, 1), c.Turns[k])
	c.Turns = c.Turns[:k]
	c.Status, c.Error = record.StatusError, "simulated error"
}

// conversation makes c, a zero conversation, conversation index.
func (m *simulator) conversation(rng *rand.Rand, c *record.Conversation, index int) {
	s := &m.s
	fixed := s.Schedule.Fixed()
	// Room for every turn at once: a grid makes millions of records, and
	// growing the slice turn by turn was a third of its time.
	room := plan.Turns
	if !fixed {
		room = 32
	}
	c.Index, c.Status, c.Turns = index, record.StatusCompleted, take(&m.turns, room)
	own := simrand.AboutMean(rng, s.Q, s.Rho)
	var p plan.Progress
	var buf plan.Step
	var ctx int64
	compacted := false
	for {
		step, more := m.next(&p, &buf)
		if !more {
			return
		}
		p.Turns++
		if !fixed {
			// Only a schedule that reads the context draws it, so the
			// seed's schedule simulates exactly as it always has.
			ctx += 2000 + rng.Int64N(6000)
		}
		if step.Kind == plan.KindFiller {
			f := grow(c)
			f.Turn, f.Kind, f.Status = step.Turn, step.Kind, record.TurnOK
			if step.Compact {
				compacted, p.Compacted = true, true
				f.Compactions = []record.Compaction{{Trigger: "manual", PreTokens: ctx, PostTokens: 6000}}
				ctx = 6000
			}
			f.ContextTokens, f.AfterCompaction = ctx, compacted
			p.Fillers++
			p.Context = ctx
			continue
		}
		rate := clamp(own + s.BaseOffset)
		if step.Kind == plan.KindProbe {
			rate = clamp(own + s.Offsets[step.Probe-1] - s.Drop)
		}
		t := grow(c)
		ok := m.judged(rng, t, step.Turn, step.Kind, rate)
		if ok && step.Kind == plan.KindProbe && s.DilutedProbeErrors > 0 && rng.Float64() < s.DilutedProbeErrors {
			t.Status, t.Error, t.Verdict, ok = record.TurnError, "simulated error", nil, false
		}
		t.Probe = step.Probe
		if step.Compact {
			compacted, p.Compacted = true, true
			t.Compactions = []record.Compaction{{Trigger: "manual", PreTokens: ctx, PostTokens: 6000}}
			ctx = 6000
		}
		t.ContextTokens, t.AfterCompaction = ctx, compacted
		if !ok {
			m.abandon(c)
			return
		}
		p.Fillers, p.Context = 0, ctx
		if step.Kind == plan.KindProbe {
			p.Probes++
		}
		if step.Turn == 1 && t.Verdict.Result == judge.JudgeError {
			// The driver stops a conversation whose baseline could not be
			// judged.
			c.Status = record.StatusError
			return
		}
		if step.Turn == 1 && t.Verdict.Result == judge.Fail && !s.Bypass {
			c.Status = record.StatusBaselineFailed
			return
		}
	}
}

// freshTriple makes c, a zero conversation, fresh triple index.
func (m *simulator) freshTriple(rng *rand.Rand, c *record.Conversation, index int) {
	s := &m.s
	c.Index, c.Control, c.Status, c.Turns = index, record.ArmFresh, record.StatusCompleted, take(&m.turns, len(plan.ProbeTurns))
	for k, turn := range plan.ProbeTurns {
		// Each fresh probe is its own session: its own draw.
		t := grow(c)
		ok := m.judged(rng, t, turn, plan.KindProbe, clamp(simrand.AboutMean(rng, s.Q, s.Rho)+s.Offsets[k]))
		t.Probe = k + 1
		if !ok {
			m.abandon(c)
			return
		}
	}
}

// criterionIDs are the simulated rubric's criterion names, made once: a
// grid makes millions of verdicts.
var criterionIDs = func() []string {
	ids := make([]string, 16)
	for c := range ids {
		ids[c] = fmt.Sprintf("criterion-%d", c+1)
	}
	return ids
}()

func criterionID(c int) string {
	if c < len(criterionIDs) {
		return criterionIDs[c]
	}
	return fmt.Sprintf("criterion-%d", c+1)
}

// CompareAA simulates pairs of runs of the same skill (two versions that do
// not differ) and counts how often compare.Decide, the rule `vibe-test
// compare` applies, rejects the candidate. It must stay at or below alpha.
func CompareAA(s Scenario, pairs int, seed uint64) Result {
	rng := rand.New(rand.NewPCG(seed, seed^0x51ed270b27a4c3d1))
	res := Result{Runs: pairs, Exits: map[int]int{}}
	var ids []string
	for c := range s.Criteria {
		ids = append(ids, criterionID(c))
	}
	alpha := s.Alpha
	if alpha == 0 {
		alpha = 0.05
	}
	cs := s
	if s.CandidateN > 0 {
		cs.N = s.CandidateN
	}
	// Two simulators: the base run's record must outlive the candidate's
	// making.
	bsim, csim := newSimulator(s), newSimulator(cs)
	for range pairs {
		base, cand := bsim.run(rng), csim.run(rng)
		d := compare.Decide(compare.Score(base), compare.Score(cand), ids, alpha)
		switch {
		case d.Undecided != "":
			res.Exits[2]++
		case d.Reject:
			res.Exits[1]++
		default:
			res.Exits[0]++
		}
	}
	return res
}

// Each calls f(0), ..., f(n-1) on every core. The cells of a grid are
// independent and each has its own seed, so what f computes does not
// depend on the order.
func Each(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}
