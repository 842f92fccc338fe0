package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/suite"
	"github.com/vibe-test/vibe-test/internal/testenv"
	"github.com/vibe-test/vibe-test/schema"
)

// librarySkill is one skill of the test library: the bundled stock-ledger
// skill under another name, asked about other items, played by the scripted
// model in one way at every turn whatever session asks (so a conversation
// behaves the same in any shard, in any order).
type librarySkill struct {
	name    string
	items   [3]string // base task, probes' items
	pattern string    // matches its tasks and no other skill's or filler's
	play    string    // steady, decaying or never
}

var library = []librarySkill{
	{demo.SkillName, [3]string{"widgets", "gaskets", "hinges"}, `(?i)in stock|widgets|gaskets|hinges`, scripted.PersonaSteady},
	{"sprocket-ledger", [3]string{"sprockets", "grommets", "rivets"}, `(?i)sprockets|grommets|rivets`, scripted.PersonaDecaying},
	{"dowel-ledger", [3]string{"dowels", "casters", "toggles"}, `(?i)dowels|casters|toggles`, scripted.PersonaNever},
}

// makeLibrary writes the three skills, each with its vibe-test.yaml beside
// it, under dir/skills, and returns that folder.
func makeLibrary(t *testing.T, dir string) string {
	t.Helper()
	paths, err := demo.Materialize(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Dir(paths.Skill)
	lib := filepath.Join(dir, "skills")
	for _, sk := range library {
		to := filepath.Join(lib, sk.name)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(to, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, _ := d.Info()
			return os.WriteFile(filepath.Join(to, rel), []byte(strings.ReplaceAll(string(b), demo.SkillName, sk.name)), info.Mode())
		})
		if err != nil {
			t.Fatal(err)
		}
		base := fmt.Sprintf("How many %s do we have on the shelves?", sk.items[0])
		if sk.name == demo.SkillName {
			base = "How many widgets do we have in stock right now?"
		}
		cfg := fmt.Sprintf("base_task: %s\nprobes:\n  - task: Quick one, how many %s are left, and do we need to reorder them?\n"+
			"  - task: We just got a delivery note, see deliveries.txt. How many %s do we have now?\n    setup:\n      deliveries.txt: \"%s +10\\n\"\n"+
			"  - task: Before I close for the day, how many %s are left?\nfixture: %s\n",
			base, sk.items[1], sk.items[2], sk.items[2], sk.items[0], filepath.Join(dir, "fixture"))
		if err := os.WriteFile(filepath.Join(to, "vibe-test.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return lib
}

// libraryScript plays every skill of the library: its own procedure
// (its Skill call and census command), the judge passing a trace that ran
// its census, and the demo's rubric, escape and fail answers.
func libraryScript(t *testing.T) scripted.Script {
	t.Helper()
	demoRules := demo.JudgeRules(false)
	var pass scripted.Rule
	for _, r := range demoRules {
		if r.Kind == scripted.KindJudge && strings.Contains(r.Contains+r.Pattern, "census") {
			pass = r
		}
	}
	if pass.Contains == "" && pass.Pattern == "" {
		t.Fatal("the demo's judge has no rule for a trace that ran the census")
	}
	var s scripted.Script
	for _, sk := range library {
		p := renamed(t, demo.Procedure(), sk.name)
		judgePass := pass
		judgePass.Contains = strings.ReplaceAll(pass.Contains, demo.SkillName, sk.name)
		judgePass.Pattern = strings.ReplaceAll(pass.Pattern, demo.SkillName, sk.name)
		s.Rules = append(s.Rules, judgePass)
		agent := func(turns []int, steps []scripted.Step) scripted.Rule {
			return scripted.Rule{Kind: scripted.KindAgent, Pattern: sk.pattern, Turns: turns, Steps: steps}
		}
		memory := []scripted.Step{{Text: p.FromMemory}}
		switch sk.play {
		case scripted.PersonaSteady:
			s.Rules = append(s.Rules, agent(nil, p.Follow))
		case scripted.PersonaDecaying: // follows at prompt turns 1-7 (fresh too), not from 8 on
			s.Rules = append(s.Rules, agent([]int{1, 2, 3, 4, 5, 6, 7}, p.Follow), agent(nil, memory))
		case scripted.PersonaNever:
			s.Rules = append(s.Rules, agent(nil, memory))
		}
	}
	s.Rules = append(s.Rules, demoRules...)
	s.Rules = append(s.Rules, scripted.Rule{Kind: scripted.KindAgent, Steps: []scripted.Step{{Text: demo.Procedure().FillerReply}}})
	return s
}

// renamed is the demo's procedure for the same skill under another name.
func renamed(t *testing.T, p scripted.Procedure, name string) scripted.Procedure {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q scripted.Procedure
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(b), demo.SkillName, name)), &q); err != nil {
		t.Fatal(err)
	}
	return q
}

// removeSuiteSandboxes removes, once the test ends, the sandboxes the run
// folders of every suite under dir still name (removeKeptSandboxes for
// each skill's folder): a skill the budget or an interrupt stopped keeps
// its sandboxes for resume, in the machine's temp folder.
func removeSuiteSandboxes(t *testing.T, dir string) {
	t.Cleanup(func() {
		runs, _ := filepath.Glob(filepath.Join(dir, "*", "*", "run.json"))
		for _, r := range runs {
			removeKeptSandboxesNow(filepath.Dir(r))
		}
	})
}

// librarySetup writes the library under dir and starts the scripted model
// for it; run runs vibe-test in-process against it.
func librarySetup(t *testing.T, dir string) (lib string, env []string, run func(args ...string) suiteRun) {
	t.Helper()
	_, lib, env = libraryServer(t, dir)
	run = func(args ...string) suiteRun { return runIn(context.Background(), env, args...) }
	return lib, env, run
}

// libraryServer is librarySetup's parts, with the scripted model itself
// for tests that count its requests.
func libraryServer(t *testing.T, dir string) (srv *scripted.Server, lib string, env []string) {
	t.Helper()
	removeSuiteSandboxes(t, dir)
	bin := fastCLI(t)
	srv, err := scripted.Start(libraryScript(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	lib = makeLibrary(t, dir)
	env = append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+bin, "VIBE_TEST_CACHE_DIR="+filepath.Join(dir, "cache"))
	return srv, lib, env
}

// runIn runs vibe-test in-process until ctx ends.
func runIn(ctx context.Context, env []string, args ...string) suiteRun {
	var stdout, stderr bytes.Buffer
	code := Main(ctx, append([]string{"vibe-test"}, args...), IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	return suiteRun{code, stdout.String(), stderr.String()}
}

type suiteRun struct {
	code           int
	stdout, stderr string
}

func (s suiteRun) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", s.code, s.stdout, s.stderr)
}

// TestSuiteShardsMergeAsOne runs a library of three skills (steady, decaying,
// never) as one suite, and again as three shards side by side, merged: each
// skill's verdict, exit code and counts are the same, and the suite's exit
// code is the worst (decay).
func TestSuiteShardsMergeAsOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lib, env, run := librarySetup(t, dir)
	// The unsharded suite and the shards run the built binary, out of the
	// race detector (which makes the in-process engine several times
	// slower): their subject is what the conversations add up to. The
	// race detector watches the same suite code in-process in
	// TestSuiteBudgetSharedAndResumed and TestSuiteInterruptedAndResumed,
	// and merge and report here.
	built := builtMain(t)
	runBuilt := func(args ...string) suiteRun {
		var stdout, stderr bytes.Buffer
		code := built(context.Background(), append([]string{"vibe-test"}, args...), IO{Env: env, Stdout: &stdout, Stderr: &stderr})
		return suiteRun{code, stdout.String(), stderr.String()}
	}
	common := []string{"--seed", "7", "--conversations", "3", "--max-retries", "1", "--retry-backoff", "200ms", "--isolation", "none"}

	start0 := time.Now()
	whole := filepath.Join(dir, "whole")
	w := runBuilt(append([]string{lib, "--out", whole, "--concurrency", "4"}, common...)...)
	t.Logf("unsharded (%s): %s", time.Since(start0), w)
	if w.code != 1 {
		t.Fatalf("unsharded suite: exit %d, want 1 (the decaying skill)\n%s", w.code, w)
	}
	for _, sk := range library {
		if !strings.Contains(w.stdout, sk.name) || !strings.Contains(w.stdout, filepath.Join(whole, sk.name, "chart.html")) {
			t.Errorf("the table lacks %s or its chart:\n%s", sk.name, w.stdout)
		}
	}
	// The suite page links every skill's chart (chart/'s browser test opens
	// such a page in headless Chromium).
	page, err := os.ReadFile(filepath.Join(whole, "index.html"))
	if err != nil {
		t.Fatalf("the suite page: %v", err)
	}
	for _, sk := range library {
		if !strings.Contains(string(page), `<a href="`+sk.name+`/chart.html">chart</a>`) {
			t.Errorf("the suite page does not link %s's chart", sk.name)
		}
	}
	if !strings.Contains(w.stdout, "suite page: "+filepath.Join(whole, "index.html")) {
		t.Errorf("the suite's output does not say where its page is:\n%s", w.stdout)
	}
	want := loadSuite(t, whole)
	byName := map[string]record.SuiteEntry{}
	for _, e := range want.Skills {
		byName[e.Name] = e
	}
	for name, code := range map[string]int{demo.SkillName: 0, "sprocket-ledger": 1, "dowel-ledger": 2} {
		if byName[name].ExitCode != code {
			t.Errorf("%s: exit %d, want %d (%+v)", name, byName[name].ExitCode, code, byName[name])
		}
	}

	// Three shards side by side, each with its own suite folder.
	shards := make([]string, 3)
	var wg sync.WaitGroup
	runs := make([]suiteRun, 3)
	for i := range shards {
		shards[i] = filepath.Join(dir, fmt.Sprintf("shard-%d", i+1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i] = runBuilt(append([]string{lib, "--out", shards[i], "--shard", fmt.Sprintf("%d/3", i+1), "--concurrency", "2"}, common...)...)
		}()
	}
	wg.Wait()
	for i, r := range runs {
		if r.code != 0 {
			t.Fatalf("shard %d/3: exit %d, want 0 (a shard's verdicts are partial)\n%s", i+1, r.code, r)
		}
		idx := loadSuite(t, shards[i])
		if idx.Shard == nil || len(idx.Shard.Units) != 3 {
			t.Fatalf("shard %d/3: plan %+v, want 3 of the 9 units", i+1, idx.Shard)
		}
	}

	t.Logf("shards done at %s", time.Since(start0))
	merged := filepath.Join(dir, "merged")
	junitPath := filepath.Join(dir, "junit.xml")
	mdPath := filepath.Join(dir, "summary.md")
	m := run(append([]string{"merge", "--out", merged, "--json", "--junit", junitPath, "--markdown", mdPath}, shards...)...)
	t.Logf("merged: %s", m)
	if m.code != w.code {
		t.Fatalf("merged suite: exit %d, the unsharded run's %d\n%s", m.code, w.code, m)
	}
	got := loadSuite(t, merged)
	var printed record.Suite
	if err := json.Unmarshal([]byte(m.stdout), &printed); err != nil || len(printed.Skills) != 3 || printed.ExitCode != 1 {
		t.Errorf("merge --json: %v, %+v", err, printed)
	}
	md, err := os.ReadFile(mdPath)
	if err != nil || !strings.HasPrefix(string(md), "## vibe-test") {
		t.Errorf("merge --markdown: %v\n%s", err, md)
	}
	for _, sk := range library {
		// Markdown escapes the name's hyphens.
		if row := "| " + strings.ReplaceAll(sk.name, "-", `\-`) + " | "; !strings.Contains(string(md), row) {
			t.Errorf("merge --markdown: no row %q:\n%s", row, md)
		}
	}
	if j, err := os.ReadFile(junitPath); err != nil || strings.Count(string(j), "<testsuite ") != 3 {
		t.Errorf("merge --junit: %v, want a testsuite per skill:\n%s", err, j)
	}
	if len(got.Skills) != len(want.Skills) {
		t.Fatalf("merged %d skills, unsharded %d", len(got.Skills), len(want.Skills))
	}
	for i, g := range got.Skills {
		u := want.Skills[i]
		if g.Name != u.Name || g.Verdict != u.Verdict || g.ExitCode != u.ExitCode || g.Diluted != u.Diluted || g.Fresh != u.Fresh || g.EffectiveTurn != u.EffectiveTurn {
			t.Errorf("merged %+v\nunsharded %+v", g, u)
		}
		r, err := record.Load(filepath.Join(merged, g.RunDir))
		if err != nil {
			t.Fatal(err)
		}
		ur, _ := record.Load(filepath.Join(whole, u.RunDir))
		if len(r.Conversations) != 3 || len(r.Fresh) != 3 || r.Outcome.Sentence != ur.Outcome.Sentence {
			t.Errorf("%s merged: %d conversations, %d fresh, %q; unsharded %q", g.Name, len(r.Conversations), len(r.Fresh), r.Outcome.Sentence, ur.Outcome.Sentence)
		}
		for k, c := range r.Conversations {
			if c.Index != k+1 || !equalStrings(c.Fillers, ur.Conversations[k].Fillers) {
				t.Errorf("%s conversation %d: index %d, fillers %v; unsharded %v", g.Name, k+1, c.Index, c.Fillers, ur.Conversations[k].Fillers)
			}
			for _, tr := range c.Turns {
				if _, err := os.Stat(filepath.Join(merged, g.RunDir, tr.Transcript)); err != nil {
					t.Errorf("%s: transcript not copied: %v", g.Name, err)
				}
			}
		}
	}
	// report re-prints the merged table from the folders.
	if rep := run("report", merged); rep.code != m.code || !strings.Contains(rep.stdout, "merged from 3 shards") {
		t.Errorf("report of the merged suite: %s", rep)
	}

	// Refusals: exit 3, one line naming the folder and what differs.
	refused := func(want string, args ...string) {
		t.Helper()
		r := run(append([]string{"merge", "--out", filepath.Join(t.TempDir(), "m")}, args...)...)
		last := strings.TrimSpace(r.stderr)
		if r.code != 3 || strings.Contains(last, "\n") || !strings.Contains(last, want) {
			t.Errorf("merge %v: %s\nwant exit 3 and one line with %q", args, r, want)
		}
	}
	refused("shard [3/3] missing", shards[0], shards[1])
	refused("shard 2/3 given twice", shards[0], shards[1], shards[1], shards[2])
	refused("not a shard's folder", whole)
	tampered := filepath.Join(dir, "tampered")
	if err := os.CopyFS(tampered, os.DirFS(shards[2])); err != nil {
		t.Fatal(err)
	}
	rj := filepath.Join(tampered, "sprocket-ledger", "run.json")
	b, err := os.ReadFile(rj)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(rj, bytes.Replace(b, []byte("runs scripts/census.sh"), []byte("runs the census script"), 1), 0o600)
	refused(tampered+": skill sprocket-ledger differs from "+shards[0]+"'s: rubric", shards[0], shards[1], tampered)
	os.WriteFile(rj, bytes.Replace(b, []byte(`"status": "completed"`), []byte(`"status": "interrupted"`), 1), 0o600)
	refused(tampered+": skill sprocket-ledger did not finish (status interrupted): `vibe-test resume", shards[0], shards[1], tampered)
	// Where a rubric came from (a cache here, an extraction there) is no
	// difference.
	os.WriteFile(rj, bytes.Replace(b, []byte(`"source": "cache"`), []byte(`"source": "extracted"`), 1), 0o600)
	if !bytes.Contains(b, []byte(`"source": "cache"`)) {
		t.Fatal("the shard's rubric does not say it came from the cache")
	}
	if r := run("merge", "--out", filepath.Join(dir, "merged-2"), shards[0], shards[1], tampered); r.code != 1 {
		t.Errorf("merge of shards whose rubrics differ only in source: %s", r)
	}
	// A conversation in two shards is refused before the folder is made:
	// it was refused after the first skills were copied, leaving a
	// half-written folder (an empty suite.json) a second try could not use.
	os.WriteFile(rj, b, 0o600)
	first, err := record.Load(filepath.Join(shards[0], "sprocket-ledger"))
	if err != nil || len(first.Conversations) == 0 {
		t.Fatalf("shard 1's sprocket-ledger: %v", err)
	}
	dup, err := record.Load(filepath.Join(tampered, "sprocket-ledger"))
	if err != nil || len(dup.Conversations) == 0 || len(dup.Fresh) == 0 {
		t.Fatalf("the tampered shard's sprocket-ledger: %v", err)
	}
	dup.Conversations[0].Index, dup.Fresh[0].Index = first.Conversations[0].Index, first.Conversations[0].Index
	if err := record.WriteJSON(rj, dup); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m")
	r := run("merge", "--out", out, shards[0], shards[1], tampered)
	if last := strings.TrimSpace(r.stderr); r.code != 3 || strings.Contains(last, "\n") || !strings.Contains(last, "is in two shards") || !strings.Contains(last, tampered) {
		t.Errorf("merge of shards sharing a conversation: %s\nwant exit 3, one line naming the shards", r)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused merge left %s (%v)", out, err)
	}
	// SIGINT or SIGTERM (the context's end) stops a merge between two
	// copies, exit 130: it ran to the end whatever the signals.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stopped := filepath.Join(t.TempDir(), "m")
	if _, _, err := suite.Merge(ctx, stopped, shards, io.Discard, suite.Hooks{}); exit.Code(err) != exit.Interrupted || !strings.Contains(fmt.Sprint(err), "no suite.json") {
		t.Errorf("a merge whose context ended: %v (exit %d), want exit 130", err, exit.Code(err))
	}
	// As it says: the empty suite.json that claimed the folder is gone
	// (it stayed, and report read it as a damaged index).
	if _, err := os.Stat(filepath.Join(stopped, record.SuiteFile)); !os.IsNotExist(err) {
		t.Errorf("the interrupted merge left %s (%v)", filepath.Join(stopped, record.SuiteFile), err)
	}
}

// loadSuite reads dir's suite.json, checked against schema/suite.schema.json.
func loadSuite(t *testing.T, dir string) *record.Suite {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, record.SuiteFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := validateSuite(b); err != nil {
		t.Errorf("%s/suite.json does not follow suite.schema.json: %v", dir, err)
	}
	s, err := record.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func equalStrings(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// One --max-budget-usd for the whole suite: the skills together stop near
// it (each alone would spend it), and `resume SUITE_DIR` with a larger
// budget finishes every skill.
func TestSuiteBudgetSharedAndResumed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lib, _, run := librarySetup(t, dir)
	out := filepath.Join(dir, "suite")
	const budget = 0.25
	first := run(lib, "--out", out, "--seed", "3", "--conversations", "1", "--concurrency", "1", "--max-budget-usd", fmt.Sprint(budget),
		"--max-retries", "1", "--isolation", "none")
	t.Logf("first: %s", first)
	if first.code != 3 {
		t.Fatalf("exit %d, want 3 (budget exhausted)\n%s", first.code, first)
	}
	idx := loadSuite(t, out)
	var spent, maxTurn float64
	exhausted := 0
	for _, e := range idx.Skills {
		spent += e.CostUSD
		if e.Status == record.StatusBudgetExhausted {
			exhausted++
		}
		r, err := record.Load(filepath.Join(out, e.RunDir))
		if err != nil {
			t.Fatal(err)
		}
		for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh} {
			for _, c := range arm {
				for _, tr := range c.Turns {
					turn := tr.CostUSD
					if tr.Verdict != nil {
						turn += tr.Verdict.CostUSD
					}
					maxTurn = max(maxTurn, turn)
				}
			}
		}
	}
	// One budget: what all skills spent passes it by at most the turns
	// already running when it ran out (one at a time here) and the
	// rubrics, never by a budget per skill.
	if exhausted == 0 || spent > budget+3*maxTurn+0.1 {
		t.Errorf("%d skills stopped by the budget, $%.4f spent in all (budget $%.2f, largest turn $%.4f): the budget is not shared", exhausted, spent, budget, maxTurn)
	}

	second := run("resume", out, "--max-budget-usd", "100")
	t.Logf("resumed: %s", second)
	idx = loadSuite(t, out)
	want := map[string]int{demo.SkillName: 0, "sprocket-ledger": 0, "dowel-ledger": 2} // one conversation each: decay cannot be shown
	for _, e := range idx.Skills {
		if e.ExitCode != want[e.Name] || e.Status == record.StatusBudgetExhausted {
			t.Errorf("%s after resume: %+v, want exit %d", e.Name, e, want[e.Name])
		}
	}
	if second.code != 2 || idx.ExitCode != 2 || idx.Status != record.StatusCompleted {
		t.Errorf("resumed suite: exit %d, index exit %d, status %s; want 2, 2, completed", second.code, idx.ExitCode, idx.Status)
	}
}

// A suite resumed without a new budget counts what its finished skills
// spent: the budget is all the skills' together. A resume spent the
// first run's whole budget again on the unfinished skills ($0.74 -> $1.28
// against $0.70). Which skills finish within the budget depends on how
// their units share the one slot, so the first run is repeated (on a new
// folder) until one did: most first runs do.
func TestSuiteResumeCountsFinishedSkillsSpending(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, lib, env := libraryServer(t, dir)
	run := func(args ...string) suiteRun { return runIn(context.Background(), env, args...) }
	var out string
	for try := 1; ; try++ {
		out = filepath.Join(dir, fmt.Sprintf("suite-%d", try))
		first := run(lib, "--out", out, "--seed", "3", "--conversations", "1", "--concurrency", "1", "--max-budget-usd", "0.7",
			"--max-retries", "1", "--isolation", "none")
		if first.code != 3 {
			t.Fatalf("exit %d, want 3 (budget exhausted)\n%s", first.code, first)
		}
		finished := 0
		for _, e := range loadSuite(t, out).Skills {
			if e.Status == record.StatusCompleted {
				finished++
			}
		}
		if finished > 0 {
			break
		}
		if try == 8 {
			t.Fatal("no first run of 8 finished a skill within $0.70: the case this test is for did not arise")
		}
	}
	agentCalls := func() (n int) {
		for _, r := range srv.Requests() {
			if r.Kind == scripted.KindAgent {
				n++
			}
		}
		return n
	}
	before := agentCalls()
	second := run("resume", out)
	if n := agentCalls() - before; second.code != 3 || n > 0 {
		t.Errorf("resume without a new budget, the budget spent already: exit %d, %d agent requests; want 3 and none\n%s", second.code, n, second)
	}
}

// An interrupted suite exits 130 with its index saying so, and `resume
// SUITE_DIR` finishes every skill with the verdicts of an uninterrupted run.
func TestSuiteInterruptedAndResumed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lib, env, run := librarySetup(t, dir)
	out := filepath.Join(dir, "suite")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Stop once some skill has a completed turn on disk.
		for ctx.Err() == nil {
			if m, _ := filepath.Glob(filepath.Join(out, "*", "conv-1", "turn-02.jsonl")); len(m) > 0 {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	first := runIn(ctx, env, lib, "--out", out, "--seed", "5", "--conversations", "1", "--max-retries", "1", "--isolation", "none")
	t.Logf("interrupted: %s", first)
	idx := loadSuite(t, out)
	if first.code != 130 || idx.ExitCode != 130 || idx.Status != record.StatusInterrupted {
		t.Fatalf("exit %d, index exit %d status %s; want 130, 130, interrupted", first.code, idx.ExitCode, idx.Status)
	}
	second := run("resume", out)
	t.Logf("resumed: %s", second)
	idx = loadSuite(t, out)
	want := map[string]int{demo.SkillName: 0, "sprocket-ledger": 0, "dowel-ledger": 2}
	for _, e := range idx.Skills {
		// Every fresh probe judged, also one the stop caught while it was
		// being judged.
		if e.ExitCode != want[e.Name] || e.Fresh.Probes != 3 {
			t.Errorf("%s after resume: %+v, want exit %d and 3 fresh probes judged", e.Name, e, want[e.Name])
		}
	}
	if second.code != 2 || idx.Status != record.StatusCompleted {
		t.Errorf("resumed suite: exit %d, status %s; want 2, completed", second.code, idx.Status)
	}
}

func validateSuite(b []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.SuiteSchema))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	const id = "suite.schema.json"
	if err := c.AddResource(id, doc); err != nil {
		return err
	}
	sch, err := c.Compile(id)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// --dry-run on a suite: each skill's calls and cost, with the
// conversations its shard would run, then the suite's total. No claude is
// on PATH: nothing could have started.
func TestSuiteDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lib := makeLibrary(t, dir)
	env := []string{"PATH=" + filepath.Join(dir, "none"), "VIBE_TEST_CACHE_DIR=" + filepath.Join(dir, "cache")}
	whole := runIn(context.Background(), env, lib, "--dry-run", "--conversations", "3", "--seed", "1")
	shard := runIn(context.Background(), env, lib, "--dry-run", "--conversations", "3", "--seed", "1", "--shard", "1/3")
	for _, r := range []suiteRun{whole, shard} {
		if r.code != 0 || strings.Count(r.stdout, "dry run: ") != 3 || !strings.Contains(r.stdout, "suite: 3 skills, estimated cost") {
			t.Errorf("want 3 skills' estimates and a total: %s", r)
		}
	}
	// Shard 1/3 of the 9 units holds one conversation of each skill.
	if strings.Count(whole.stdout, "agent turns: 3 conversations x 10 turns") != 3 || strings.Count(shard.stdout, "agent turns: 1 conversation") != 3 {
		t.Errorf("want 3 conversations a skill in the suite, 1 in shard 1/3:\n%s\n%s", whole.stdout, shard.stdout)
	}
}

// The suite's total: none when no call has a price (no model named: the
// CLI's default, which the table cannot know), not "$0.00", which reads as
// free; a sum when every call has one.
func TestSuiteDryRunTotal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lib := makeLibrary(t, dir)
	env := []string{"PATH=" + filepath.Join(dir, "none"), "VIBE_TEST_CACHE_DIR=" + filepath.Join(dir, "cache")}
	unpriced := runIn(context.Background(), env, lib, "--dry-run")
	want := "suite: 3 skills, estimated cost: none: the price table does not know the CLI's default"
	if unpriced.code != 0 || !strings.Contains(unpriced.stdout, want) || strings.Contains(unpriced.stdout, "$0.00") {
		t.Errorf("want %q and no $0.00: %s", want, unpriced)
	}
	priced := runIn(context.Background(), env, lib, "--dry-run", "--model", "claude-sonnet-4-5", "--judge-model", "claude-haiku-4-5")
	if priced.code != 0 || !regexp.MustCompile(`(?m)^suite: 3 skills, estimated cost \$[1-9][0-9]*\.[0-9]{2} in all$`).MatchString(priced.stdout) {
		t.Errorf("want a priced total: %s", priced)
	}
}

// TestRejudgeSuite: rejudge SUITE_DIR judges every skill's run again with
// its own rubric, writing each skill's verdicts file in its run folder and
// leaving run.json as it was; one --rubric for every skill is refused.
func TestRejudgeSuite(t *testing.T) {
	t.Parallel()
	srv, err := scripted.Start(libraryScript(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	env := append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+fastCLI(t), "VIBE_TEST_CACHE_DIR="+filepath.Join(dir, "cache"))
	run := func(args ...string) suiteRun {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), append([]string{"vibe-test"}, args...), IO{Env: env, Stdout: &stdout, Stderr: &stderr})
		return suiteRun{code, stdout.String(), stderr.String()}
	}
	// The recorded suite of the library, one conversation each (the
	// never-following dowel-ledger set its exit 2).
	out := testenv.CopyOfRun(t, "suite")
	before := map[string][]byte{}
	for _, sk := range library {
		b, err := os.ReadFile(filepath.Join(out, sk.name, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		before[sk.name] = b
	}

	if r := run("rejudge", out, "--rubric", filepath.Join(out, library[0].name, "rubric.json")); r.code != 3 || !strings.Contains(r.stderr, "--rubric: not for a suite folder") {
		t.Errorf("rejudge SUITE_DIR --rubric: exit %d, want 3 and one line\n%s", r.code, r)
	}
	r := run("rejudge", out)
	if r.code != 0 {
		t.Fatalf("rejudge SUITE_DIR: exit %d, want 0\n%s", r.code, r)
	}
	for _, sk := range library {
		if !strings.Contains(r.stdout, "== "+sk.name+"\n") {
			t.Errorf("rejudge's output has no section for %s:\n%s", sk.name, r.stdout)
		}
		if _, err := os.Stat(filepath.Join(out, sk.name, "verdicts-2.json")); err != nil {
			t.Errorf("%s: no verdicts file: %v", sk.name, err)
		}
		if after, _ := os.ReadFile(filepath.Join(out, sk.name, "run.json")); !bytes.Equal(after, before[sk.name]) {
			t.Errorf("%s: rejudge changed run.json", sk.name)
		}
	}
}

// A skill's vibe-test.yaml that its run would refuse with the flags (the
// schedule's checks, not only the loader's) stops the suite before it
// writes anything or calls the model: one line, exit 3.
func TestSuiteRefusesABadConfigFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, lib, env := libraryServer(t, dir)
	cfgPath := filepath.Join(lib, "dowel-ledger", "vibe-test.yaml")
	good, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	// Each run starts from the good config; the model must hear nothing.
	for i, c := range []struct {
		add   string
		flags []string
		want  string
	}{
		{"schedule: {max_fillers: 5}\n", nil, "only applies with --dilute-to"},
		{"schedule: {compact_before: [2]}\n", []string{"--compact-at", "120k"}, "both given, expected one of them"},
		{"files: {ops/x.txt: hi}\nschedule: {fillers: work}\n", nil, `field "files": ops/x.txt is in ops/`},
	} {
		if err := os.WriteFile(cfgPath, append(good, c.add...), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, fmt.Sprintf("suite-%d", i))
		r := runIn(context.Background(), env, append([]string{lib, "--out", out, "--conversations", "1", "--seed", "1"}, c.flags...)...)
		if r.code != exit.Tool || !strings.Contains(r.stderr, cfgPath) || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q %v: want exit 3 and one line naming %s with %q: %s", c.add, c.flags, cfgPath, c.want, r)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q %v: the suite folder was written", c.add, c.flags)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%q %v: the model received %d requests", c.add, c.flags, n)
		}
	}
}
