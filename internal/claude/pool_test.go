package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// poolSchema is a judge's schema (title "verdict": the scripted server
// answers it as a judge call).
const poolSchema = `{"title":"verdict","type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`

func poolCaller(t *testing.T, bin string) (Caller, *scripted.Server) {
	t.Helper()
	srv, err := scripted.Start(scripted.Script{Rules: []scripted.Rule{{Kind: scripted.KindJudge, Steps: []scripted.Step{
		{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: map[string]any{"ok": true}}}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	// TMPDIR in the call's own folder, as a run's cold calls have it: the
	// CLI leaves fswatch probes under $TMPDIR/claude-<uid>, which outlived
	// the test in the machine's /tmp (one clean-clone CI run left one).
	env := func(dir string) []string {
		home := filepath.Join(dir, ".home")
		return Env([]string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-x", "TMPDIR=" + dir},
			EnvOptions{Home: home, ConfigDir: filepath.Join(home, ".claude"), Extra: []string{"CLAUDE_CODE_MAX_RETRIES=0"}})
	}
	return Caller{Binary: bin, Env: env, Timeout: time.Minute, Grace: time.Second}, srv
}

// Calls made in turn through a pool, on the real CLI and on the stand-in:
// one process serves them all, each call's request holds its own prompt and
// no earlier one (/clear starts a new conversation), and each call's cost
// is its own (equal prompts, equal costs: a running total would grow).
func TestPoolCallsAreIndependent(t *testing.T) {
	for name, bin := range map[string]func(testing.TB) string{"real CLI": testenv.Claude, "stand-in": testenv.FakeClaude} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, srv := poolCaller(t, bin(t))
			p := NewPool(c, poolSchema, "", 1, 1)
			defer p.Close()
			// Markers of one length: the prompts cost the same.
			prompts := []string{"judge @@first@@", "judge @@secnd@@", "judge @@third@@"}
			var costs []float64
			for _, prompt := range prompts {
				turn, err := p.Structured(t.Context(), prompt, poolSchema, "")
				if err != nil {
					t.Fatalf("%q: %v", prompt, err)
				}
				if string(turn.StructuredOutput) != `{"ok":true}` {
					t.Errorf("%q: structured output %s", prompt, turn.StructuredOutput)
				}
				costs = append(costs, turn.CostUSD)
			}
			if n := p.Started(); n != 1 {
				t.Errorf("%d processes started for %d calls in turn, want 1", n, len(prompts))
			}
			var judged [][]byte
			for _, r := range srv.Requests() {
				if r.Kind == scripted.KindJudge && r.Status == 200 {
					judged = append(judged, r.Body)
				}
			}
			if len(judged) != len(prompts) {
				t.Fatalf("%d judge requests, want %d", len(judged), len(prompts))
			}
			for i, body := range judged {
				for k, prompt := range prompts {
					if has := bytes.Contains(body, []byte(prompt)); has != (i == k) {
						t.Errorf("request %d holds %q: %v", i+1, prompt, has)
					}
				}
			}
			for i, c := range costs {
				if c <= 0 || c > 1.1*costs[0] || c < 0.9*costs[0] {
					t.Errorf("call %d cost %v, call 1 %v: want about the same, each call's own", i+1, c, costs[0])
				}
			}
		})
	}
}

// Calls at once get a process each; the ready one is used, then kept with
// the others up to maxIdle; a call of another schema goes one-shot.
func TestPoolGrowsWithCallsAtOnce(t *testing.T) {
	t.Parallel()
	c, srv := poolCaller(t, testenv.FakeClaude(t))
	p := NewPool(c, poolSchema, "", 1, 2)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := p.Structured(t.Context(), "judge this", poolSchema, "")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	started := p.Started()
	if started < 1 || started > 3 {
		t.Errorf("%d processes for 3 calls at once, want 1 to 3", started)
	}
	for range 4 {
		if _, err := p.Structured(t.Context(), "judge again", poolSchema, ""); err != nil {
			t.Fatal(err)
		}
	}
	if p.Started() != started {
		t.Errorf("calls in turn started %d more processes, want none (one is ready)", p.Started()-started)
	}
	other := `{"title":"rubric","type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`
	_, _ = p.Structured(t.Context(), "extract", other, "")
	if p.Started() != started {
		t.Errorf("a call of another schema used the pool")
	}
	p.Close()
	if _, err := p.Structured(t.Context(), "judge after close", poolSchema, ""); err != nil {
		t.Errorf("a call after Close: %v, want a one-shot call", err)
	}
	if p.Started() != started {
		t.Errorf("a call after Close started a pooled process")
	}
	if n := len(srv.Requests()); n < 8 {
		t.Errorf("%d requests for 8 judge calls", n)
	}
}

// A one-shot call whose prompt is longer than one argument may be (a
// rubric's, carrying a SKILL.md of 200 KiB; Linux refuses an argument over
// 128 KiB) reaches the model whole, on the real CLI and on the stand-in:
// the exec failed with "argument list too long".
func TestLongPromptOnStdin(t *testing.T) {
	for name, bin := range map[string]func(testing.TB) string{"real CLI": testenv.Claude, "stand-in": testenv.FakeClaude} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, srv := poolCaller(t, bin(t))
			prompt := "judge @@long@@ " + strings.Repeat("a line of the skill's text, ", 200<<10/28) + "@@end@@"
			turn, err := c.Structured(t.Context(), prompt, poolSchema, "")
			if err != nil {
				t.Fatal(err)
			}
			if string(turn.StructuredOutput) != `{"ok":true}` {
				t.Errorf("structured output %s", turn.StructuredOutput)
			}
			found := false
			for _, r := range srv.Requests() {
				if r.Kind == scripted.KindJudge && bytes.Contains(r.Body, []byte(prompt)) {
					found = true
				}
			}
			if !found {
				t.Errorf("no request held the %d-byte prompt whole", len(prompt))
			}
		})
	}
}
