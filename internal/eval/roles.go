package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/estimate"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/redact"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// The prompt versions: a change to a prompt or its schema changes its
// version, which makes a stored baseline's grades incomparable (rejudge
// grades the baseline again first).
const (
	ReaderPromptVersion = "reader-v1"
	// grader-v2: pass or fail only. Every measure asked applies to the
	// case (its key has the measure's fields, or it uses none and applies
	// to every case), and an n/a left it out of both sides' scores without
	// a trace: a grader that could not quote a missing fact hid a drop so.
	GraderPromptVersion = "grader-v2"
)

// ReaderSchema is the reader's answer; its title routes the call in the
// scripted model.
const ReaderSchema = `{"title":"reading","type":"object","additionalProperties":false,"properties":{` +
	`"decision":{"type":"string"},"rebuild":{"type":"string"},` +
	`"follow_ups":{"type":"array","items":{"type":"string"}},"close_answer":{"type":"string"}},` +
	`"required":["decision","rebuild","follow_ups","close_answer"]}`

// GraderSchema is the grader's answer.
const GraderSchema = `{"title":"grades","type":"object","additionalProperties":false,"properties":{` +
	`"grades":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{` +
	`"id":{"type":"string"},"result":{"type":"string","enum":["pass","fail"]},"quote":{"type":"string"}},` +
	`"required":["id","result","quote"]}}},"required":["grades"]}`

// generator runs the agent under test on one case: `claude -p` in the
// jail, in a fresh copy of the case's fixture outside any git repository,
// with the skill appended to its system prompt (or installed as a project
// skill), read-only tools, and no session kept.
type generator struct {
	binary       string
	env          []string
	hermetic     bool
	authorConfig string
	jail         *jail.Spec // nil: no jail
	timeout      time.Duration
	grace        time.Duration
	maxRetries   int
	tools        []string
	deliver      string
	keepSandbox  bool
	exclude      []string // never copied from a fixture: the eval folder
	redactor     *redact.Redactor
	// retries and backoff rerun a call that failed on a transient API
	// error after the CLI's own retries gave up.
	retries int
	backoff time.Duration
	// agent is the generator's CLI; for one other than claude, drv drives
	// agentBinary in agentJail (nil: none), talking to baseURL ("": the
	// vendor's API), with a hermetic home per case.
	agent       string
	drv         agent.Agent
	agentBinary string
	agentJail   *jail.Spec
	baseURL     string
}

// version is what one run gives the generator: a skill (nil for the
// control), its text, the model and the effort.
type version struct {
	skill  *skill.Skill
	text   string
	model  string
	effort string
}

// generate runs one case and returns the final message. transcript is the
// file the raw stream goes to (redacted), made anew.
func (g *generator) generate(ctx context.Context, c *cases.Case, v version, transcript string) (claude.Turn, GenInfo, error) {
	info := GenInfo{Effort: v.effort}
	backoff := g.backoff
	for attempt := 1; ; attempt++ {
		info.Attempts = attempt
		name := transcript
		if attempt > 1 {
			name = fmt.Sprintf("%s.attempt-%d", transcript, attempt)
		}
		t, err := g.once(ctx, c, v, name, &info)
		if err == nil || ctx.Err() != nil || attempt > g.retries || !errors.Is(err, errTransient) {
			return t, info, err
		}
		select {
		case <-ctx.Done():
			return t, info, err
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

var errTransient = errors.New("a transient API error")

func (g *generator) once(ctx context.Context, c *cases.Case, v version, transcript string, info *GenInfo) (claude.Turn, error) {
	if g.drv != nil {
		return g.onceAgent(ctx, c, v, transcript, info)
	}
	opts := sandbox.Options{Fixture: c.Fixture, Files: c.Files, Hermetic: g.hermetic, AuthorConfigDir: g.authorConfig, Exclude: g.exclude}
	if g.deliver == cases.DeliverSkill {
		opts.Skill = v.skill // nil for the control: nothing installed
	}
	sb, err := sandbox.New(opts)
	if err != nil {
		return claude.Turn{}, err
	}
	defer func() {
		if !g.keepSandbox {
			_ = sb.Remove()
		}
	}()
	tools := g.tools
	sysFile := ""
	var readOnly []string
	if g.deliver != cases.DeliverSkill {
		// The skill text sits beside the workspace, not in it: the agent's
		// tools see the workspace, the CLI reads the file at start. The
		// control gets an empty file: the same call, no skill.
		if sysFile, err = systemFile(sb, v.text); err != nil {
			return claude.Turn{}, err
		}
		readOnly = append(readOnly, sysFile)
	} else if v.skill != nil && !contains(tools, "Skill") {
		tools = append(append([]string{}, tools...), "Skill")
	}
	f, err := createTranscript(transcript)
	if err != nil {
		return claude.Turn{}, err
	}
	defer f.Close()
	w := g.redactor.NewWriter(f)
	envOpts := claude.EnvOptions{Extra: []string{"CLAUDE_CODE_MAX_RETRIES=" + strconv.Itoa(g.maxRetries), "TMPDIR=" + sb.Tmp}}
	if g.hermetic {
		envOpts.Home, envOpts.ConfigDir = sb.Home, sb.ConfigDir
	}
	inv := claude.Invocation{
		Binary:  g.binary,
		Args:    claude.GeneratorArgs(c.Prompt, v.model, v.effort, tools, sysFile),
		Env:     claude.Env(g.env, envOpts),
		Dir:     sb.Dir,
		Stdout:  w,
		Timeout: g.timeout,
		Grace:   g.grace,
	}
	if g.jail != nil {
		writable := []string{sb.Dir}
		if sb.Hermetic {
			writable = append(writable, sb.Home)
		} else if sb.ConfigDir != "" {
			sessions := sandbox.SessionDir(sb.ConfigDir, sb.Dir)
			if err := os.MkdirAll(sessions, 0o700); err != nil {
				return claude.Turn{}, fmt.Errorf("creating the session folder: %w", err)
			}
			writable = append(writable, sessions)
		}
		j := g.jail.With(sb.Tmp, sb.Dir, writable, readOnly)
		inv.Jail = &j
	}
	start := time.Now()
	out, runErr := claude.Run(ctx, inv)
	if out.TimedOut || ctx.Err() != nil {
		sb.KillStrays()
	}
	// Stopped before the CLI said its cost, though billed for its
	// requests: priced from their usage, as a run's agent try is.
	out.Turn = out.Turn.PricedBy(estimate.SpentCost)
	info.DurationMS = time.Since(start).Milliseconds()
	if err := w.Flush(); err != nil && runErr == nil {
		runErr = fmt.Errorf("writing transcript: %w", err)
	}
	return g.settle(out, runErr, out.Turn.Failure(out.ExitCode), claude.CredentialsAdvice, info)
}

// settle records what a generator turn did into info and says whether it
// gave a message: a run error, a timeout, refused credentials (advice says
// what to do), a transient API error (tried again), another failure
// (failure, in the agent's own terms) or an empty message is an error of
// the cell, never a grade.
func (g *generator) settle(out claude.Outcome, runErr error, failure, advice string, info *GenInfo) (claude.Turn, error) {
	t := out.Turn
	info.APICalls = t.APICalls
	info.ToolCalls = nil
	for _, call := range t.Calls {
		info.ToolCalls = append(info.ToolCalls, call.Name)
	}
	if g.drv != nil {
		info.Model = t.Model // another agent's turn names its model; claude's answered_by does
	}
	if len(t.AnsweredBy) > 0 {
		info.Model = t.AnsweredBy[len(t.AnsweredBy)-1]
	}
	if runErr != nil {
		return t, runErr
	}
	switch {
	case out.TimedOut:
		return t, fmt.Errorf("the generator timed out after %s", g.timeout)
	case t.APIErrorStatus == 401 || t.APIErrorStatus == 403:
		return t, fmt.Errorf("%w (HTTP %d): %s", claude.ErrCredentials, t.APIErrorStatus, advice)
	case failure != "" && transient(t):
		return t, fmt.Errorf("%w: %s", errTransient, g.redactor.String(failure))
	case failure != "":
		return t, errors.New(g.redactor.String(failure))
	case strings.TrimSpace(t.Text) == "":
		return t, errors.New("the generator ended its turn with no message")
	}
	return t, nil
}

// systemFile writes the skill text for --deliver system-prompt beside the
// workspace, not in it: the agent's tools see the workspace, the CLI
// reads the file at start. The control's is empty: the same call, no
// skill.
func systemFile(sb *sandbox.Sandbox, text string) (string, error) {
	dir, err := os.MkdirTemp(filepath.Dir(sb.Dir), "sys-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "SKILL.md")
	return path, os.WriteFile(path, []byte(text), 0o600)
}

// createTranscript makes a generator's transcript file anew (O_EXCL: a
// transcript is never written over).
func createTranscript(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating transcript: %w", err)
	}
	return f, nil
}

// transient: an API error a later try may pass.
func transient(t claude.Turn) bool {
	if !t.HasResult || t.TerminalReason != "api_error" {
		return false
	}
	s := t.APIErrorStatus
	return s == 0 || s == 429 || s == 529 || s >= 500
}

// reader is the cold call that plays the user: it sees the case's prompt
// and the message, nothing else.
type reader struct {
	caller claude.Structured
	model  string
}

// ReaderPrompt is the reader's prompt for one message.
func ReaderPrompt(prompt, message string) string {
	var b strings.Builder
	b.WriteString("You asked a colleague the question below, and the reply below is what you got back. Read it as the person who has to rule on it, using only the reply: you cannot open any file or ask anything yet.\n\n")
	b.WriteString("YOUR QUESTION:\n<<<\n" + prompt + "\n>>>\n\n")
	b.WriteString("THE REPLY:\n<<<\n" + message + "\n>>>\n\n")
	b.WriteString(`Answer with the StructuredOutput tool:
- decision: the ruling you would make now from the reply alone, in one sentence, or "cannot rule" and why.
- rebuild: in your own words, the problem, what breaks, the fix and what it costs, as far as the reply lets you tell.
- follow_ups: the questions you would still have to ask before you could rule (an empty list when there are none).
- close_answer: your answer to the question the reply ends with, or "" when it ends with none.`)
	return b.String()
}

// read returns the reader's notes, retrying once on an answer that does
// not parse or a call that fails.
func (r *reader) read(ctx context.Context, prompt, message string) (*Notes, float64, error) {
	var cost float64
	var lastErr error
	for attempt := 1; attempt <= 2; attempt++ {
		t, err := r.caller.Structured(ctx, ReaderPrompt(prompt, message), ReaderSchema, r.model)
		cost += t.CostUSD
		if err != nil {
			lastErr = err
			if ctx.Err() != nil || errors.Is(err, claude.ErrCredentials) {
				break
			}
			continue
		}
		var n Notes
		if err := strictDecode(t.StructuredOutput, &n); err != nil {
			lastErr = fmt.Errorf("the reader's answer does not parse: %w", err)
			continue
		}
		if n.FollowUps == nil {
			n.FollowUps = []string{}
		}
		return &n, cost, nil
	}
	return nil, cost, fmt.Errorf("reader: %w", lastErr)
}

// grader is the cold call that grades a message against the key: it sees
// the message, the reader's notes and, per measure, its question and the
// key fields it uses; never the skill, never which run the message came
// from.
type grader struct {
	caller   claude.Structured
	model    string
	goal     string
	measures []cases.Measure
}

// askedMeasure is one measure as the grader is asked it.
type askedMeasure struct {
	cases.Measure
	key json.RawMessage
}

// GraderPrompt is the grader's prompt for one message. note, when not
// empty, says why the last answer was not usable.
func GraderPrompt(goal, prompt, message string, notes *Notes, asked []askedMeasure, note string) string {
	var b strings.Builder
	b.WriteString("You grade one reply to a user's request against an answer key. A reader (the person who asked) wrote the notes below after reading the reply, and nothing else.\n\n")
	b.WriteString("THE GOAL EVERY MEASURE SERVES:\n" + goal + "\n\n")
	b.WriteString("THE REQUEST:\n<<<\n" + prompt + "\n>>>\n\n")
	b.WriteString("THE REPLY:\n<<<\n" + message + "\n>>>\n\n")
	b.WriteString("THE READER'S NOTES:\n<<<\n")
	b.WriteString("decision: " + notes.Decision + "\n")
	b.WriteString("rebuild: " + notes.Rebuild + "\n")
	b.WriteString("follow-up questions:")
	if len(notes.FollowUps) == 0 {
		b.WriteString(" (none)")
	}
	for _, q := range notes.FollowUps {
		b.WriteString("\n- " + q)
	}
	b.WriteString("\nanswer to the closing question: " + notes.CloseAnswer + "\n>>>\n\n")
	b.WriteString("THE MEASURES:\n")
	for _, m := range asked {
		fmt.Fprintf(&b, "- %s (%s): %s\n  Answer key for it: %s\n", m.ID, orID(m.Name, m.ID), m.Question, indentJSON(m.key))
	}
	b.WriteString("\nFor every measure above give result pass or fail (each applies to this request), and in quote the exact words of the reply or of the reader's notes that show it, copied character for character (a sentence or two at most). Answer with the StructuredOutput tool.")
	if note != "" {
		b.WriteString("\n\nYOUR LAST ANSWER WAS NOT USABLE: " + note + " Answer again, with quotes copied exactly.")
	}
	return b.String()
}

type graderAnswer struct {
	Grades []struct {
		ID     string `json:"id"`
		Result string `json:"result"`
		Quote  string `json:"quote"`
	} `json:"grades"`
}

// grade grades a message on every measure of the case set. A measure
// whose key fields the case lacks is n/a without asking. A grade whose
// quote is not in the message or the notes is asked again once; then that
// measure is a grade error, never a pass or a fail.
func (g *grader) grade(ctx context.Context, c *cases.Case, message string, notes *Notes) ([]Grade, float64) {
	grades := make([]Grade, len(g.measures))
	var asked []askedMeasure
	index := map[string]int{}
	for i, m := range g.measures {
		grades[i] = Grade{Measure: m.ID, Result: ResultNA}
		if key, ok := c.KeyFields(m); ok {
			index[m.ID] = i
			asked = append(asked, askedMeasure{Measure: m, key: key})
			grades[i].Result = ""
		}
	}
	if len(asked) == 0 {
		return grades, 0
	}
	evidence := message + "\n" + notesText(notes)
	var cost float64
	note := ""
	var lastErr string
	for attempt := 1; attempt <= 2; attempt++ {
		t, err := g.caller.Structured(ctx, GraderPrompt(g.goal, c.Prompt, message, notes, asked, note), GraderSchema, g.model)
		cost += t.CostUSD
		for _, m := range asked {
			if grades[index[m.ID]].Result == "" {
				grades[index[m.ID]].Attempts = attempt
			}
		}
		if err != nil {
			lastErr = err.Error()
			if ctx.Err() != nil || errors.Is(err, claude.ErrCredentials) {
				break
			}
			note = "the call failed."
			continue
		}
		var a graderAnswer
		if err := strictDecode(t.StructuredOutput, &a); err != nil {
			lastErr = "the grader's answer does not parse: " + err.Error()
			note = "it did not match the schema."
			continue
		}
		seen := map[string]bool{}
		var bad []string
		for _, ag := range a.Grades {
			i, ok := index[ag.ID]
			if !ok || seen[ag.ID] {
				continue // an unknown or repeated id: the measures asked decide
			}
			seen[ag.ID] = true
			if grades[i].Result != "" {
				continue // settled by the first answer
			}
			switch ag.Result {
			case ResultPass, ResultFail:
			case ResultNA:
				// Every measure asked applies (GraderPromptVersion): an n/a
				// left it out of both sides' scores without a trace, where
				// it may have been a fail.
				bad = append(bad, fmt.Sprintf("%s: n/a, but the measure applies to this request: answer pass or fail", ag.ID))
				grades[i].Error = "n/a for a measure that applies"
				continue
			default:
				bad = append(bad, fmt.Sprintf("%s: result %q", ag.ID, ag.Result))
				continue
			}
			if !hasWord(ag.Quote) {
				// "?" is in nearly every reply: a quote of a character or
				// two proves no grade (it passed "ends with one answerable
				// question" on any question).
				bad = append(bad, fmt.Sprintf("%s: the quote %q is too short to show anything: quote the words that show it", ag.ID, clip(ag.Quote, 80)))
				grades[i].Quote, grades[i].Error = ag.Quote, fmt.Sprintf("the quote holds fewer than %d letters or digits", minQuoteRunes)
				continue
			}
			if !quoted(evidence, ag.Quote) {
				bad = append(bad, fmt.Sprintf("%s: the quote %q is not in the reply or the notes", ag.ID, clip(ag.Quote, 80)))
				grades[i].Quote, grades[i].Error = ag.Quote, "the quote is not in the reply or the reader's notes"
				continue
			}
			grades[i] = Grade{Measure: ag.ID, Result: ag.Result, Quote: strings.TrimSpace(ag.Quote), Attempts: attempt}
		}
		var missing []string
		for _, m := range asked {
			if !seen[m.ID] {
				missing = append(missing, m.ID)
			}
		}
		if len(missing) > 0 {
			bad = append(bad, "no grade for "+strings.Join(missing, ", "))
		}
		if len(bad) == 0 {
			break
		}
		note = strings.Join(bad, "; ") + "."
		lastErr = note
	}
	for _, m := range asked {
		gr := &grades[index[m.ID]]
		if gr.Result == "" {
			gr.Result = ResultError
			if gr.Error == "" {
				gr.Error = lastErr
			}
		} else {
			gr.Error = ""
		}
	}
	return grades, cost
}

// quoted: the quote occurs in text, with runs of white space taken as one
// space and the quote's own enclosing quotation marks dropped.
func quoted(text, quote string) bool {
	q := strings.TrimSpace(quote)
	for _, pair := range [][2]string{{`"`, `"`}, {"“", "”"}, {"'", "'"}, {"«", "»"}} {
		if len(q) >= 2*len(pair[0]) && strings.HasPrefix(q, pair[0]) && strings.HasSuffix(q, pair[1]) {
			q = strings.TrimSpace(q[len(pair[0]) : len(q)-len(pair[1])])
			break
		}
	}
	if q == "" {
		return false
	}
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	return strings.Contains(norm(text), norm(q))
}

// minQuoteRunes is the fewest letters and digits a quote must hold: "?",
// "e" or "1" is in nearly every reply, and proved a grade so.
const minQuoteRunes = 3

// hasWord says whether a quote holds at least minQuoteRunes letters or
// digits.
func hasWord(quote string) bool {
	n := 0
	for _, r := range quote {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n >= minQuoteRunes
}

func notesText(n *Notes) string {
	if n == nil {
		return ""
	}
	return strings.Join(append([]string{n.Decision, n.Rebuild, n.CloseAnswer}, n.FollowUps...), "\n")
}

// strictDecode decodes JSON into v, refusing unknown fields and trailing
// data.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

func indentJSON(b json.RawMessage) string {
	return strings.ReplaceAll(string(b), "\n", "\n  ")
}

func orID(name, id string) string {
	if name == "" {
		return id
	}
	return name
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
