package app

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/conversation"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
)

// The flags-only tests: each command line becomes the options it yields, or
// the one-line error it returns, with nothing run (no file read, no claude
// process). What the options then do is the other tests' subject.

// flagCase is one command line and what parsing it should give: the options
// (want) or the error's text (wantErr).
type flagCase struct {
	name    string
	args    []string
	want    any
	wantErr string
}

func checkFlags(t *testing.T, cases []flagCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ch, err := parse(append([]string{"vibe-test"}, c.args...), IO{Stdout: &stdout, Stderr: &stderr})
			if c.wantErr != "" {
				if err == nil {
					t.Fatalf("no error, options %+v; want %q", ch.opts, c.wantErr)
				}
				if err.Error() != c.wantErr || exit.Code(err) != exit.Tool {
					t.Fatalf("error %q (exit %d), want %q (exit 3)", err, exit.Code(err), c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if ch.run == nil {
				t.Fatal("no command chosen")
			}
			if !reflect.DeepEqual(ch.opts, c.want) {
				t.Fatalf("options\n%s\nwant\n%s", fmt.Sprintf("%+v", ch.opts), fmt.Sprintf("%+v", c.want))
			}
			if stdout.Len() > 0 || stderr.Len() > 0 {
				t.Errorf("parsing printed %q %q", stdout.String(), stderr.String())
			}
		})
	}
}

// runWith is run's options for args with every flag at its default, as
// edit changes them.
func runWith(args []string, edit func(*RunOptions)) RunOptions {
	o := RunOptions{Settings: engine.Settings{
		Args: args, Conversations: 2, TurnTimeout: conversation.DefaultTurnTimeout, MaxRetries: 2,
		SessionMode: claude.DefaultSessionMode, Rule: record.RuleDilutedVsFresh, Alpha: 0.05, JudgeRepeats: 1,
		MaxConversations: 20, Effect: record.DefaultEffect, TurnRetries: 3, RetryBackoff: 10 * time.Second,
		Grace: engine.DefaultGrace,
	}}
	if len(args) > 0 {
		o.SkillPath = args[0]
	}
	if edit != nil {
		edit(&o)
	}
	return o
}

func TestRunFlags(t *testing.T) {
	skill := []string{"s/SKILL.md"}
	flags := func(f ...string) []string { return append(append([]string{}, skill...), f...) }
	checkFlags(t, []flagCase{
		{name: "defaults", args: skill, want: runWith(skill, nil)},
		{name: "the run command", args: append([]string{"run"}, skill...), want: runWith(skill, nil)},
		{name: "flags after the path", args: flags("--conversations", "4", "--concurrency", "2", "--out", "o", "--no-baseline-gate", "--keep-sandbox"),
			want: runWith(skill, func(o *RunOptions) {
				o.Conversations, o.Concurrency, o.OutDir, o.NoBaselineGate, o.KeepSandbox = 4, 2, "o", true, true
			})},
		{name: "a suite with a seed", args: []string{"--seed", "7", "a", "b"}, want: runWith([]string{"a", "b"}, func(o *RunOptions) {
			o.Seed, o.SeedSet = 7, true
		})},
		{name: "config, rubric, models", args: flags("--config", "c.yaml", "--rubric", "r.json", "--model", "opus", "--judge-model", "haiku", "--session", "resume"),
			want: runWith(skill, func(o *RunOptions) {
				o.ConfigPath, o.RubricPath, o.Model, o.JudgeModel, o.SessionMode = "c.yaml", "r.json", "opus", "haiku", "resume"
			})},
		{name: "agents", args: flags("--agent", "codex", "--judge-agent", "gemini"),
			want: runWith(skill, func(o *RunOptions) { o.Agent, o.JudgeAgent = "codex", "gemini" })},
		{name: "an unknown agent", args: flags("--agent", "cursor"), wantErr: `--agent "cursor": expected one of claude, codex, gemini`},
		{name: "an unknown judge agent", args: flags("--judge-agent", "gpt"), wantErr: `--judge-agent "gpt": expected one of claude, codex, gemini`},
		{name: "gemini cannot compact", args: flags("--agent", "gemini", "--compact-before", "2"),
			wantErr: "--compact-before asks for a compaction (before turn 8, probe 2), but --agent gemini cannot compact a session: drop it, or use --agent claude or codex"},
		{name: "tools kept whole", args: flags("--allowed-tools", "Bash(git add,commit:*) WebFetch", "--allowed-tools", "Read", "--pass-env", "HTTP_PROXY"),
			want: runWith(skill, func(o *RunOptions) {
				o.AllowedTools, o.PassEnv = []string{"Bash(git add,commit:*)", "WebFetch", "Read"}, []string{"HTTP_PROXY"}
			})},
		{name: "work fillers", args: flags("--fillers", "work"), want: runWith(skill, func(o *RunOptions) { o.FillerKind = "work" })},
		{name: "a fillers folder", args: flags("--fillers", "mine"), want: runWith(skill, func(o *RunOptions) { o.FillerKind, o.FillersDir = "passages", "mine" })},
		{name: "schedule", args: flags("--dilute-to", "50k,100k,150k", "--compact-before", "2,3", "--compact-at", "120k", "--max-fillers", "9"),
			want: runWith(skill, func(o *RunOptions) {
				o.DiluteTo, o.CompactBefore, o.CompactAt, o.MaxFillers = []int64{50000, 100000, 150000}, []int{2, 3}, 120000, 9
			})},
		{name: "rule, effect, repeats", args: flags("--rule", "any-probe-failed", "--effect", "0.2", "--judge-repeats", "3", "--control", "no-skill"),
			want: runWith(skill, func(o *RunOptions) {
				o.Rule, o.Effect, o.JudgeRepeats, o.Controls = record.RuleAnyProbeFailed, 0.2, 3, []string{"no-skill"}
			})},
		{name: "until decided", args: flags("--until-decided", "--max-conversations", "30", "--alpha", "0.01"),
			want: runWith(skill, func(o *RunOptions) { o.UntilDecided, o.MaxConversations, o.Alpha = true, 30, 0.01 })},
		{name: "limits", args: flags("--turn-timeout", "90s", "--max-retries", "0", "--max-budget-usd", "2.5", "--turn-retries", "0", "--retry-backoff", "1s", "--isolation", "none"),
			want: runWith(skill, func(o *RunOptions) {
				o.TurnTimeout, o.MaxRetries, o.MaxBudgetUSD, o.TurnRetries, o.RetryBackoff, o.Isolation = 90*time.Second, 0, 2.5, 0, time.Second, "none"
			})},
		{name: "a shard", args: flags("--shard", "2/3", "--seed", "1"), want: runWith(skill, func(o *RunOptions) {
			o.Shard, o.Shards, o.Seed, o.SeedSet = 2, 3, 1, true
		})},
		{name: "a shard's dry run needs no seed", args: flags("--shard", "2/3", "--dry-run"), want: runWith(skill, func(o *RunOptions) {
			o.Shard, o.Shards, o.DryRun = 2, 3, true
		})},
		{name: "output", args: flags("--json", "--junit", "j.xml", "--markdown", "m.md", "--no-color"), want: runWith(skill, func(o *RunOptions) {
			o.Output = Output{JSON: true, JUnit: "j.xml", Markdown: "m.md", NoColor: true}
		})},

		{name: "no path", args: nil, wantErr: "no skill given: expected a path to a SKILL.md or its folder"},
		{name: "unknown flag", args: flags("--nope"), wantErr: "--nope: no such flag (see vibe-test --help)"},
		{name: "--gate is gone", args: flags("--gate", "any"), wantErr: "--gate: no such flag (see vibe-test --help)"},
		{name: "--noise-floor is gone", args: flags("--noise-floor", "0.1"), wantErr: "--noise-floor: no such flag (see vibe-test --help)"},
		{name: "--beta is gone", args: flags("--beta", "0.2"), wantErr: "--beta: no such flag (see vibe-test --help)"},
		{name: "not a number", args: flags("--conversations", "many"), wantErr: `--conversations: "many", expected a whole number (see vibe-test --help)`},
		{name: "a fraction", args: flags("--judge-repeats", "1.5"), wantErr: `--judge-repeats: "1.5", expected a whole number (see vibe-test --help)`},
		{name: "not an amount", args: flags("--max-budget-usd", "$5"), wantErr: `--max-budget-usd: "$5", expected a number (see vibe-test --help)`},
		{name: "a duration without its unit", args: flags("--turn-timeout", "90"), wantErr: `--turn-timeout: "90", expected a duration such as 90s or 10m (see vibe-test --help)`},
		{name: "a seed too large", args: flags("--seed", "99999999999999999999"), wantErr: `--seed: "99999999999999999999", out of range (see vibe-test --help)`},
		{name: "a switch given a word", args: flags("--dry-run=maybe"), wantErr: `--dry-run: "maybe", expected true or false (see vibe-test --help)`},
		{name: "a flag without its value", args: []string{"--seed"}, wantErr: `--seed: no value given, expected one after it (see vibe-test --help)`},
		{name: "conversations", args: flags("--conversations", "0"), wantErr: "--conversations: 0, expected 1 to 200"},
		{name: "concurrency", args: flags("--concurrency", "-1"), wantErr: "--concurrency: -1, expected 0 (all) or more"},
		{name: "turn timeout", args: flags("--turn-timeout", "0s"), wantErr: "--turn-timeout: 0s, expected a positive duration"},
		{name: "max retries", args: flags("--max-retries", "21"), wantErr: "--max-retries: 21, expected 0 to 20"},
		{name: "session mode", args: flags("--session", "sometimes"), wantErr: `--session: "sometimes", expected "interactive" or "resume"`},
		{name: "rule", args: flags("--rule", "vibes"), wantErr: `--rule: "vibes", expected "diluted-vs-fresh" or "any-probe-failed"`},
		{name: "alpha without a test", args: flags("--rule", "any-probe-failed", "--alpha", "0.01"), wantErr: "--alpha only applies with --rule diluted-vs-fresh (the any-probe-failed rule is not a test and has no level)"},
		{name: "alpha", args: flags("--alpha", "0.5"), wantErr: "--alpha: 0.5, expected a level between 0 and 0.5"},
		{name: "cap without until-decided", args: flags("--max-conversations", "5"), wantErr: "--max-conversations only applies with --until-decided"},
		{name: "effect", args: flags("--effect", "2"), wantErr: "--effect: 2, expected a drop between 0 and 1 (0.3 = 30 points)"},
		{name: "until-decided needs the test", args: flags("--until-decided", "--rule", "any-probe-failed"), wantErr: "--until-decided needs --rule diluted-vs-fresh"},
		{name: "cap below the batch", args: flags("--until-decided", "--conversations", "4", "--max-conversations", "3"), wantErr: "--max-conversations: 3, expected at least --conversations (4, the batch size)"},
		{name: "cap too high", args: flags("--until-decided", "--max-conversations", "201"), wantErr: "--max-conversations: 201, expected at most 200"},
		{name: "until-decided and a control", args: flags("--until-decided", "--control", "no-skill"), wantErr: "--control and --until-decided do not go together: controls are sized by --conversations"},
		{name: "undiluted control is gone", args: flags("--control", "undiluted"), wantErr: `--control: "undiluted", expected "no-skill"`},
		{name: "judge repeats", args: flags("--judge-repeats", "0"), wantErr: "--judge-repeats: 0, expected 1 to 9"},
		{name: "budget", args: flags("--max-budget-usd", "-1"), wantErr: "--max-budget-usd: -1, expected a positive amount"},
		// NaN and Inf passed `< 0`-style checks: the run spent its budget,
		// then run.json could not be encoded (0 bytes, the run lost).
		{name: "alpha NaN", args: flags("--alpha", "NaN"), wantErr: "--alpha: NaN, expected a level between 0 and 0.5"},
		{name: "budget zero", args: flags("--max-budget-usd", "0"), wantErr: "--max-budget-usd: 0, expected a positive amount (leave it out for no limit)"},
		{name: "budget NaN", args: flags("--max-budget-usd", "NaN"), wantErr: "--max-budget-usd: NaN, expected a positive amount"},
		{name: "budget Inf", args: flags("--max-budget-usd", "Inf"), wantErr: "--max-budget-usd: +Inf, expected a positive amount"},
		{name: "pass-env with a value", args: flags("--pass-env", "DBPW=verysecretvalue42"), wantErr: `--pass-env: "DBPW=…", expected a variable's name (letters, digits, _), whose value the agent then gets`},
		{name: "pass-env empty", args: flags("--pass-env", ""), wantErr: `--pass-env: "", expected a variable's name (letters, digits, _), whose value the agent then gets`},
		{name: "negative backoff", args: flags("--retry-backoff", "-1s"), wantErr: "--retry-backoff: -1s, expected a wait of 0 or more"},
		{name: "isolation", args: flags("--isolation", "bogus"), wantErr: `--isolation: "bogus", expected "jail" or "none"`},
		{name: "turn retries", args: flags("--turn-retries", "11"), wantErr: "--turn-retries: 11, expected 0 to 10"},
		{name: "levels not ascending", args: flags("--dilute-to", "50k,20k,90k"), wantErr: "--dilute-to 50k,20k,90k: 20k after 50k, expected ascending levels"},
		{name: "no such probe", args: flags("--compact-before", "4"), wantErr: `--compact-before: "4" is not a probe number, expected 1 to 3 (in the fixed schedule probe 1 is turn 6, 2 is turn 8, 3 is turn 10)`},
		{name: "compact level", args: flags("--compact-at", "lots"), wantErr: `--compact-at: "lots" is not a token count, expected a number such as 50000 or 50k`},
		{name: "filler cap", args: flags("--max-fillers", "0"), wantErr: "--max-fillers: 0, expected 1 to 1000"},
		{name: "bad shard", args: flags("--shard", "3/2", "--seed", "1"), wantErr: `--shard: "3/2", expected i/n with 1 <= i <= n (e.g. 2/3)`},
		{name: "shard without seed", args: flags("--shard", "1/2"), wantErr: "--shard needs --seed N: every shard must pick the same fillers for the same conversation, so their runs can be merged"},
		{name: "shard and until-decided", args: flags("--shard", "1/2", "--seed", "1", "--until-decided"), wantErr: "--shard: --until-decided and --control do not go with shards (each shard holds a fixed share of the conversations)"},
		{name: "dry run as JSON", args: flags("--dry-run", "--json"), wantErr: "--json does not go with --dry-run, which prints an estimate for people"},
	})
}

func TestDemoFlags(t *testing.T) {
	checkFlags(t, []flagCase{
		{name: "defaults", args: []string{"demo"}, want: DemoOptions{Personas: []string{"decaying", "steady"}, SessionMode: claude.DefaultSessionMode}},
		{name: "all flags", args: []string{"demo", "--personas", "never,noisy,steady", "--out", "o", "--keep-sandbox", "--session", "resume"},
			want: DemoOptions{Out: "o", Personas: []string{"never", "noisy", "steady"}, KeepSandbox: true, SessionMode: "resume"}},
		{name: "a stray argument", args: []string{"demo", "./my-skill"}, wantErr: `demo: "./my-skill", expected no argument (the demo brings its own skill; --help lists its flags)`},
		{name: "another agent", args: []string{"demo", "--agent", "gemini"}, want: DemoOptions{Personas: []string{"decaying", "steady"}, SessionMode: claude.DefaultSessionMode, Agent: "gemini"}},
		{name: "an unknown agent", args: []string{"demo", "--agent", "aider"}, wantErr: `--agent "aider": expected one of claude, codex, gemini`},
		{name: "session mode", args: []string{"demo", "--session", "sometimes"}, wantErr: `--session: "sometimes", expected "interactive" or "resume"`},
		{name: "a run's flag", args: []string{"demo", "--conversations", "3"}, wantErr: "--conversations: no such flag (see vibe-test demo --help)"},
	})
}

func TestResumeFlags(t *testing.T) {
	budget := 1.5
	checkFlags(t, []flagCase{
		{name: "defaults", args: []string{"resume", "d"}, want: ResumeOptions{Dir: "d", ResumeSettings: engine.ResumeSettings{TurnRetries: 3, RetryBackoff: 10 * time.Second}}},
		{name: "all flags", args: []string{"resume", "d", "--max-budget-usd", "1.5", "--turn-retries", "1", "--retry-backoff", "2s", "--json", "--no-color"},
			want: ResumeOptions{Dir: "d", ResumeSettings: engine.ResumeSettings{TurnRetries: 1, RetryBackoff: 2 * time.Second, MaxBudgetUSD: &budget}, Output: Output{JSON: true, NoColor: true}}},
		{name: "no folder", args: []string{"resume"}, wantErr: "resume: expected one RUN_DIR, got 0 arguments"},
		{name: "two folders", args: []string{"resume", "a", "b"}, wantErr: "resume: expected one RUN_DIR, got 2 arguments"},
		// Resume checked none of its flags: a negative budget was recorded.
		{name: "budget", args: []string{"resume", "d", "--max-budget-usd", "-5"}, wantErr: "--max-budget-usd: -5, expected a positive amount"},
		{name: "budget NaN", args: []string{"resume", "d", "--max-budget-usd", "NaN"}, wantErr: "--max-budget-usd: NaN, expected a positive amount"},
		{name: "budget zero", args: []string{"resume", "d", "--max-budget-usd", "0"}, wantErr: "--max-budget-usd: 0, expected a positive amount (leave it out for no limit)"},
		{name: "retries", args: []string{"resume", "d", "--turn-retries", "999"}, wantErr: "--turn-retries: 999, expected 0 to 10"},
		{name: "backoff", args: []string{"resume", "d", "--retry-backoff", "-1s"}, wantErr: "--retry-backoff: -1s, expected a wait of 0 or more"},
	})
}

func TestReportFlags(t *testing.T) {
	checkFlags(t, []flagCase{
		{name: "defaults", args: []string{"report", "d"}, want: ReportOptions{Dir: "d"}},
		{name: "output", args: []string{"report", "d", "--junit", "j.xml", "--markdown", "m.md"}, want: ReportOptions{Dir: "d", Output: Output{JUnit: "j.xml", Markdown: "m.md"}}},
		{name: "no folder", args: []string{"report"}, wantErr: "report: expected one RUN_DIR, got 0 arguments"},
		{name: "a run's flag", args: []string{"report", "d", "--seed", "1"}, wantErr: "--seed: no such flag (see vibe-test report --help)"},
	})
}

func TestRejudgeFlags(t *testing.T) {
	empty, haiku := "", "haiku"
	checkFlags(t, []flagCase{
		{name: "defaults", args: []string{"rejudge", "d"}, want: RejudgeOptions{Dir: "d"}},
		{name: "another rubric and judge", args: []string{"rejudge", "d", "--rubric", "r.json", "--judge-model", "haiku"}, want: RejudgeOptions{Dir: "d", Rubric: "r.json", JudgeModel: &haiku}},
		{name: "the CLI's default judge", args: []string{"rejudge", "d", "--judge-model", ""}, want: RejudgeOptions{Dir: "d", JudgeModel: &empty}},
		{name: "no folder", args: []string{"rejudge"}, wantErr: "rejudge: expected one RUN_DIR, got 0 arguments"},
	})
}

func TestMergeFlags(t *testing.T) {
	checkFlags(t, []flagCase{
		{name: "defaults", args: []string{"merge", "a", "b"}, want: MergeOptions{Shards: []string{"a", "b"}}},
		{name: "all flags", args: []string{"merge", "a", "--out", "o", "--json", "--junit", "j.xml", "--markdown", "m.md", "--no-color"},
			want: MergeOptions{Out: "o", Shards: []string{"a"}, Output: Output{JSON: true, JUnit: "j.xml", Markdown: "m.md", NoColor: true}}},
		{name: "no shard", args: []string{"merge", "--out", "o"}, wantErr: "merge: expected every shard's folder (vibe-test merge --out DIR SHARD_DIR...)"},
	})
}

func TestCompareFlags(t *testing.T) {
	checkFlags(t, []flagCase{
		{name: "defaults", args: []string{"compare", "a", "b"}, want: CompareOptions{Runs: []string{"a", "b"}, Alpha: 0.05}},
		{name: "two bases", args: []string{"compare", "a", "b", "c", "--alpha", "0.1"}, want: CompareOptions{Runs: []string{"a", "b", "c"}, Alpha: 0.1}},
		{name: "one run", args: []string{"compare", "a"}, wantErr: "compare: expected BASE_RUN [BASE_RUN2 ...] CANDIDATE_RUN, got 1 arguments"},
		{name: "no run", args: []string{"compare"}, wantErr: "compare: expected BASE_RUN [BASE_RUN2 ...] CANDIDATE_RUN, got 0 arguments"},
		{name: "alpha", args: []string{"compare", "a", "b", "--alpha", "0"}, wantErr: "compare: --alpha: 0, expected a level between 0 and 0.5"},
		// NaN turned a REJECT into an ACCEPT.
		{name: "alpha NaN", args: []string{"compare", "a", "b", "--alpha", "NaN"}, wantErr: "compare: --alpha: NaN, expected a level between 0 and 0.5"},
	})
}

func TestInitFlags(t *testing.T) {
	checkFlags(t, []flagCase{
		{name: "defaults", args: []string{"init", "s"}, want: InitOptions{Skill: "s"}},
		{name: "all flags", args: []string{"init", "s", "--force", "--judge-model", "haiku"}, want: InitOptions{Skill: "s", Force: true, JudgeModel: "haiku"}},
		{name: "no path", args: []string{"init"}, wantErr: "init: expected one path to a SKILL.md or its folder, got 0 arguments"},
		{name: "two paths", args: []string{"init", "a", "b"}, wantErr: "init: expected one path to a SKILL.md or its folder, got 2 arguments"},
	})
}
