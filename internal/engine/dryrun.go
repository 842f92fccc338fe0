package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/estimate"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/fillers"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
)

// DryRun reads what Start would read (the skill, the config, a reviewed
// rubric, the fillers, the rubric cache) and says what the run would call
// and cost, without starting it: no claude process, no model call, no run
// folder. exactSeed says whether o.Seed is the user's (--seed) rather than
// a random one, so the fillers counted are the run's own. Its Warnings are
// the run's own (the jail is probed as the run would: bubblewrap starts
// `true`).
func DryRun(ctx context.Context, o Settings, env []string, exactSeed bool) (*estimate.Estimate, error) {
	inp, err := o.readInputs()
	if err != nil {
		return nil, err
	}
	sk, cfg, sched, pool := inp.skill, inp.cfg, inp.sched, inp.pool
	jailKind, jailNote, err := ChooseJail(ctx, o.Isolation, env)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	driven, judgeAgent := AgentName(o.Agent), JudgeAgentName(o.JudgeAgent, o.Agent, env)
	model, _, judgeModel := o.models(cfg, driven, judgeAgent)
	in := estimate.Input{
		Skill: sk, Config: cfg, Rubric: inp.rubric, Schedule: sched, Conversations: o.Conversations, UntilDecided: o.UntilDecided,
		SessionMode: o.SessionMode, Model: model, JudgeModel: judgeModel, JudgeRepeats: o.JudgeRepeats,
		FillersExact: exactSeed,
	}
	if in.SessionMode == "" {
		in.SessionMode = claude.DefaultSessionMode
	}
	if o.UntilDecided {
		in.Conversations = o.MaxConversations
	}
	for _, c := range o.Controls {
		in.NoSkillControl = in.NoSkillControl || c == record.ControlNoSkill
	}
	if in.Rubric == nil {
		if c := RubricCache(CacheDir(o.CacheDir, env), judgeAgent, env); c.Dir != "" {
			// The same lookup rubric.Extract makes before it calls the model.
			if b, err := os.ReadFile(filepath.Join(c.Dir, rubric.CacheKey(sk, in.JudgeModel, c.Unnamed)+".json")); err == nil {
				_, perr := rubric.Parse(b)
				in.RubricCached = perr == nil
			}
		}
	}
	if exactSeed {
		for i := 0; i < in.Conversations; i++ {
			picks, err := pickFillers(sched, pool, o.Seed+int64(i))
			if err != nil {
				return nil, exit.Errorf(exit.Tool, "choosing fillers: %v", err)
			}
			in.Fillers = append(in.Fillers, picks)
		}
	} else {
		// A random seed picks any fillers: count each at the pool's
		// average size (prompt, and a work chore's files).
		text, output := 0, 0
		for _, p := range pool {
			text += len(p.Text)
			output += p.Output
		}
		avg := fillers.Passage{ID: "average", Text: strings.Repeat("x", text/max(len(pool), 1)), Output: output / max(len(pool), 1)}
		if avg.Output > 0 {
			avg.Files = map[string]string{"average": ""}
		}
		in.Fillers = [][]fillers.Passage{{avg}}
	}
	e := estimate.Make(in)
	var others []string
	for _, name := range []string{driven, judgeAgent} {
		if name != "claude" && !slices.Contains(others, name) {
			others = append(others, name)
		}
	}
	e.Agents = strings.Join(others, " and ")
	var drv agent.Agent
	if driven != agents.Claude {
		drv = agents.For(driven, o.MaxRetries)
	}
	warnings, notGranted := skillWarnings(sk, cfg, o, drv, driven, jailKind, in.SessionMode)
	if jailKind == jail.None {
		e.Warnings = append(e.Warnings, noJail(jailNote))
	}
	e.Warnings = append(e.Warnings, Warnings(warnings, notGranted)...)
	return e, nil
}

// fillersPerConversation is how many filler turns the schedule has.
var fillersPerConversation = func() int {
	n := 0
	for t := 1; t <= plan.Turns; t++ {
		if plan.Kind(t) == plan.KindFiller {
			n++
		}
	}
	return n
}()
