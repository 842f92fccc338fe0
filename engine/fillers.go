package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/vibe-test/vibe-test/fillers"
	"github.com/vibe-test/vibe-test/plan"
)

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

// checkWorkFiles refuses work chores whose files would land on what the
// probes need: a file of the fixture, of the config's files or of a
// probe's setup. The chores only read their own folder; this keeps that
// folder theirs.
func checkWorkFiles(s *plan.Schedule, pool []fillers.Passage, pl *plan.Plan) error {
	if s.FillerKind() != plan.FillersWork {
		return nil
	}
	taken := map[string]string{}
	for path := range pl.Files {
		taken[filepath.Clean(path)] = "the config's files"
	}
	for i, p := range pl.Probes {
		for path := range p.Setup {
			taken[filepath.Clean(path)] = fmt.Sprintf("probe %d's setup", i+1)
		}
	}
	var paths []string
	for _, p := range pool {
		for path := range p.Files {
			paths = append(paths, filepath.Clean(path))
		}
	}
	sort.Strings(paths)
	for _, path := range paths {
		for dir := path; dir != "." && dir != "/"; dir = filepath.Dir(dir) {
			if who, ok := taken[dir]; ok {
				return fmt.Errorf("--fillers work writes %s, which %s also writes: the chores must not touch what the probes need; move that file out of %s/", path, who, fillers.WorkDir)
			}
			if pl.Fixture != "" {
				if _, err := os.Lstat(filepath.Join(pl.Fixture, dir)); err == nil && dir == path {
					return fmt.Errorf("--fillers work writes %s, which the fixture %s already has: the chores must not touch what the probes need; move it out of %s/", path, pl.Fixture, fillers.WorkDir)
				}
			}
		}
	}
	return nil
}
