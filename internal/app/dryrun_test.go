package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/exit"
)

// --dry-run says what the run would call and cost, and does none of it: the
// scripted model receives no request, no claude process starts (the CLI
// vibe-test would run leaves a mark when it does), no run folder is made.
func TestDryRunCallsNothing(t *testing.T) {
	t.Parallel()
	script, err := demo.Script([]string{"steady"}, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, files, paths := startDemo(t, script)
	mark := filepath.Join(files, "started")
	cli := filepath.Join(files, "claude")
	wrapper := "#!/bin/sh\ntouch '" + mark + "'\nexec '" + fastCLI(t) + "' \"$@\"\n"
	if err := os.WriteFile(cli, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	env := append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+cli, "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"))
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", paths.Skill, "--config", paths.Config, "--out", out,
		"--dry-run", "--conversations", "3", "--seed", "7", "--model", "claude-sonnet-5-5", "--judge-model", "claude-haiku-4-5", "--judge-repeats", "2"},
		IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	t.Logf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	if code != exit.OK {
		t.Fatalf("exit %d, want 0", code)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model received %d requests", n)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("a claude process was started")
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a run folder was made")
	}
	for _, want := range []string{
		"agent turns: 3 conversations x 10 turns                 30         3",
		"fresh sessions: 3 triples x 3 probes                     9         9",
		"rubric extraction                                        1         1",
		"judge calls: 21 judged turns x 2                        42         6",
		"estimated cost: $",
		"prices: list prices read ",
		"characters a token",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the dry run lacks %q", want)
		}
	}
	if strings.Contains(stdout.String(), "plan drafting") {
		t.Error("a plan call counted although the config gives the tasks")
	}
}

// Another agent's dry run counts the calls but prints no cost: the price
// table is claude's.
func TestDryRunOtherAgentHasNoPrices(t *testing.T) {
	t.Parallel()
	paths, err := demo.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", paths.Skill, "--config", paths.Config, "--dry-run", "--seed", "7", "--agent", "codex"},
		IO{Env: DemoEnv(os.Environ(), "http://127.0.0.1:9"), Stdout: &stdout, Stderr: &stderr})
	if code != exit.OK || !strings.Contains(stdout.String(), "estimated cost: none: prices: claude only (this run goes through codex;") || strings.Contains(stdout.String(), "estimated cost: $") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

// The dry run refuses what the run refuses, with the same line and exit 3:
// a config whose schedule compacts, under --agent gemini, which cannot.
func TestDryRunRefusesWhatTheRunRefuses(t *testing.T) {
	t.Parallel()
	paths, err := demo.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(paths.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths.Config, append(cfg, "schedule:\n  compact_at: 120k\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(flags ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		args := append([]string{"vibe-test", paths.Skill, "--config", paths.Config, "--seed", "7", "--agent", "gemini"}, flags...)
		code := Main(context.Background(), args, IO{Env: DemoEnv(os.Environ(), "http://127.0.0.1:9"), Stdout: &stdout, Stderr: &stderr})
		return code, stderr.String()
	}
	out := filepath.Join(t.TempDir(), "run")
	runCode, runSays := run("--out", out)
	dryCode, drySays := run("--dry-run")
	want := paths.Config + `: field "schedule.compact_at" asks for a compaction`
	if runCode != exit.Tool || !strings.Contains(runSays, want) || strings.Count(runSays, "\n") != 1 {
		t.Fatalf("the run: exit %d, %q; want exit 3 and one line with %q", runCode, runSays, want)
	}
	if dryCode != exit.Tool || drySays != runSays {
		t.Fatalf("the dry run: exit %d, %q; want exit 3 and the run's line %q", dryCode, drySays, runSays)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a run folder was made")
	}
}

// A probe's setup that the sandbox cannot write (data/ is a folder of the
// demo's fixture) is refused before anything runs, by the dry run too:
// one line naming probes[0].setup, exit 3; not at that probe, after the
// turns before it were paid for.
func TestDryRunRefusesASetupOnAFixtureFolder(t *testing.T) {
	t.Parallel()
	paths, err := demo.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(paths.Config)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(cfg), "  - task: Quick one,", "  - setup: {data: \"oops\\n\"}\n    task: Quick one,", 1)
	if bad == string(cfg) || os.WriteFile(paths.Config, []byte(bad), 0o644) != nil {
		t.Fatal("cannot add a setup to the demo's first probe")
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", paths.Skill, "--config", paths.Config, "--dry-run", "--seed", "7"},
		IO{Env: DemoEnv(os.Environ(), "http://127.0.0.1:9"), Stdout: &stdout, Stderr: &stderr})
	want := `field "probes[0].setup": "data": data is a folder in the fixture, expected a file there`
	if code != exit.Tool || !strings.Contains(stderr.String(), paths.Config) || !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("exit %d, %q; want exit 3 and one line with %q", code, stderr.String(), want)
	}
}

// A TMPDIR whose path names the experiment ("vibe-test-tmp", a CI job's
// "skill-tests@tmp") is refused before anything runs, a dry run as the
// run: every sandbox made there would show the agent the word in its
// working directory (Claude Code's system prompt names it).
func TestTempDirNamingTheExperimentIsRefused(t *testing.T) {
	script, err := demo.Script([]string{"steady"}, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, files, paths := startDemo(t, script)
	t.Setenv("TMPDIR", "/nonexistent/ci/vibe-test-tmp")
	env := append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+fastCLI(t), "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"))
	for _, dry := range []bool{true, false} {
		args := []string{"vibe-test", paths.Skill, "--config", paths.Config, "--out", filepath.Join(files, "run"), "--conversations", "1"}
		if dry {
			args = append(args, "--dry-run")
		}
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), args, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
		want := `vibe-test: the temp folder /nonexistent/ci/vibe-test-tmp (TMPDIR) names "vibe": the agent works in a folder made there and sees its path`
		if code != exit.Tool || !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("dry run %v: exit %d, stderr %q; want exit 3 and the one line %q...", dry, code, stderr.String(), want)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("dry run %v: the model received %d requests", dry, n)
		}
		if _, err := os.Stat(filepath.Join(files, "run")); err == nil {
			t.Errorf("dry run %v: a run folder was made", dry)
		}
	}
}

// So is an eval's, before the case set's keys or any call.
func TestEvalTempDirNamingTheExperimentIsRefused(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "script", "eval-dryrun.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ar.Files {
		p := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", "/nonexistent/evaluations")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "eval", filepath.Join(dir, "skill"), "--cases", filepath.Join(dir, "cases"), "--baseline", "v1", "--dry-run"},
		IO{Env: []string{"PATH=" + t.TempDir()}, Stdout: &stdout, Stderr: &stderr})
	if want := `vibe-test: the temp folder /nonexistent/evaluations (TMPDIR) names "evaluations"`; code != exit.Tool || !strings.HasPrefix(stderr.String(), want) || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 3 and %q...", code, stdout.String(), stderr.String(), want)
	}
}
