package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/eval"
	"github.com/vibe-test/vibe-test/internal/evalreport"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// flow is the eval demo's case set and scripted model, on the fast
// stand-in for the CLI.
type flow struct {
	paths demo.CasePaths
	srv   *scripted.Server
	env   []string
	root  string
}

func newFlow(t *testing.T, cli string) *flow {
	t.Helper()
	script, err := demo.CasesScript()
	if err != nil {
		t.Fatal(err)
	}
	return newFlowScript(t, cli, script)
}

// newFlowScript is newFlow with the scripted model given.
func newFlowScript(t *testing.T, cli string, script scripted.Script) *flow {
	t.Helper()
	srv, err := scripted.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	root := t.TempDir()
	paths, err := demo.MaterializeCases(filepath.Join(root, "files"))
	if err != nil {
		t.Fatal(err)
	}
	env := append(demo.Env(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+cli)
	return &flow{paths: paths, srv: srv, env: env, root: root}
}

func (f *flow) settings(version, out string) eval.Settings {
	return eval.Settings{SkillPath: f.paths.Skills[version], CasesDir: f.paths.Cases, Concurrency: 4, MaxRetries: 0, Isolation: engine.IsolationNone,
		OutDir: filepath.Join(f.root, out)}
}

func (f *flow) start(t *testing.T, s eval.Settings) (*eval.Result, error) {
	t.Helper()
	var stderr bytes.Buffer
	res, err := eval.Start(context.Background(), s, eval.IO{Env: f.env, Stderr: &stderr})
	t.Logf("%s", stderr.String())
	return res, err
}

// generatorCalls counts the generator's first requests (one per cell).
func (f *flow) generatorCalls() int {
	n := 0
	for _, r := range f.srv.Requests() {
		if r.Kind == scripted.KindAgent && r.Step == 0 {
			n++
		}
	}
	return n
}

// The whole flow on the stand-in: a baseline, a candidate against it, a
// grid, resume of an interrupted eval, rejudge with another grader, and
// the refusals (a case changed since the baseline, a hygiene problem).
func TestFlow(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))

	// The baseline: two base runs and the control, stored in the case set.
	s := f.settings(demo.VersionBaseline, "baseline")
	s.Baseline = "v1"
	base, err := f.start(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if base.Exit != exit.OK || base.Instrument == nil || !base.Instrument.SecondAccepted || !base.Instrument.ControlRejected {
		t.Fatalf("baseline: exit %d, %s", base.Exit, base.Sentence)
	}
	// The demo's case set: 6 main and 4 holdout cases, 3 repeats (the
	// fewest on which an unchanged skill that passes every grade can be
	// accepted: evalstats' binomial floor).
	const cells = 10 * 3
	if got := f.generatorCalls(); got != 3*cells {
		t.Errorf("%d generator calls, expected 3 runs x 10 cases x 3 repeats", got)
	}
	bdir := filepath.Join(f.paths.Cases, "baselines", "v1")
	bl := readJSON[eval.Manifest](t, filepath.Join(bdir, eval.ManifestFile))
	if bl.Repeats != 3 || len(bl.Cases) != 10 || len(bl.Runs) != 3 || bl.Model != "claude-sonnet-5-5" || bl.Effort != "medium" || bl.Claude == "" || bl.Skill.Hash == "" {
		t.Errorf("manifest %+v", bl)
	}
	cell := readJSON[eval.Cell](t, filepath.Join(bdir, "base-1", "widgets", "1.json"))
	if cell.Generator.Transcript != "" || cell.Message == "" || len(cell.Grades) != 3 || cell.Grades[0].Quote == "" {
		t.Errorf("a stored cell keeps the message and grades, not the transcript: %+v", cell)
	}
	if _, err := os.Stat(filepath.Join(bdir, "holdout", "base-1", "clamps", "1.json")); err != nil {
		t.Errorf("the holdout cells are stored apart: %v", err)
	}
	transcript := filepath.Join(base.Dir, "base-1", "widgets", "1.generator.jsonl")
	if b, err := os.ReadFile(transcript); err != nil || !bytes.Contains(b, []byte(`"type":"result"`)) {
		t.Errorf("the eval folder keeps the generator's stream: %v", err)
	}

	// A shorter version against it: accepted.
	s = f.settings(demo.VersionShorter, "shorter")
	s.Against = "v1"
	short, err := f.start(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if short.Exit != exit.OK || len(short.Comparisons) != 1 || short.Comparisons[0].Holdout == nil {
		t.Errorf("shorter: exit %d, %s", short.Exit, short.Sentence)
	}
	if len(short.Runs) != 4 || short.Runs[0].Info.Label != "control" || !short.Runs[1].Info.Stored {
		t.Errorf("runs: control, base 1, base 2 from the baseline, then the candidate: %+v", short.Runs)
	}

	// The broken version: rejected.
	s.SkillPath, s.OutDir = f.paths.Skills[demo.VersionBroken], filepath.Join(f.root, "broken")
	broken, err := f.start(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if broken.Exit != exit.Decay {
		t.Errorf("broken: exit %d, %s", broken.Exit, broken.Sentence)
	}
	if err := eval.CheckDemo(base, short, broken); err != nil {
		t.Error(err)
	}

	// A grid of two models against the one baseline, each with its cost.
	s = f.settings(demo.VersionShorter, "grid")
	// A point without a model takes the eval's (the case set's sonnet), as
	// one without an effort takes its effort; the dry run says the same.
	s.Against, s.Grid = "v1", []eval.Point{{Effort: "low"}, {Model: "haiku", Effort: "high"}}
	e, err := eval.DryRun(context.Background(), s, eval.IO{Env: f.env, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if l := e.Lines[0]; l.What != "generator: grid claude-sonnet-5-5 low" && l.What != "generator: grid sonnet low" {
		t.Errorf("the dry run's first grid point: %+v", l)
	}
	grid, err := f.start(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(grid.Comparisons) != 2 || grid.Comparisons[1].Candidate.Info.Model != "claude-haiku-4-5" || grid.Comparisons[1].Candidate.Info.Effort != "high" ||
		grid.Comparisons[0].Candidate.Info.Model != "claude-sonnet-5-5" || grid.Comparisons[0].Candidate.Info.Effort != "low" {
		t.Fatalf("grid comparisons %+v, %+v", grid.Comparisons[0].Candidate.Info, grid.Comparisons[1].Candidate.Info)
	}
	for _, c := range grid.Comparisons {
		if eval.CostOf(c.Candidate.Main).Generator <= 0 {
			t.Errorf("%s: no generation cost", c.Candidate.Info.Label)
		}
		// The grid exits 1 when any point rejects: each rejects at alpha/2,
		// each of its two parts (main and holdout) at half of that.
		if c.Holdout == nil || !strings.Contains(c.Sentence, "Rejects at alpha 0.05 split over the 2 grid points") || !strings.Contains(c.Main.Sentence, "at alpha 0.0125") {
			t.Errorf("%s: the sentence should say each part rejects at alpha/4: %s", c.Candidate.Info.Label, c.Sentence)
		}
	}

	// An interrupted eval (the context ends once a few cells are under
	// way): exit 130, and resume makes only the cells without a file.
	ctx, cancel := context.WithCancel(context.Background())
	started := f.generatorCalls()
	go func() {
		defer cancel()
		for f.generatorCalls() < started+3 {
			time.Sleep(5 * time.Millisecond)
		}
	}()
	s = f.settings(demo.VersionShorter, "interrupted")
	s.Against = "v1"
	var stderr bytes.Buffer
	stopped, err := eval.Start(ctx, s, eval.IO{Env: f.env, Stderr: &stderr})
	if exit.Code(err) != exit.Interrupted {
		t.Fatalf("interrupted: %v\n%s", err, stderr.String())
	}
	dir := s.OutDir
	rec, err := eval.LoadRecord(dir)
	if err != nil || rec.Status != eval.StatusInterrupted {
		t.Fatalf("record after an interrupt: %v %+v", err, rec)
	}
	// The cells made so far decide nothing: what the eval shows, then and
	// read back as report reads it, is the interrupt (it was the decision
	// of those cells, exit 0, while the process exited 130).
	again, err := eval.Evaluate(dir, rec)
	if err != nil {
		t.Fatal(err)
	}
	again.TakeStatus()
	for _, r := range []*eval.Result{stopped, again} {
		if r == nil || r.Exit != exit.Interrupted || r.Verdict != "interrupted" || !strings.Contains(r.Sentence, "vibe-test resume") {
			t.Errorf("an interrupted eval shows %+v", r)
		}
	}
	done, _ := filepath.Glob(filepath.Join(dir, "candidate", "*", "[0-9].json"))
	held, _ := filepath.Glob(filepath.Join(dir, "holdout", "candidate", "*", "[0-9].json"))
	if len(done)+len(held) >= cells {
		t.Fatalf("every cell was made before the interrupt: nothing to resume")
	}
	// Nor does rejudge decide on them: refused before any call.
	calls := len(f.srv.Requests())
	if _, err := eval.Rejudge(context.Background(), dir, eval.RejudgeSettings{}, eval.IO{Env: f.env, Stderr: io.Discard}); exit.Code(err) != exit.Tool || !strings.Contains(err.Error(), "did not complete") {
		t.Errorf("rejudge of an interrupted eval: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rejudge-1")); err == nil || len(f.srv.Requests()) != calls {
		t.Errorf("a refused rejudge made its folder or a model call")
	}
	before := f.generatorCalls()
	res, err := eval.Resume(context.Background(), dir, eval.IO{Env: f.env, Stderr: &stderr})
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr.String())
	}
	if got := f.generatorCalls() - before; got != cells-len(done)-len(held) || res.Exit != exit.OK {
		t.Errorf("resume made %d cells (want %d), exit %d: %s", got, cells-len(done)-len(held), res.Exit, res.Sentence)
	}
	if _, err := eval.Resume(context.Background(), dir, eval.IO{Env: f.env, Stderr: io.Discard}); err == nil || !strings.Contains(err.Error(), "nothing to resume") {
		t.Errorf("resuming a completed eval: %v", err)
	}

	// Rejudge with another grader: the stored baseline is graded again
	// first, into rejudge-1; no generator call.
	before = f.generatorCalls()
	rj, err := eval.Rejudge(context.Background(), dir, eval.RejudgeSettings{GraderModel: "haiku"}, eval.IO{Env: f.env, Stderr: &stderr})
	if err != nil {
		t.Fatalf("rejudge: %v\n%s", err, stderr.String())
	}
	if rj.Dir != filepath.Join(dir, "rejudge-1") || rj.Exit != exit.OK || f.generatorCalls() != before {
		t.Errorf("rejudge: %s exit %d (%s), %d generator calls", rj.Dir, rj.Exit, rj.Sentence, f.generatorCalls()-before)
	}
	regraded := readJSON[eval.Cell](t, filepath.Join(rj.Dir, "baseline", "base-1", "widgets", "1.json"))
	if regraded.GraderModel != "claude-haiku-4-5" {
		t.Errorf("the stored baseline was not graded again: grader %q", regraded.GraderModel)
	}
	if !strings.Contains(strings.Join(rj.Record.Notes, "\n"), "was graded again first") {
		t.Errorf("notes %v", rj.Record.Notes)
	}
	// Its cost table says whose costs its rows are: the messages' when
	// made, the reading and grading this rejudge's ("stored, cost when
	// made" stood beside this rejudge's grader costs).
	var table bytes.Buffer
	evalreport.Summary(&table, evalreport.NewView(rj), false)
	if out := table.String(); strings.Contains(out, "(stored, cost when made)") || !strings.Contains(out, "base 1 (generator: when made; reader, grader: this rejudge)") {
		t.Errorf("the rejudge's cost table:\n%s", out)
	}
	// The notes name the stored runs in table order (a map's order before).
	var storedOrder, tableOrder []string
	for _, n := range rj.Record.Notes {
		if label, ok := strings.CutPrefix(n, "the stored "); ok {
			storedOrder = append(storedOrder, strings.SplitN(label, " was graded", 2)[0])
		}
	}
	for _, r := range rj.Record.Runs {
		if r.Stored && slices.Contains(storedOrder, r.Label) {
			tableOrder = append(tableOrder, r.Label)
		}
	}
	if len(storedOrder) < 2 || !slices.Equal(storedOrder, tableOrder) {
		t.Errorf("notes name the stored runs %v, want the table's order %v", storedOrder, tableOrder)
	}
	// What the rejudge spent is its reader's and grader's calls, the stored
	// baseline's grading included, never the generator's: the summary's
	// "this eval" and --json's costs summed the copied cells' generator
	// cost and left out the baseline graded again.
	spent := rj.Record.Costs
	doc := evalreport.NewDoc(evalreport.NewView(rj))
	var text strings.Builder
	evalreport.Summary(&text, evalreport.NewView(rj), false)
	want := regexp.MustCompile(fmt.Sprintf(`this eval\s+0\.0000\s+%.4f\s+%.4f\s+%.4f\n`, spent.Reader, spent.Grader, spent.Total()))
	if spent.Generator != 0 || spent.Grader <= 0 || doc.Costs.Generator != 0 || math.Abs(doc.Costs.Total-spent.Total()) > 1e-9 || !want.MatchString(text.String()) {
		t.Errorf("rejudge costs: record %+v, --json %+v, summary lacks %q:\n%s", spent, doc.Costs, want, text.String())
	}

	// A case changed since the baseline: refused, naming it, before any call.
	key := filepath.Join(f.paths.Cases, "gaskets", "key.json")
	b, _ := os.ReadFile(key)
	if err := os.WriteFile(key, bytes.Replace(b, []byte("when to check again"), []byte("when to look again"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	before = len(f.srv.Requests())
	s = f.settings(demo.VersionShorter, "changed")
	s.Against = "v1"
	if _, err := f.start(t, s); err == nil || !strings.Contains(err.Error(), "case gaskets changed") || exit.Code(err) != exit.Tool {
		t.Errorf("a changed case: %v", err)
	}
	if len(f.srv.Requests()) != before {
		t.Errorf("a refused eval made model calls")
	}
	if err := os.WriteFile(key, b, 0o644); err != nil {
		t.Fatal(err)
	}

	// A fact whose quote is not in its file: refused by hygiene.
	if err := os.WriteFile(filepath.Join(f.paths.Cases, "bolts", "fixture", "data", "stock.csv"), []byte("item,count\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.OutDir = filepath.Join(f.root, "unclean")
	if _, err := f.start(t, s); err == nil || !strings.Contains(err.Error(), "1 problem") {
		t.Errorf("hygiene: %v", err)
	}
}

func TestDryRun(t *testing.T) {
	root := t.TempDir()
	paths, err := demo.MaterializeCases(root)
	if err != nil {
		t.Fatal(err)
	}
	s := eval.Settings{SkillPath: paths.Skills[demo.VersionBaseline], CasesDir: paths.Cases, Baseline: "v1"}
	e, err := eval.DryRun(context.Background(), s, eval.IO{Env: []string{"PATH=" + root}, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	e.Write(&b, func(s string) string { return s })
	out := b.String()
	for _, want := range []string{"generator: base 1", "reader: control (empty skill)", "grader: base 2", "claude-sonnet-5-5", "estimated cost: $"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if len(e.Lines) != 9 || e.Lines[0].Calls != 10*3 || e.Total <= 0 {
		t.Errorf("lines %+v total %v", e.Lines, e.Total)
	}
	// The reader and grader answer on the generator's model when the case
	// set names none for them: --model's here (the case set's before).
	s.Model = "haiku"
	if e, err = eval.DryRun(context.Background(), s, eval.IO{Env: []string{"PATH=" + root}, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	for _, l := range e.Lines {
		if l.Model != "haiku" {
			t.Errorf("%s: model %q, want the generator's (haiku)", l.What, l.Model)
		}
	}
	s.Model = ""
	// --baseline a name already stored: refused, as the eval refuses it.
	set, _, err := eval.LoadSet(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(eval.BaselineDir(set, "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := eval.DryRun(context.Background(), s, eval.IO{Env: []string{"PATH=" + root}, Stderr: io.Discard}); exit.Code(err) != exit.Tool || !strings.Contains(err.Error(), "expected a new name") {
		t.Errorf("a dry run of --baseline v1 with v1 stored: %v", err)
	}
	os.RemoveAll(eval.BaselineDir(set, "v1"))
	// --against a baseline that is not there: said before anything.
	s.Baseline, s.Against = "", "v9"
	if _, err := eval.DryRun(context.Background(), s, eval.IO{Env: []string{"PATH=" + root}, Stderr: io.Discard}); err == nil || !strings.Contains(err.Error(), "no baseline is stored yet") {
		t.Errorf("missing baseline: %v", err)
	}
}

func readJSON[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// A part of one case is never decided (the paired rule needs a spread):
// --baseline and --against refuse the set before any model call; a
// holdout of one passed the check, stored its baseline, and every
// --against on it exited 3 after paying for the candidate.
func TestTooSmallToDecide(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))
	holdout := filepath.Join(f.paths.Cases, "holdout")
	entries, err := os.ReadDir(holdout)
	if err != nil || len(entries) < 2 {
		t.Fatalf("the demo's holdout: %v %v", entries, err)
	}
	for _, e := range entries[1:] {
		os.RemoveAll(filepath.Join(holdout, e.Name()))
	}
	s := f.settings(demo.VersionBaseline, "baseline")
	s.Baseline = "v1"
	_, err = f.start(t, s)
	if exit.Code(err) != exit.Tool || !strings.Contains(err.Error(), "too small to decide on") {
		t.Fatalf("--baseline on a holdout of one: %v (exit %d)", err, exit.Code(err))
	}
	if n := len(f.srv.Requests()); n != 0 {
		t.Errorf("%d model calls before the refusal", n)
	}
	if _, err := os.Stat(eval.BaselineDir(mustSet(t, f), "v1")); err == nil {
		t.Error("a baseline was stored")
	}
	// Measuring alone is fine.
	s = f.settings(demo.VersionBaseline, "measure")
	if _, err := f.start(t, s); err != nil {
		t.Errorf("measuring a set with a holdout of one: %v", err)
	}
}

// storeBaseline stores the demo skill's baseline under name, as
// `vibe-test eval SKILL --baseline name` does, with one repeat: its
// callers test what a stored baseline is checked for, not a decision (the
// instrument check says 2 then, and stores it all the same).
func (f *flow) storeBaseline(t *testing.T, name string) {
	t.Helper()
	s := f.settings(demo.VersionBaseline, "baseline")
	s.Baseline, s.Repeats = name, 1
	if _, err := f.start(t, s); err != nil {
		t.Fatal(err)
	}
}

// shorterAgainstV1 stores baseline v1 and evaluates the shorter version
// against it, one repeat.
func (f *flow) shorterAgainstV1(t *testing.T) *eval.Result {
	t.Helper()
	f.storeBaseline(t, "v1")
	s := f.settings(demo.VersionShorter, "shorter")
	s.Against, s.Repeats = "v1", 1
	res, err := f.start(t, s)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustSet(t *testing.T, f *flow) *cases.Set {
	t.Helper()
	set, _, err := eval.LoadSet(eval.Settings{CasesDir: f.paths.Cases})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// A rejudge after a holdout key changed notes it without naming the case:
// the notes reach the summary, --json and report.html, which name no
// holdout case.
func TestRejudgeNamesNoHoldoutCase(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))
	f.storeBaseline(t, "v1")
	s := f.settings(demo.VersionShorter, "shorter")
	s.Against = "v1"
	res, err := f.start(t, s)
	if err != nil {
		t.Fatal(err)
	}
	set := mustSet(t, f)
	hold, main := set.Holdout[0], set.Cases[0]
	for _, c := range []*cases.Case{hold, main} {
		key := filepath.Join(c.Dir, "key.json")
		b, err := os.ReadFile(key)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	rj, err := eval.Rejudge(context.Background(), res.Dir, eval.RejudgeSettings{}, eval.IO{Env: f.env, Stderr: &stderr})
	if err != nil {
		t.Fatalf("rejudge: %v\n%s", err, stderr.String())
	}
	notes := strings.Join(rj.Record.Notes, "\n")
	if strings.Contains(notes, hold.ID) || !strings.Contains(notes, "1 holdout case changed") || !strings.Contains(notes, "case "+main.ID+" changed") {
		t.Errorf("notes:\n%s", notes)
	}
}

// A case moved between the main cases and the holdout keeps its hash (its
// files did not change), so --against compared it in neither part; the
// baseline refuses the run now, naming the case moved to the main cases
// and counting the one moved to the holdout.
func TestCaseMovedBetweenParts(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))
	f.storeBaseline(t, "v1")
	set := mustSet(t, f)
	hold, main := set.Holdout[0], set.Cases[0]
	if err := os.Rename(hold.Dir, filepath.Join(f.paths.Cases, hold.ID)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(main.Dir, filepath.Join(f.paths.Cases, "holdout", main.ID)); err != nil {
		t.Fatal(err)
	}
	s := f.settings(demo.VersionShorter, "shorter")
	s.Against = "v1"
	before := len(f.srv.Requests())
	_, err := f.start(t, s)
	if exit.Code(err) != exit.Tool || !strings.Contains(fmt.Sprint(err), "case "+hold.ID+" moved from the holdout to the main cases") ||
		!strings.Contains(fmt.Sprint(err), "1 main case moved to the holdout") || strings.Contains(fmt.Sprint(err), main.ID) {
		t.Errorf("--against after moving cases: %v", err)
	}
	if n := len(f.srv.Requests()) - before; n != 0 {
		t.Errorf("%d model calls before the refusal", n)
	}
}

// A stored baseline missing a holdout cell is refused naming the folder
// the cell is missing from (it named the main run's).
func TestBaselineMissingHoldoutCellNamed(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))
	f.storeBaseline(t, "v1")
	set := mustSet(t, f)
	hold := filepath.Join(eval.BaselineDir(set, "v1"), eval.HoldoutCellsDir, "base-1")
	cell := filepath.Join(hold, set.Holdout[0].ID, "1.json")
	if err := os.Remove(cell); err != nil {
		t.Fatal(err)
	}
	s := f.settings(demo.VersionShorter, "shorter")
	s.Against = "v1"
	_, err := f.start(t, s)
	if exit.Code(err) != exit.Tool || !strings.Contains(fmt.Sprint(err), hold+": a holdout case has 0 cells") {
		t.Errorf("the error does not name %s: %v", hold, err)
	}
	// Counted, not named: stderr is what an editing agent may read.
	if strings.Contains(fmt.Sprint(err), set.Holdout[0].ID) {
		t.Errorf("the refusal names holdout case %s: %v", set.Holdout[0].ID, err)
	}
}

// A cell that failed stops the eval (exit 3) with the advice to resume it;
// resume then makes that cell alone, though the eval completed, and
// decides. It refused before ("the eval completed, nothing to resume"),
// leaving only a whole new eval.
func TestResumeMakesFailedCells(t *testing.T) {
	f, s, res, fail := oneFailedCell(t, false)
	if res.CellErrors != 1 || res.Exit != exit.Tool || !strings.Contains(res.Sentence, "vibe-test resume") {
		t.Fatalf("%d failed cells, exit %d: %s", res.CellErrors, res.Exit, res.Sentence)
	}
	os.Remove(fail)
	before := f.generatorCalls()
	var stderr bytes.Buffer
	res, err := eval.Resume(context.Background(), s.OutDir, eval.IO{Env: f.env, Stderr: &stderr})
	if err != nil {
		t.Fatalf("resume after a failed cell: %v\n%s", err, stderr.String())
	}
	if got := f.generatorCalls() - before; got != 1 || res.CellErrors != 0 || res.Exit != exit.OK {
		t.Errorf("resume made %d cells (want the failed one), %d failed, exit %d: %s", got, res.CellErrors, res.Exit, res.Sentence)
	}
	if _, err := eval.Resume(context.Background(), s.OutDir, eval.IO{Env: f.env, Stderr: io.Discard}); err == nil || !strings.Contains(err.Error(), "nothing to resume") {
		t.Errorf("resuming an eval that completed without a failed cell: %v", err)
	}
}

// failingCLI is the stand-in behind a shell wrapper that fails a call
// (exit 1, "refused") while the file it returns exists and the call's
// arguments hold the bolts case's prompt, and --json-schema too when
// structured (the reader's and grader's calls, not the generator's).
func failingCLI(t *testing.T, structured bool) (wrapper, failFile string) {
	t.Helper()
	failFile = filepath.Join(t.TempDir(), "fail")
	wrapper = filepath.Join(t.TempDir(), "claude")
	want := "b"
	if structured {
		want = "br"
	}
	script := "#!/bin/sh\nif [ -e " + failFile + " ]; then b=; r=; for a in \"$@\"; do case \"$a\" in *\"reorder bolts\"*) b=b;; --json-schema) r=r;; esac; done\n" +
		"if [ \"$b$r\" = " + want + " ]; then echo refused >&2; exit 1; fi; fi\nexec " + testenv.FakeClaude(t) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper, failFile
}

// oneFailedCell runs the demo's baseline version with one repeat on
// failingCLI, which fails the bolts case's call (the reader's when
// structured, else the generator's) while the returned file exists: an
// eval that completes with one failed cell.
func oneFailedCell(t *testing.T, structured bool) (f *flow, s eval.Settings, res *eval.Result, fail string) {
	t.Helper()
	wrapper, fail := failingCLI(t, structured)
	if err := os.WriteFile(fail, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f = newFlow(t, wrapper)
	s = f.settings(demo.VersionBaseline, "measure")
	s.Repeats = 1
	res, err := f.start(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.CellErrors != 1 {
		t.Fatalf("%d failed cells, want 1: %s", res.CellErrors, res.Sentence)
	}
	return f, s, res, fail
}

// A cell whose generation was paid for and whose reading then failed is
// read and graded again by resume, its message kept: generated again, it
// was paid twice, and the messages a reader could not handle were
// replaced by ones it can. The record keeps what the failed try spent,
// and so does the cell's file, which the next resume sums the record
// from. The file was overwritten by the new try's alone: the record
// counted the failed try until it was rebuilt from the files, then
// dropped it.
func TestResumeKeepsAFailedCellsCost(t *testing.T) {
	// The reader's call on the bolts case fails.
	f, s, _, fail := oneFailedCell(t, true)
	before := cellFileCosts(t, s.OutDir)
	os.Remove(fail)
	if _, err := eval.Resume(context.Background(), s.OutDir, eval.IO{Env: f.env, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	rec, err := eval.LoadRecord(s.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	after := cellFileCosts(t, s.OutDir)
	var files float64
	remade := 0
	for p, c := range after {
		files += c.Total()
		if b, ok := before[p]; ok && b.status == eval.CellError {
			remade++
			if c.status != eval.CellOK || c.Generator != b.Generator || c.Reader <= b.Reader {
				t.Errorf("%s: %s, generation $%.6f (the failed try's $%.6f), reading $%.6f (the failed try's $%.6f): want the message read again, not made again", p, c.status, c.Generator, b.Generator, c.Reader, b.Reader)
			}
		}
	}
	if remade != 1 {
		t.Errorf("%d failed cells before the resume, want 1", remade)
	}
	if math.Abs(rec.Costs.Total()-files) > 1e-9 {
		t.Errorf("the record counts $%.6f, its cells' files $%.6f: a resume rebuilding it from them drops the difference", rec.Costs.Total(), files)
	}
}

type cellCosts struct {
	eval.Costs
	status string
}

// cellFileCosts reads the costs and status of every cell file under dir.
func cellFileCosts(t *testing.T, dir string) map[string]cellCosts {
	t.Helper()
	out := map[string]cellCosts{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") || filepath.Base(p) == "eval.json" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var c struct {
			Case   string     `json:"case"`
			Status string     `json:"status"`
			Costs  eval.Costs `json:"costs"`
		}
		if json.Unmarshal(b, &c) == nil && c.Case != "" {
			out[p] = cellCosts{c.Costs, c.Status}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A grid point whose cells failed is no verdict (exit 3) in its own
// table, --json and JUnit, not an accept on the cells it has left (a case
// dropped whole): the eval's exit was 3, but the point said "accept, exit
// 0", and JUnit put the error on another point.
func TestGridPointWithFailedCellsIsNoVerdict(t *testing.T) {
	wrapper, mark := filepath.Join(t.TempDir(), "claude"), filepath.Join(t.TempDir(), "every-model")
	script := "#!/bin/sh\nhaiku=; bolts=\nfor a in \"$@\"; do case \"$a\" in *claude-haiku-4-5*) haiku=1;; *\"reorder bolts\"*) bolts=1;; esac; done\n[ -e " + mark + " ] && haiku=1\n[ -n \"$haiku\" ] && [ -n \"$bolts\" ] && { echo refused >&2; exit 1; }\nexec " + testenv.FakeClaude(t) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFlow(t, wrapper)
	f.storeBaseline(t, "v1")
	s := f.settings(demo.VersionShorter, "grid")
	// No reader or grader model given, --model haiku: they stay as the
	// baseline had them (docs/eval.md); they took --model's and the
	// baseline check refused the grid.
	s.Against, s.Repeats, s.Grid, s.Model = "v1", 1, []eval.Point{{Model: "sonnet", Effort: "low"}, {Effort: "high"}}, "haiku"
	res, err := f.start(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Exit != exit.Tool || len(res.Comparisons) != 2 {
		t.Fatalf("exit %d, %d points: %s", res.Exit, len(res.Comparisons), res.Sentence)
	}
	if c := res.Comparisons[1]; c.Exit != exit.Tool || !strings.Contains(c.Sentence, "cells failed") {
		t.Errorf("the point with failed cells: exit %d, %s", c.Exit, c.Sentence)
	}
	if c := res.Comparisons[0]; c.Exit == exit.Tool {
		t.Errorf("the point without failed cells: exit %d, %s", c.Exit, c.Sentence)
	}
	// One candidate: its decision is the eval's, which says the cells
	// failed once (it said "No verdict: ... Without them: No verdict: 1 of
	// its cells failed. Without them: ...").
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	one := f.settings(demo.VersionShorter, "one")
	one.Against, one.Repeats = "v1", 1
	res, err = f.start(t, one)
	if err != nil {
		t.Fatal(err)
	}
	if res.Exit != exit.Tool || strings.Count(res.Sentence, "Without them") != 1 {
		t.Errorf("one candidate with failed cells: exit %d, %s", res.Exit, res.Sentence)
	}
	// Its own decision says so too (--json's comparisons, Markdown).
	if c := res.Comparisons[0]; c.Exit != exit.Tool {
		t.Errorf("one candidate with failed cells, its comparison: exit %d, %s", c.Exit, c.Sentence)
	}
}

// The dry run forecasts the calls the eval makes: with --against, the
// baseline's stored control is shown, not made again (the dry run counted
// its 30 calls, about half the bill), and a case set too small to decide
// on is refused as the eval refuses it, not quoted a bill.
func TestDryRunAsTheEvalPlansIt(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))
	f.storeBaseline(t, "v1")
	s := f.settings(demo.VersionShorter, "dry")
	s.Against, s.Control, s.Repeats = "v1", true, 1
	e, err := eval.DryRun(context.Background(), s, eval.IO{Env: f.env, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range e.Lines {
		if strings.Contains(l.What, "control") {
			t.Errorf("the dry run counts %q, which the baseline's stored control spares", l.What)
		}
	}
	set := mustSet(t, f)
	for _, h := range set.Holdout[1:] {
		if err := os.RemoveAll(h.Dir); err != nil {
			t.Fatal(err)
		}
	}
	s.Against, s.Baseline = "", "v2"
	if _, err := eval.DryRun(context.Background(), s, eval.IO{Env: f.env, Stderr: io.Discard}); exit.Code(err) != exit.Tool || !strings.Contains(err.Error(), "too small to decide on") {
		t.Errorf("a dry run of --baseline on a holdout of one case: %v", err)
	}
}

// An interrupt that lands while a cell's message is read or graded keeps
// the cell as interrupted, with its message and what it cost; resume reads
// and grades it without generating it again. It kept no file: resume paid
// for the generation again (14 generator calls for 10 cells), and the
// interrupted record said $0 spent.
func TestInterruptKeepsAMessageThatCameBack(t *testing.T) {
	script, err := demo.CasesScript()
	if err != nil {
		t.Fatal(err)
	}
	for i := range script.Rules {
		if script.Rules[i].Kind == scripted.KindReader {
			for k := range script.Rules[i].Steps {
				script.Rules[i].Steps[k].Delay = 2 * time.Second
			}
		}
	}
	f := newFlowScript(t, testenv.FakeClaude(t), script)
	// A folder with a space in its name: the saved sentence names it as
	// one word a shell takes (it was cut in two).
	s := f.settings(demo.VersionBaseline, "my measure")
	s.Repeats = 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			for _, r := range f.srv.Requests() {
				if r.Kind == scripted.KindReader {
					time.Sleep(300 * time.Millisecond)
					cancel()
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if _, err := eval.Start(ctx, s, eval.IO{Env: f.env, Stderr: io.Discard}); exit.Code(err) != exit.Interrupted {
		t.Fatalf("interrupted: %v", err)
	}
	rec, err := eval.LoadRecord(s.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "`vibe-test resume '" + s.OutDir + "'`"; !strings.Contains(rec.Outcome.Sentence, want) {
		t.Errorf("the interrupted eval's sentence %q does not hold %s", rec.Outcome.Sentence, want)
	}
	made := f.generatorCalls()
	if made == 0 || rec.Costs.Generator <= 0 {
		t.Fatalf("%d generations before the interrupt, the record says $%v of them", made, rec.Costs.Generator)
	}
	res, err := eval.Resume(context.Background(), s.OutDir, eval.IO{Env: f.env, Stderr: io.Discard})
	if err != nil || res.CellErrors != 0 {
		t.Fatalf("resume: %v, %d failed cells", err, res.CellErrors)
	}
	if n := f.generatorCalls(); n != 10 {
		t.Errorf("%d generations for 10 cells (%d before the interrupt): messages that came back were generated again", n, made)
	}
	// The record counts each generation once: resume sums the cell files,
	// and a finished cell adds only what its try spent (the kept cells'
	// generations were counted twice).
	var cells float64
	for _, r := range res.Runs {
		for _, c := range append(append([]*eval.Cell{}, r.Main...), r.Holdout...) {
			cells += c.Costs.Generator
		}
	}
	if got := res.Record.Costs.Generator; math.Abs(got-cells) > 1e-9 {
		t.Errorf("the record's generator cost %.5f, its cells' %.5f", got, cells)
	}
}

// A baseline that could not be stored (its folder made meanwhile) is no
// verdict in the record too: report exited with the instrument check's
// code for an eval whose baseline was never stored.
func TestBaselineNotStoredIsRecorded(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))
	s := f.settings(demo.VersionBaseline, "baseline")
	s.Baseline, s.Repeats = "v1", 1
	set := mustSet(t, f)
	started := make(chan struct{})
	go func() {
		defer close(started)
		for f.generatorCalls() < 3 {
			time.Sleep(5 * time.Millisecond)
		}
		_ = os.MkdirAll(eval.BaselineDir(set, "v1"), 0o755)
	}()
	_, err := eval.Start(context.Background(), s, eval.IO{Env: f.env, Stderr: io.Discard})
	<-started
	if exit.Code(err) != exit.Tool {
		t.Fatalf("storing over a folder made meanwhile: %v", err)
	}
	rec, err := eval.LoadRecord(s.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := eval.Evaluate(s.OutDir, rec)
	if err != nil {
		t.Fatal(err)
	}
	res.TakeStatus()
	if res.Exit != exit.Tool || !strings.Contains(res.Sentence, "not stored") {
		t.Errorf("the record read again: exit %d, %s", res.Exit, res.Sentence)
	}
}

// A rejudge that grades the stored runs as they were graded copies them:
// their rows keep "stored, cost when made"; the candidate's reading and
// grading are the rejudge's. Every row took the rejudge's label.
func TestRejudgeCostLabels(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))
	res := f.shorterAgainstV1(t)
	check := func(dir string, s eval.RejudgeSettings) {
		t.Helper()
		rj, err := eval.Rejudge(context.Background(), dir, s, eval.IO{Env: f.env, Stderr: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		evalreport.Summary(&b, evalreport.NewView(rj), false)
		out := b.String()
		if !strings.Contains(out, "base 1 (stored, cost when made)") || !strings.Contains(out, "candidate (generator: when made; reader, grader: this rejudge)") {
			t.Errorf("the rejudge's cost table:\n%s", out)
		}
	}
	check(res.Dir, eval.RejudgeSettings{})
	// A rejudge of a rejudge that graded the stored runs again copies
	// them as they now are: not "this rejudge"'s (it kept the first
	// rejudge's marks).
	first, err := eval.Rejudge(context.Background(), res.Dir, eval.RejudgeSettings{GraderModel: "haiku"}, eval.IO{Env: f.env, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	check(first.Dir, eval.RejudgeSettings{})
}

// A rejudge whose reading of some messages failed is no verdict, and says
// how to mend it: the stored baseline's cells it graded again count as
// its own (they were left out, and the candidate decided against a
// baseline missing them), and the way to mend them is another rejudge.
func TestRejudgeCountsItsFailedCells(t *testing.T) {
	// The reader's call on the bolts case fails.
	wrapper, fail := failingCLI(t, true)
	f := newFlow(t, wrapper)
	res := f.shorterAgainstV1(t)
	if err := os.WriteFile(fail, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rj, err := eval.Rejudge(context.Background(), res.Dir, eval.RejudgeSettings{ReaderModel: "haiku"}, eval.IO{Env: f.env, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, rd := range rj.Runs {
		failed += eval.FailedCells(rd)
	}
	t.Logf("exit %d, %d failed of %d in the files: %s", rj.Exit, rj.CellErrors, failed, rj.Sentence)
	if failed < 2 || rj.CellErrors != failed || rj.Exit != exit.Tool {
		t.Errorf("%d failed cells counted of %d in the files, exit %d: %s", rj.CellErrors, failed, rj.Exit, rj.Sentence)
	}
	if strings.Contains(rj.Sentence, "vibe-test resume") || !strings.Contains(rj.Sentence, "vibe-test rejudge "+res.Dir) {
		t.Errorf("the advice: %s", rj.Sentence)
	}
	// It said "the eval completed, nothing to resume".
	if _, err := eval.Resume(context.Background(), rj.Dir, eval.IO{Env: f.env, Stderr: io.Discard}); err == nil || !strings.Contains(err.Error(), "vibe-test rejudge "+res.Dir) {
		t.Errorf("resuming the rejudge's folder: %v", err)
	}
}

// A rejudge of an eval whose generation failed for a cell cannot make its
// message: it says to resume the eval first, then rejudge. It said to
// rejudge again, which kept the cell failed for ever.
func TestRejudgeOfAFailedGeneration(t *testing.T) {
	f, _, res, _ := oneFailedCell(t, false)
	rj, err := eval.Rejudge(context.Background(), res.Dir, eval.RejudgeSettings{ReaderModel: "haiku"}, eval.IO{Env: f.env, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	want := "1 had no message to grade: `vibe-test resume " + res.Dir + "` makes them, then `vibe-test rejudge " + res.Dir + "`"
	if rj.Exit != exit.Tool || !strings.Contains(rj.Sentence, want) {
		t.Errorf("exit %d: %s\nwant it to say %s", rj.Exit, rj.Sentence, want)
	}
	// A rejudge of that rejudge names the eval too, not the first
	// rejudge's folder, which resume refuses.
	rj2, err := eval.Rejudge(context.Background(), rj.Dir, eval.RejudgeSettings{GraderModel: "haiku"}, eval.IO{Env: f.env, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rj2.Sentence, want) {
		t.Errorf("the second rejudge: %s\nwant it to say %s", rj2.Sentence, want)
	}
}

// An eval that did not complete shows how it stopped, never a decision of
// the cells made so far: its summary said "main: ACCEPT" and --json's
// comparisons held a verdict beside the record's exit 130.
func TestUnfinishedEvalShowsNoDecision(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))
	res := f.shorterAgainstV1(t)
	if len(res.Comparisons) != 1 {
		t.Fatalf("the completed eval has %d comparisons", len(res.Comparisons))
	}
	rec, err := eval.LoadRecord(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	rec.Status = eval.StatusInterrupted
	rec.Outcome = eval.Outcome{Exit: exit.Interrupted, Verdict: "interrupted", Sentence: "Interrupted: `vibe-test resume " + res.Dir + "` makes the cells still missing."}
	got, err := eval.Evaluate(res.Dir, rec)
	if err != nil {
		t.Fatal(err)
	}
	got.TakeStatus()
	if got.Exit != exit.Interrupted || len(got.Comparisons) != 0 || got.Instrument != nil {
		t.Errorf("exit %d, %d comparisons, instrument %v", got.Exit, len(got.Comparisons), got.Instrument)
	}
	var text, js bytes.Buffer
	v := evalreport.NewView(got)
	evalreport.Summary(&text, v, false)
	if err := evalreport.JSON(&js, v); err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"ACCEPT", "REJECT", "NOT ENOUGH EVIDENCE"} {
		if strings.Contains(text.String(), word) {
			t.Errorf("the summary of an interrupted eval says %s:\n%s", word, text.String())
		}
	}
	var doc struct {
		Comparisons []json.RawMessage `json:"comparisons"`
		Exit        int               `json:"exit"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.Comparisons) != 0 || doc.Exit != exit.Interrupted {
		t.Errorf("--json: %d comparisons, exit %d (%v)", len(doc.Comparisons), doc.Exit, err)
	}
	// JUnit says it did not complete: with the comparisons gone it was the
	// rates alone, all passing, beside exit 130.
	var ju bytes.Buffer
	if err := evalreport.JUnit(&ju, v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ju.String(), `<testcase name="the eval completed"`) || !strings.Contains(ju.String(), `errors="1"`) {
		t.Errorf("the JUnit of an interrupted eval:\n%s", ju.String())
	}
}

// A stored baseline's cells are checked against its manifest's digest: a
// grade edited by hand (all M1 grades set to fail) turned a broken
// skill's rejection into "not enough evidence" without a word. A checkout
// that rewrites a cell's line endings and indentation changes nothing.
func TestBaselineCellsEditedAreRefused(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))
	f.storeBaseline(t, "v1")
	set := mustSet(t, f)
	if _, err := eval.LoadBaseline(set, "v1"); err != nil {
		t.Fatalf("the baseline as stored: %v", err)
	}
	dir := eval.BaselineDir(set, "v1")
	mainCell := filepath.Join(dir, "base-1", set.Cases[0].ID, "1.json")
	holdCell := filepath.Join(dir, eval.HoldoutCellsDir, "base-1", set.Holdout[0].ID, "1.json")
	edit := func(path string, change func(*eval.Cell)) []byte {
		t.Helper()
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c eval.Cell
		if err := json.Unmarshal(before, &c); err != nil {
			t.Fatal(err)
		}
		change(&c)
		b, _ := json.Marshal(c)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return before
	}
	// Line endings and indentation alone: still the same cells.
	before := edit(mainCell, func(*eval.Cell) {})
	crlf := bytes.ReplaceAll(before, []byte("\n"), []byte("\r\n"))
	if err := os.WriteFile(mainCell, crlf, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := eval.LoadBaseline(set, "v1"); err != nil {
		t.Errorf("a cell re-indented with CRLF line endings: %v", err)
	}
	for _, c := range []struct {
		name, path string
		change     func(*eval.Cell)
	}{
		{"a grade", mainCell, func(c *eval.Cell) { c.Grades[0].Result = eval.ResultFail }},
		{"a message", mainCell, func(c *eval.Cell) { c.Message += " Also, reorder." }},
		{"a holdout cell's words", holdCell, func(c *eval.Cell) { c.Words += 40 }},
	} {
		saved := edit(c.path, c.change)
		_, err := eval.LoadBaseline(set, "v1")
		if err == nil || !strings.Contains(err.Error(), "cells_hash") || strings.Contains(err.Error(), set.Holdout[0].ID) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s edited: %v", c.name, err)
		}
		if err := os.WriteFile(c.path, saved, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The manifest's settings too: a generator model edited by hand decided
	// an opus candidate against cells a sonnet made.
	manifest := filepath.Join(dir, eval.ManifestFile)
	saved, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	m := readJSON[eval.Manifest](t, manifest)
	m.Model = "claude-opus-5-5"
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := eval.LoadBaseline(set, "v1"); err == nil || !strings.Contains(err.Error(), "manifest_hash") || strings.Contains(err.Error(), "\n") {
		t.Errorf("the manifest's model edited: %v", err)
	}
	// Re-indented, it is the same manifest.
	if err := os.WriteFile(manifest, bytes.ReplaceAll(saved, []byte("\n"), []byte("\r\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := eval.LoadBaseline(set, "v1"); err != nil {
		t.Errorf("the manifest with CRLF line endings: %v", err)
	}
}

// An eval folder another process is running or resuming is not resumed
// beside it: its cells would be made twice, each paid for.
func TestResumeOfALiveEvalRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, eval.RecordFile), []byte(`{"schema_version": 1, "kind": "eval", "status": "running", "mode": "run"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	release, err := engine.LockFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = eval.Resume(context.Background(), dir, eval.IO{Env: os.Environ(), Stderr: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "another vibe-test process is running or resuming it") || exit.Code(err) != exit.Tool {
		t.Errorf("resume of a locked eval: %v", err)
	}
}

// A key pasted into cases.yaml (the goal, a measure's name) is redacted
// wherever the eval saves or prints it, as one in a reply is: it reached
// eval.json, report.html, JUnit, Markdown and the terminal.
func TestSecretInTheCaseSetIsRedacted(t *testing.T) {
	f := newFlow(t, testenv.FakeClaude(t))
	const secret = "sk-ant-api03-" + "Zq7Vx2Lm9Pt4Rk8Wn3Hy6Jd1Fs5Gb0Cv7Xe2Ua9Qo4Ti8Mr3Nl6Ks1Dh5Fj0Gp7Yw2Bz9Ec4Av8Su3Ix6Or1Kn5Lm0Pq-AbCdEfAA"
	setFile := filepath.Join(f.paths.Cases, "cases.yaml")
	b, err := os.ReadFile(setFile)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("goal: After one message,"), []byte("goal: After one message ("+secret+"),"), 1)
	b = bytes.Replace(b, []byte("name: Right decision"), []byte("name: Right decision "+secret), 1)
	if !bytes.Contains(b, []byte(secret+"),")) || !bytes.Contains(b, []byte("decision "+secret)) {
		t.Fatal("the demo's cases.yaml changed: no goal or measure name to put the key in")
	}
	if err := os.WriteFile(setFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := f.settings(demo.VersionBaseline, "measure")
	var stderr bytes.Buffer
	res, err := eval.Start(context.Background(), s, eval.IO{Env: f.env, Stderr: &stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var text, page, md, junit bytes.Buffer
	v := evalreport.NewView(res)
	evalreport.Summary(&text, v, false)
	if err := evalreport.HTML(&page, v); err != nil {
		t.Fatal(err)
	}
	if err := evalreport.Markdown(&md, v); err != nil {
		t.Fatal(err)
	}
	if err := evalreport.JUnit(&junit, v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "goal: After one message ([REDACTED]") {
		t.Errorf("the summary's goal:\n%s", text.String())
	}
	for name, got := range map[string]string{"stderr": stderr.String(), "the summary": text.String(), "report.html": page.String(), "Markdown": md.String(), "JUnit": junit.String()} {
		if strings.Contains(got, secret) {
			t.Errorf("the key reached %s", name)
		}
	}
	filepath.WalkDir(res.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secret)) {
				t.Errorf("the key reached %s", p)
			}
		}
		return nil
	})
	if !strings.Contains(res.Record.Cases.Goal, "After one message") || res.Record.Cases.Measures[0].Name == "" {
		t.Errorf("the goal or the measure's name is gone: %q, %+v", res.Record.Cases.Goal, res.Record.Cases.Measures[0])
	}
}
