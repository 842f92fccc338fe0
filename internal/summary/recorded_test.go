package summary_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/vibe-test/vibe-test/internal/chart"
	"github.com/vibe-test/vibe-test/internal/junit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/summary"
	"github.com/vibe-test/vibe-test/internal/testenv"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// The recorded run folders (internal/testdata/runs: real runs of vibe-test
// on the stand-in CLI against the scripted model, one per outcome) through
// every output a run has, each against its golden file in
// testdata/recorded: the terminal summary plain and styled (escape codes
// kept), --json, --markdown, --junit and the options of chart.html's two
// charts. `go test ./internal/summary -update` writes them after a
// deliberate change; review the diff.

// outcomes is what verdict.Decide must conclude from each recorded run: its
// exit code and verdict word. A folder missing here fails the test, so a
// new recording states its outcome.
var outcomes = map[string]struct {
	exit    int
	verdict string
}{
	"baseline-failed":     {2, record.VerdictBaselineFailed},
	"budget":              {3, record.VerdictBudget},
	"decay":               {1, record.VerdictDecay},
	"dilute-to":           {0, record.VerdictNotEnough},
	"escape-over-call":    {0, record.VerdictNotEnough},
	"gate-bypassed":       {2, record.VerdictBaselineFailed},
	"held":                {0, record.VerdictHeld},
	"judge-error":         {3, record.VerdictError},
	"no-skill-control":    {0, record.VerdictNotEnough},
	"not-enough-evidence": {0, record.VerdictNotEnough},
	"prompt-too-long":     {3, record.VerdictError},
	"setup-problem":       {3, record.VerdictSetup},
	"until-decided":       {1, record.VerdictDecay},
}

// suiteExits is each recorded suite's exit code, by skill.
var suiteExits = map[string]map[string]int{
	"suite": {"stock-ledger": 0, "sprocket-ledger": 0, "dowel-ledger": 2},
}

// TestRecordedDecide: deciding each recorded run again from its record
// alone gives the outcome the run printed, and the exit code and verdict
// word it must have.
func TestRecordedDecide(t *testing.T) {
	for _, name := range testenv.RecordedRuns(t) {
		t.Run(name, func(t *testing.T) {
			dir := testenv.RecordedRun(t, name)
			if record.IsSuite(dir) {
				decideSuite(t, name, dir)
				return
			}
			want, ok := outcomes[name]
			if !ok {
				t.Fatalf("recorded run %s has no expected outcome in this test", name)
			}
			r := load(t, dir)
			saved := r.Outcome
			r.Outcome = record.Outcome{}
			verdict.Decide(r)
			if r.Outcome.Exit != want.exit || r.Outcome.Verdict != want.verdict {
				t.Errorf("exit %d %s (%s), want %d %s", r.Outcome.Exit, r.Outcome.Verdict, r.Outcome.Sentence, want.exit, want.verdict)
			}
			if !reflect.DeepEqual(r.Outcome, saved) {
				t.Errorf("decided again from the record, the outcome differs from run.json's:\n%+v\nrun.json:\n%+v", r.Outcome, saved)
			}
		})
	}
}

// decideSuite: each skill's run decides as the suite recorded it, and the
// suite's exit code is the worst of them.
func decideSuite(t *testing.T, name, dir string) {
	t.Helper()
	s, err := record.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := suiteExits[name]
	if len(want) == 0 || len(s.Skills) != len(want) {
		t.Fatalf("suite %s: %d skills, this test expects %v", name, len(s.Skills), want)
	}
	var codes []int
	for _, e := range s.Skills {
		r := load(t, filepath.Join(dir, e.RunDir))
		verdict.Decide(r)
		if r.Outcome.Exit != want[e.Name] || e.ExitCode != r.Outcome.Exit || e.Verdict != r.Outcome.Verdict {
			t.Errorf("%s: decided exit %d %s, suite.json says exit %d %s, want exit %d", e.Name, r.Outcome.Exit, r.Outcome.Verdict, e.ExitCode, e.Verdict, want[e.Name])
		}
		codes = append(codes, r.Outcome.Exit)
	}
	if worst := record.WorstExit(codes...); s.ExitCode != worst {
		t.Errorf("suite exit %d, the worst of its skills' is %d", s.ExitCode, worst)
	}
}

// TestRecordedOutputs renders every recorded run folder through every
// output, against the goldens.
func TestRecordedOutputs(t *testing.T) {
	// The styled summary is what a terminal gets: force the colours a test's
	// output (no terminal) would not get. Package-wide state, set before the
	// subtests run side by side and put back after them all.
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI256)
	t.Cleanup(func() { lipgloss.SetColorProfile(prev) })

	for _, name := range testenv.RecordedRuns(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := testenv.RecordedRun(t, name)
			if record.IsSuite(dir) {
				suiteOutputs(t, name, dir)
				return
			}
			r := load(t, dir)
			// The version a new recording would change.
			fix := testenv.MaskVersion(r.Versions.VibeTest)
			for _, out := range runOutputs(t, "runs/"+name, r) {
				testenv.Golden(t, filepath.Join("testdata", "recorded", name+"."+out.name+".golden"), out.text, fix)
			}
		})
	}
}

type output struct {
	name string
	text []byte
}

// runOutputs are run r's outputs, named as their goldens are.
func runOutputs(t *testing.T, dir string, r *record.Run) []output {
	t.Helper()
	var plain, styled, js, md, xml bytes.Buffer
	summary.Summary(&plain, r, false)
	summary.Summary(&styled, r, true)
	if bytes.Equal(plain.Bytes(), styled.Bytes()) {
		t.Error("the styled summary is the plain one: the colour profile was not forced")
	}
	// What a CI log shows: no escape code, no box drawing, no arrow.
	for i, c := range plain.Bytes() {
		if c > 0x7e || c < 0x20 && c != '\n' {
			t.Errorf("the plain summary has byte %#x at %d: not printable ASCII", c, i)
			break
		}
	}
	if err := summary.JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(js.Bytes()) {
		t.Errorf("--json is not one JSON value:\n%s", js.Bytes())
	}
	if err := summary.Markdown(&md, []summary.MarkdownEntry{{Dir: dir, Run: r}}); err != nil {
		t.Fatal(err)
	}
	if err := junit.Write(&xml, r); err != nil {
		t.Fatal(err)
	}
	outs := []output{{"summary", plain.Bytes()}, {"styled", styled.Bytes()}, {"json", js.Bytes()}, {"md", md.Bytes()}, {"junit.xml", xml.Bytes()}}
	d := summary.ChartData(r)
	option, err := chart.OptionJSON(d)
	if err != nil {
		t.Fatalf("chart option: %v", err)
	}
	outs = append(outs, output{"chart.json", option})
	if ctx, err := chart.ContextOptionJSON(d); err != nil {
		t.Fatalf("context chart option: %v", err)
	} else if ctx != nil {
		outs = append(outs, output{"context-chart.json", ctx})
	}
	return outs
}

// suiteOutputs: a suite's table plain and styled, its --json (suite.json
// as printed), --markdown and --junit over its skills, and its page.
func suiteOutputs(t *testing.T, name, dir string) {
	t.Helper()
	s, err := record.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	var plain, styled, md, xml, page bytes.Buffer
	summary.SuiteTable(&plain, s, "runs/"+name, false)
	summary.SuiteTable(&styled, s, "runs/"+name, true)
	if bytes.ContainsRune(plain.Bytes(), 0x1b) || bytes.Equal(plain.Bytes(), styled.Bytes()) {
		t.Error("the plain table holds escape codes, or the styled one is the same")
	}
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var entries []summary.MarkdownEntry
	var runs []*record.Run
	var names []string
	for _, e := range s.Skills {
		r := load(t, filepath.Join(dir, e.RunDir))
		entries = append(entries, summary.MarkdownEntry{Name: e.Name, Dir: "runs/" + name + "/" + e.RunDir, Run: r})
		runs, names = append(runs, r), append(names, e.Name)
	}
	if err := summary.Markdown(&md, entries); err != nil {
		t.Fatal(err)
	}
	if err := junit.WriteSuite(&xml, names, runs); err != nil {
		t.Fatal(err)
	}
	if err := chart.RenderSuite(&page, s); err != nil {
		t.Fatal(err)
	}
	fix := testenv.MaskVersion(runs[0].Versions.VibeTest)
	for _, out := range []output{{"table", plain.Bytes()}, {"styled", styled.Bytes()}, {"json", append(js, '\n')}, {"md", md.Bytes()}, {"junit.xml", xml.Bytes()}, {"index.html", page.Bytes()}} {
		testenv.Golden(t, filepath.Join("testdata", "recorded", name+"."+out.name+".golden"), out.text, fix)
	}
}

func load(t *testing.T, dir string) *record.Run {
	t.Helper()
	r, err := record.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
