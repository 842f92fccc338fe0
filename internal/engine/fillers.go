package engine

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/fillers"
	"github.com/vibe-test/vibe-test/internal/plan"
)

// scheduleAndPool is a run's schedule (the config's, with the flags) and
// the fillers it draws from, checked as the run and --dry-run both check
// them before anything starts; errors carry exit code 3.
func (o Settings) scheduleAndPool(cfg *plan.Config, cfgPath string) (*plan.Schedule, []fillers.Passage, error) {
	sched, err := o.schedule(cfg)
	if err != nil {
		where := "the schedule (--dilute-to, --compact-before, --compact-at, --fillers, --max-fillers)"
		if cfg != nil && cfg.Schedule != nil {
			where = cfgPath + ": field \"schedule\" with the flags"
		}
		return nil, nil, exit.Errorf(exit.Tool, "%s: %v", where, err)
	}
	pool, err := fillerPool(sched, o.FillersDir)
	if err != nil {
		return nil, nil, exit.With(exit.Tool, err)
	}
	if err := checkWorkFiles(sched, cfg, cfgPath); err != nil {
		return nil, nil, exit.With(exit.Tool, err)
	}
	return sched, pool, nil
}

// fillerPool is what a schedule's fillers are drawn from: the work chores,
// or the built-in passages with the author's own folder of them (dir).
func fillerPool(s *plan.Schedule, dir string) ([]fillers.Passage, error) {
	if s.FillerKind() == plan.FillersWork {
		if dir != "" {
			return nil, fmt.Errorf("--fillers work: the work chores replace the passages, so a folder of passages (%s) cannot go with them", dir)
		}
		return fillers.Work(), nil
	}
	pool := fillers.Builtin()
	if dir != "" {
		own, err := fillers.LoadDir(dir)
		if err != nil {
			return nil, err
		}
		pool = append(pool, own...)
	}
	return pool, nil
}

// pickFillers is a conversation's fillers, by seed: the seed's schedule
// asks six, picked as every vibe-test has picked them; a diluted-to one
// as many as its levels take, so it gets the whole pool in a seeded order
// (the conversation asks them in turn, and from the start again if it
// needs more). The first six are the same either way.
func pickFillers(s *plan.Schedule, pool []fillers.Passage, seed int64) ([]fillers.Passage, error) {
	n := fillersPerConversation
	if !s.Fixed() {
		n = len(pool)
	}
	return fillers.Pick(pool, n, seed)
}

// checkWorkFiles refuses work chores beside a config that puts something
// of its own in their folder (fillers.WorkDir): the fixture, the config's
// files or a probe's setup. The chores only read their own folder; this
// keeps it theirs, so a chore never touches what the probes need. A
// drafted plan has no fixture or files (cfg nil).
func checkWorkFiles(s *plan.Schedule, cfg *plan.Config, cfgPath string) error {
	if s.FillerKind() != plan.FillersWork || cfg == nil {
		return nil
	}
	inWorkDir := func(path string) bool {
		first, _, _ := strings.Cut(filepath.ToSlash(filepath.Clean(path)), "/")
		return first == fillers.WorkDir
	}
	refuse := func(what string) error {
		return fmt.Errorf("%s: %s is in %s/, the folder the work chores (--fillers work) write and read; they must not touch what the probes need: move it, or use --fillers passages", cfgPath, what, fillers.WorkDir)
	}
	for _, path := range slices.Sorted(maps.Keys(cfg.Files)) {
		if inWorkDir(path) {
			return refuse(fmt.Sprintf("field \"files\": %s", path))
		}
	}
	for i, p := range cfg.Probes {
		for _, path := range slices.Sorted(maps.Keys(p.Setup)) {
			if inWorkDir(path) {
				return refuse(fmt.Sprintf("field \"probes[%d].setup\": %s", i, path))
			}
		}
	}
	if cfg.Fixture != "" {
		if _, err := os.Lstat(filepath.Join(cfg.Fixture, fillers.WorkDir)); err == nil {
			return refuse(fmt.Sprintf("field \"fixture\": %s", filepath.Join(cfg.Fixture, fillers.WorkDir)))
		}
	}
	return nil
}
