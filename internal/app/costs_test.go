package app

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// failingTurn2 is a script whose turn 2 makes a tool call, then meets
// HTTP 500s for good: each try spends, and the turn is abandoned.
func failingTurn2(t *testing.T) scripted.Script {
	steps := []scripted.Step{
		{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": "echo hi", "description": "look"}}}},
		{Error: &scripted.HTTPError{Status: 500, Count: 1000}},
	}
	return faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{2}, Steps: steps})
}

// everyTry is the cost of every try a run recorded: each turn's, its
// compactions' and its earlier attempts', completed or abandoned.
func everyTry(r *record.Run) (total, attempts float64) {
	for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh, r.Controls} {
		for _, c := range arm {
			for _, tr := range append(append([]record.Turn{}, c.Turns...), c.Abandoned...) {
				total += tr.CostUSD + tr.CompactionCost()
				for _, a := range tr.Attempts {
					total += a.CostUSD
					attempts += a.CostUSD
				}
			}
		}
	}
	return total, attempts
}

// An abandoned turn's earlier tries are in the run's costs: they were
// left out ($0.0086 of two tries, with --turn-retries 2).
func TestAbandonedTurnsTriesAreCosted(t *testing.T) {
	t.Parallel()
	s := runScript(t, fastCLI(t), failingTurn2(t), 1, nil, "--turn-retries", "2")
	c := s.run.Conversations[0]
	if len(c.Abandoned) != 1 || len(c.Abandoned[0].Attempts) != 2 {
		t.Fatalf("abandoned %+v; want turn 2 with its 2 earlier tries", c.Abandoned)
	}
	all, attempts := everyTry(s.run)
	if attempts <= 0 || math.Abs(s.run.Costs.Agent-all) > 1e-9 {
		t.Errorf("costs.agent %.5f, every try recorded %.5f (earlier tries %.5f)", s.run.Costs.Agent, all, attempts)
	}
}

// SIGINT while a failed try waits out its backoff: the try is the
// abandoned turn's own, once (it was its own cost and its attempt's), and
// its transcript is there (it named the file the retry had renamed).
func TestInterruptInTheBackoff(t *testing.T) {
	t.Parallel()
	_, paths, out, env := demoRun(t, failingTurn2(t), fastCLI(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(out, "conv-1", "turn-02.jsonl.attempt-1")); err == nil {
				time.Sleep(100 * time.Millisecond)
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var so, se bytes.Buffer
	code := Main(ctx, []string{"vibe-test", paths.Skill, "--config", paths.Config, "--out", out, "--seed", "7", "--conversations", "1",
		"--concurrency", "1", "--max-retries", "1", "--retry-backoff", "20s"}, IO{Env: env, Stdout: &so, Stderr: &se})
	r, err := record.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Conversations[0]
	if code != 130 || len(c.Abandoned) != 1 {
		t.Fatalf("exit %d, abandoned %+v; want 130 and turn 2 abandoned\n%s", code, c.Abandoned, se.String())
	}
	a := c.Abandoned[0]
	if _, err := os.Stat(filepath.Join(out, a.Transcript)); err != nil || len(a.Attempts) != 0 || a.CostUSD <= 0 {
		t.Errorf("abandoned turn 2: transcript %s (%v), %d attempts, cost %.5f; want its one try, once", a.Transcript, err, len(a.Attempts), a.CostUSD)
	}
	if all, _ := everyTry(r); math.Abs(r.Costs.Agent-all) > 1e-9 {
		t.Errorf("costs.agent %.5f, every try recorded %.5f", r.Costs.Agent, all)
	}
}
