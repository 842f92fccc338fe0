// Package ownfile recognises vibe-test's own files wherever they lie: the
// folders it writes (a run's, a suite's, an eval's), the JUnit and
// Markdown reports it writes where it is told, and a skill's config. A
// copy made for the agent (a fixture, a skill's folder) leaves them out:
// nothing the agent can see may say that it is measured, and a report
// written into a skill's folder is no part of the skill.
//
// It names the record files itself rather than importing the packages
// that write them (eval imports the sandbox, which asks this package);
// its test holds the names to theirs.
package ownfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
)

// Config is a skill's vibe-test config, read beside its SKILL.md.
const Config = "vibe-test.yaml"

// The record files that make a folder vibe-test's.
const (
	runFile   = "run.json"   // with planFile: a run's folder
	planFile  = "plan.json"  // a run's plan
	evalFile  = "eval.json"  // an eval's folder (or a rejudge's), kind "eval"
	suiteFile = "suite.json" // a suite's folder
	evalKind  = "eval"       // eval.json's kind
	// A stored eval baseline (cases/baselines/<name>/): its manifest, of
	// kind "baseline", beside the cells it kept.
	manifestFile = "manifest.json"
	baselineKind = "baseline"
)

// The files of a case set (vibe-test eval's input): cases.yaml, and a
// folder per case holding case.yaml and its answer key.
const (
	caseSetFile = "cases.yaml"
	caseFile    = "case.yaml"
	keyFile     = "key.json"
)

// recordCap bounds what is read of a file named as a record to tell it
// from a user's file of that name: eval.json and suite.json are indexes
// (their cells and runs are files of their own), a few KiB.
const recordCap = 4 << 20

// IsOutputFolder says whether dir is a folder vibe-test wrote: a run's
// (run.json beside plan.json), an eval's (eval.json of kind "eval") or a
// suite's (suite.json with its schema version, seed and skills). A user's
// eval.json or suite.json of another shape is theirs.
func IsOutputFolder(dir string) bool {
	if regular(filepath.Join(dir, runFile)) && regular(filepath.Join(dir, planFile)) {
		return true
	}
	if b, ok := readRecord(filepath.Join(dir, evalFile)); ok && gjson.GetBytes(b, "kind").String() == evalKind &&
		gjson.GetBytes(b, "schema_version").Exists() {
		return true
	}
	if b, ok := readRecord(filepath.Join(dir, suiteFile)); ok && gjson.GetBytes(b, "schema_version").Exists() &&
		gjson.GetBytes(b, "seed").Exists() && gjson.GetBytes(b, "skills").IsArray() {
		return true
	}
	if b, ok := readRecord(filepath.Join(dir, manifestFile)); ok && gjson.GetBytes(b, "kind").String() == baselineKind &&
		gjson.GetBytes(b, "schema_version").Exists() {
		return true
	}
	return false
}

// IsCaseSet says whether dir is a case set of vibe-test eval's or one of
// its cases: a case folder holds case.yaml beside its answer key, a set
// holds cases.yaml beside such folders. Its keys are what a generator is
// graded against; a copy the agent sees holds none.
func IsCaseSet(dir string) bool {
	if isCase(dir) {
		return true
	}
	if !regular(filepath.Join(dir, caseSetFile)) {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() && isCase(filepath.Join(dir, e.Name())) {
			return true
		}
	}
	return false
}

func isCase(dir string) bool {
	return regular(filepath.Join(dir, caseFile)) && regular(filepath.Join(dir, keyFile))
}

// IsReport says whether the regular file at path is a report vibe-test
// wrote, JUnit or Markdown, of a run, a suite or an eval: each begins so.
func IsReport(path string) bool {
	// A regular file before it is opened: opening a FIFO (a --junit
	// path that is one) blocks until a writer comes, for ever.
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	h := string(head[:n])
	// The Markdown titles: a run's or a suite's "## vibe-test", an eval's
	// "## vibe-test eval: <skill>" (evalreport.TitlePrefix).
	return strings.HasPrefix(h, "## vibe-test\n") || strings.HasPrefix(h, "## vibe-test eval: ") ||
		(strings.HasPrefix(h, "<?xml") && strings.Contains(h, `<testsuites name="vibe-test `))
}

// LeftOut says whether the entry at p is vibe-test's own and so left out
// of a copy the agent sees: an output folder (a stored baseline's too), a
// case set with its answer keys, a report, or a config (a fixture holding
// other skills' folders holds their configs, which name vibe-test and
// hold their tasks and rubrics).
func LeftOut(p string, d fs.DirEntry) bool {
	if d.IsDir() {
		return IsOutputFolder(p) || IsCaseSet(p)
	}
	if d.Name() == Config {
		return true
	}
	return d.Type().IsRegular() && IsReport(p)
}

func regular(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode().IsRegular()
}

// readRecord reads a regular file of at most recordCap bytes.
func readRecord(p string) ([]byte, bool) {
	st, err := os.Lstat(p)
	if err != nil || !st.Mode().IsRegular() || st.Size() > recordCap {
		return nil, false
	}
	b, err := os.ReadFile(p)
	return b, err == nil
}
