package app

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// TestScripts runs the transcripts in testdata/script: each file is one
// command line of vibe-test, the files it reads, the exit code and what it
// prints. They are the cases that need no claude process (bad input, mostly),
// run through Main in this process, in milliseconds.
//
// A script has two commands beyond testscript's own:
//
//	vibe-test ARGS...   Main with ARGS; `! vibe-test` expects a non-zero exit.
//	                    The paths of the script's folder print as $WORK.
//	status N            the last vibe-test's exit code was N.
//
// Main sees only the variables it reads that the script sets (PATH,
// VIBE_TEST_CLAUDE, VIBE_TEST_CACHE_DIR, NO_COLOR, CI, CLAUDE_CONFIG_DIR,
// ANTHROPIC_API_KEY); PATH starts as an empty folder, so no claude is found
// unless a script says where one is. Paths in arguments are absolute
// ($WORK/...): Main runs in this process, whose working folder is the
// package's. `go test ./internal/app -run TestScripts -update` rewrites the
// expected output of `cmp stdout|stderr FILE` in the scripts.
func TestScripts(t *testing.T) {
	runs := testenv.RunsDir(t)
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: testenv.Updating(),
		Setup: func(env *testscript.Env) error {
			empty := filepath.Join(env.WorkDir, ".empty-path")
			env.Setenv("PATH", empty)
			env.Values[lastExit{}] = new(int)
			return os.Mkdir(empty, 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"vibe-test": scriptVibeTest,
			"status":    scriptStatus,
			"recorded":  func(ts *testscript.TestScript, neg bool, args []string) { scriptRecorded(ts, neg, args, runs) },
		},
	})
}

// lastExit keys the last vibe-test's exit code in a script's values.
type lastExit struct{}

// scriptEnv lists the variables Main reads.
var scriptEnv = []string{"PATH", "VIBE_TEST_CLAUDE", "VIBE_TEST_CACHE_DIR", "NO_COLOR", "CI", "CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY"}

func scriptVibeTest(ts *testscript.TestScript, neg bool, args []string) {
	var env []string
	for _, k := range scriptEnv {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	var stdout, stderr strings.Builder
	code := Main(context.Background(), append([]string{"vibe-test"}, args...), IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	work := ts.Getenv("WORK")
	ts.Stdout().Write([]byte(strings.ReplaceAll(stdout.String(), work, "$WORK")))
	ts.Stderr().Write([]byte(strings.ReplaceAll(stderr.String(), work, "$WORK")))
	*ts.Value(lastExit{}).(*int) = code
	switch {
	case neg && code == 0:
		ts.Fatalf("vibe-test exited 0, expected a failure")
	case !neg && code != 0:
		ts.Fatalf("vibe-test exited %d", code)
	}
}

// scriptRecorded copies the recorded run folder NAME
// (internal/testdata/runs) into $WORK/NAME, for a transcript of what a
// command does with a whole run.
func scriptRecorded(ts *testscript.TestScript, neg bool, args []string, runs string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: recorded NAME")
	}
	ts.Check(os.CopyFS(ts.MkAbs(args[0]), os.DirFS(filepath.Join(runs, args[0]))))
}

func scriptStatus(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: status N")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	if got := *ts.Value(lastExit{}).(*int); got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}
