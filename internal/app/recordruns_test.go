//go:build recordruns

package app

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// TestRecordRuns makes the recorded run folders of internal/testdata/runs
// again, each by running vibe-test on the stand-in CLI against the scripted
// model the way the app tests do, then masking what would churn from one
// recording to the next (temporary paths, session ids, times, durations):
//
//	go test -tags recordruns -count=1 -run TestRecordRuns ./internal/app
//	go test ./internal/summary -update   # then review the goldens' diff
//
// It is behind a build tag: it writes into the repository, and what it
// makes is checked by the tests that read the folders.
func TestRecordRuns(t *testing.T) {
	root := testenv.RunsDir(t)
	for _, rec := range recordings {
		t.Run(rec.name, func(t *testing.T) {
			t.Parallel()
			dir, code := rec.run(t)
			if code != rec.exit {
				t.Fatalf("exit %d, want %d", code, rec.exit)
			}
			dst := filepath.Join(root, rec.name)
			if err := os.RemoveAll(dst); err != nil {
				t.Fatal(err)
			}
			if err := copyMasked(dir, dst); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// recording is one recorded run folder: how it is made and the exit code
// it must have.
type recording struct {
	name string
	exit int
	run  func(t *testing.T) (dir string, code int)
}

func personas(names []string, overCall bool, flags ...string) func(t *testing.T) (string, int) {
	return func(t *testing.T) (string, int) {
		s := runScenario(t, fastCLI(t), names, overCall, flags...)
		return s.dir, s.code
	}
}

func scriptRun(script func(t *testing.T) scripted.Script, conversations int, flags ...string) func(t *testing.T) (string, int) {
	return func(t *testing.T) (string, int) {
		s := runScript(t, fastCLI(t), script(t), conversations, nil, flags...)
		return s.dir, s.code
	}
}

var recordings = []recording{
	// Three agents that forget the skill once /compact ran before probe 2.
	{"decay", 1, personas([]string{"forgetting", "forgetting", "forgetting"}, false, "--compact-before", "2", "--concurrency", "3")},
	// Enough steady conversations for the run to have caught the drop
	// asked for (--effect 0.6: a collapse, which few conversations show).
	{"held", 0, personas([]string{"steady", "steady", "steady", "steady", "steady", "steady"}, false, "--effect", "0.6", "--concurrency", "3")},
	// Two steady conversations: too few to tell.
	{"not-enough-evidence", 0, personas([]string{"steady", "steady"}, false, "--concurrency", "2")},
	// Seed 002 replayed: both baselines fail, the gate stops both
	// conversations at turn 1.
	{"baseline-failed", 2, scriptRun(seedReplay, 2, "--concurrency", "2")},
	// Seed 002 replayed with the gate bypassed: a flat line at fail, the
	// escape hatch downgraded to an over-call, stopped consulting.
	{"gate-bypassed", 2, scriptRun(seedReplay, 3, "--concurrency", "3", "--no-baseline-gate")},
	// Every judge answer invalid: judge errors, neither pass nor fail.
	{"judge-error", 3, scriptRun(func(t *testing.T) scripted.Script {
		bad := map[string]any{"criteria": []map[string]any{{"id": "runs-census", "result": "pass", "evidence": "x", "call": 99}}, "escape_hatch": false, "escape_reason": ""}
		return faultScript(t, scripted.Rule{Kind: scripted.KindJudge, Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: bad}}}}})
	}, 1)},
	// The API refuses turn 3 as too long: an abandoned, errored turn.
	{"prompt-too-long", 3, scriptRun(func(t *testing.T) scripted.Script {
		return faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{3}, Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 400, Count: 1000}}}})
	}, 1)},
	// The escaping agent, whose escape hatch the judge flags, beside a
	// steady one whose the judge flags too though the required script ran:
	// an over-call, downgraded.
	{"escape-over-call", 0, personas([]string{"escaping", "steady"}, true, "--concurrency", "2")},
	// A tiny budget stops the run after its first turns.
	{"budget", 3, personas([]string{"steady"}, false, "--max-budget-usd", "0.15")},
	// A dilute-to schedule of work chores with a compaction at 22k.
	{"dilute-to", 0, personas([]string{"steady"}, false, "--dilute-to", "20k,26k,32k", "--fillers", "work", "--compact-at", "22k")},
	// The no-skill control beside a decaying agent.
	{"no-skill-control", 0, personas([]string{"decaying"}, false, "--control", "no-skill", "--concurrency", "3")},
	// --until-decided: a look at two conversations continues, at four it
	// decides decay.
	{"until-decided", 1, personas([]string{"decaying"}, false, "--until-decided", "--max-conversations", "4", "--concurrency", "4")},
	// A required script missing from the sandbox: a set-up problem.
	{"setup-problem", 3, func(t *testing.T) (string, int) {
		s := runEdited(t, fastCLI(t), steadyScript(t), func(p demo.Paths) {
			if err := os.Remove(filepath.Join(filepath.Dir(p.Skill), "scripts", "census.sh")); err != nil {
				t.Fatal(err)
			}
		})
		return s.dir, s.code
	}},
	// A suite of three skills (steady, decaying, never), one conversation
	// each.
	{"suite", 2, func(t *testing.T) (string, int) {
		dir := t.TempDir()
		lib, _, run := librarySetup(t, dir)
		out := filepath.Join(dir, "suite")
		r := run(lib, "--out", out, "--seed", "7", "--conversations", "1", "--max-retries", "1", "--isolation", "none")
		t.Logf("%s", r)
		return out, r.code
	}},
}

// Copied from a run folder: the record and the transcripts. chart.html and
// index.html are drawn again from the record (and hold the 650 KB script).
var recordedFile = regexp.MustCompile(`(^|/)(run|rubric|plan|suite)\.json$|\.jsonl$`)

// What would churn from one recording to the next.
var (
	timeRE     = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	durationRE = regexp.MustCompile(`("duration(_api)?_ms"\s*:\s*)\d+`)
	// The test's temporary folder, where the skill and its config were.
	testTmpRE = regexp.MustCompile(regexp.QuoteMeta(filepath.Join(os.TempDir(), "TestRecordRuns")) + `([a-z-]+?)\d+/`)
	// Renumbered in order of appearance: session and message ids, the
	// scripted model's request numbers (which follow the order the
	// conversations' calls arrived in) and the random part of the
	// temporary folders' names (a sandbox's ws-, repo- and home-, the
	// CLI's folder for the project, which spells the path with dashes).
	// Each match's group 1 becomes the number in its own format.
	renumbered = []struct {
		re     *regexp.Regexp
		format string
	}{
		{regexp.MustCompile(`([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`), "00000000-0000-4000-8000-%012d"},
		{regexp.MustCompile(`_scripted_(\d+)`), "%06d"},
		{regexp.MustCompile(`\b(?:ws|repo|home|tmp|cache|bin|cli)-(\d{5,})\b`), "%d"},
	}
)

// copyMasked copies src's recorded files to dst with what would churn
// masked: every time the same one, every duration a second, the test's
// folder /src/<name>, and ids and random folder names numbered in order of
// appearance.
func copyMasked(src, dst string) error {
	var files []string
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if recordedFile.MatchString(filepath.ToSlash(rel)) {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// run.json (and suite.json) first: its ids get the low numbers.
	depth := func(p string) int { return strings.Count(p, string(filepath.Separator)) }
	sort.SliceStable(files, func(i, j int) bool {
		return depth(files[i]) < depth(files[j]) || depth(files[i]) == depth(files[j]) && files[i] < files[j]
	})
	// Ids are numbered per recorded folder: its name's checksum tells one
	// folder's session 1 from another's (compare refuses a conversation
	// given in two base runs, by its session id).
	tag := fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(filepath.Base(dst))))
	numbers := make([]map[string]int, len(renumbered))
	for i := range numbers {
		numbers[i] = map[string]int{}
	}
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			return err
		}
		s := testTmpRE.ReplaceAllString(string(b), "/src/$1/")
		for i, rn := range renumbered {
			seen := numbers[i]
			s = rn.re.ReplaceAllStringFunc(s, func(m string) string {
				sub := rn.re.FindStringSubmatchIndex(m)
				id := m[sub[2]:sub[3]]
				if _, ok := seen[id]; !ok {
					seen[id] = len(seen) + 1
				}
				format := rn.format
				if i == 0 {
					format = tag + format[len(tag):]
				}
				return m[:sub[2]] + fmt.Sprintf(format, seen[id]) + m[sub[3]:]
			})
		}
		s = timeRE.ReplaceAllString(s, "2026-12-01T10:00:00Z")
		s = durationRE.ReplaceAllString(s, "${1}1000")
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
			return err
		}
	}
	return nil
}
