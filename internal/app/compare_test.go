package app

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// synthConv is one synthetic conversation for compare's unit tests.
type synthConv struct {
	// turns are the results at turns 1, 6, 8 and 10: p pass, f fail,
	// e judge-error, - not run.
	turns string
	// crit gives a criterion its own results at the same turns (p, f, n for
	// n/a) where they differ from the turn's.
	crit map[string]string
}

func convs(specs ...string) []synthConv {
	out := make([]synthConv, len(specs))
	for i, s := range specs {
		out[i] = synthConv{turns: s}
	}
	return out
}

var synthCriteria = []string{"runs-census", "appends-ledger", "no-ledger-rewrite", "answers-from-census"}

// writeRun saves a completed run of the named skill whose conversations
// are cs, with a rubric of the given criteria, and returns its folder.
func writeRun(t *testing.T, name, hash string, criteria []string, cs []synthConv) string {
	t.Helper()
	r := &record.Run{
		SchemaVersion: record.SchemaVersion,
		Status:        record.StatusCompleted,
		StartedAt:     time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
		Skill:         record.Skill{Name: name, Path: "/skills/" + name, Hash: hash},
		Config:        record.Config{Conversations: len(cs)},
		Rubric:        &rubric.Rubric{},
	}
	for _, id := range criteria {
		r.Rubric.Criteria = append(r.Rubric.Criteria, rubric.Criterion{ID: id, Kind: rubric.Must, Text: id})
	}
	word := map[byte]string{'p': judge.Pass, 'f': judge.Fail, 'e': judge.JudgeError, 'n': "n/a"}
	for i, sc := range cs {
		c := record.Conversation{Index: i + 1, Status: record.StatusCompleted}
		for k, n := range []int{1, 6, 8, 10} {
			ch := sc.turns[k]
			if ch == '-' {
				continue
			}
			v := &judge.Verdict{Result: word[ch], Attempts: 1}
			if ch != 'e' {
				for _, id := range criteria {
					res := word[ch]
					if own, ok := sc.crit[id]; ok {
						res = word[own[k]]
					}
					v.Criteria = append(v.Criteria, judge.CriterionVerdict{ID: id, Kind: rubric.Must, Result: res, Source: "judge"})
				}
			}
			kind := "probe"
			if n == 1 {
				kind = "base"
			}
			c.Turns = append(c.Turns, record.Turn{Turn: n, Kind: kind, Status: record.TurnOK, Verdict: v})
		}
		r.Conversations = append(r.Conversations, c)
	}
	dir := t.TempDir()
	if err := record.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

// compareMain runs `vibe-test compare dirs...` through Main.
func compareMain(t *testing.T, dirs ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	args := append([]string{"vibe-test", "compare"}, dirs...)
	code = Main(context.Background(), args, IO{Env: os.Environ(), Stdout: &out, Stderr: &errb})
	t.Logf("exit %d\n%s\n%s", code, out.String(), errb.String())
	return code, out.String(), errb.String()
}

// Two base runs whose totals vary: pooled {1, .75, 1, .75, 1, .75}, mean
// 0.875, SD sqrt(6 x 0.125^2 / 5) = 0.1369; every criterion 21/24 = 0.875.
func noisyBases(t *testing.T) (string, string) {
	t.Helper()
	a := writeRun(t, "stock-ledger", "hash-v1", synthCriteria, convs("pppp", "pppf", "pppp"))
	b := writeRun(t, "stock-ledger", "hash-v1", synthCriteria, convs("pppf", "pppp", "pppf"))
	return a, b
}

// row is a table row of compare's output, its cells after the label joined
// by single spaces ("" when there is no such row).
func row(out, label string) string {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, label+" "); ok {
			return strings.Join(strings.Fields(rest), " ")
		}
	}
	return ""
}

const totalLabel = "total (turns passed)"

func mustContain(t *testing.T, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("output lacks %q", w)
		}
	}
}

func TestCompareAccept(t *testing.T) {
	t.Parallel()
	a, b := noisyBases(t)
	cand := writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("pppp", "pppf", "pppf"))
	code, out, _ := compareMain(t, a, b, cand)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	// Base shares {1, .75, 1, .75, 1, .75}, mean 0.875; candidate {1, .75,
	// .75}, mean 0.833: a drop of 0.042, far inside the noise.
	mustContain(t, out, "adjusted for all 5 measures (maxT)", "as expected between versions", "ACCEPT")
	if got := row(out, totalLabel); !strings.HasPrefix(got, "0.875 (n=6) 0.833 (n=3) +0.042 ") || !strings.HasSuffix(got, " pass") {
		t.Errorf("total row %q", got)
	}
	if strings.Contains(out, "One base run") {
		t.Error("two base runs printed the one-base note")
	}
}

func TestCompareRejectOnTotal(t *testing.T) {
	t.Parallel()
	a, b := noisyBases(t)
	// Turns fail while every criterion still passes: only the total can
	// reject. Candidate shares {.25, .5, .25, .25, .5, .25}, mean 0.333.
	allPass := map[string]string{}
	for _, id := range synthCriteria {
		allPass[id] = "pppp"
	}
	var cs []synthConv
	for _, turns := range []string{"pfff", "ppff", "pfff", "pfff", "ppff", "pfff"} {
		cs = append(cs, synthConv{turns: turns, crit: allPass})
	}
	cand := writeRun(t, "stock-ledger", "hash-v2", synthCriteria, cs)
	code, out, errOut := compareMain(t, a, b, cand)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	mustContain(t, out, "REJECT")
	if got := row(out, totalLabel); !strings.HasPrefix(got, "0.875 (n=6) 0.333 (n=6) +0.542 ") || !strings.HasSuffix(got, " FAIL") {
		t.Errorf("total row %q", got)
	}
	if strings.Count(out, " FAIL\n") != 1 {
		t.Error("want only the total row to fail")
	}
	mustContain(t, errOut, "candidate rejected: total 0.333 vs base 0.875")
}

func TestCompareRejectOnOneCriterion(t *testing.T) {
	t.Parallel()
	// The base always answered from the census; the candidate never does,
	// though every turn passes (a should criterion does not fail a turn),
	// so the total holds and the criterion alone rejects.
	never := map[string]string{"answers-from-census": "ffff"}
	base := writeRun(t, "stock-ledger", "hash-v1", synthCriteria, convs("pppp", "pppp", "pppp", "pppp"))
	cand := writeRun(t, "stock-ledger", "hash-v2", synthCriteria, []synthConv{
		{turns: "pppp", crit: never}, {turns: "pppp", crit: never}, {turns: "pppp", crit: never}, {turns: "pppp", crit: never}})
	code, out, errOut := compareMain(t, base, cand)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	mustContain(t, out, "REJECT")
	if got := row(out, "answers-from-census"); !strings.HasPrefix(got, "1.000 (n=4) 0.000 (n=4) +1.000 ") || !strings.HasSuffix(got, " FAIL") {
		t.Errorf("criterion row %q", got)
	}
	mustContain(t, errOut, "candidate rejected: answers-from-census 0.000 vs base 1.000")
	if strings.Contains(errOut, "total") {
		t.Error("the total should have held")
	}
}

// One failed turn among eight is not a drop the rule may call: seed 000's
// per-criterion bar with a base rate of 1 rejected it (margin 0), which is
// how an unchanged skill came to be rejected half the time.
func TestCompareOneSlipIsNoise(t *testing.T) {
	t.Parallel()
	a := writeRun(t, "stock-ledger", "hash-v1", synthCriteria, convs("pppp", "pppp"))
	b := writeRun(t, "stock-ledger", "hash-v1", synthCriteria, convs("pppp", "pppp"))
	// Three candidate conversations: against four, 2 could give no p-value
	// below 1/15, and compare cannot decide there.
	same := writeRun(t, "stock-ledger", "hash-v1", synthCriteria, convs("pppp", "pppp", "pppp"))
	code, out, _ := compareMain(t, a, b, same)
	if code != 0 {
		t.Fatalf("identical candidate: exit %d, want 0", code)
	}
	mustContain(t, out, "same skill content as the base", "ACCEPT")
	if code, _, _ := compareMain(t, a, b, writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("pppp", "pppf", "pppp"))); code != 0 {
		t.Fatalf("one slip: exit %d, want 0", code)
	}
	if code, _, _ := compareMain(t, a, b, writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("ffff", "ffff", "ffff", "ffff"))); code != 1 {
		t.Fatalf("a collapse: exit %d, want 1", code)
	}
}

func TestCompareOneBaseNote(t *testing.T) {
	t.Parallel()
	a, _ := noisyBases(t)
	cand := writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("pppp", "pppp", "pppp", "pppp"))
	code, out, _ := compareMain(t, a, cand)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	mustContain(t, out, "against 1 base run", "One base run: run-to-run variation (different days, API drift) is not in its spread")
}

func TestCompareRubricMismatch(t *testing.T) {
	t.Parallel()
	a, b := noisyBases(t)
	candCriteria := []string{"runs-census", "appends-ledger", "no-ledger-rewrite", "cites-census-line"}
	cand := writeRun(t, "stock-ledger", "hash-v2", candCriteria, convs("pppp", "pppf", "pppp"))
	code, out, _ := compareMain(t, a, b, cand)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (compared on the shared criteria)", code)
	}
	mustContain(t, out, "Criteria not compared (a rubric that differs",
		"answers-from-census: not in the rubric of "+cand,
		"cites-census-line: not in the rubric of "+a+", "+b)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "answers-from-census ") || strings.HasPrefix(line, "cites-census-line ") {
			t.Errorf("dropped criterion in the table: %q", line)
		}
	}
}

func TestCompareCannotDecide(t *testing.T) {
	t.Parallel()
	a, b := noisyBases(t)
	good := writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("pppp", "pppp"))
	cases := []struct {
		name string
		dirs []string
		want string
	}{
		{"one base conversation", []string{writeRun(t, "stock-ledger", "hash-v1", synthCriteria, convs("pppp")), good},
			"the total needs at least 2 scored conversations"},
		// Two conversations, but the judge decided nothing in one of them.
		{"one scored base conversation", []string{writeRun(t, "stock-ledger", "hash-v1", synthCriteria, convs("pppf", "ee--")), good},
			"the total needs at least 2 scored conversations"},
		{"different skills", []string{a, b, writeRun(t, "other-skill", "hash-v2", synthCriteria, convs("pppp", "pppp"))},
			`different skills`},
		{"candidate never judged", []string{a, b, writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("eeee", "e---"))},
			"5 of its 5 judged turns are judge errors or uncertain"},
		// Judge errors on every probe: the candidate was scored on turn 1
		// alone and accepted, and nothing said so.
		{"candidate's probes all judge errors", []string{a, b, writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("peee", "peee", "peee"))},
			// resume judges them again into run.json; rejudge writes
			// verdicts-N.json, which compare does not read.
			"9 of its 12 judged turns are judge errors or uncertain, so its scores rest on what happened to be judged; `vibe-test resume "},
		{"no shared criterion", []string{a, b, writeRun(t, "stock-ledger", "hash-v2", []string{"x-one", "x-two"}, convs("pppp", "pppp"))},
			"share no criterion"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := compareMain(t, c.dirs...)
			if code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			mustContain(t, out, "CANNOT DECIDE", c.want)
			mustContain(t, errOut, "cannot decide")
		})
	}
}

// A judge that is not the base's is named: another judge prompt, the
// CLI's default judge that was another model (rubric.model), other judge
// repeats, another agent CLI version, another isolation. None of them
// was, so a fresh run compared with an older one said nothing.
func TestCompareNamesAnotherJudge(t *testing.T) {
	t.Parallel()
	a, _ := noisyBases(t)
	// Every value a record may lack, known in both runs.
	known := func(dir string, edit func(r *record.Run)) {
		r, err := record.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		r.Versions.JudgePrompt, r.Rubric.Model, r.Versions.Claude, r.Isolation, r.Jail = "judge-v3", "claude-sonnet-4-5", "2.1.328", "hermetic", "bubblewrap"
		r.Plan = &plan.Plan{FixtureHash: strings.Repeat("a1", 32)}
		edit(r)
		if err := record.Save(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	known(a, func(*record.Run) {})
	for _, tc := range []struct {
		field string
		edit  func(r *record.Run)
	}{
		{"judge prompt", func(r *record.Run) { r.Versions.JudgePrompt = "judge-v9" }},
		{"judge model", func(r *record.Run) { r.Rubric.Model = "claude-haiku-4-5" }},
		{"judge model", func(r *record.Run) { r.Config.JudgeModel = "claude-opus-4-5" }},
		{"judge repeats", func(r *record.Run) { r.Config.JudgeRepeats = 3 }},
		{"agent CLI version", func(r *record.Run) { r.Versions.Claude = "2.1.400" }},
		{"isolation", func(r *record.Run) { r.Isolation = "author-config" }},
		{"jail", func(r *record.Run) { r.Jail = "none" }},
		{"fixture", func(r *record.Run) { r.Plan.FixtureHash = strings.Repeat("b2", 32) }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			cand := writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("pppp", "pppp", "pppp"))
			known(cand, tc.edit)
			_, out, _ := compareMain(t, a, cand)
			mustContain(t, out, "WARNING: the "+tc.field+" differs")
		})
	}
	// A record that did not keep a value (an older run: no rubric.model,
	// no jail) is not warned about as if it differed.
	old := writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("pppp", "pppp", "pppp"))
	r, err := record.Load(old)
	if err != nil {
		t.Fatal(err)
	}
	r.Rubric.Model, r.Jail = "", ""
	if err := record.Save(old, r); err != nil {
		t.Fatal(err)
	}
	_, out, _ := compareMain(t, a, old)
	if strings.Contains(out, "judge model differs") || strings.Contains(out, "jail differs") || strings.Contains(out, "fixture differs") {
		t.Errorf("an older record's missing values warned about:\n%s", out)
	}
	// A named judge model against an older record's default still
	// differs (skipped as unknown, it said nothing).
	named := writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("pppp", "pppp", "pppp"))
	r, err = record.Load(named)
	if err != nil {
		t.Fatal(err)
	}
	r.Config.JudgeModel = "claude-opus-4-5"
	if err := record.Save(named, r); err != nil {
		t.Fatal(err)
	}
	_, out, _ = compareMain(t, old, named)
	mustContain(t, out, "WARNING: the judge model differs")
	// The model named is the one the other run's default judged with:
	// the same judge, no warning.
	same := writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("pppp", "pppp", "pppp"))
	known(same, func(r *record.Run) { r.Config.JudgeModel, r.Rubric.Model = "claude-sonnet-4-5", "claude-sonnet-4-5" })
	if _, out, _ = compareMain(t, a, same); strings.Contains(out, "judge model differs") {
		t.Errorf("a named model that is the other run's default warned about:\n%s", out)
	}
}

// TestCompareBothWays checks the rule both ways on real run folders, as seed
// 000 did: a second base run passes against the first, and a run whose
// every judged turn fails fails against both. The runs are recorded
// (internal/testdata/runs): held (six steady conversations) and
// not-enough-evidence (two) are the bases, gate-bypassed (seed 002 with the
// gate bypassed, three conversations) the candidate that fails.
func TestCompareBothWays(t *testing.T) {
	t.Parallel()
	base1, base2, failing := testenv.RecordedRun(t, "held"), testenv.RecordedRun(t, "not-enough-evidence"), testenv.RecordedRun(t, "gate-bypassed")
	code, out, _ := compareMain(t, base1, base2)
	if code != 0 {
		t.Fatalf("second base against the first: exit %d, want 0", code)
	}
	mustContain(t, out, "One base run", "ACCEPT")
	if got := row(out, totalLabel); !strings.HasPrefix(got, "1.000 (n=6) 1.000 (n=2) +0.000 ") {
		t.Errorf("total row %q", got)
	}

	code, out, errOut := compareMain(t, base1, base2, failing)
	if code != 1 {
		t.Fatalf("the failing run against both bases: exit %d, want 1", code)
	}
	mustContain(t, out, "REJECT")
	// The total and a criterion the candidate never met (it ran the census
	// but rewrote the ledger instead of appending to it).
	for _, label := range []string{totalLabel, "appends-ledger"} {
		if got := row(out, label); !strings.HasPrefix(got, "1.000 (n=8) 0.000 (n=3) +1.000 ") || !strings.HasSuffix(got, " FAIL") {
			t.Errorf("%s row %q", label, got)
		}
	}
	mustContain(t, errOut, "total 0.000 vs base 1.000", "appends-ledger 0.000 vs base 1.000")
	if strings.Contains(out, "One base run") {
		t.Error("two base runs printed the one-base note")
	}
}

// Runs made in different session modes are compared with a warning: a
// resumed process re-reads the skill at each invocation, a live session
// does not.
func TestCompareWarnsOnSessionMode(t *testing.T) {
	t.Parallel()
	a, _ := noisyBases(t) // recorded before the modes: resume
	cand := writeRun(t, "stock-ledger", "hash-v2", synthCriteria, convs("pppp", "pppp"))
	r, err := record.Load(cand)
	if err != nil {
		t.Fatal(err)
	}
	r.Config.SessionMode = "interactive"
	if err := record.Save(cand, r); err != nil {
		t.Fatal(err)
	}
	_, out, _ := compareMain(t, a, cand)
	mustContain(t, out, "WARNING: the session mode differs ("+a+": resume, "+cand+": interactive)")
	_, out, _ = compareMain(t, a, writeRun(t, "stock-ledger", "hash-v3", synthCriteria, convs("pppp", "pppp")))
	if strings.Contains(out, "session mode differs") || strings.Contains(out, "schedule differs") {
		t.Errorf("two runs in one mode and schedule: %s", out)
	}
	// A candidate diluted to context levels is not measured like the base.
	r.Config.SessionMode = ""
	r.Plan = &plan.Plan{Schedule: &plan.Schedule{DiluteTo: []int64{50000, 100000, 150000}}}
	if err := record.Save(cand, r); err != nil {
		t.Fatal(err)
	}
	_, out, _ = compareMain(t, a, cand)
	mustContain(t, out, "WARNING: the schedule differs ("+a+": the seed's ten turns, "+cand+": each probe asked once the context reached 50k, 100k, 150k tokens")
}
