package jail

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bwrap returns a bubblewrap that can start here; where CI=true its absence
// fails the test.
func bwrap(t *testing.T) string {
	t.Helper()
	b := Find(os.Getenv("PATH"))
	if err := Probe(context.Background(), b); err != nil {
		// testenv.Missing's rule, written out: testenv asks this package
		// what the jail hides, so this test cannot import it.
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: tests never skip)", err)
		}
		t.Skip(err)
	}
	return b
}

// run runs a shell script in the jail and returns its output.
func run(t *testing.T, s Spec, script string) (string, error) {
	t.Helper()
	name, args := s.Command("/bin/sh", []string{"-c", script})
	cmd := exec.Command(name, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestHideList(t *testing.T) {
	got := HideList("/home/alice", "/tmp", "/home/alice/project/runs", "/usr/local/share", "/", "relative", "/srv/runs/x", "/srv/runs")
	// A named folder is hidden by its outermost folder that is not the
	// system's (/srv), so no mount point names it (outermost).
	for _, want := range []string{"/home", "/root", "/tmp", "/var/tmp", "/run", "/srv"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not hidden: %v", want, got)
		}
	}
	for _, never := range []string{"/", "/usr/local/share", "relative", "/home/alice", "/home/alice/project/runs", "/srv/runs/x", "/srv/runs"} {
		if slices.Contains(got, never) {
			t.Errorf("%s hidden (a system folder, or inside another hidden one): %v", never, got)
		}
	}
}

// A CI user's home and workspace often live under /var or /opt (Jenkins'
// /var/lib/jenkins, Buildkite's /var/lib/buildkite-agent, TeamCity's
// /opt/buildagent): they are hidden as a home under /home is, but not a
// system folder, a folder above one, anything inside /usr, /etc, /bin, /lib
// or /nix, nor /var's own first level.
func TestHideListUnderVarAndOpt(t *testing.T) {
	got := HideList("/var/lib/jenkins", "/tmp", "/var/lib/jenkins/workspace/job/runs",
		"/opt/buildagent/work/3f2a", "/var/lib", "/var", "/opt", "/usr/local/src/skill", "/etc/skills", "/nix/store/x-skill")
	for _, want := range []string{"/var/lib/jenkins", "/opt/buildagent"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not hidden: %v", want, got)
		}
	}
	for _, never := range []string{"/var/lib", "/var", "/opt", "/usr/local/src/skill", "/etc/skills", "/nix/store/x-skill", "/var/lib/jenkins/workspace/job/runs", "/opt/buildagent/work/3f2a"} {
		if slices.Contains(got, never) {
			t.Errorf("%s hidden (the system, or inside another hidden folder): %v", never, got)
		}
	}
	// An install there is the CLI's root, shown at CLIMount, as one in a home is.
	for binary, want := range map[string]string{
		"/var/lib/jenkins/workspace/job/tools/node_modules/.bin/claude": "/var/lib/jenkins/workspace/job/tools/node_modules",
		"/opt/claude/bin/claude":                  "/opt/claude/bin",
		"/usr/local/lib/node_modules/.bin/claude": "",
	} {
		if got := cliRootOfReal(binary); got != want {
			t.Errorf("cliRootOfReal(%s) = %q, want %q", binary, got, want)
		}
	}
}

func TestCommandOrder(t *testing.T) {
	s := Spec{Bwrap: "/usr/bin/bwrap", Hide: []string{os.TempDir()}, Tmp: "/x/tmp", Writable: []string{"/x/sb"}, Dir: "/x/sb"}
	name, args := s.Command("/bin/true", []string{"-p", "hello"})
	line := strings.Join(args, " ")
	if name != "/usr/bin/bwrap" {
		t.Errorf("runs %s", name)
	}
	for _, want := range []string{"--unshare-pid", "--die-with-parent", "--cap-drop ALL", "--proc /proc", "--setenv TMPDIR /tmp", "--chdir /x/sb"} {
		if !strings.Contains(line, want) {
			t.Errorf("argv lacks %q: %s", want, line)
		}
	}
	if strings.Contains(line, "--unshare-net") || strings.Contains(line, "--unshare-all") {
		t.Errorf("the network must stay shared (the model API): %s", line)
	}
	// Hiding comes first, then /tmp, then the writable binds, then the
	// read-only ones, then the command: later mounts win.
	order := []string{"--tmpfs " + os.TempDir(), "--bind /x/tmp /tmp", "--bind /x/sb /x/sb"}
	last := -1
	for _, o := range order {
		i := strings.Index(line, o)
		if i < 0 || i < last {
			t.Errorf("%q comes too early in %s", o, line)
		}
		last = i
	}
	if !strings.HasSuffix(line, "-- /usr/bin/true -p hello") && !strings.HasSuffix(line, "-- /bin/true -p hello") {
		t.Errorf("command not last: %s", line)
	}
}

func TestProbeSaysWhy(t *testing.T) {
	if err := Probe(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("no bwrap: %v", err)
	}
	// A bwrap that cannot create namespaces, as on hosts with unprivileged
	// user namespaces switched off.
	dir := t.TempDir()
	fake := filepath.Join(dir, "bwrap")
	script := "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if Find(dir) != fake {
		t.Fatalf("Find(%s) did not find %s", dir, fake)
	}
	err := Probe(context.Background(), fake)
	if err == nil {
		t.Fatal("a failing bwrap passed the probe")
	}
	for _, want := range []string{"kernel.unprivileged_userns_clone=1", "kernel.apparmor_restrict_unprivileged_userns=0", "No permissions", "--isolation none"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
}

// What the jail promises, checked with a shell instead of the CLI: hidden
// folders are empty, the root is read-only, /tmp is the given folder, /proc
// lists the jail only, and the writable binds are writable.
func TestJailView(t *testing.T) {
	b := bwrap(t)
	host := t.TempDir()
	secret := filepath.Join(host, "neighbour")
	if err := os.MkdirAll(secret, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secret, "inside.txt"), []byte("private"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb, tmp := filepath.Join(host, "sb"), filepath.Join(host, "tmp")
	for _, d := range []string{sb, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s := Spec{Bwrap: b, Hide: HideList(os.Getenv("HOME"), os.TempDir(), host)}.With(tmp, sb, []string{sb}, nil)
	out, err := run(t, s, `
ls /proc | grep -c '^[0-9]'
cat `+secret+`/inside.txt 2>/dev/null || echo hidden
echo x > /tmp/x && echo tmp-ok
echo y > `+sb+`/y && echo sb-ok
(echo z > /usr/z) 2>/dev/null || echo usr-refused
(echo w > /etc/jail-w) 2>/dev/null || echo etc-refused
cat /proc/self/status | grep CapEff
pwd`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if n, _ := strconv.Atoi(lines[0]); n == 0 || n > 5 {
		t.Errorf("/proc lists %s processes, want only the jail's few", lines[0])
	}
	want := []string{"hidden", "tmp-ok", "sb-ok", "usr-refused", "etc-refused", "CapEff:\t0000000000000000", sb}
	if !slices.Equal(lines[1:], want) {
		t.Errorf("jail view:\n%s\nwant %q", out, want)
	}
	if b, err := os.ReadFile(filepath.Join(tmp, "x")); err != nil || string(b) != "x\n" {
		t.Errorf("/tmp/x did not land in the given tmp folder: %v", err)
	}
	if _, err := os.Stat("/etc/jail-w"); err == nil {
		t.Error("a write outside the binds reached the host")
	}
}

// A process the jail's command leaves behind, setsid'd and detached, dies
// when the command exits; and the whole jail dies when its parent is killed.
func TestNothingOutlivesTheJail(t *testing.T) {
	b := bwrap(t)
	s := Spec{Bwrap: b, Hide: HideList(os.Getenv("HOME"), os.TempDir())}
	marker := fmt.Sprintf("300.%d", time.Now().UnixNano()%1e9)
	if out, err := run(t, s, "(cd / && setsid nohup sleep "+marker+" >/dev/null 2>&1 &); echo started"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	waitGone(t, marker)

	// SIGKILL of the parent: a shell that started bwrap in the background.
	marker2 := fmt.Sprintf("301.%d", time.Now().UnixNano()%1e9)
	name, args := s.Command("/bin/sh", []string{"-c", "(setsid nohup sleep " + marker2 + " >/dev/null 2>&1 &); sleep " + marker2})
	parent := exec.Command("/bin/sh", "-c", `"$@" & wait`, "sh", name)
	parent.Args = append(parent.Args, args...)
	parent.Env = []string{"PATH=/usr/bin:/bin"}
	parent.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(procsWith(marker2)) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(procsWith(marker2)); n < 2 {
		t.Fatalf("the jailed sleeps never started (%d seen)", n)
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	waitGone(t, marker2)
}

// waitGone fails the test when a `sleep marker`
// is still alive a few seconds on (the kill is asynchronous).
func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(procsWith(marker)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if p := procsWith(marker); len(p) > 0 {
		for _, pid := range p {
			_ = syscall.Kill(pid, syscall.SIGKILL) // leave the machine clean
		}
		t.Errorf("processes outlived the jail: %v", p)
	}
}

func procsWith(marker string) []int {
	var pids []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("sleep\x00"+marker)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// BenchmarkStart is what the jail adds to every claude call: starting
// bwrap with the run's mounts around a command that does nothing.
func BenchmarkStart(b *testing.B) {
	bw := Find(os.Getenv("PATH"))
	if err := Probe(context.Background(), bw); err != nil {
		b.Skip(err)
	}
	s := Spec{Bwrap: bw, Hide: HideList(os.Getenv("HOME"), os.TempDir())}.With("", "/", nil, nil)
	name, args := s.Command("/bin/true", nil)
	for b.Loop() {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

// A CLI installed in a clone of vibe-test (vibe-test/tools/node_modules)
// runs from CLIMount: its argv, PATH, a listing of the hidden folder above
// its install and bwrap's own command line (process 1's, which ps shows)
// never name the folder it lives in on the host, nor a folder the jail
// hides.
func TestCLIRunsFromTheNeutralMount(t *testing.T) {
	b := bwrap(t)
	host := filepath.Join(t.TempDir(), "vibe-test")
	root := filepath.Join(host, "tools", "node_modules")
	bin := filepath.Join(root, ".bin")
	if err := os.MkdirAll(filepath.Join(root, "tool", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"argv0=$0\"\necho \"path=$PATH\"\nls -a " + filepath.Dir(host) + " 2>&1\ntr '\\0' ' ' </proc/1/cmdline\n"
	if err := os.WriteFile(filepath.Join(root, "tool", "bin", "tool"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../tool/bin/tool", filepath.Join(bin, "tool")); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(filepath.Dir(host), "vibe-runs")
	s := Spec{Bwrap: b, CLIRoot: CLIRootOf(filepath.Join(bin, "tool")), Hide: HideList(os.Getenv("HOME"), os.TempDir(), host, runs)}
	if s.CLIRoot != root {
		t.Fatalf("CLIRootOf = %q, want %q", s.CLIRoot, root)
	}
	cmd, started, err := s.Cmd(filepath.Join(bin, "tool"), nil, []string{"PATH=" + bin + ":/usr/bin:/bin"}, "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Start()
	started()
	if err == nil {
		err = cmd.Wait()
	}
	out := buf.Bytes()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "bwrap --args 3 -- "+CLIMount+"/tool/bin/tool") {
		t.Errorf("process 1 is not bwrap reading its options from fd 3:\n%s", out)
	}
	for _, want := range []string{"argv0=" + CLIMount + "/tool/bin/tool", "path=" + CLIMount + "/.bin:/usr/bin:/bin"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the jail's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "vibe-test") || strings.Contains(string(out), "vibe-runs") {
		t.Errorf("the agent's view names the host folder or a hidden one:\n%s", out)
	}
}

// The jail's /proc/self/mountinfo lists every mount point and the host
// path each bind comes from. A folder the run names is hidden by its
// outermost non-system folder, so the list names that folder only (it
// named vibe-test's working folder, /work/main/internal/eval, and would a
// case set's); and PATH keeps none of the hidden folders, which only
// named where things live outside (a clone put on PATH).
func TestMountsAndPathNameNoHiddenFolder(t *testing.T) {
	b := bwrap(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	s := Spec{Bwrap: b, Hide: HideList(os.Getenv("HOME"), os.TempDir(), wd)}
	// A working folder in a system folder (a container's /usr/src/app) is
	// not hidden at all: nothing to look for in the mounts then.
	if outer := outermost(wd); outer != wd && !isSystem(wd) {
		out, err := run(t, s, "cat /proc/self/mountinfo")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if strings.Contains(out, wd) || !strings.Contains(out, " "+outer+" ") {
			t.Errorf("mountinfo names %s, or not %s:\n%s", wd, outer, out)
		}
	}
	env := s.Environ([]string{"PATH=" + wd + ":/tmp/clone/vibe-test:/usr/bin:/bin"})
	if env[0] != "PATH=/usr/bin:/bin" {
		t.Errorf("the jail's %s, want the hidden folders left out", env[0])
	}
}
