package app

import (
	"reflect"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/eval"
)

func TestEvalFlags(t *testing.T) {
	base := func(f func(*EvalOptions)) EvalOptions {
		o := EvalOptions{Settings: eval.Settings{
			SkillPath: "./s", Rule: "paired", Alpha: 0.05, Margin: 0.1, Concurrency: 4, Timeout: 10 * time.Minute,
			MaxRetries: 2, Grace: engine.DefaultGrace, Args: []string{"./s"},
		}}
		if f != nil {
			f(&o)
		}
		return o
	}
	checkFlags(t, []flagCase{
		{name: "defaults", args: []string{"eval", "./s"}, want: base(nil)},
		{name: "baseline", args: []string{"eval", "./s", "--baseline", "v1", "--control", "empty", "--repeats", "2", "--effort", "high", "--tools", "Read,Grep"},
			want: base(func(o *EvalOptions) {
				o.Baseline, o.Control, o.Repeats, o.Effort, o.Tools = "v1", true, 2, "high", []string{"Read", "Grep"}
			})},
		{name: "grid as words", args: []string{"eval", "./s", "--against", "v1", "--grid", "model=opus,sonnet", "effort=medium,high"},
			want: base(func(o *EvalOptions) {
				o.Against = "v1"
				o.Args = []string{"./s", "effort=medium,high"}
				o.Grid = []eval.Point{{Model: "opus", Effort: "medium"}, {Model: "opus", Effort: "high"}, {Model: "sonnet", Effort: "medium"}, {Model: "sonnet", Effort: "high"}}
			})},
		{name: "check alone", args: []string{"eval", "--check", "--cases", "c"}, want: base(func(o *EvalOptions) {
			o.SkillPath, o.Args, o.CasesDir, o.Check = "", []string{}, "c", true
		})},
		{name: "agents", args: []string{"eval", "./s", "--agent", "codex", "--judge-agent", "gemini"},
			want: base(func(o *EvalOptions) { o.Agent, o.JudgeAgent = "codex", "gemini" })},
		{name: "empty agent", args: []string{"eval", "./s", "--agent", ""}, wantErr: `--agent "": expected one of claude, codex, gemini`},
		{name: "bad control", args: []string{"eval", "./s", "--control", "none"}, wantErr: `--control: "none", expected "empty"`},
		// --json is one JSON object on stdout; these printed text there.
		{name: "json with check", args: []string{"eval", "--check", "--cases", "./c", "--json"}, wantErr: "--json does not go with --check, which prints its findings for people"},
		{name: "json with dry run", args: []string{"eval", "./s", "--dry-run", "--json"}, wantErr: "--json does not go with --dry-run, which prints its findings for people"},
		{name: "bad effort", args: []string{"eval", "./s", "--effort", "huge"}, wantErr: `--effort: "huge", expected one of low, medium, high, xhigh, max`},
		{name: "bad rule", args: []string{"eval", "./s", "--rule", "vibes"}, wantErr: `--rule: "vibes", expected paired or seed`},
		{name: "two skills", args: []string{"eval", "./a", "./b"}, wantErr: "eval: expected one skill, got 2 arguments"},
		{name: "alpha NaN", args: []string{"eval", "./s", "--alpha", "NaN"}, wantErr: "--alpha: NaN, expected a level between 0 and 0.5"},
		{name: "margin NaN", args: []string{"eval", "./s", "--margin", "NaN"}, wantErr: "--margin: NaN, expected a drop between 0 and 1 (0.1 = ten points of the total)"},
		{name: "empty against", args: []string{"eval", "./s", "--against", ""}, wantErr: "--against: empty, expected a baseline's name (a folder in the case set's baselines/)"},
		{name: "empty baseline", args: []string{"eval", "./s", "--baseline="}, wantErr: "--baseline: empty, expected a baseline's name (a folder in the case set's baselines/)"},
		{name: "bad grid axis", args: []string{"eval", "./s", "--against", "v1", "--grid", "temperature=1"}, wantErr: `--grid: axis "temperature", expected model= or effort=`},
	})
}

func TestParseGrid(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   []eval.Point
	}{
		{[]string{"model=opus,sonnet,effort=medium"}, []eval.Point{{Model: "opus", Effort: "medium"}, {Model: "sonnet", Effort: "medium"}}},
		// urfave/cli splits a value at its commas: the pieces continue the axis.
		{[]string{"model=opus", "sonnet"}, []eval.Point{{Model: "opus"}, {Model: "sonnet"}}},
		{[]string{"effort=low,high"}, []eval.Point{{Effort: "low"}, {Effort: "high"}}},
	} {
		got, err := ParseGrid(c.values)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseGrid(%q) = %+v, %v; want %+v", c.values, got, err, c.want)
		}
	}
	for _, bad := range [][]string{{"opus"}, {"model="}, {"model=a", "model=b"}} {
		if _, err := ParseGrid(bad); err == nil {
			t.Errorf("ParseGrid(%q): no error", bad)
		}
	}
}
