package fakeclaude_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/sandbox"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// compacted is a conversation with /compact in the middle: a task turn
// that calls a tool, the compaction, a filler.
type compacted struct {
	outs     [][]byte // each invocation's stdout
	turns    []claude.Turn
	requests []scripted.Request
	// appended: the session file before /compact is a prefix of the file
	// after it; grew: it is longer.
	appended, grew bool
}

var compactPrompts = []string{prompts[0], "/compact", prompts[1]}

// compactRun runs compactPrompts through bin, as one-shot --resume
// processes or as messages to one interactive process.
func compactRun(t *testing.T, bin string, interactive bool) compacted {
	t.Helper()
	srv, s, env, _ := setup(t)
	ctx := context.Background()
	var c compacted
	var before []byte
	file := func(id string) []byte {
		b, _ := os.ReadFile(filepath.Join(sandbox.SessionDir(s.config, s.dir), id+".jsonl"))
		return b
	}
	var sess *claude.Session
	if interactive {
		var err error
		sess, err = claude.StartSession(claude.Invocation{Binary: bin, Args: claude.InteractiveArgs("", "", claude.AgentTools(nil, nil)),
			Env: env, Dir: s.dir, Grace: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
	}
	resume := ""
	for _, p := range compactPrompts {
		if p == "/compact" {
			before = file(resume)
		}
		var buf bytes.Buffer
		var out claude.Outcome
		var err error
		if interactive {
			out, err = sess.Send(ctx, p, &buf, 2*time.Minute)
		} else {
			out, err = claude.Run(ctx, claude.Invocation{Binary: bin, Args: claude.AgentArgs(p, resume, "", claude.AgentTools(nil, nil)),
				Env: env, Dir: s.dir, Stdout: &buf, Timeout: 2 * time.Minute, Grace: time.Second})
		}
		if err != nil || out.ExitCode != 0 {
			t.Fatalf("%q: exit %d, %v\n%s", p, out.ExitCode, err, out.Stderr)
		}
		c.outs = append(c.outs, buf.Bytes())
		c.turns = append(c.turns, out.Turn)
		resume = out.Turn.SessionID
		if p == "/compact" {
			after := file(resume)
			c.appended, c.grew = bytes.HasPrefix(after, before), len(after) > len(before)
		}
	}
	c.requests = srv.Requests()
	return c
}

// The stand-in compacts as the pinned CLI does, in both session modes:
// the same calls to the API (the summary call, retried once when its
// answer has no <summary> block, then a next turn that starts from the
// continuation message), the same events and result fields, the summary
// carried into the continuation, the session's running cost, and a
// session file appended to rather than rewritten.
func TestFakeCompactsLikeRealCLI(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{claude.SessionResume, claude.SessionInteractive} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			real := compactRun(t, testenv.Claude(t), mode == claude.SessionInteractive)
			fake := compactRun(t, testenv.FakeClaude(t), mode == claude.SessionInteractive)

			type call struct {
				Kind         scripted.CallKind
				Turn, Step   int
				Prompt       string // its first line
				Continuation bool
			}
			calls := func(c compacted) []call {
				var out []call
				for _, r := range c.requests {
					first, _, _ := strings.Cut(r.Prompt, "\n")
					out = append(out, call{r.Kind, r.Turn, r.Step, first, strings.Contains(string(r.Body), scripted.Continuation)})
				}
				return out
			}
			if rc, fc := calls(real), calls(fake); !reflect.DeepEqual(rc, fc) {
				t.Errorf("the server saw different calls\nreal: %+v\nfake: %+v", rc, fc)
			}

			// What /compact printed: the events in order and the fields a
			// reader of the stream can use.
			type seen struct {
				Events                       []string
				Trigger                      string
				Shrank                       bool // 0 < post_tokens < pre_tokens
				LocalCommand, Result         string
				NumTurns, InputTokens        int64
				IsError, HasStopReason       bool
				Summary                      string // the summary inside the continuation message
				CostAbovePrev, CostBelowNext bool
			}
			view := func(c compacted) seen {
				var v seen
				for _, line := range bytes.Split(bytes.TrimSpace(c.outs[1]), []byte("\n")) {
					ev := gjson.ParseBytes(line)
					name := ev.Get("type").String() + "/" + ev.Get("subtype").String()
					if ev.Get("status").Exists() {
						name += " " + ev.Get("status").String() + ev.Get("compact_result").String()
					}
					if ev.Get("isSynthetic").Bool() {
						name += " synthetic"
					}
					if ev.Get("isReplay").Bool() {
						name += " replay"
					}
					v.Events = append(v.Events, name)
					switch {
					case ev.Get("subtype").String() == "compact_boundary":
						m := ev.Get("compact_metadata")
						v.Trigger = m.Get("trigger").String()
						v.Shrank = m.Get("post_tokens").Int() > 0 && m.Get("post_tokens").Int() < m.Get("pre_tokens").Int()
					case ev.Get("isSynthetic").Bool():
						text := ev.Get("message.content").String()
						_, after, _ := strings.Cut(text, "</system-reminder>\n")
						v.Summary, _, _ = strings.Cut(after, "\n\nIf you need specific details")
					case ev.Get("type").String() == "result":
						v.LocalCommand, v.Result = ev.Get("local_command").String(), ev.Get("result").String()
						v.NumTurns, v.InputTokens = ev.Get("num_turns").Int(), ev.Get("usage.input_tokens").Int()
						v.IsError, v.HasStopReason = ev.Get("is_error").Bool(), ev.Get("stop_reason").Type != gjson.Null
					}
				}
				// total_cost_usd is the session's running total, the summary
				// calls included.
				v.CostAbovePrev = c.turns[1].CostUSD > c.turns[0].CostUSD
				v.CostBelowNext = c.turns[1].CostUSD < c.turns[2].CostUSD
				return v
			}
			rv, fv := view(real), view(fake)
			if !reflect.DeepEqual(rv, fv) {
				t.Errorf("/compact prints differently\nreal: %+v\nfake: %+v", rv, fv)
			}
			if rv.LocalCommand != "compact" || rv.Summary == "" || !rv.Shrank {
				t.Errorf("the real CLI's /compact is not what this test expects: %+v", rv)
			}
			for name, c := range map[string]compacted{"real": real, "fake": fake} {
				if !c.appended || !c.grew {
					t.Errorf("%s: the session file after /compact: old content kept as its prefix %v, longer %v", name, c.appended, c.grew)
				}
			}
		})
	}
}
