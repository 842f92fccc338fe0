package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/term"
	"github.com/vibe-test/vibe-test/internal/verdict"
)

// shard is one shard folder read for a merge.
type shard struct {
	dir string
	idx *record.Suite
}

// Merge joins shard folders into one suite folder at out ("" = the default
// name): per skill one run folder holding every shard's conversations and
// fresh triples (transcripts copied), decided by verdict.Decide over the
// union. Shards that disagree on the skill, the measurement's settings,
// the rubric, the CLI version, the seed or the shard plan are refused
// (exit 3, naming the folder and what differs), as are missing or
// duplicated shards, before the folder is made. ctx ending (SIGINT,
// SIGTERM) stops it between two copies, exit 130. h.Show writes to stderr.
func Merge(ctx context.Context, out string, dirs []string, stderr io.Writer, h Hooks) (*record.Suite, string, error) {
	if len(dirs) == 0 {
		return nil, "", exit.Errorf(exit.Tool, "merge: no shard folders given, expected every shard's suite folder")
	}
	shards, err := readShards(dirs)
	if err != nil {
		return nil, "", exit.With(exit.Tool, err)
	}
	plan0 := shards[0].idx.Shard
	// Read and check every skill's runs before writing anything.
	type part struct {
		dir string // the shard's run folder of the skill
		run *record.Run
	}
	parts := map[string][]part{}
	for _, sk := range plan0.Skills {
		for _, s := range shards {
			for _, e := range s.idx.Skills {
				if e.Name != sk.Name {
					continue
				}
				rd := e.Dir(s.dir)
				r, err := record.Load(rd)
				if err != nil {
					return nil, "", exit.Errorf(exit.Tool, "%s: skill %s: %v", s.dir, e.Name, err)
				}
				if r.Plan == nil {
					return nil, "", exit.Errorf(exit.Tool, "%s: skill %s stopped before its conversations began (no plan in run.json): run the shard again", s.dir, e.Name)
				}
				if !engine.Finished(r) {
					return nil, "", exit.Errorf(exit.Tool, "%s: skill %s did not finish (status %s): `vibe-test resume %s` first, so the merged verdict counts every conversation", s.dir, e.Name, r.Status, term.Arg(s.dir))
				}
				if r.Skill.Hash != sk.Hash {
					return nil, "", exit.Errorf(exit.Tool, "%s: skill %s: run.json's skill hash %.12s differs from the shard plan's %.12s", s.dir, e.Name, r.Skill.Hash, sk.Hash)
				}
				if ps := parts[sk.Name]; len(ps) > 0 {
					if what := differs(ps[0].run, r); what != "" {
						return nil, "", exit.Errorf(exit.Tool, "%s: skill %s differs from %s's: %s", s.dir, e.Name, filepath.Dir(ps[0].dir), what)
					}
				}
				parts[sk.Name] = append(parts[sk.Name], part{dir: rd, run: r})
			}
		}
	}
	// Merge every skill's runs before claiming the folder: a refusal
	// (a conversation in two shards) left a half-written folder that a
	// second try could not use.
	mergedOf := map[string]*record.Run{}
	for _, sk := range plan0.Skills {
		ps := parts[sk.Name]
		if len(ps) == 0 {
			continue // no conversations at all (not reachable with a whole plan)
		}
		var runs []*record.Run
		var from []string
		for _, p := range ps {
			runs = append(runs, p.run)
			from = append(from, p.dir)
		}
		merged, err := mergeRuns(runs)
		if err != nil {
			return nil, "", exit.Errorf(exit.Tool, "skill %s (%s): %v", sk.Name, strings.Join(from, ", "), err)
		}
		mergedOf[sk.Name] = merged
	}
	if err := engine.CheckOutDir(out); err != nil {
		return nil, "", exit.With(exit.Tool, err)
	}
	dir, err := engine.MakeFolder(out, "suite", record.SuiteFile)
	if err != nil {
		return nil, "", exit.With(exit.Tool, err)
	}
	// The empty suite.json that claimed the folder goes if the merge does
	// not finish (interrupted, a copy that failed): left, it read as a
	// damaged index, where the message says the folder holds none.
	saved := false
	defer func() {
		if !saved {
			os.Remove(filepath.Join(dir, record.SuiteFile))
		}
	}()
	idx := &record.Suite{SchemaVersion: record.SuiteSchemaVersion, StartedAt: shards[0].idx.StartedAt,
		FinishedAt: time.Now().UTC(), Seed: shards[0].idx.Seed}
	for _, s := range shards {
		idx.Merged = append(idx.Merged, s.dir)
		if s.idx.StartedAt.Before(idx.StartedAt) {
			idx.StartedAt = s.idx.StartedAt
		}
	}
	var codes []int
	for _, sk := range plan0.Skills {
		ps, merged := parts[sk.Name], mergedOf[sk.Name]
		if merged == nil {
			continue
		}
		if ctx.Err() != nil {
			return nil, dir, interruptedMerge(dir)
		}
		rd, err := engine.MakeOutDir(filepath.Join(dir, sk.Name), sk.Name)
		if err != nil {
			return nil, dir, exit.With(exit.Tool, err)
		}
		for _, p := range ps {
			for _, arm := range [][]record.Conversation{p.run.Conversations, p.run.Fresh} {
				for i := range arm {
					name := arm[i].DirName()
					if ctx.Err() != nil {
						return nil, dir, interruptedMerge(dir)
					}
					if err := copyTree(filepath.Join(p.dir, name), filepath.Join(rd, name)); err != nil {
						return nil, dir, exit.Errorf(exit.Tool, "copying %s's transcripts: %v", filepath.Join(p.dir, name), err)
					}
				}
			}
		}
		if err := writeRun(rd, merged); err != nil {
			return nil, dir, exit.With(exit.Tool, err)
		}
		if h.Show != nil {
			if err := h.Show(rd, merged, stderr); err != nil {
				return nil, dir, exit.With(exit.Tool, err)
			}
		}
		e := record.EntryOf(record.SuiteEntry{Name: sk.Name, Path: merged.Skill.Path, RunDir: sk.Name}, merged)
		idx.Skills = append(idx.Skills, e)
		codes = append(codes, e.ExitCode)
		if h.Done != nil {
			h.Done(e)
		}
	}
	idx.ExitCode = record.WorstExit(codes...)
	idx.Status = record.StatusCompleted
	if idx.ExitCode == exit.Interrupted {
		idx.Status = record.StatusInterrupted
	}
	if err := record.SaveSuite(dir, idx); err != nil {
		return idx, dir, exit.With(exit.Tool, err)
	}
	saved = true
	return idx, dir, nil
}

// readShards reads the shard folders' indexes and checks that they are
// the n shards of one plan, each once.
func readShards(dirs []string) ([]shard, error) {
	var shards []shard
	for _, d := range dirs {
		idx, err := record.LoadSuite(d)
		if err != nil {
			return nil, err
		}
		if idx.Shard == nil {
			return nil, fmt.Errorf("%s: not a shard's folder (its %s has no shard plan): run the suite with --shard i/n", d, record.SuiteFile)
		}
		shards = append(shards, shard{dir: d, idx: idx})
	}
	first := shards[0]
	p0 := first.idx.Shard
	byIndex := map[int]string{}
	for _, s := range shards {
		p := s.idx.Shard
		switch {
		case p.Count != p0.Count:
			return nil, fmt.Errorf("%s: shard plan n is %d, %s's is %d: shards of different plans", s.dir, p.Count, first.dir, p0.Count)
		case s.idx.Seed != first.idx.Seed:
			return nil, fmt.Errorf("%s: seed %d, %s's is %d: shards must share --seed", s.dir, s.idx.Seed, first.dir, first.idx.Seed)
		case !slices.Equal(p.Skills, p0.Skills):
			return nil, fmt.Errorf("%s: shard plan's skills (names, hashes, conversations) differ from %s's: %s", s.dir, first.dir, skillsDiff(p0.Skills, p.Skills))
		case p.Index < 1 || p.Index > p.Count:
			return nil, fmt.Errorf("%s: shard %d/%d, expected 1 to %d", s.dir, p.Index, p.Count, p.Count)
		}
		if other, ok := byIndex[p.Index]; ok {
			return nil, fmt.Errorf("%s: shard %d/%d given twice (also %s)", s.dir, p.Index, p.Count, other)
		}
		byIndex[p.Index] = s.dir
		if !slices.Equal(p.Units, ShardUnits(p.Skills, p.Index, p.Count)) {
			return nil, fmt.Errorf("%s: shard %d/%d's units are not the plan's share", s.dir, p.Index, p.Count)
		}
	}
	var missing []string
	for i := 1; i <= p0.Count; i++ {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, p0.Count))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merge: shard %v missing: give every shard's folder", missing)
	}
	sort.Slice(shards, func(a, b int) bool { return shards[a].idx.Shard.Index < shards[b].idx.Shard.Index })
	return shards, nil
}

func skillsDiff(a, b []record.ShardSkill) string {
	for i := range max(len(a), len(b)) {
		switch {
		case i >= len(a):
			return fmt.Sprintf("extra skill %s", b[i].Name)
		case i >= len(b):
			return fmt.Sprintf("no skill %s", a[i].Name)
		case a[i].Name != b[i].Name:
			return fmt.Sprintf("skill %s where it has %s", b[i].Name, a[i].Name)
		case a[i].Hash != b[i].Hash:
			return fmt.Sprintf("skill %s's hash %.12s, not %.12s", b[i].Name, b[i].Hash, a[i].Hash)
		case a[i].Conversations != b[i].Conversations:
			return fmt.Sprintf("skill %s with %d conversations, not %d", b[i].Name, b[i].Conversations, a[i].Conversations)
		}
	}
	return "order"
}

// differs names what makes two shards' runs of a skill unmergeable, or "".
// Paths (the SKILL.md's, the config's, the fixture's) may differ between
// machines; what was measured, and how, may not.
func differs(a, b *record.Run) string {
	switch {
	case a.Skill.Hash != b.Skill.Hash:
		return "skill hash"
	case a.Versions.Claude != b.Versions.Claude:
		return fmt.Sprintf("CLI version (%s, not %s)", b.Versions.Claude, a.Versions.Claude)
	case a.Versions.Agent != b.Versions.Agent:
		name := b.Config.Agent
		if name == "" {
			name = b.Config.JudgeAgent
		}
		return fmt.Sprintf("%s version (%s, not %s)", name, b.Versions.Agent, a.Versions.Agent)
	case a.Versions.JudgeAgent != b.Versions.JudgeAgent:
		return fmt.Sprintf("%s version (%s, not %s)", b.Config.JudgeAgent, b.Versions.JudgeAgent, a.Versions.JudgeAgent)
	case a.Versions.JudgePrompt != b.Versions.JudgePrompt:
		// The judge's instructions decide every verdict.
		return fmt.Sprintf("judge prompt (%s, not %s)", b.Versions.JudgePrompt, a.Versions.JudgePrompt)
	case fixtureOf(a) != "" && fixtureOf(b) != "" && fixtureOf(a) != fixtureOf(b):
		// Its path may differ; its contents are what the agent worked on.
		return fmt.Sprintf("fixture contents (hash %.12s, not %.12s)", fixtureOf(b), fixtureOf(a))
	case !sameJSON(criteria(a), criteria(b)):
		return "rubric (extracted differently: put a reviewed rubric.json beside the SKILL.md for every shard)"
	case !sameJSON(measured(a), measured(b)):
		return "config (tasks, models, tools, rule or other settings): " + firstDiff(measured(a), measured(b))
	}
	return ""
}

// firstDiff names the first field, by its JSON path, whose value differs
// between a and b (each marshalled), with both values: the refusal said
// only "config ... differs", whatever it was.
func firstDiff(a, b any) string {
	var x, y any
	xa, _ := json.Marshal(a)
	yb, _ := json.Marshal(b)
	if json.Unmarshal(xa, &x) != nil || json.Unmarshal(yb, &y) != nil {
		return "?"
	}
	path, vx, vy := diffAt("", x, y)
	short := func(v any) string {
		b, _ := json.Marshal(v)
		if len(b) > 60 {
			return string(b[:57]) + "..."
		}
		return string(b)
	}
	return fmt.Sprintf("%s is %s here, %s there", strings.TrimPrefix(path, "."), term.Line(short(vy)), term.Line(short(vx)))
}

func diffAt(path string, x, y any) (string, any, any) {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			return path, x, y
		}
		keys := map[string]bool{}
		for k := range xv {
			keys[k] = true
		}
		for k := range yv {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if !sameJSON(xv[k], yv[k]) {
				return diffAt(path+"."+strings.ToLower(k), xv[k], yv[k])
			}
		}
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return path, x, y
		}
		for i := range xv {
			if !sameJSON(xv[i], yv[i]) {
				return diffAt(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i])
			}
		}
	}
	return path, x, y
}

// fixtureOf is the hash of the fixture r's conversations worked on, or ""
// (none, or a run from before fixtures were hashed).
func fixtureOf(r *record.Run) string {
	if r.Plan == nil {
		return ""
	}
	return r.Plan.FixtureHash
}

// criteria is what of a run's rubric judged it: where it came from (the
// cache on one machine, a fresh extraction on another) does not matter.
func criteria(r *record.Run) any {
	if r.Rubric == nil {
		return nil
	}
	return struct {
		Criteria any
		Model    string
	}{r.Rubric.Criteria, r.Rubric.Model}
}

// measured is what of a run's config and plan decides what was measured.
func measured(r *record.Run) any {
	c := r.Config
	c.Concurrency, c.ConfigFile, c.RubricFile, c.FillersDir, c.KeepSandbox, c.MaxBudgetUSD, c.Args = 0, "", "", "", false, 0, nil
	// How a shard's machine rides out errors (the CLI's retries, how long
	// a turn may take) changes how often a turn errs, not what a judged
	// turn measured: a slower CI machine's longer --turn-timeout was a
	// refusal.
	c.MaxRetries, c.TurnTimeout = 0, ""
	var p plan.Plan
	if r.Plan != nil {
		p = *r.Plan
		// The fixture's contents are compared on their own (differs), where
		// both shards recorded them.
		p.Source, p.Fixture, p.FixtureHash, p.Fillers = "", "", "", nil
	}
	// Isolation (hermetic or the author's login) changes what the agent
	// starts from; the jail does not change what it is asked.
	return struct {
		Config    record.Config
		Plan      plan.Plan
		Isolation string
	}{c, p, r.Isolation}
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// mergeRuns is one run record holding every shard's conversations, by
// index, decided afresh.
func mergeRuns(runs []*record.Run) (*record.Run, error) {
	m := *runs[0]
	m.Conversations, m.Fresh, m.Controls, m.Sequential = nil, nil, nil, nil
	m.Outcome, m.Error = record.Outcome{}, ""
	p := *runs[0].Plan
	m.Plan = &p
	m.Costs = record.Costs{}
	seen := map[string]bool{}
	for _, r := range runs {
		for _, arm := range [][]record.Conversation{r.Conversations, r.Fresh} {
			for _, c := range arm {
				if seen[c.DirName()] {
					return nil, fmt.Errorf("%s is in two shards", c.DirName())
				}
				seen[c.DirName()] = true
			}
		}
		m.Conversations = append(m.Conversations, r.Conversations...)
		m.Fresh = append(m.Fresh, r.Fresh...)
		// Each shard extracted the rubric and drafted the plan itself: both
		// were paid for.
		m.Costs.Rubric += r.Costs.Rubric
		m.Costs.RubricTokens += r.Costs.RubricTokens
		m.Costs.Plan += r.Costs.Plan
		if r.StartedAt.Before(m.StartedAt) {
			m.StartedAt = r.StartedAt
		}
		if r.FinishedAt.After(m.FinishedAt) {
			m.FinishedAt = r.FinishedAt
		}
		// The stamps are the whole run's: one shard whose gate was
		// bypassed, or whose agent ran unjailed, makes the merged run so
		// (taken from the first shard alone, the merge lost both).
		m.GateBypassed = m.GateBypassed || r.GateBypassed
		if m.Jail == jail.Bubblewrap && r.Jail != jail.Bubblewrap {
			m.Jail, m.JailNote = r.Jail, "a shard ran without the jail: "+r.JailNote
		}
	}
	byIndex := func(cs []record.Conversation) {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].Index < cs[j].Index })
	}
	byIndex(m.Conversations)
	byIndex(m.Fresh)
	m.Plan.Fillers = nil
	for _, c := range m.Conversations {
		m.Plan.Fillers = append(m.Plan.Fillers, c.Fillers)
	}
	m.Status = record.StatusRunning // Decide sets it from the conversations
	engine.TallyCosts(&m)
	verdict.Decide(&m)
	return &m, nil
}

// writeRun writes a merged run's run.json, rubric.json and plan.json.
func writeRun(dir string, r *record.Run) error {
	if err := record.Save(dir, r); err != nil {
		return err
	}
	if r.Rubric != nil {
		if err := record.WriteJSON(filepath.Join(dir, "rubric.json"), r.Rubric); err != nil {
			return err
		}
	}
	return record.WriteJSON(filepath.Join(dir, "plan.json"), r.Plan)
}

// copyTree copies a transcript folder's regular files (a run folder holds
// nothing else; a link is not followed out of it).
func copyTree(from, to string) error {
	root, err := os.OpenRoot(from)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // the unit never started a turn
		}
		return err
	}
	defer root.Close()
	return fsWalk(root, ".", to)
}

func fsWalk(root *os.Root, rel, to string) error {
	if err := os.MkdirAll(filepath.Join(to, rel), record.DirMode); err != nil {
		return err
	}
	f, err := root.Open(rel)
	if err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := filepath.Join(rel, e.Name())
		switch {
		case e.IsDir():
			if err := fsWalk(root, name, to); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if err := copyFile(root, name, filepath.Join(to, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyFile(root *os.Root, rel, to string) error {
	in, err := root.Open(rel)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, record.FileMode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// interruptedMerge is a merge stopped by SIGINT or SIGTERM between two
// copies: the folder holds the skills copied so far and no suite.json.
func interruptedMerge(dir string) error {
	return exit.Errorf(exit.Interrupted, "interrupted: %s holds part of the merge and no suite.json; remove it and merge again", dir)
}
