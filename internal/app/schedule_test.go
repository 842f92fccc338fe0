package app

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
)

// assertAtLevels: every conversation asked its probes in order, each once
// the context of the last call had reached its level, and within one
// filler of it (the context before that filler had not), with work chores
// run as fillers in between.
func assertAtLevels(t *testing.T, s scenario, levels []int64) {
	t.Helper()
	sch := s.run.Plan.Schedule
	if sch == nil || len(sch.DiluteTo) != len(levels) {
		t.Fatalf("recorded schedule %+v, want dilute_to %v", sch, levels)
	}
	for _, c := range s.run.Conversations {
		if c.Status != record.StatusCompleted {
			t.Fatalf("conversation %d: %s %s", c.Index, c.Status, c.Error)
		}
		probes := 0
		for i, tr := range c.Turns {
			if tr.Turn != i+1 {
				t.Fatalf("conversation %d: turn %d recorded at %d", c.Index, tr.Turn, i+1)
			}
			switch tr.Kind {
			case plan.KindFiller:
				if !strings.HasPrefix(tr.FillerID, "work-") || tr.ToolCallCount == 0 {
					t.Errorf("conversation %d turn %d: filler %q with %d tool calls, want a work chore the agent ran", c.Index, tr.Turn, tr.FillerID, tr.ToolCallCount)
				}
			case plan.KindProbe:
				probes++
				level := levels[tr.Probe-1]
				before := c.Turns[i-1].ContextTokens
				if tr.Probe != probes || tr.Level != level || tr.LevelNotReached || tr.ContextBefore != before || before < level {
					t.Errorf("conversation %d turn %d: probe %d (want %d), level %d, context before %d (last call %d): not at its level %d", c.Index, tr.Turn, tr.Probe, probes, tr.Level, tr.ContextBefore, before, level)
				}
				if c.Turns[i-1].Kind == plan.KindFiller && i >= 2 && c.Turns[i-2].ContextTokens >= level {
					t.Errorf("conversation %d probe %d asked more than one filler after its level %d (turn %d already at %d)", c.Index, tr.Probe, level, c.Turns[i-2].Turn, c.Turns[i-2].ContextTokens)
				}
				if tr.Result() != judge.Pass {
					t.Errorf("conversation %d probe %d: %s", c.Index, tr.Probe, tr.Result())
				}
			}
		}
		if probes != len(levels) {
			t.Errorf("conversation %d asked %d probes, want %d", c.Index, probes, len(levels))
		}
	}
}

// assertCompactedBefore: probe k's record holds the /compact that ran
// just before it (its stream saved), and it and every later turn were
// asked on the compacted session.
func assertCompactedBefore(t *testing.T, s scenario, conv *record.Conversation, k int) {
	t.Helper()
	p := conv.ProbeAt(k)
	if p == nil || len(p.Compactions) != 1 {
		t.Fatalf("conversation %d probe %d: %+v, want one compaction", conv.Index, k, p)
	}
	cp := p.Compactions[0]
	if cp.Trigger != "manual" || cp.PreTokens <= cp.PostTokens || cp.PostTokens <= 0 || cp.CostUSD <= 0 || cp.Transcript == "" {
		t.Errorf("compaction %+v", cp)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, cp.Transcript))
	if err != nil || !strings.Contains(string(b), `"compact_boundary"`) {
		t.Errorf("the compaction's stream %s: %v", cp.Transcript, err)
	}
	for _, tr := range conv.Turns {
		if tr.AfterCompaction != (tr.Turn >= p.Turn) {
			t.Errorf("conversation %d turn %d: after compaction %v", conv.Index, tr.Turn, tr.AfterCompaction)
		}
	}
}

// TestDiluteToOnTheRealCLI and TestCompactionOnTheRealCLI are issue 14's
// done-when on the pinned CLI: a run diluted to three context levels
// records each probe at its level, within one filler, and a run with
// /compact before turn 8 records the compaction and the forgetting agent's
// decay after it. Both draw pass rate against context on the chart. (Two
// top-level tests rather than subtests: a parallel test's subtests queue
// behind every other parallel test of the package.)
//
// The dilute-to run has every agent session on the real CLI, the fresh
// ones too: it is also the steady run whose costs, fresh arm and context
// figures are checked against what the pinned CLI reports.
func TestDiluteToOnTheRealCLI(t *testing.T) {
	t.Parallel()
	s := runScenario(t, realCLI(t), []string{"steady"}, false, "--dilute-to", "20k,26k,32k", "--fillers", "work")
	if s.code != 0 {
		t.Fatalf("exit %d", s.code)
	}
	assertAtLevels(t, s, []int64{20000, 26000, 32000})
	assertSteady(t, s)
	assertByProbe(t, s, []int64{20000, 26000, 32000})
	assertContextChart(t, s)
}

// TestCompactionOnTheRealCLI: /compact before probe 2 (turn 8) on the
// pinned CLI, its conversation live there (its fresh sessions on the
// stand-in); the forgetting agent holds before it and fails after.
func TestCompactionOnTheRealCLI(t *testing.T) {
	t.Parallel()
	s := runScenario(t, realConversationCLI(t), []string{"forgetting"}, false, "--compact-before", "2")
	c := &s.run.Conversations[0]
	assertCompactedBefore(t, s, c, 2)
	for k, want := range map[int]string{1: judge.Pass, 2: judge.Fail, 3: judge.Fail} {
		if got := c.ProbeAt(k).Result(); got != want {
			t.Errorf("probe %d: %s, want %s", k, got, want)
		}
		if got := s.run.Fresh[0].ProbeAt(k).Result(); got != judge.Pass {
			t.Errorf("probe %d fresh: %s, want pass", k, got)
		}
	}
	if pcs := s.run.Outcome.Stats.Probes; pcs[0].Decayed != 0 || pcs[1].Decayed != 1 || pcs[2].Decayed != 1 {
		t.Errorf("decayed per probe: %d %d %d, want 0 1 1", pcs[0].Decayed, pcs[1].Decayed, pcs[2].Decayed)
	}
	assertContextChart(t, s)
}

// assertSteady: a steady agent holds, each turn keeps its own share of
// the session's running cost (the turns add up to the CLI's total, not to
// each turn's total), each fresh probe had its own new session, and each
// turn's context is the last call's input picture.
func assertSteady(t *testing.T, s scenario) {
	t.Helper()
	turns := turnsOf(s, 0)
	var own float64
	for _, tr := range turns {
		if tr.Kind != plan.KindFiller && tr.Result() != judge.Pass {
			t.Errorf("turn %d: %s", tr.Turn, tr.Result())
		}
		if _, err := os.Stat(filepath.Join(s.dir, tr.Transcript)); err != nil {
			t.Errorf("transcript of turn %d: %v", tr.Turn, err)
		}
		if tr.CostUSD <= 0 {
			t.Errorf("turn %d cost %v, want its own positive share", tr.Turn, tr.CostUSD)
		}
		own += tr.CostUSD
	}
	if last := turns[len(turns)-1].SessionCostUSD; math.Abs(own-last) > 1e-9 || last <= 0 {
		t.Errorf("turns add up to $%.6f, the session's running total is $%.6f", own, last)
	}
	if s.run.Conversations[0].Shape != record.ShapeHeld || s.run.Outcome.Verdict != record.VerdictNotEnough {
		t.Errorf("shape %q verdict %q", s.run.Conversations[0].Shape, s.run.Outcome.Verdict)
	}
	// From one conversation no number is promised (one baseline leaves
	// its rate too open), and the sentence says so.
	if !strings.Contains(s.stdout, "Not enough evidence") || !strings.Contains(s.stdout, "No number of conversations up to 200 is sure to catch a drop of 30 points") {
		t.Error("a 1-conversation run must not print a bare no-decay, and must say what more conversations would do")
	}
	f := s.run.Fresh
	if len(f) != 1 || len(f[0].Turns) != 3 || f[0].Status != record.StatusCompleted {
		t.Fatalf("fresh arm %+v", f)
	}
	sessions := map[string]bool{s.run.Conversations[0].SessionID: true}
	for _, tr := range f[0].Turns {
		if tr.Result() != judge.Pass || tr.SessionID == "" || sessions[tr.SessionID] {
			t.Errorf("fresh probe %d: %s in session %q (each fresh probe needs its own new session)", tr.Probe, tr.Result(), tr.SessionID)
		}
		sessions[tr.SessionID] = true
	}
	assertContextIsLastCall(t, s)
}

// assertByProbe: the statistics, the summary and --json key the probes by
// number, with the turn, level and context each fell at.
func assertByProbe(t *testing.T, s scenario, levels []int64) {
	t.Helper()
	st := s.run.Outcome.Stats
	n := len(s.run.Conversations)
	if len(st.Probes) != 3 || st.Comparison.Diluted.Probes != 3*n || st.Comparison.Fresh.Probes != 3*n {
		t.Fatalf("statistics %+v", st)
	}
	for k, pc := range st.Probes {
		if pc.Probe != k+1 || pc.Level != levels[k] || pc.ContextTokens < levels[k] || pc.DilutedN != n || pc.FreshN != n {
			t.Errorf("probe %d comparison %+v", k+1, pc)
		}
	}
	for _, want := range []string{"schedule: each probe asked once the context reached 20k, 26k, 32k tokens", "probe 1 (turn ", "probe 3 (turn "} {
		if !strings.Contains(s.stdout, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	// The chores ran on their own folder.
	for _, tr := range s.run.Conversations[0].Turns {
		if tr.Kind == plan.KindFiller && !strings.Contains(string(tr.ToolCalls[0].Input), "ops/") {
			t.Errorf("turn %d ran %s", tr.Turn, tr.ToolCalls[0].Input)
		}
	}
	b, err := os.ReadFile(filepath.Join(s.dir, "plan.json"))
	if err != nil || !strings.Contains(string(b), `"dilute_to"`) {
		t.Errorf("plan.json does not record the schedule: %v", err)
	}
	var js struct {
		Conversations []struct {
			Turns []struct {
				Probe int `json:"probe"`
			} `json:"turns"`
		} `json:"conversations"`
	}
	var out strings.Builder
	if code := Main(t.Context(), []string{"vibe-test", "report", s.dir, "--json"}, IO{Env: os.Environ(), Stdout: &out, Stderr: &strings.Builder{}}); code != 0 {
		t.Fatalf("report --json: exit %d", code)
	}
	if err := json.Unmarshal([]byte(out.String()), &js); err != nil {
		t.Fatal(err)
	}
	got := map[int]bool{}
	for _, jt := range js.Conversations[0].Turns {
		if jt.Probe > 0 {
			got[jt.Probe] = true
		}
	}
	if len(js.Conversations[0].Turns) != len(s.run.Conversations[0].Turns) || len(got) != 3 {
		t.Errorf("--json: %d turns (record %d), probes %v", len(js.Conversations[0].Turns), len(s.run.Conversations[0].Turns), got)
	}
}

// assertContextChart: chart.html draws pass rate against context tokens.
func assertContextChart(t *testing.T, s scenario) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "chart.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "context (tokens)") {
		t.Error("chart.html has no context axis")
	}
}

// TestCompactAtLevel (fast tier): --compact-at compacts the session once,
// before the first turn asked after the context reached the level, and
// the turns after it are marked.
func TestCompactAtLevel(t *testing.T) {
	t.Parallel()
	s := runScenario(t, fastCLI(t), []string{"steady"}, false, "--dilute-to", "20k,26k,32k", "--fillers", "work", "--compact-at", "22k")
	if s.code != 0 {
		t.Fatalf("exit %d", s.code)
	}
	turns := turnsOf(s, 0)
	at := 0
	for i, tr := range turns {
		if len(tr.Compactions) > 0 {
			if at != 0 || tr.Compactions[0].Trigger != "manual" {
				t.Fatalf("turn %d: compactions %+v (an earlier one at turn %d)", tr.Turn, tr.Compactions, at)
			}
			at = tr.Turn
			if turns[i-1].ContextTokens < 22000 || (i >= 2 && turns[i-2].ContextTokens >= 22000) {
				t.Errorf("compacted before turn %d: the context was %d after turn %d, %d after the one before", tr.Turn, turns[i-1].ContextTokens, turns[i-1].Turn, turns[i-2].ContextTokens)
			}
		}
		if tr.AfterCompaction != (at != 0) {
			t.Errorf("turn %d: after compaction %v", tr.Turn, tr.AfterCompaction)
		}
	}
	if at == 0 {
		t.Fatal("no compaction")
	}
	if !strings.Contains(s.stdout, "the CLI's /compact once the context passed 22k tokens") {
		t.Error("the summary does not give the schedule's compaction")
	}
}

// Conversations an --until-decided look adds get their fillers as the
// first batch's do: a diluting schedule takes the whole pool. They got 6,
// and under --dilute-to came round to the same fillers again after 6.
func TestAddedConversationsGetTheWholePool(t *testing.T) {
	t.Parallel()
	s := runScenario(t, fastCLI(t), []string{"decaying", "decaying"}, false, "--until-decided", "--max-conversations", "4", "--dilute-to", "16k,19k,25k")
	f := s.run.Plan.Fillers
	if len(f) < 3 {
		t.Fatalf("%d conversations' fillers; the case needs a batch added", len(f))
	}
	for i := range f {
		if len(f[i]) != len(f[0]) {
			t.Errorf("conversation %d was given %d fillers, conversation 1 %d", i+1, len(f[i]), len(f[0]))
		}
	}
}
