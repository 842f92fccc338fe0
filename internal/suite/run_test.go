package suite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// Skills end side by side, so what a Show hook says (a chart it could not
// write) goes to the skill's own stderr: whole lines, each prefixed with
// the skill's name, never two skills' bytes interleaved (under -race, a
// hook writing to the suite's stderr unlocked is a reported race).
func TestShowWritesOnTheSkillsOwnLines(t *testing.T) {
	const lines = 200
	idx := &record.Suite{Skills: []record.SuiteEntry{{Name: "alpha"}, {Name: "beta"}}}
	var jobs []job
	for i := range idx.Skills {
		jobs = append(jobs, job{i: i, run: func(_ engine.IO, eh engine.Hooks) (*record.Run, error) {
			for n := 0; n < lines; n++ {
				if err := eh.Show("dir", nil); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}})
	}
	var stdout, stderr bytes.Buffer
	show := func(_ string, _ *record.Run, w io.Writer) error {
		_, err := fmt.Fprintf(w, "vibe-test: chart.html could not be written\n")
		return err
	}
	if err := runSide(context.Background(), t.TempDir(), idx, jobs, engine.IO{Stdout: &stdout, Stderr: &stderr}, Hooks{Show: show}); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
		name, rest, ok := strings.Cut(l, " ")
		if !ok || rest != "vibe-test: chart.html could not be written" {
			t.Fatalf("line %q: want [skill] and the hook's whole line", l)
		}
		count[name]++
	}
	if count["[alpha]"] != lines || count["[beta]"] != lines || len(count) != 2 {
		t.Errorf("lines per skill %v, want %d each for [alpha] and [beta]", count, lines)
	}
}

// A suite killed before any skill's run began resumed as completed, exit
// 0: each skill pending, none measured. Resume marks them (exit 3).
func TestResumeCountsSkillsThatNeverBegan(t *testing.T) {
	dir := t.TempDir()
	idx := &record.Suite{SchemaVersion: record.SuiteSchemaVersion, Status: record.StatusRunning, Seed: 7, Skills: []record.SuiteEntry{
		{Name: "a", Path: "/src/a/SKILL.md", RunDir: "a", Status: record.StatusPending},
		{Name: "b", Path: "/src/b/SKILL.md", RunDir: "b", Status: record.StatusPending},
	}}
	if err := record.SaveSuite(dir, idx); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	got, err := Resume(context.Background(), dir, engine.ResumeSettings{}, engine.IO{Stdout: io.Discard, Stderr: &stderr}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ExitCode != 3 || got.Status != record.StatusError || got.Skills[1].ExitCode != 3 {
		t.Errorf("resumed: status %s, exit %d, skills %+v\n%s", got.Status, got.ExitCode, got.Skills, stderr.String())
	}
}

// The merged run carries every shard's stamps: a shard whose gate was
// bypassed or whose agent ran without the jail makes the merge say so
// (the first shard's alone were kept: "jail": "bubblewrap" and no
// bypass banner, with two thirds of the conversations unjailed).
func TestMergeKeepsEveryShardsStamps(t *testing.T) {
	a, b := heldRun(t), heldRun(t)
	a.Conversations, a.Fresh = a.Conversations[:2], a.Fresh[:2]
	b.Conversations, b.Fresh = b.Conversations[2:], b.Fresh[2:]
	a.Jail, a.GateBypassed = jail.Bubblewrap, false
	b.Jail, b.JailNote, b.GateBypassed = jail.None, "--isolation none", true
	m, err := mergeRuns([]*record.Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.Jail != jail.None || !strings.Contains(m.JailNote, "--isolation none") || !m.GateBypassed {
		t.Errorf("merged: jail %q (%q), gate bypassed %v", m.Jail, m.JailNote, m.GateBypassed)
	}
}

// A merge refuses shards that measured differently, saying what differs:
// the judge's prompt (accepted before), and which setting of the config
// (the refusal named none: "config (...) differs").
func TestMergeSaysWhatDiffers(t *testing.T) {
	a, b := heldRun(t), heldRun(t)
	b.Versions.JudgePrompt = "judge-v0"
	if got := differs(a, b); !strings.Contains(got, "judge prompt (judge-v0, not "+a.Versions.JudgePrompt+")") {
		t.Errorf("another judge prompt: %q", got)
	}
	b = heldRun(t)
	b.Config.Alpha = 0.1
	if got := differs(a, b); !strings.Contains(got, "config.alpha is 0.1 here, 0.05 there") {
		t.Errorf("another alpha: %q", got)
	}
	if got := differs(a, heldRun(t)); got != "" {
		t.Errorf("the same run differs: %q", got)
	}
	// The fixture's contents, at whatever path: they were not compared.
	a.Plan.Fixture, a.Plan.FixtureHash = "/ci/one/fixture", "aaaa1111"
	b = heldRun(t)
	b.Plan.Fixture, b.Plan.FixtureHash = "/ci/two/fixture", "bbbb2222"
	if got := differs(a, b); got != "fixture contents (hash bbbb2222, not aaaa1111)" {
		t.Errorf("another fixture's contents: %q", got)
	}
	b.Plan.FixtureHash = a.Plan.FixtureHash
	if got := differs(a, b); got != "" {
		t.Errorf("the same fixture at another path: %q", got)
	}
	// A shard from before fixtures were hashed is compared as before.
	b.Plan.FixtureHash = ""
	if got := differs(a, b); got != "" {
		t.Errorf("a shard without a fixture hash: %q", got)
	}
	a = heldRun(t)
	// How a machine rides out errors is not what was measured.
	b = heldRun(t)
	b.Config.MaxRetries, b.Config.TurnTimeout = a.Config.MaxRetries+3, "15m0s"
	if got := differs(a, b); got != "" {
		t.Errorf("shards differing in --max-retries and --turn-timeout only: %q", got)
	}
}

// heldRun is a fresh copy of the recorded "held" run's record.
func heldRun(t *testing.T) *record.Run {
	t.Helper()
	r, err := record.Load(testenv.RecordedRun(t, "held"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A shard plan that differs is named by what differs, not printed as Go
// structs ({Name:dowel-ledger Hash:c161c6a0... Conversations:2} vs ...).
func TestSkillsDiffNamesTheDifference(t *testing.T) {
	a := []record.ShardSkill{{Name: "dowel-ledger", Hash: "aaaa1111aaaa1111", Conversations: 3}, {Name: "stock-ledger", Hash: "cccc", Conversations: 3}}
	for _, c := range []struct {
		b    []record.ShardSkill
		want string
	}{
		{[]record.ShardSkill{{Name: "dowel-ledger", Hash: "aaaa1111aaaa1111", Conversations: 2}, a[1]}, "skill dowel-ledger with 2 conversations, not 3"},
		{[]record.ShardSkill{{Name: "dowel-ledger", Hash: "bbbb2222bbbb2222", Conversations: 3}, a[1]}, "skill dowel-ledger's hash bbbb2222bbbb, not aaaa1111aaaa"},
		{[]record.ShardSkill{a[0], {Name: "sprocket-ledger", Hash: "cccc", Conversations: 3}}, "skill sprocket-ledger where it has stock-ledger"},
		{a[:1], "no skill stock-ledger"},
	} {
		if got := skillsDiff(a, c.b); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
