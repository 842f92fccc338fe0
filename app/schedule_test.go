package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/judge"
	"github.com/vibe-test/vibe-test/plan"
	"github.com/vibe-test/vibe-test/result"
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
		if c.Status != result.StatusCompleted {
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

// TestDiluteToLevels (fast tier): --dilute-to with work fillers asks each
// probe at its level, and the statistics, summary and JSON key the probes
// by number with the turn and context they fell at.
func TestDiluteToLevels(t *testing.T) {
	t.Parallel()
	levels := []int64{20000, 26000, 32000}
	s := runScenario(t, fastCLI(t), []string{"steady", "steady"}, false,
		"--dilute-to", "20k,26k,32k", "--fillers", "work", "--concurrency", "2")
	if s.code != 0 {
		t.Fatalf("exit %d", s.code)
	}
	assertAtLevels(t, s, levels)
	st := s.run.Outcome.Stats
	if len(st.Probes) != 3 || st.Comparison.Diluted.Probes != 6 || st.Comparison.Fresh.Probes != 6 {
		t.Fatalf("statistics %+v", st)
	}
	for k, pc := range st.Probes {
		if pc.Probe != k+1 || pc.Level != levels[k] || pc.ContextTokens < levels[k] || pc.DilutedN != 2 || pc.FreshN != 2 {
			t.Errorf("probe %d comparison %+v", k+1, pc)
		}
	}
	for _, want := range []string{"schedule: each probe asked once the context reached 20k, 26k, 32k tokens", "probe 1 (turn ", "probe 3 (turn "} {
		if !strings.Contains(s.stdout, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	// The chores wrote their files in their own folder and never a probe's.
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
				Turn  int `json:"turn"`
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

// assertCompactedBefore: probe k's record holds the /compact that ran
// just before it (its stream saved), and it and every later turn were
// asked on the compacted session.
func assertCompactedBefore(t *testing.T, s scenario, conv *result.Conversation, k int) {
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

// TestCompactionForgetting (fast tier): --compact-before 2 runs the CLI's
// /compact before turn 8; an agent that forgets the skill with the
// summary holds before it and fails after, while each probe asked fresh
// passes: decay, shown in both session modes.
func TestCompactionForgetting(t *testing.T) {
	t.Parallel()
	reports := t.TempDir()
	junitPath, mdPath := filepath.Join(reports, "junit.xml"), filepath.Join(reports, "summary.md")
	s := runScenario(t, fastCLI(t), []string{"forgetting", "forgetting", "forgetting"}, false, "--compact-before", "2", "--concurrency", "3",
		"--junit", junitPath, "--markdown", mdPath)
	if s.code != 1 || s.run.Outcome.Verdict != result.VerdictDecay {
		t.Fatalf("exit %d (%s), want 1", s.code, s.run.Outcome.Sentence)
	}
	for i := range s.run.Conversations {
		c := &s.run.Conversations[i]
		assertCompactedBefore(t, s, c, 2)
		for k, want := range map[int]string{1: judge.Pass, 2: judge.Fail, 3: judge.Fail} {
			if got := c.ProbeAt(k).Result(); got != want {
				t.Errorf("conversation %d probe %d: %s, want %s", c.Index, k, got, want)
			}
		}
		if c.ProbeAt(2).Turn != 8 {
			t.Errorf("probe 2 at turn %d: the seed's schedule keeps it at 8", c.ProbeAt(2).Turn)
		}
	}
	if pc := s.run.Outcome.Stats.Probes[1]; pc.AfterCompaction != 3 || pc.Decayed != 3 {
		t.Errorf("probe 2 comparison %+v", pc)
	}
	if !strings.Contains(s.stdout, "turn 8: the CLI's /compact ran before it") || !strings.Contains(s.stdout, "3 after compaction") {
		t.Error("the summary does not say where the session was compacted")
	}
	for path, want := range map[string]string{junitPath: "asked after the session was compacted", mdPath: "probe 2 (turn 8, "} {
		if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q (%v)", filepath.Base(path), want, err)
		}
	}

	r := runScenario(t, fastCLI(t), []string{"forgetting"}, false, "--compact-before", "2", "--session", "resume")
	assertCompactedBefore(t, r, &r.run.Conversations[0], 2)
	if got := r.run.Conversations[0].ProbeAt(2).Result(); got != judge.Fail {
		t.Errorf("resume mode: probe 2 %s, want fail after the compaction", got)
	}
}

// TestBeyondTenTurnsOnTheRealCLI is issue 14's done-when on the pinned CLI
// (its conversations; the fresh probes' one-shot sessions on the
// stand-in): a run diluted to three context levels records each probe at
// its level, within one filler, and a run with /compact before turn 8
// records the compaction and the forgetting agent's decay after it. Both
// draw pass rate against context on the chart.
func TestBeyondTenTurnsOnTheRealCLI(t *testing.T) {
	t.Parallel()
	bin := realConversationCLI(t)
	t.Run("dilute-to", func(t *testing.T) {
		t.Parallel()
		s := runScenario(t, bin, []string{"steady"}, false, "--dilute-to", "20k,26k,32k", "--fillers", "work")
		if s.code != 0 {
			t.Fatalf("exit %d", s.code)
		}
		assertAtLevels(t, s, []int64{20000, 26000, 32000})
		assertContextChart(t, s)
	})
	t.Run("compact-before-turn-8", func(t *testing.T) {
		t.Parallel()
		s := runScenario(t, bin, []string{"forgetting"}, false, "--compact-before", "2")
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
	})
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
