package codex

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/jsonline"
)

// threadID is the form of the thread ids codex makes (UUIDv7); anything
// else names no file.
var threadID = regexp.MustCompile(`^[0-9a-fA-F-]{8,64}$`)

// RolloutFile is the session file codex keeps a thread in:
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl. It is
// appended to on every turn, resumed from, and the only file a resume
// needs (PROTOCOL.md §6.1); the conversation driver measures and rewinds
// it as it does claude's session file.
func RolloutFile(codexHome, thread string) (string, error) {
	if !threadID.MatchString(thread) {
		return "", fmt.Errorf("thread id %q is not one codex makes", thread)
	}
	matches, err := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*-"+thread+".jsonl"))
	if err != nil {
		return "", err
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("no rollout file for thread %s under %s", thread, filepath.Join(codexHome, "sessions"))
	case 1:
		return matches[0], nil
	}
	sort.Strings(matches)
	return "", fmt.Errorf("%d rollout files for thread %s under %s, expected one", len(matches), thread, filepath.Join(codexHome, "sessions"))
}

// Rollout is what a rollout file says about its thread's newest turn (the
// lines after its last task_started) and about the whole thread.
type Rollout struct {
	CLIVersion string
	Model      string // the newest turn's model (turn_context)
	// Calls are the newest turn's model calls, in order (token_usage_record).
	Calls []CallUsage
	// ThreadCalls are every call of the thread: its running cost.
	ThreadCalls []CallUsage
	// ThreadModels is the model of each of ThreadCalls.
	ThreadModels []string
	// Skills are the skills codex injected into the newest turn's context
	// for a $name mention (a user message opening with <skill>).
	Skills []string
	// Compactions counts the contextCompaction/compacted items of the
	// newest turn.
	Compactions int
}

var injectedSkill = regexp.MustCompile(`^<skill>\s*<name>([^<]+)</name>`)

// ReadRollout reads a rollout file.
func ReadRollout(path string) (Rollout, error) {
	f, err := os.Open(path)
	if err != nil {
		return Rollout{}, err
	}
	defer f.Close()
	return parseRollout(f)
}

func parseRollout(r io.Reader) (Rollout, error) {
	var ro Rollout
	model := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || !jsonline.Valid(line) {
			continue // a line cut by a kill
		}
		ev := gjson.ParseBytes(line)
		p := ev.Get("payload")
		switch ev.Get("type").String() {
		case "session_meta":
			ro.CLIVersion = p.Get("cli_version").String()
		case "turn_context":
			model = p.Get("model").String()
			ro.Model = model
		case "event_msg":
			if p.Get("type").String() == "task_started" {
				ro.Calls, ro.Skills, ro.Compactions = nil, nil, 0
			}
		case "token_usage_record":
			u := p.Get("usage")
			c := CallUsage{
				Input:      u.Get("input_tokens").Int(),
				Cached:     u.Get("cached_input_tokens").Int(),
				CacheWrite: u.Get("cache_write_input_tokens").Int(),
				Output:     u.Get("output_tokens").Int(),
				Reasoning:  u.Get("reasoning_output_tokens").Int(),
			}
			ro.Calls = append(ro.Calls, c)
			ro.ThreadCalls = append(ro.ThreadCalls, c)
			ro.ThreadModels = append(ro.ThreadModels, model)
		case "response_item":
			if p.Get("type").String() == "message" && p.Get("role").String() == "user" {
				for _, part := range p.Get("content").Array() {
					if m := injectedSkill.FindStringSubmatch(strings.TrimSpace(part.Get("text").String())); m != nil {
						ro.Skills = append(ro.Skills, strings.TrimSpace(m[1]))
					}
				}
			}
		case "compacted":
			ro.Compactions++
		}
	}
	if err := sc.Err(); err != nil {
		return ro, fmt.Errorf("reading the rollout: %w", err)
	}
	return ro, nil
}

// ThreadCost is the thread's estimated running cost: every call priced at
// its model's rate (0 for a model the table lacks). It plays the part of
// claude's total_cost_usd, the session's running total, so a turn's own
// cost is the difference from the last turn's figure.
func (ro Rollout) ThreadCost() float64 {
	var sum float64
	for i, c := range ro.ThreadCalls {
		if p, ok := PriceOf(ro.ThreadModels[i]); ok {
			sum += p.Cost(c)
		}
	}
	return sum
}

// apply puts what the rollout knows into a turn parsed from the stream.
func (ro Rollout) apply(t *Turn) {
	if ro.CLIVersion != "" {
		t.CLIVersion = ro.CLIVersion
	}
	if ro.Model != "" {
		t.Model = ro.Model
	}
	t.APICalls = len(ro.Calls)
	if n := len(ro.Calls); n > 0 {
		t.LastUsage = usageOf(ro.Calls[n-1])
	}
	var out int64
	for _, c := range ro.Calls {
		out += c.Output
	}
	t.OutputTokens = out
	t.ContextTokens = t.LastUsage.Context()
	t.CostUSD = ro.ThreadCost()
	t.Skills = ro.Skills
}
