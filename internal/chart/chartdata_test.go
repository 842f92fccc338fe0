package chart_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/chart"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// These tests go through summary.ChartData, the way vibe-test draws
// chart.html from a run record, so that what run.json holds (untrusted
// text included) reaches the page as the chart package expects.

const payload = "<script>alert(1)</script>"

// hostileRun is a run of three conversations whose skill name, tool calls
// and judge evidence carry script payloads. Conversation 1 decays at turn
// 6 with an escape hatch, 2 holds, 3 stopped on a timed-out turn 7.
func hostileRun() *record.Run {
	rb := &rubric.Rubric{Criteria: []rubric.Criterion{
		{ID: "runs-census", Kind: rubric.Must, Text: "runs scripts/census.sh </script>",
			Check: &rubric.Check{Tool: "Bash", Pattern: `census\.sh`, Expect: "present"}},
		{ID: "answers-from-census", Kind: rubric.Should, Text: "answers only from the census output"},
	}}
	verdictOf := func(result string, evidence string) *judge.Verdict {
		v := &judge.Verdict{Result: result, Attempts: 1, Criteria: []judge.CriterionVerdict{
			{ID: "runs-census", Kind: rubric.Must, Result: result, Evidence: evidence, Call: 1, Source: "check"},
			{ID: "answers-from-census", Kind: rubric.Should, Result: judge.Pass, Evidence: "call 1", Call: 1, Source: "judge"},
		}}
		if result == judge.Fail {
			v.Criteria[0].Call = 0
		}
		return v
	}
	call := []record.Call{{
		Name:    "Bash",
		Input:   json.RawMessage(`{"command": "sh scripts/census.sh ` + strings.ReplaceAll(payload, `"`, `\"`) + ` </script>"}`),
		Result:  "widgets 12 </script>" + payload,
		IsError: true,
	}}
	conv := func(index int, status string, verdicts map[int]*judge.Verdict, upTo int) record.Conversation {
		c := record.Conversation{Index: index, Status: status}
		for t := 1; t <= upTo; t++ {
			tr := record.Turn{Turn: t, Kind: plan.Kind(t), Prompt: fmt.Sprintf("task of turn %d %s", t, payload), Status: record.TurnOK,
				ContextTokens: int64(10000 + 1000*t), Verdict: verdicts[t]}
			if plan.Kind(t) != "filler" {
				tr.ToolCalls, tr.ToolCallCount = call, 1
			}
			c.Turns = append(c.Turns, tr)
		}
		return c
	}
	pass := func() *judge.Verdict { return verdictOf(judge.Pass, "call 1 matches") }
	escape := verdictOf(judge.Fail, "no Bash call matches "+payload+" </script>")
	escape.EscapeHatch, escape.EscapeReason = true, "answered from memory "+payload
	stopped := conv(3, record.StatusError, map[int]*judge.Verdict{1: pass(), 6: pass()}, 6)
	stopped.Abandoned = []record.Turn{{Turn: 7, Kind: "filler", Status: record.TurnTimedOut, Error: "timed out after 10m0s"}}
	stopped.Error = "turn 7: timed out after 10m0s"
	r := &record.Run{
		SchemaVersion: record.SchemaVersion,
		Status:        record.StatusCompleted,
		StartedAt:     time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC),
		Skill:         record.Skill{Name: "stock-ledger " + payload + "</script>", Path: "demo/SKILL.md", Hash: "4b0e7c2a9d11f00d5e6a7b8c9d0e1f2a"},
		Versions:      record.Versions{VibeTest: "v0.4.0", Claude: "2.1.330", ClaudeVerified: "2.1.328", ClaudeMismatch: true},
		Isolation:     "hermetic",
		Rubric:        rb,
		Plan:          &plan.Plan{Model: "sonnet", JudgeModel: "haiku"},
		Conversations: []record.Conversation{
			conv(1, record.StatusCompleted, map[int]*judge.Verdict{1: pass(), 6: escape, 8: pass(), 10: pass()}, 10),
			conv(2, record.StatusCompleted, map[int]*judge.Verdict{1: pass(), 6: pass(), 8: pass(), 10: pass()}, 10),
			stopped,
		},
		Costs: record.Costs{Agent: 0.5, Rubric: 0.04, Plan: 0.02, Judge: 0.03, Total: 0.59},
	}
	r.Config.Conversations = 3
	verdict.Decide(r)
	return r
}

func TestChartDataFromRun(t *testing.T) {
	r := hostileRun()
	d := summary.ChartData(r)

	if d.Facts == nil || d.Facts.Model != "sonnet" || d.Facts.JudgeModel != "haiku" || len(d.Facts.CLIs) != 1 || !d.Facts.CLIs[0].Mismatch || d.Facts.Costs.Plan != 0.02 {
		t.Errorf("facts = %+v", d.Facts)
	}
	if len(d.Rubric) != 2 || d.Rubric[0].Check == nil || d.Rubric[0].Check.Pattern != `census\.sh` {
		t.Errorf("rubric = %+v", d.Rubric)
	}
	if d.Stats == nil || len(d.Stats.PerTurn) != 4 {
		t.Fatalf("stats = %+v", d.Stats)
	}
	if r6 := d.Stats.PerTurn[1]; r6.Turn != 6 || r6.Passes != 2 || r6.N != 3 {
		t.Errorf("turn 6 pass rate = %+v, want 2 of 3", r6)
	}
	p := d.Conversations[0].Turns[5]
	if p.Result != "fail" || !p.Escape || len(p.Criteria) != 2 || p.Criteria[0].Text != "runs scripts/census.sh </script>" || p.Criteria[0].Source != "check" {
		t.Errorf("conv 1 turn 6 = %+v", p)
	}
	if len(p.Calls) != 1 || !p.Calls[0].IsError || !strings.HasPrefix(p.Calls[0].Input, `{"command":"sh scripts/census.sh`) {
		t.Errorf("conv 1 turn 6 calls = %+v, want the compact input", p.Calls)
	}
	if p.Task != "task of turn 6 "+payload {
		t.Errorf("conv 1 turn 6 task = %q", p.Task)
	}
	if f := d.Conversations[0].Turns[1]; f.Task != "" || f.Kind != "filler" || f.Status != "ok" {
		t.Errorf("a filler = %+v, want no task", f)
	}
	if a := d.Conversations[2].Turns[6]; a.Status != "timed-out" || a.Error != "timed out after 10m0s" {
		t.Errorf("the abandoned turn 7 = %+v", a)
	}
	if d.Conversations[2].Error != "turn 7: timed out after 10m0s" {
		t.Errorf("conv 3 error = %q", d.Conversations[2].Error)
	}

	// The chart draws it: the pass rate over three conversations.
	option, err := chart.OptionJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(option), `"name": "diluted pass rate"`) || !strings.Contains(string(option), `"name": "filler turns"`) {
		t.Error("the chart lacks the pass rate or the filler shading")
	}
}

// TestChartDataEscaping renders a run whose skill name, tool input, tool
// result and evidence hold script payloads, and checks that none of them
// reaches the page as markup.
func TestChartDataEscaping(t *testing.T) {
	d := summary.ChartData(hostileRun())
	var page []byte
	if chart.HasScript() {
		var buf bytes.Buffer
		if err := chart.Render(&buf, d); err != nil {
			t.Fatal(err)
		}
		page = buf.Bytes()
	} else {
		// Without the embedded echarts only the option and the report
		// can be rendered; they are what carries run text.
		option, err := chart.OptionJSON(d)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := chart.ReportHTML(d)
		if err != nil {
			t.Fatal(err)
		}
		page = append(option, rep...)
	}
	s := string(page)
	for _, bad := range []string{payload, "<script>alert", "</script>\"", "</script> ", "</script><"} {
		if strings.Contains(s, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if chart.HasScript() {
		if n := strings.Count(strings.ToLower(s), "</script"); n != 2 {
			t.Errorf("the page has %d </script, want 2 (echarts and the chart's own)", n)
		}
	}
	for _, want := range []string{
		`<tr><th>skill</th><td>stock-ledger &lt;script&gt;alert(1)&lt;/script&gt;&lt;/script&gt;</td></tr>`,
		`<pre>{&#34;command&#34;:&#34;sh scripts/census.sh &lt;script&gt;alert(1)&lt;/script&gt; &lt;/script&gt;&#34;}</pre>`,
		`<span class="flag">error</span> <pre>widgets 12 &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</pre>`,
		`<td>no Bash call matches &lt;script&gt;alert(1)&lt;/script&gt; &lt;/script&gt;</td>`,
		`<td class="r-error">TIMEOUT</td>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestChartDataReadableInput: run.json stores tool inputs as Go writes
// JSON, with < > & as \u003c \u003e \u0026; the report shows the
// characters, and leaves an escaped backslash followed by "u003e" alone.
func TestChartDataReadableInput(t *testing.T) {
	r := hostileRun()
	tr := r.Conversations[0].TurnAt(1)
	tr.ToolCalls = []record.Call{
		{Name: "Bash", Input: json.RawMessage(`{"command": "echo x \u003e\u003e ledger.log \u0026\u0026 printf '\\u003e' \u003C"}`)},
		{Name: "Bash", Input: json.RawMessage(`not json \u003e`)},
	}
	p := summary.ChartData(r).Conversations[0].Turns[0]
	if got, want := p.Calls[0].Input, `{"command":"echo x >> ledger.log && printf '\\u003e' <"}`; got != want {
		t.Errorf("input = %s, want %s", got, want)
	}
	if got, want := p.Calls[1].Input, `not json \u003e`; got != want {
		t.Errorf("input that is not JSON = %s, want it as it is: %s", got, want)
	}
}
