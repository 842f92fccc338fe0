package scripted

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// capturedBody loads the body of a request the real CLI sent, recorded in
// testdata/requests by `make fixtures` (scripted/cmd/record).
func capturedBody(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "requests", name))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f.Body
}

// claudeBin finds the real CLI (see testenv.Claude): a skip locally, a
// failure where CI=true.
func claudeBin(t *testing.T) string {
	t.Helper()
	return testenv.Claude(t)
}

// cliEnv is one isolated CLI home: a fresh HOME, config dir and cwd, kept
// across invocations so --resume finds the session.
type cliEnv struct {
	bin, home, config, cwd, tmp, url string
	retries                          int
}

func newCLIEnv(t *testing.T, url string) *cliEnv {
	t.Helper()
	return &cliEnv{
		bin:     claudeBin(t),
		home:    t.TempDir(),
		config:  t.TempDir(),
		cwd:     t.TempDir(),
		tmp:     t.TempDir(),
		url:     url,
		retries: 1,
	}
}

// command builds a CLI invocation with the PROTOCOL §1 environment.
func (e *cliEnv) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Dir = e.cwd
	cmd.Stdin = nil // /dev/null
	cmd.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + e.home,
		"TERM=dumb",
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + e.url,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CONFIG_DIR=" + e.config,
		"CLAUDE_CODE_MAX_RETRIES=" + strconv.Itoa(e.retries),
		// The CLI keeps task files under $TMPDIR/claude-<uid>: in the
		// test's own folder they go with it, not into the machine's /tmp.
		"TMPDIR=" + e.tmp,
	}
	return cmd
}

// run invokes the CLI with args and returns stdout.
func (e *cliEnv) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := e.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("claude run took %v", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Logf("claude %s: %v\nstderr: %s\nstdout: %s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), err
}

// agentArgs is the agent-turn argv of PROTOCOL §1.
func agentArgs(prompt string, extra ...string) []string {
	a := []string{"-p", prompt, "--output-format", "stream-json", "--verbose",
		"--setting-sources", "project", "--strict-mcp-config",
		"--allowedTools", "Bash Read Edit Write Glob Grep"}
	return append(a, extra...)
}

// events parses stream-json output into generic objects.
func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad stream-json line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// sseMessage is a streamed answer reassembled by the test client.
type sseMessage struct {
	Status     int
	ID         string
	Model      string
	Text       string
	ToolUses   []map[string]any // name, id, input (decoded)
	StopReason string
	Usage      Usage
	Events     []string
	ErrorBody  map[string]any
}

// post sends a body to the server as the CLI would and decodes the answer.
func post(t *testing.T, url string, session string, body []byte) sseMessage {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/messages?beta=true", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "sk-test-secret")
	if session != "" {
		req.Header.Set("X-Claude-Code-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m := sseMessage{Status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &m.ErrorBody); err != nil {
			t.Fatalf("error body %q: %v", b, err)
		}
		return m
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content-type %q", ct)
	}
	partial := map[int]*strings.Builder{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
			m.Events = append(m.Events, event)
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if d["type"] != event {
				t.Fatalf("event %q carries data type %v", event, d["type"])
			}
			switch event {
			case "message_start":
				msg := d["message"].(map[string]any)
				m.ID, _ = msg["id"].(string)
				m.Model, _ = msg["model"].(string)
				u := msg["usage"].(map[string]any)
				m.Usage.Input = int64(u["input_tokens"].(float64))
				m.Usage.CacheCreation = int64(u["cache_creation_input_tokens"].(float64))
				m.Usage.CacheRead = int64(u["cache_read_input_tokens"].(float64))
			case "content_block_start":
				cb := d["content_block"].(map[string]any)
				i := int(d["index"].(float64))
				if cb["type"] == "tool_use" {
					m.ToolUses = append(m.ToolUses, map[string]any{"name": cb["name"], "id": cb["id"]})
					partial[i] = &strings.Builder{}
				}
			case "content_block_delta":
				delta := d["delta"].(map[string]any)
				i := int(d["index"].(float64))
				switch delta["type"] {
				case "text_delta":
					m.Text += delta["text"].(string)
				case "input_json_delta":
					partial[i].WriteString(delta["partial_json"].(string))
				}
			case "content_block_stop":
				i := int(d["index"].(float64))
				if b, ok := partial[i]; ok {
					var in any
					if err := json.Unmarshal([]byte(b.String()), &in); err != nil {
						t.Fatalf("tool input %q: %v", b.String(), err)
					}
					m.ToolUses[len(m.ToolUses)-1]["input"] = in
				}
			case "message_delta":
				m.StopReason = d["delta"].(map[string]any)["stop_reason"].(string)
				m.Usage.Output = int64(d["usage"].(map[string]any)["output_tokens"].(float64))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}
