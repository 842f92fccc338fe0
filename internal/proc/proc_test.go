package proc

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStderrKeepsItsFirst64KiB(t *testing.T) {
	var s Stderr
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				if n, err := s.Write([]byte(strings.Repeat("x", 1000))); n != 1000 || err != nil {
					t.Errorf("Write: %d, %v; want the whole write accepted", n, err)
				}
				_ = s.String() // read while others write (go test -race)
			}
		}()
	}
	wg.Wait()
	if got := len(s.String()); got != StderrLimit {
		t.Errorf("kept %d bytes of 160000, want %d", got, StderrLimit)
	}
}

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"kill -TERM $$", 143}, {"kill -KILL $$", 137}} {
		err := exec.Command("sh", "-c", c.script).Run()
		if got := ExitCode(err); got != c.want {
			t.Errorf("%s: ExitCode %d, want %d", c.script, got, c.want)
		}
		if c.want != 0 && !IsExit(err) {
			t.Errorf("%s: IsExit(%v) false", c.script, err)
		}
	}
	err := exec.Command(filepath.Join(t.TempDir(), "none")).Run()
	if ExitCode(err) != 0 || IsExit(err) {
		t.Errorf("a binary that could not start: ExitCode %d, IsExit %v; want 0, false", ExitCode(err), IsExit(err))
	}
}

// TestStopGroup stops a group whose shell ignores SIGTERM: its child
// (which does not) ends at once, the shell at the SIGKILL after grace.
func TestStopGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap "" TERM; sleep 30 & wait; sleep 30`)
	cmd.SysProcAttr = SysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(done) }()
	time.Sleep(200 * time.Millisecond) // the trap is set
	StopGroup(cmd.Process.Pid, done, 300*time.Millisecond)
	<-done
	if got := ExitCode(werr); got != 137 {
		t.Errorf("exit %d (%v), want 137: the shell ignores SIGTERM and must get SIGKILL", got, werr)
	}
}

// TestDrain reads a process's lines to their end, though a child it
// started in the background keeps the pipe open past its exit.
func TestDrain(t *testing.T) {
	cmd := exec.Command("sh", "-c", `echo one; printf 'two\nthree'; sleep 30 &`)
	cmd.SysProcAttr = SysProcAttr()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	defer StopGroup(cmd.Process.Pid, make(chan struct{}), 0) // the sleep
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	var got []string
	Drain(ReadLines(pr, 1), waited, pr, 100*time.Millisecond, func(b []byte) { got = append(got, string(b)) })
	if strings.Join(got, "|") != "one\n|two\n|three" {
		t.Errorf("lines %q", got)
	}
}

func TestReadLinesLongLine(t *testing.T) {
	long := strings.Repeat("y", 200<<10)
	var got []string
	for l := range ReadLines(io.MultiReader(strings.NewReader(long+"\n"), strings.NewReader("end")), 0) {
		got = append(got, string(l))
	}
	if len(got) != 2 || got[0] != long+"\n" || got[1] != "end" {
		t.Errorf("%d lines, first %d bytes; want a 200 KiB line and the unterminated last", len(got), len(got[0]))
	}
}

func TestVersion(t *testing.T) {
	dir := t.TempDir()
	write := func(name, script string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if v, err := Version(t.Context(), write("ok", `echo "2.1.328 (Claude Code)"`), nil); v != "2.1.328" || err != nil {
		t.Errorf("Version: %q, %v", v, err)
	}
	if _, err := Version(t.Context(), write("none", `echo unknown`), nil); err == nil || !strings.Contains(err.Error(), `printed "unknown", not a version`) {
		t.Errorf("no version printed: %v", err)
	}
	if _, err := Version(t.Context(), write("fails", `echo broken >&2; exit 2`), nil); err == nil || !strings.Contains(err.Error(), "(broken)") {
		t.Errorf("a failing --version: %v; want its stderr named", err)
	}
}

// TestCloseInput closes the stdin of a process that exits at its end
// (cat), and of one that does not (a shell ignoring SIGTERM, stopped by
// SIGKILL): both are waited for and their output drained.
func TestCloseInput(t *testing.T) {
	for _, c := range []struct {
		script string
		want   int
	}{{"cat", 0}, {`trap "" TERM; cat >/dev/null; echo bye; sleep 30`, 137}} {
		cmd := exec.Command("sh", "-c", c.script)
		cmd.SysProcAttr = SysProcAttr()
		stdin, stdout, err := StartPiped(cmd, "sh", "sh")
		if err != nil {
			t.Fatal(err)
		}
		lines := ReadLines(stdout, 4)
		waited := make(chan struct{})
		var werr error
		go func() { werr = cmd.Wait(); close(waited) }()
		if _, err := stdin.Write([]byte("hello\n")); err != nil {
			t.Fatal(err)
		}
		CloseInput(stdin, stdout, lines, waited, cmd.Process.Pid, 200*time.Millisecond)
		if got := ExitCode(werr); got != c.want {
			t.Errorf("%s: exit %d (%v), want %d", c.script, got, werr, c.want)
		}
		if _, ok := <-lines; ok {
			t.Errorf("%s: lines still open after CloseInput", c.script)
		}
	}
}

func TestWatchContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	called := make(chan struct{})
	w := WatchContext(ctx, func(done <-chan struct{}) { close(called); <-done })
	cancel()
	<-called
	if !w.Done() {
		t.Error("Done after the context ended: not stopped")
	}
	w = WatchContext(t.Context(), func(<-chan struct{}) { t.Error("stop called though the context never ended") })
	if w.Done() {
		t.Error("Done before the context ended: stopped")
	}
}

func TestEnviron(t *testing.T) {
	got := Environ(map[string]string{"PATH": "/bin", "HOME": "/h"}, []string{"HOME=/other", "EXTRA=a=b", "no-equals"})
	want := []string{"EXTRA=a=b", "HOME=/other", "PATH=/bin"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Environ = %q, want %q (extra over vars, sorted, an entry without = dropped)", got, want)
	}
}

// TestCommand: the CLI runs in its own session (so a group stop reaches
// its helpers and it has no terminal), with the given environment and
// folder only.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	out, err := Command("sh", []string{"-c", `read -r pid comm state ppid pgrp sid rest </proc/$$/stat; echo "$sid $$ $ONLY $(pwd)"`}, []string{"ONLY=set", "PATH=/usr/bin:/bin"}, dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	if len(f) != 4 || f[0] != f[1] || f[2] != "set" || f[3] != dir {
		t.Errorf("session, pid, $ONLY, folder = %q; want the shell to lead its own session, ONLY=set, %s", f, dir)
	}
	if Grace(0) != DefaultGrace || Grace(time.Second) != time.Second {
		t.Errorf("Grace(0) = %v, Grace(1s) = %v", Grace(0), Grace(time.Second))
	}
}
