package summary

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/record"
)

func TestSuiteTable(t *testing.T) {
	s := &record.Suite{SchemaVersion: 1, Status: record.StatusCompleted, ExitCode: 1, Skills: []record.SuiteEntry{
		{Name: "a-skill", RunDir: "a-skill", ExitCode: 1, Verdict: "decay", Diluted: record.Rate{Passed: 3, Probes: 9},
			Fresh: record.Rate{Passed: 9, Probes: 9}, CostUSD: 1.25, EffectiveTurn: 6},
		{Name: "b\x1b]0;title\x07skill", RunDir: "b", Status: record.StatusError, ExitCode: 3, Error: "claude not found"},
	}}
	var b bytes.Buffer
	SuiteTable(&b, s, "runs/x-suite", false)
	out := b.String()
	for _, want := range []string{
		"vibe-test suite  2 skills, status completed",
		"|a-skill       |decay  |1   |3/9 (33%)|9/9 (100%)|6        |$1.2500|runs/x-suite/a-skill/chart.html|",
		"|b]0;titleskill|error  |3   |-        |-         |-        |$0.0000|-                              |",
		"b]0;titleskill: claude not found",
		"cost: $1.2500 in all",
		"suite exit code 1 (the worst of the skills'",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("a control character reached the table:\n%q", out)
	}

	s.Shard = &record.ShardPlan{Index: 2, Count: 3, Skills: []record.ShardSkill{{Name: "a-skill", Conversations: 9}},
		Units: []record.Unit{{Skill: "a-skill", Index: 2}, {Skill: "a-skill", Index: 5}, {Skill: "a-skill", Index: 8}}}
	s.ExitCode = 0
	b.Reset()
	SuiteTable(&b, s, "runs/x-suite", false)
	for _, want := range []string{"shard 2/3 (3 conversations of the suite's 9 conversations; verdicts here are partial", "shard exit code 0"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("shard table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSuiteTableStampsBypass: a skill whose gate was bypassed is stamped on
// the suite's first line and in its row, as a run's summary is.
func TestSuiteTableStampsBypass(t *testing.T) {
	s := &record.Suite{SchemaVersion: 1, Status: record.StatusCompleted, ExitCode: 2, Skills: []record.SuiteEntry{
		{Name: "held", RunDir: "held", ExitCode: 0, Verdict: "held"},
		{Name: "never", RunDir: "never", ExitCode: 2, Verdict: "does-not-work-fresh", GateBypassed: true},
	}}
	var b bytes.Buffer
	SuiteTable(&b, s, "runs/x-suite", false)
	first, _, _ := strings.Cut(b.String(), "\n")
	if first != "!! "+BypassBanner+" (never)" {
		t.Errorf("first line %q, want the bypass stamp naming the skill", first)
	}
	if !strings.Contains(b.String(), "does-not-work-fresh (gate bypassed)") {
		t.Errorf("the bypassed skill's row does not say so:\n%s", b.String())
	}
	// Its diluted count is over every conversation: the legend says so.
	const allOfThem = "diluted = probes passed in conversations whose baseline passed (in all, where the gate was bypassed);"
	if !strings.Contains(b.String(), allOfThem) {
		t.Errorf("the legend does not say a bypassed skill's diluted count is over all:\n%s", b.String())
	}
	s.Skills = s.Skills[:1]
	b.Reset()
	SuiteTable(&b, s, "runs/x-suite", false)
	if strings.Contains(b.String(), "BYPASSED") || strings.Contains(b.String(), "(in all,") {
		t.Errorf("stamp on a suite without a bypassed gate:\n%s", b.String())
	}
}

// A skill whose agent ran without the jail is stamped on the suite's
// table, as the bypass is and as its own summary says NO JAIL.
func TestSuiteTableStampsNoJail(t *testing.T) {
	s := &record.Suite{SchemaVersion: 1, Status: record.StatusCompleted, Skills: []record.SuiteEntry{
		{Name: "held", RunDir: "held", Verdict: "held", Jail: "bubblewrap"},
		{Name: "loose", RunDir: "loose", Verdict: "held", Jail: "none"},
	}}
	var b bytes.Buffer
	SuiteTable(&b, s, "runs/x-suite", false)
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "!! "+NoJailBanner+" (loose)" {
		t.Errorf("first line %q, want the NO JAIL stamp naming the skill", first)
	}
	s.Skills = s.Skills[:1]
	b.Reset()
	SuiteTable(&b, s, "runs/x-suite", false)
	if strings.Contains(b.String(), "NO JAIL") {
		t.Errorf("NO JAIL on a suite whose skills ran jailed:\n%s", b.String())
	}
}
