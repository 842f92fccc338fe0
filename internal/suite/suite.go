// Package suite runs many skills as one suite: `vibe-test ./skills` (every
// SKILL.md below a folder) or `vibe-test a/SKILL.md b/SKILL.md`. Each skill
// is an ordinary run (engine.Start) in a run folder of its own inside the
// suite folder, beside suite.json, the index written as the skills finish;
// all of them draw on one concurrency limit and one budget.
//
// A suite can be split over machines: --shard i/n deals the suite's units
// (a skill's conversation with its fresh triple) round-robin over n shards,
// each shard writes its own suite folder, and Merge joins the folders into
// the suite folder one unsharded run would have written, deciding each
// skill over the union of its conversations.
package suite

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/estimate"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/term"
)

// Settings of a suite: the engine's settings shared by every skill (its
// SkillPath, ConfigPath, RubricPath and OutDir are set per skill), the
// paths given, and the shard to run.
type Settings struct {
	engine.Settings
	Paths []string
	// Out is the suite folder ("" = ./vibe-runs/<UTC time>-suite).
	Out string
	// Shard and Shards: run share Shard (1-based) of Shards; 0 runs all.
	Shard, Shards int
}

// Hooks are what the caller hears of a suite. Any may be nil.
type Hooks struct {
	// Show renders a skill's run once it is decided (its chart), writing
	// any line of its own to stderr: the skill's, prefixed with its name
	// and under the lock every skill of the suite shares (skills run side
	// by side).
	Show func(dir string, r *record.Run, stderr io.Writer) error
	// Done hears each skill as it finishes, never while another skill's
	// line is being written.
	Done func(e record.SuiteEntry)
	// Progress, when set, makes each skill's progress view, writing to
	// w (the skill's own lines, each prefixed with its name).
	Progress func(w io.Writer) engine.Progress
}

// Skill is a skill found for a suite.
type Skill struct {
	Name string // unique within the suite: its run folder's name
	Path string // the SKILL.md
	Dir  string
	Hash string
}

// IsSuite reports whether paths name a suite rather than one skill: more
// than one path, or a folder with no SKILL.md of its own.
func IsSuite(paths []string) bool {
	if len(paths) > 1 {
		return true
	}
	if len(paths) == 0 {
		return false
	}
	st, err := os.Stat(paths[0])
	if err != nil || !st.IsDir() {
		return false
	}
	// Lstat: a SKILL.md that is a dangling link still makes the folder one
	// skill, which the loader refuses with the reason (the CLI hides it).
	_, err = os.Lstat(filepath.Join(paths[0], "SKILL.md"))
	return err != nil
}

// skipDirs are folders a search for skills never enters: vibe-test's own
// output and other tools' caches hold copies of skills that are not the
// library's.
var skipDirs = map[string]bool{"vibe-runs": true, "node_modules": true}

// Discover finds the skills paths name: a SKILL.md, a skill's folder, or a
// folder whose skills lie below it (a skill's own folder is not searched
// further). Skills are loaded, sorted by name, and named uniquely (a second
// "x" becomes "x-2").
func Discover(paths []string, agent string) ([]Skill, error) {
	var found []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: no such file or folder (expected a SKILL.md, its folder, or a folder of skills)", p)
		}
		if !st.IsDir() {
			found = append(found, p)
			continue
		}
		if _, err := os.Stat(filepath.Join(p, "SKILL.md")); err == nil {
			found = append(found, filepath.Join(p, "SKILL.md"))
			continue
		}
		before := len(found)
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if path != p && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "SKILL.md")); err == nil {
				found = append(found, filepath.Join(path, "SKILL.md"))
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: searching for skills: %w", p, err)
		}
		if len(found) == before {
			return nil, fmt.Errorf("%s: no SKILL.md in the folder or below it (expected a skill, or a folder of skills)", p)
		}
	}
	var skills []Skill
	seen := map[string]bool{}
	// Every skill that cannot run is named, not only the first: an author
	// who fixed one learned of the next only from the next attempt.
	var refused []error
	distinct := 0
	for _, p := range found {
		// Named twice: run once, refused once.
		if abs, err := filepath.Abs(p); err == nil {
			if seen[abs] {
				continue
			}
			seen[abs] = true
		}
		distinct++
		sk, err := skill.LoadAs(p, engine.AgentName(agent))
		if err != nil {
			refused = append(refused, err)
			continue
		}
		skills = append(skills, Skill{Name: sk.Name, Path: sk.Path, Dir: sk.Dir, Hash: sk.Hash})
	}
	switch len(refused) {
	case 0:
	case 1:
		return nil, refused[0]
	default:
		msgs := make([]string, len(refused))
		for i, err := range refused {
			msgs[i] = err.Error()
		}
		// Each message may hold "; " itself: the skills are numbered.
		for i := range msgs {
			msgs[i] = fmt.Sprintf("(%d) %s", i+1, msgs[i])
		}
		return nil, fmt.Errorf("%d of %d skills cannot run: %s", len(refused), distinct, strings.Join(msgs, " "))
	}
	sort.SliceStable(skills, func(i, j int) bool {
		if skills[i].Name != skills[j].Name {
			return skills[i].Name < skills[j].Name
		}
		return skills[i].Path < skills[j].Path
	})
	// The suite's name for a skill is its folder's in the suite folder:
	// fit for a file name (engine.FolderPart), and apart from every other
	// whatever the case, as on a file system that ignores it (macOS's):
	// Foo and foo would have shared one folder there.
	taken := map[string]bool{}
	for i := range skills {
		base := engine.FolderPart(skills[i].Name)
		name := base
		for n := 2; taken[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		taken[strings.ToLower(name)] = true
		skills[i].Name = name
	}
	return skills, nil
}

// ShardUnits is shard i's (1-based) share of n: every unit of skills,
// sorted by skill name and conversation index, dealt round-robin, so each
// shard gets a fair share of every skill.
func ShardUnits(skills []record.ShardSkill, i, n int) []record.Unit {
	var all []record.Unit
	sorted := slices.Clone(skills)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
	for _, s := range sorted {
		for k := 1; k <= s.Conversations; k++ {
			all = append(all, record.Unit{Skill: s.Name, Index: k})
		}
	}
	var mine []record.Unit
	for j, u := range all {
		if j%n == i-1 {
			mine = append(mine, u)
		}
	}
	return mine
}

// DryRun is each skill's engine.DryRun, in name order, with the
// conversations the suite (or the shard) would give it.
func DryRun(ctx context.Context, s Settings, env []string, exactSeed bool) ([]*estimate.Estimate, error) {
	skills, err := Discover(s.Paths, s.Agent)
	if err != nil {
		return nil, exit.With(exit.Tool, err)
	}
	count := map[string]int{}
	for _, sk := range skills {
		count[sk.Name] = s.Conversations
	}
	if s.Shards > 0 {
		var all []record.ShardSkill
		for _, sk := range skills {
			all = append(all, record.ShardSkill{Name: sk.Name, Hash: sk.Hash, Conversations: s.Conversations})
		}
		count = map[string]int{}
		for _, u := range ShardUnits(all, s.Shard, s.Shards) {
			count[u.Skill]++
		}
	}
	var out []*estimate.Estimate
	for _, sk := range skills {
		if count[sk.Name] == 0 {
			continue
		}
		set := s.Settings
		set.SkillPath, set.ConfigPath, set.RubricPath = sk.Path, "", reviewedRubric(sk)
		set.Conversations = count[sk.Name]
		e, err := engine.DryRun(ctx, set, env, exactSeed)
		if err != nil {
			return nil, err
		}
		e.Skill = sk.Name // the suite's name for it: two skills may share one
		out = append(out, e)
	}
	return out, nil
}

// Run runs every skill of the suite (or of the shard) and writes the suite
// folder. The error is a tool error or an interrupt; the suite's verdict
// is its ExitCode.
func Run(ctx context.Context, s Settings, stdio engine.IO, h Hooks) (*record.Suite, string, error) {
	skills, err := Discover(s.Paths, s.Agent)
	if err != nil {
		return nil, "", exit.With(exit.Tool, err)
	}
	idx := &record.Suite{SchemaVersion: record.SuiteSchemaVersion, Status: record.StatusRunning,
		StartedAt: time.Now().UTC(), Seed: s.Seed}
	units := map[string][]int{}
	for _, sk := range skills {
		units[sk.Name] = nil // all of them
	}
	if s.Shards > 0 {
		plan := &record.ShardPlan{Index: s.Shard, Count: s.Shards}
		for _, sk := range skills {
			plan.Skills = append(plan.Skills, record.ShardSkill{Name: sk.Name, Hash: sk.Hash, Conversations: s.Conversations})
		}
		plan.Units = ShardUnits(plan.Skills, s.Shard, s.Shards)
		units = map[string][]int{}
		for _, u := range plan.Units {
			units[u.Skill] = append(units[u.Skill], u.Index)
		}
		idx.Shard = plan
	}
	// What can be checked before the suite folder exists is: a bad config
	// or a missing CLI is one line and no folder, not a folder of failed
	// runs. Each skill's inputs are checked as its run will check them
	// (the config with the schedule's flags, a reviewed rubric); its run
	// folder is made later, inside the suite's, so no --out is checked.
	for _, sk := range skills {
		set := s.Settings
		set.SkillPath, set.ConfigPath, set.RubricPath, set.OutDir = sk.Path, "", reviewedRubric(sk), ""
		if err := engine.CheckInputs(set); err != nil {
			return nil, "", err
		}
	}
	if _, err := engine.FindAgent(s.Agent, stdio.Env); err != nil {
		return nil, "", exit.With(exit.Tool, err)
	}
	if err := engine.CheckOutDir(s.Out); err != nil {
		return nil, "", exit.With(exit.Tool, err)
	}
	dir, err := engine.MakeFolder(s.Out, "suite", record.SuiteFile)
	if err != nil {
		return nil, "", exit.With(exit.Tool, err)
	}
	var run []Skill // the skills with a share in this shard
	for _, sk := range skills {
		if _, ok := units[sk.Name]; ok {
			run = append(run, sk)
			idx.Skills = append(idx.Skills, record.SuiteEntry{Name: sk.Name, Path: sk.Path, RunDir: sk.Name, Status: record.StatusPending})
		}
	}
	if err := record.SaveSuite(dir, idx); err != nil {
		return nil, dir, exit.With(exit.Tool, err)
	}
	fmt.Fprintf(stdio.Stderr, "vibe-test: suite folder %s (%s)\n", dir, skillCount(len(run), s))

	shared := engine.NewShared(s.Concurrency, s.MaxBudgetUSD)
	var jobs []job
	for i, sk := range run {
		set := s.Settings
		set.SkillPath, set.ConfigPath, set.RubricPath = sk.Path, "", reviewedRubric(sk)
		set.OutDir = filepath.Join(dir, sk.Name)
		set.Units = units[sk.Name]
		set.Shared = shared
		jobs = append(jobs, job{i: i, new: true, run: func(sio engine.IO, eh engine.Hooks) (*record.Run, error) {
			return engine.Start(ctx, set, sio, eh)
		}})
	}
	if err := runSide(ctx, dir, idx, jobs, stdio, h); err != nil {
		return idx, dir, err
	}
	if ctx.Err() != nil {
		return idx, dir, exit.Errorf(exit.Interrupted, "interrupted; the suite folder %s keeps what was done", dir)
	}
	return idx, dir, nil
}

// finish sets the suite's status and exit code from its skills'. A shard
// holds a share of each skill's conversations, so its verdicts are partial:
// its exit code reports only what stopped it (3, 130); the merged suite
// gates.
func finish(ctx context.Context, idx *record.Suite) { idx.Settle(ctx.Err() != nil) }

// RubricFile is a skill's reviewed rubric in a suite: rubric.json beside
// its SKILL.md, used instead of extracting one (so shards on different
// machines judge by the same criteria).
const RubricFile = "rubric.json"

func reviewedRubric(sk Skill) string {
	if p := filepath.Join(sk.Dir, RubricFile); exists(p) {
		return p
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func skillCount(n int, s Settings) string {
	words := fmt.Sprintf("%d skills", n)
	if n == 1 {
		words = "1 skill"
	}
	if s.Shards > 0 {
		words += fmt.Sprintf(", shard %d/%d", s.Shard, s.Shards)
	}
	return words
}

// skillIO is a skill's stdout and stderr in a suite: whole lines, each
// prefixed with the skill's name (cleaned: a folder's name reaches the
// terminal), under the lock all skills share.
func skillIO(stdio engine.IO, mu *sync.Mutex, name string) engine.IO {
	prefix := "[" + term.Line(name) + "] "
	return engine.IO{Env: stdio.Env,
		Stdout: &prefixWriter{mu: mu, w: stdio.Stdout, prefix: prefix},
		Stderr: &prefixWriter{mu: mu, w: stdio.Stderr, prefix: prefix}}
}

// prefixWriter writes whole lines, each with a prefix, under a lock shared
// by every skill of the suite.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := slices.Index(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := fmt.Fprintf(p.w, "%s%s", p.prefix, p.buf[:i+1]); err != nil {
			return len(b), err
		}
		p.buf = p.buf[i+1:]
	}
}

// flush writes a last line that lacks its newline.
func (p *prefixWriter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf)
		p.buf = nil
	}
}
