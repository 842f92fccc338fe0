// Package rejudge judges a saved run's turns again from their transcripts,
// with the run's rubric or another, and writes the new verdicts beside
// run.json as verdicts-N.json (N from 2: the run's own verdicts, in
// run.json, count as 1), never over it or over an earlier one. Both arms
// are judged again, so diluted and fresh probes are always judged alike.
// The outcome the new verdicts would give is printed beside the old one;
// the run itself keeps its verdict.
package rejudge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/readfile"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/redact"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/term"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// VerdictsFile is one re-judging of a run, written beside run.json as
// verdicts-N.json (the run's own verdicts, in run.json, count as 1).
type VerdictsFile struct {
	Rubric     *rubric.Rubric `json:"rubric"`
	JudgeModel string         `json:"judge_model"`
	CreatedAt  time.Time      `json:"created_at"`
	Verdicts   []TurnVerdict  `json:"verdicts"`
}

// TurnVerdict is the new verdict of one judged turn.
type TurnVerdict struct {
	Conversation int `json:"conversation"`
	// Arm is "fresh" for a probe of fresh triple Conversation, empty for a
	// turn of the diluted conversation.
	Arm     string        `json:"arm,omitempty"`
	Turn    int           `json:"turn"`
	Verdict judge.Verdict `json:"verdict"`
}

// Concurrency bounds the judge calls running at once.
const Concurrency = 4

// Settings of a re-judging.
type Settings struct {
	// Rubric is a rubric file to judge against; "" judges with the run's
	// own (a suite's skills always are: one rubric cannot fit them all).
	Rubric string
	// JudgeModel is the judge model; nil keeps the run's.
	JudgeModel *string
	// Prog is the command that runs vibe-test, as advice names it.
	Prog string
}

// judgeCaller is the run's judge, found again here, in the jail where
// the machine allows one, as a run's judges are: they read transcripts
// an agent wrote (it ran outside any jail). Where none can start, it says
// so on stderr, as a run does.
func judgeCaller(ctx context.Context, dir string, r *record.Run, s Settings, env []string, binary string, hermetic bool, timeout time.Duration, stderr io.Writer) (judge.Caller, error) {
	kind, note, err := engine.ChooseJail(ctx, "", env)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	engine.WarnNoJail(stderr, kind, "the judges read the agent's transcripts outside a jail: "+note)
	named := []string{dir, engine.CacheDir("", env)}
	if s.Rubric != "" {
		named = append(named, filepath.Dir(s.Rubric))
	}
	if record.AgentOf(r.Config) != agents.Claude || record.JudgeAgentOf(r.Config) != agents.Claude {
		// A claude judge of another agent's run signs in with the
		// author's login when no key is set: the jail shows it its
		// credentials file, as the run's did.
		authorConfig := ""
		if record.JudgeAgentOf(r.Config) == agents.Claude {
			authorConfig = claude.AuthorConfigDir()
		}
		return engine.SavedCold(r, env, func(bin string, hermetic bool) *jail.Spec {
			return engine.JailSpec(kind, env, bin, hermetic, authorConfig, named...)
		}, timeout)
	}
	c := engine.ColdCaller(binary, env, hermetic, r.Config.MaxRetries, timeout, engine.DefaultGrace)
	c.Jail = engine.JailSpec(kind, env, binary, hermetic, claude.AuthorConfigDir(), named...)
	return c, nil
}

// Dir judges the run in dir again, or every skill's run when dir is a
// suite folder.
func Dir(ctx context.Context, dir string, s Settings, stdio engine.IO) error {
	if record.IsSuite(dir) {
		return Suite(ctx, dir, s, stdio)
	}
	return Run(ctx, dir, s, stdio)
}

// Suite judges every skill of a suite folder again, one skill after the
// other, each with its own run's rubric, and fails with the worst code
// (record.WorstExit) when some skill could not be judged again.
func Suite(ctx context.Context, dir string, s Settings, stdio engine.IO) error {
	if s.Rubric != "" {
		return exit.Errorf(exit.Tool, "--rubric: not for a suite folder: each skill is judged again with its own run's rubric (rejudge SUITE_DIR/<skill> takes --rubric)")
	}
	idx, err := record.LoadSuite(dir)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	var codes []int
	var failed []string
	for _, e := range idx.Skills {
		fmt.Fprintf(stdio.Stdout, "== %s\n", term.Line(e.Name))
		err := Run(ctx, e.Dir(dir), s, stdio)
		if err != nil {
			fmt.Fprintf(stdio.Stderr, "vibe-test: %s: %s\n", term.Line(e.Name), term.Line(err.Error()))
			failed = append(failed, e.Name)
		}
		codes = append(codes, exit.Code(err))
		if exit.Code(err) == exit.Interrupted {
			break
		}
	}
	if len(failed) > 0 {
		worst := record.WorstExit(codes...)
		return exit.Errorf(worst, "rejudge: %d of %d skills could not be judged again (%s); the others' verdicts files are written", len(failed), len(idx.Skills), strings.Join(failed, ", "))
	}
	return nil
}

// Run judges one run folder's turns again: both arms, every judged turn,
// from the saved transcripts. It prints what changed, criterion by
// criterion, and writes the verdicts to the first free verdicts-N.json;
// run.json is only read. A refused key stops every call and writes nothing.
func Run(ctx context.Context, dir string, s Settings, stdio engine.IO) error {
	r, err := record.Load(dir)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	if demo.IsRun(r) {
		return exit.Errorf(exit.Tool, "%s: a demo run was judged by the demo's scripted model, which existed only while it ran, and cannot be judged again: run `%s demo` for a new one", dir, prog(s))
	}
	rb := r.Rubric
	if p := s.Rubric; p != "" {
		if rb, err = rubric.Load(p); err != nil {
			return exit.With(exit.Tool, err)
		}
	} else if rb == nil {
		return exit.Errorf(exit.Tool, "%s: run.json holds no rubric (the run stopped before it had one): pass one with --rubric FILE", dir)
	} else if err := rb.Validate(); err != nil {
		return exit.Errorf(exit.Tool, "%s: the rubric in run.json: %v", dir, err)
	}
	judgeModel := r.Config.JudgeModel
	if s.JudgeModel != nil {
		judgeModel = *s.JudgeModel
	}

	// Both arms are judged again: a comparison of diluted probes judged by
	// one rubric with fresh ones judged by another would compare judges.
	type target struct {
		conv int
		arm  string
		turn *record.Turn
	}
	var targets []target
	for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh} {
		for i := range arm {
			conv := &arm[i]
			for k := range conv.Turns {
				if t := &conv.Turns[k]; t.Judged() {
					targets = append(targets, target{conv.Index, conv.Control, t})
				}
			}
		}
	}
	if len(targets) == 0 {
		return exit.Errorf(exit.Tool, "%s: no judged turn was completed in this run: nothing to judge again", dir)
	}

	binary, hermetic, timeout, err := engine.SavedRunSetup(dir, r, stdio.Env, "judge it again")
	if err != nil {
		return err
	}
	caller, err := judgeCaller(ctx, dir, r, s, stdio.Env, binary, hermetic, timeout, stdio.Stderr)
	if err != nil {
		return err
	}
	// As the run judged: with its --judge-repeats, so a turn whose repeats
	// disagreed is uncertain again, not one call's pass or fail.
	j := &judge.Judge{Caller: caller, Rubric: rb, Model: judgeModel, Repeats: r.Config.JudgeRepeats}
	parser := record.AgentOf(r.Config)
	fmt.Fprintf(stdio.Stderr, "vibe-test: judging %d turns of %s again (rubric %s, judge model %s)\n",
		len(targets), dir, term.Line(rubricName(rb, s.Rubric != "")), term.Line(engine.ModelName(judgeModel)))

	// A refused key would be refused for every turn: the first refusal
	// stops the others.
	jctx, refuse := context.WithCancel(ctx)
	defer refuse()
	var refusedOnce sync.Once
	refused := ""
	verdicts := make([]judge.Verdict, len(targets))
	sem := make(chan struct{}, Concurrency)
	var wg sync.WaitGroup
	for i, tg := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if jctx.Err() != nil {
				return
			}
			verdicts[i] = judgeTranscript(jctx, j, parser, filepath.Join(dir, tg.turn.Transcript), tg.turn.Prompt)
			if strings.Contains(verdicts[i].Error, claude.ErrCredentials.Error()) {
				refusedOnce.Do(func() { refused = verdicts[i].Error })
				refuse()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return exit.Errorf(exit.Interrupted, "interrupted: nothing written, %s is as it was", dir)
	}
	if refused != "" {
		return exit.Errorf(exit.Tool, "%s (nothing written, %s is as it was)", refused, dir)
	}
	// The judge's words are redacted like the run's own.
	red := redact.FromEnv(stdio.Env, slices.Concat(claude.CredentialVars, r.Config.PassEnv))
	for i := range verdicts {
		verdicts[i].Redact(red.String)
	}

	doc := VerdictsFile{Rubric: rb, JudgeModel: judgeModel, CreatedAt: time.Now().UTC()}
	for i, tg := range targets {
		doc.Verdicts = append(doc.Verdicts, TurnVerdict{Conversation: tg.conv, Arm: tg.arm, Turn: tg.turn.Turn, Verdict: verdicts[i]})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	path, err := atomicfile.WriteFirstFree(dir, func(n int) string { return fmt.Sprintf("verdicts-%d.json", n+2) }, append(b, '\n'), record.FileMode)
	if err != nil {
		return exit.With(exit.Tool, err)
	}

	// What changed, criterion by criterion.
	var stats changeStats
	var cost float64
	for i, tg := range targets {
		cost += verdicts[i].CostUSD
		unit := fmt.Sprintf("conv %d", tg.conv)
		if tg.arm == record.ArmFresh {
			unit = fmt.Sprintf("fresh %d", tg.conv)
		}
		for _, line := range verdictChanges(unit, tg.turn.Turn, tg.turn.Verdict, verdicts[i], &stats) {
			fmt.Fprintln(stdio.Stdout, term.Clean(line)) // quotes the judge
		}
	}
	if stats.results == 0 && stats.criteria == 0 && stats.errors == 0 {
		fmt.Fprintln(stdio.Stdout, "no verdict changed")
	}
	before, after := outcomeWith(r, nil), outcomeWith(r, func(run *record.Run) {
		k := 0
		for _, arm := range [][]record.Conversation{run.Conversations, run.Fresh} {
			for i := range arm {
				for n := range arm[i].Turns {
					if t := &arm[i].Turns[n]; t.Judged() {
						v := verdicts[k]
						t.Verdict = &v
						k++
					}
				}
			}
		}
	})
	fmt.Fprintf(stdio.Stdout, "rejudged %d turns: results changed %d, criterion verdicts changed %d, judge errors %d; outcome %s (exit %d), was %s (exit %d); judge cost $%.4f; wrote %s (run.json unchanged)\n",
		len(targets), stats.results, stats.criteria, stats.errors, after.Verdict, after.Exit, before.Verdict, before.Exit, cost, path)
	if stats.errors > 0 {
		return exit.Errorf(exit.Tool, "%d of %d turns could not be judged (judge-error, recorded in %s)", stats.errors, len(targets), filepath.Base(path))
	}
	return nil
}

// judgeTranscript judges one saved turn; a transcript that cannot be read
// is a judge error, never a pass or a fail.
func judgeTranscript(ctx context.Context, j *judge.Judge, agent, path, task string) judge.Verdict {
	f, err := readfile.Open(path) // a FIFO would block the rejudge for ever
	if err != nil {
		return judge.Verdict{Result: judge.JudgeError, Error: fmt.Sprintf("reading the saved transcript: %v", err), Model: j.Model}
	}
	defer f.Close()
	t, err := agents.ParseTurn(agent, f) // the CLI that printed it
	if err != nil {
		return judge.Verdict{Result: judge.JudgeError, Error: fmt.Sprintf("reading the saved transcript %s: %v", path, err), Model: j.Model}
	}
	// A judged turn completed: its transcript ends in a result, every line
	// whole. One that does not was damaged since, and parsed it is a turn
	// with fewer calls than the agent made (garbage: none), which the judge
	// would fail.
	if !t.HasResult || t.BadLines > 0 {
		return judge.Verdict{Result: judge.JudgeError, Model: j.Model,
			Error: fmt.Sprintf("the saved transcript %s is damaged (%d lines not JSON, result line present: %v), expected the turn's whole stream", path, t.BadLines, t.HasResult)}
	}
	return j.Judge(ctx, task, t)
}

type changeStats struct{ results, criteria, errors int }

// verdictChanges lists what differs between a turn's old and new verdicts,
// one line each: the turn's result, then each criterion, then the escape
// hatch. A judge error on either side is shown as such, with no criterion
// lines: its criteria are neither passes nor fails.
func verdictChanges(unit string, turn int, old *judge.Verdict, nv judge.Verdict, st *changeStats) []string {
	at := fmt.Sprintf("%s turn %d", unit, turn)
	was := "(none)"
	if old != nil {
		was = old.Result
	}
	var out []string
	if nv.Result == judge.JudgeError {
		st.errors++
		if was != judge.JudgeError {
			st.results++
		}
		return append(out, fmt.Sprintf("%s: %s → judge-error (%s)", at, was, oneLineMsg(nv.Error)))
	}
	if was != nv.Result {
		st.results++
		out = append(out, fmt.Sprintf("%s: %s → %s", at, was, nv.Result))
	}
	if old == nil || old.Result == judge.JudgeError {
		return out
	}
	oldBy := map[string]judge.CriterionVerdict{}
	for _, c := range old.Criteria {
		oldBy[c.ID] = c
	}
	seen := map[string]bool{}
	for _, c := range nv.Criteria {
		seen[c.ID] = true
		prev := "(none)"
		if oc, ok := oldBy[c.ID]; ok {
			prev = oc.Result
		}
		if prev != c.Result {
			st.criteria++
			out = append(out, fmt.Sprintf("%s %s: %s → %s (%s)", at, c.ID, prev, c.Result, c.Source))
		}
	}
	for _, oc := range old.Criteria {
		if !seen[oc.ID] {
			st.criteria++
			out = append(out, fmt.Sprintf("%s %s: %s → (none) (not in this rubric)", at, oc.ID, oc.Result))
		}
	}
	if old.EscapeHatch != nv.EscapeHatch {
		line := fmt.Sprintf("%s escape-hatch: %s → %s", at, yesNo(old.EscapeHatch), yesNo(nv.EscapeHatch))
		if nv.EscapeHatch {
			line += " (" + oneLineMsg(nv.EscapeReason) + ")"
		}
		out = append(out, line)
	}
	if old.OverCall != nv.OverCall {
		out = append(out, fmt.Sprintf("%s judge over-call (downgraded to partial): %s → %s", at, yesNo(old.OverCall), yesNo(nv.OverCall)))
	}
	return out
}

// outcomeWith decides a copy of the run, changed by edit: the run itself is
// left as it was.
func outcomeWith(r *record.Run, edit func(*record.Run)) record.Outcome {
	b, err := json.Marshal(r)
	if err != nil {
		return r.Outcome
	}
	var cp record.Run
	if err := json.Unmarshal(b, &cp); err != nil {
		return r.Outcome
	}
	if edit != nil {
		edit(&cp)
	}
	verdict.Decide(&cp)
	verdict.StoppedOnError(&cp)
	return cp.Outcome
}

func rubricName(rb *rubric.Rubric, fromFile bool) string {
	switch {
	case fromFile:
		return rb.Source
	case rb.Source == "":
		return "from run.json"
	}
	return "from run.json (" + rb.Source + ")"
}

// prog is the command to name in advice.
func prog(s Settings) string {
	if s.Prog == "" {
		return "vibe-test"
	}
	return s.Prog
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func oneLineMsg(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= 200 {
		return s
	}
	cut := 200
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
