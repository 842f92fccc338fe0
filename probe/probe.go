// Package probe drives one conversation: ten turns of `claude -p` on one
// resumed session in its own sandbox. Turn 1 is the base task, turns 2–5, 7
// and 9 are fillers, turns 6, 8 and 10 probe again. Each turn's stream is
// saved as it arrives; the baseline and the probes are judged as soon as they
// end, and a failing baseline stops the conversation unless the gate is
// bypassed.
package probe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/vibe-test/vibe-test/claude"
	"github.com/vibe-test/vibe-test/fillers"
	"github.com/vibe-test/vibe-test/internal/redact"
	"github.com/vibe-test/vibe-test/judge"
	"github.com/vibe-test/vibe-test/plan"
	"github.com/vibe-test/vibe-test/result"
	"github.com/vibe-test/vibe-test/sandbox"
	"github.com/vibe-test/vibe-test/skill"
)

// GateMessage is what a conversation stopped by the baseline gate says.
const GateMessage = "the baseline probe (turn 1, before dilution) already fails, so a decay curve from it is meaningless; fix the skill or base prompt first (or pass --no-baseline-gate)"

// Driver holds what every conversation of a run shares.
type Driver struct {
	Binary          string
	BaseEnv         []string // the author's environment, filtered by allowlist per turn
	PassEnv         []string
	Hermetic        bool
	AuthorConfigDir string
	Skill           *skill.Skill // nil: the no-skill control
	Plan            *plan.Plan
	Judge           *judge.Judge
	RunDir          string
	Model           string
	TurnTimeout     time.Duration
	Grace           time.Duration
	MaxRetries      int
	NoGate          bool
	KeepSandbox     bool
	Redactor        *redact.Redactor
	// Update applies fn to the run record under the run's lock and saves
	// run.json; every change to a conversation goes through it.
	Update func(fn func())
}

// Converse runs one conversation into conv, whose Index and Fillers are set.
func (d *Driver) Converse(ctx context.Context, conv *result.Conversation, passages []fillers.Passage) {
	setStatus := func(status, msg string) {
		d.Update(func() { conv.Status, conv.Error = status, msg })
	}
	sb, err := sandbox.New(sandbox.Options{
		Skill: d.Skill, Fixture: d.Plan.Fixture, Files: d.Plan.Files,
		Hermetic: d.Hermetic, AuthorConfigDir: d.AuthorConfigDir,
	})
	if err != nil {
		setStatus(result.StatusError, err.Error())
		return
	}
	if d.KeepSandbox {
		d.Update(func() { conv.Sandbox = sb.Dir })
	} else {
		defer sb.Remove()
	}
	if d.Hermetic {
		d.Update(func() { conv.ConfigDir = sb.ConfigDir })
	}
	convDir := filepath.Join(d.RunDir, fmt.Sprintf("conv-%d", conv.Index))
	if err := os.MkdirAll(convDir, 0o755); err != nil {
		setStatus(result.StatusError, fmt.Sprintf("creating %s: %v", convDir, err))
		return
	}
	d.Update(func() { conv.Status = result.StatusRunning })

	fillerAt := map[int]fillers.Passage{}
	k := 0
	for turn := 1; turn <= plan.Turns; turn++ {
		if plan.Kind(turn) == "filler" && k < len(passages) {
			fillerAt[turn] = passages[k]
			k++
		}
	}
	sessionID := ""
	for turn := 1; turn <= plan.Turns; turn++ {
		if ctx.Err() != nil {
			setStatus(result.StatusInterrupted, "interrupted before turn "+strconv.Itoa(turn))
			return
		}
		rec := result.Turn{Turn: turn, Kind: plan.Kind(turn)}
		if rec.Kind == "filler" {
			p := fillerAt[turn]
			rec.Prompt, rec.FillerID = p.Text, p.ID
		} else {
			rec.Prompt = d.Plan.Task(turn)
			if err := sb.WriteFiles(d.Plan.Setup(turn)); err != nil {
				setStatus(result.StatusError, fmt.Sprintf("turn %d setup: %v", turn, err))
				return
			}
		}
		rec.Transcript = filepath.Join(fmt.Sprintf("conv-%d", conv.Index), fmt.Sprintf("turn-%02d.jsonl", turn))
		out, err := d.turn(ctx, sb, filepath.Join(d.RunDir, rec.Transcript), rec.Prompt, sessionID, &rec)
		if err != nil {
			rec.Status, rec.Error = result.TurnError, err.Error()
		}
		if ctx.Err() != nil && rec.Status != result.TurnOK {
			// Stopped by the user: the turn is incomplete, not a failure.
			rec.Status, rec.Error = result.TurnError, "interrupted"
			d.Update(func() { conv.Turns = append(conv.Turns, rec) })
			setStatus(result.StatusInterrupted, fmt.Sprintf("interrupted during turn %d", turn))
			return
		}
		if sessionID == "" {
			sessionID = out.Turn.SessionID
			d.Update(func() { conv.SessionID = sessionID })
		}
		if rec.Status != result.TurnOK {
			d.Update(func() { conv.Turns = append(conv.Turns, rec) })
			setStatus(result.StatusError, fmt.Sprintf("turn %d: %s", turn, rec.Error))
			return
		}
		if rec.Kind != "filler" && d.Judge != nil {
			v := d.Judge.Judge(ctx, rec.Prompt, out.Turn)
			rec.Verdict = &v
		}
		d.Update(func() { conv.Turns = append(conv.Turns, rec) })
		if turn == 1 && rec.Verdict != nil {
			switch rec.Verdict.Result {
			case judge.JudgeError:
				setStatus(result.StatusError, "judging the baseline failed: "+rec.Verdict.Error)
				return
			case judge.Fail:
				if !d.NoGate {
					setStatus(result.StatusBaselineFailed, GateMessage)
					return
				}
			}
		}
	}
	setStatus(result.StatusCompleted, "")
}

// turn runs one invocation, saving its stream (redacted) as it arrives.
func (d *Driver) turn(ctx context.Context, sb *sandbox.Sandbox, path, prompt, sessionID string, rec *result.Turn) (claude.Outcome, error) {
	f, err := os.Create(path)
	if err != nil {
		return claude.Outcome{}, fmt.Errorf("creating transcript: %w", err)
	}
	defer f.Close()
	w := d.Redactor.NewWriter(f)
	envOpts := claude.EnvOptions{
		Extra:   []string{"CLAUDE_CODE_MAX_RETRIES=" + strconv.Itoa(d.MaxRetries)},
		PassEnv: d.PassEnv,
	}
	if d.Hermetic {
		envOpts.Home, envOpts.ConfigDir = sb.Home, sb.ConfigDir
	}
	start := time.Now()
	out, runErr := claude.Run(ctx, claude.Invocation{
		Binary:  d.Binary,
		Args:    claude.AgentArgs(prompt, sessionID, d.Model),
		Env:     claude.Env(d.BaseEnv, envOpts),
		Dir:     sb.Dir,
		Stdout:  w,
		Timeout: d.TurnTimeout,
		Grace:   d.Grace,
	})
	rec.DurationMS = time.Since(start).Milliseconds()
	if err := w.Flush(); err != nil && runErr == nil {
		runErr = fmt.Errorf("writing transcript: %w", err)
	}
	if err := f.Sync(); err != nil && runErr == nil {
		runErr = fmt.Errorf("syncing transcript: %w", err)
	}
	t := out.Turn
	rec.ExitCode = out.ExitCode
	rec.ToolCalls = result.CallsOf(t)
	for i := range rec.ToolCalls {
		rec.ToolCalls[i].Result = d.Redactor.String(rec.ToolCalls[i].Result)
		rec.ToolCalls[i].Input = d.Redactor.Bytes(rec.ToolCalls[i].Input)
	}
	rec.ToolCallCount = len(t.Calls)
	for _, c := range t.Calls {
		if c.Name == "Skill" {
			rec.SkillInvoked = true
		}
	}
	rec.APICalls = t.APICalls
	rec.ContextTokens = t.ContextTokens
	rec.CostUSD = t.CostUSD
	rec.Retries = t.Retries
	if runErr != nil {
		return out, runErr
	}
	switch {
	case out.TimedOut:
		rec.Status, rec.Error = result.TurnTimedOut, fmt.Sprintf("timed out after %s", d.TurnTimeout)
	default:
		if f := t.Failure(out.ExitCode); f != "" {
			rec.Status, rec.Error = result.TurnError, d.Redactor.String(f)
		} else {
			rec.Status = result.TurnOK
		}
	}
	return out, nil
}
