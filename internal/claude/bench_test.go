package claude

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// benchTranscriptSize is the size of the generated transcript
// BenchmarkParseTurn parses: a long agentic turn, far beyond what a decay
// turn writes, so the figure is the parser's own throughput.
const benchTranscriptSize = 50 << 20

// The lines are modelled on testdata/transcripts/tool-calls.jsonl
// (init, one assistant event per tool_use block, one user event per
// tool_result with its structured tool_use_result, a final result line),
// with ids that differ on every call so the parser's id map works as in a
// real turn.
const (
	benchInit = `{"type":"system","subtype":"init","cwd":"/tmp/repo-fixture","session_id":"b1e6b40b-0c6e-4440-8f43-3ae192907281",` +
		`"tools":["Task","Bash","Edit","Glob","Grep","Read","Skill","Write"],"mcp_servers":[],"model":"claude-opus-5-5",` +
		`"permissionMode":"default","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.328",` +
		`"skills":["stock-ledger","debug","verify"],"plugins":[],"uuid":"fb459db1-a3f3-47ca-9425-5d3dfd2efee0"}` + "\n"
	benchText = `{"type":"assistant","message":{"id":"msg_bench_%06d","type":"message","role":"assistant","model":"claude-opus-5-5",` +
		`"content":[{"type":"text","text":"Let me look at the next file before answering (step %d)."}],"stop_reason":null,"stop_sequence":null,` +
		`"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1,"service_tier":"standard",` +
		`"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":0}},"context_management":null},"parent_tool_use_id":null,` +
		`"session_id":"b1e6b40b-0c6e-4440-8f43-3ae192907281","uuid":"6b1870ca-6b7f-480c-afc7-%012d","timestamp":"2026-11-30T12:41:30.586Z"}` + "\n"
	benchBashUse = `{"type":"assistant","message":{"id":"msg_bench_%06d","type":"message","role":"assistant","model":"claude-opus-5-5",` +
		`"content":[{"type":"tool_use","id":"toolu_bench_%06d_0","name":"Bash","input":{"command":"bash .claude/skills/stock-ledger/scripts/census.sh --day %d","description":"Run the stock census"}}],` +
		`"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1,` +
		`"service_tier":"standard","cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":0}},"context_management":null},` +
		`"parent_tool_use_id":null,"session_id":"b1e6b40b-0c6e-4440-8f43-3ae192907281","uuid":"d21abff7-017c-4c07-8e39-%012d","timestamp":"2026-11-30T12:41:30.586Z"}` + "\n"
	benchReadUse = `{"type":"assistant","message":{"id":"msg_bench_%06d","type":"message","role":"assistant","model":"claude-opus-5-5",` +
		`"content":[{"type":"tool_use","id":"toolu_bench_%06d_1","name":"Read","input":{"file_path":"/tmp/repo-fixture/data/part-%d.csv"}}],` +
		`"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1,` +
		`"service_tier":"standard","cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":0}},"context_management":null},` +
		`"parent_tool_use_id":null,"session_id":"b1e6b40b-0c6e-4440-8f43-3ae192907281","uuid":"3075cfaa-43f0-4c07-8e39-%012d","timestamp":"2026-11-30T12:41:30.590Z"}` + "\n"
	benchReadResult = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_bench_%06d_1","type":"tool_result","content":%q}]},` +
		`"parent_tool_use_id":null,"session_id":"b1e6b40b-0c6e-4440-8f43-3ae192907281","uuid":"f1bc15a4-10a5-4e7b-8058-%012d","timestamp":"2026-11-30T12:41:30.665Z",` +
		`"tool_use_result":{"type":"text","file":{"filePath":"/tmp/repo-fixture/data/part-%d.csv","content":%q,"numLines":%d,"startLine":1,"totalLines":%d}},` +
		`"tool_result_meta":[{"id":"toolu_bench_%06d_1","permission_decision":{"decision":"accept","source":"config","reason_type":"rule"}}]}` + "\n"
	benchBashResult = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_bench_%06d_0","type":"tool_result","content":%q,"is_error":%t}]},` +
		`"parent_tool_use_id":null,"session_id":"b1e6b40b-0c6e-4440-8f43-3ae192907281","uuid":"a6fa3527-a11e-4835-996b-%012d","timestamp":"2026-11-30T12:41:30.687Z",` +
		`"tool_use_result":{"stdout":%q,"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},` +
		`"tool_result_meta":[{"id":"toolu_bench_%06d_0","permission_decision":{"decision":"accept","source":"config","reason_type":"rule"}}]}` + "\n"
	benchResult = `{"type":"result","subtype":"success","is_error":false,"duration_ms":355,"duration_api_ms":111,"num_turns":%d,"result":"All tools done.",` +
		`"stop_reason":"end_turn","session_id":"b1e6b40b-0c6e-4440-8f43-3ae192907281","total_cost_usd":0.0458838,` +
		`"usage":{"input_tokens":603,"cache_creation_input_tokens":6006,"cache_read_input_tokens":60009,"output_tokens":72,` +
		`"iterations":[{"type":"message","input_tokens":%d,"output_tokens":34,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d}]},` +
		`"permission_denials":[],"terminal_reason":"completed","api_error_status":null,"uuid":"e53ec8bc-9fba-4185-b7dd-3f79c9ef0dd0"}` + "\n"
)

// benchTranscript generates a stream-json transcript of at least size
// bytes and returns it with the number of tool calls it holds.
func benchTranscript(size int) ([]byte, int) {
	var b bytes.Buffer
	b.Grow(size + 64<<10)
	b.WriteString(benchInit)
	calls := 0
	n := 0
	for ; b.Len() < size; n++ {
		in, cc, cr := int64(100*n+1), int64(1000*n+2), int64(10000*n+3)
		// Tool results of varied length: a census print-out and a slice of a CSV.
		var census, csv strings.Builder
		for k := 0; k < 4+n%9; k++ {
			fmt.Fprintf(&census, "item-%d-%d %d %d\n", n, k, (n*31+k*7)%997, 10+k)
		}
		for k := 0; k < 6+n%13; k++ {
			fmt.Fprintf(&csv, "%d\tpart-%d-%d,%d,%d,warehouse %c\n", k+1, n, k, (n*17+k)%503, k*3, 'A'+rune(k%5))
		}
		if n%4 == 0 {
			fmt.Fprintf(&b, benchText, n, n, in, cc, cr, cc, n)
		}
		fmt.Fprintf(&b, benchBashUse, n, n, n, in, cc, cr, cc, n)
		fmt.Fprintf(&b, benchReadUse, n, n, n, in, cc, cr, cc, n)
		lines := 6 + n%13
		fmt.Fprintf(&b, benchReadResult, n, csv.String(), n, n, csv.String(), lines, lines, n)
		fmt.Fprintf(&b, benchBashResult, n, census.String(), n%17 == 0, n, census.String(), n)
		calls += 2
	}
	fmt.Fprintf(&b, benchResult, 1+calls, 100*n+1, 1000*n+2, 10000*n+3)
	return b.Bytes(), calls
}

// BenchmarkParseTurn measures stream-json parse throughput on a large
// generated transcript. `go run ./bench` reads its MB/s (target ≥ 200).
func BenchmarkParseTurn(b *testing.B) {
	data, calls := benchTranscript(benchTranscriptSize)
	// The generated transcript must parse as intended, or the figure means
	// nothing.
	turn, err := ParseTurn(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	if turn.BadLines != 0 || !turn.HasResult || len(turn.Calls) != calls || turn.Failure(0) != "" {
		b.Fatalf("generated transcript misparsed: bad lines %d, result %v, calls %d of %d, failure %q",
			turn.BadLines, turn.HasResult, len(turn.Calls), calls, turn.Failure(0))
	}
	for _, c := range turn.Calls {
		if !c.HasResult {
			b.Fatalf("call %s has no result", c.ID)
		}
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseTurn(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
