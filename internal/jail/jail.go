// Package jail runs one claude process in a bubblewrap jail (Linux).
//
// The agent has Bash and runs on the author's machine, so an allowlisted
// environment is not a boundary: without a jail it can read
// /proc/<pid>/environ of vibe-test, every other conversation's sandbox in the
// temp dir, the run folder with its probe tasks, and the author's home. In the
// jail it sees:
//
//   - the root file system read-only, with the author's home, /root, /home,
//     the temp dirs, /run, /mnt, /media and the folders the run names (run
//     folder, skill, config, cache, vibe-test's working folder) replaced by
//     empty in-memory folders;
//   - the CLI's own install read-only at CLIMount, a neutral path it runs
//     from (where it lives on the host may name the experiment);
//   - its own sandbox (and its config dir) read-write at the same path, so
//     sessions and resume work in and out of the jail alike;
//   - a private /tmp: the conversation's own folder, removed with the
//     sandbox, so the CLI's leftovers ($TMPDIR/claude-0/…) never pile up;
//   - a new PID namespace: /proc lists only the jail's processes, and when
//     the CLI exits (or vibe-test dies: --die-with-parent) every process in
//     the jail dies with it, setsid'd ones included;
//   - no capabilities, even when vibe-test runs as root, so it cannot
//     unmount what hides the rest.
//
// The network is shared: the model API (127.0.0.1 in tests) must stay
// reachable, and with it every other service the machine can reach.
package jail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vibe-test/vibe-test/internal/execpath"
	"github.com/vibe-test/vibe-test/internal/proc"
)

// What run.json's "jail" says.
const (
	Bubblewrap = "bubblewrap" // every claude process ran in a bubblewrap jail
	None       = "none"       // claude ran directly: the agent saw what the user sees
)

// CLIMount is where the jail shows the agent CLI's install (Spec.CLIRoot),
// and the CLI runs from: a neutral path, so that neither the agent's argv
// and PATH nor a listing of a hidden folder shows where the install lives
// on the host (a clone of vibe-test keeps its pinned CLIs in
// vibe-test/tools/node_modules, and nothing the agent sees may name the
// experiment). It ends in node_modules, as node's module lookup needs. /tmp
// is writable in every jail, so bwrap can make the mount point there.
const CLIMount = "/tmp/.cli/node_modules"

// Spec is one jailed process's view of the file system. Paths are absolute
// and the same inside and outside the jail, but for the CLI's install
// (CLIRoot, shown at CLIMount).
type Spec struct {
	Bwrap string // the bwrap binary
	// CLIRoot is the host folder of the CLI's install (CLIRootOf), mounted
	// read-only at CLIMount; "" runs the CLI from its own path (a system
	// install, visible anyway).
	CLIRoot string
	// Hide are folders replaced by an empty tmpfs (home, temp dirs, the run
	// folder); missing ones are skipped.
	Hide []string
	// Expose are put back read-only after hiding (the CLI's own files when
	// they live in a hidden folder, /etc/resolv.conf's target).
	Expose []string
	// Tmp is the host folder mounted read-write at /tmp (TMPDIR=/tmp
	// inside); "" gives an in-memory /tmp that ends with the process.
	Tmp string
	// Writable are bound read-write at their own path, after Tmp (the
	// sandbox, its home and config dir, a session folder).
	Writable []string
	// ReadOnly are bound read-only at their own path, last (the author's
	// credentials file); missing ones are skipped.
	ReadOnly []string
	// Dir is the working folder inside.
	Dir string
}

// With returns a copy of s with more binds: the base spec is shared by a
// run, the binds belong to one call.
func (s Spec) With(tmp, dir string, writable, readOnly []string) Spec {
	c := s
	c.Tmp, c.Dir = tmp, dir
	c.Writable = append(slices.Clone(s.Writable), writable...)
	c.ReadOnly = append(slices.Clone(s.ReadOnly), readOnly...)
	return c
}

// OptsFD is the descriptor bwrap reads the jail's options from (--args).
const OptsFD = 3

// Cmd is the process that runs binary with args in the jail: bwrap, with
// env (Environ) and dir, in its own session (proc.Command). bwrap reads
// the jail's options from descriptor OptsFD (cmd.ExtraFiles[0]; one the
// caller adds comes after it) rather than its command line, which ps and
// /proc/1/cmdline show inside the jail (bwrap's init is its process 1):
// there they named every folder the jail hides and binds, the run folder
// and the CLI's install among them. Call done once the process started,
// or failed to: it closes vibe-test's end of the options.
func (s Spec) Cmd(binary string, args, env []string, dir string) (cmd *exec.Cmd, done func(), err error) {
	return s.cmd(s.inside(binary), args, env, dir)
}

// Process is the process that runs binary with args: in the jail s
// (Cmd), or as it is when there is none (s nil), with a done that does
// nothing.
func Process(s *Spec, binary string, args, env []string, dir string) (cmd *exec.Cmd, done func(), err error) {
	if s == nil {
		return proc.Command(binary, args, env, dir), func() {}, nil
	}
	return s.Cmd(binary, args, env, dir)
}

func (s Spec) cmd(binary string, args, env []string, dir string) (*exec.Cmd, func(), error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("the jail's options pipe: %w", err)
	}
	var opts bytes.Buffer
	for _, o := range s.options() {
		opts.WriteString(o)
		opts.WriteByte(0)
	}
	// A few KiB, under a pipe's buffer; written aside all the same, so a
	// larger set cannot block, and the write ends (EPIPE) once done has
	// closed the read end of a process that never read it.
	go func() {
		_, _ = w.Write(opts.Bytes())
		w.Close()
	}()
	argv := append([]string{"--args", strconv.Itoa(OptsFD), "--", binary}, args...)
	cmd := proc.Command(s.Bwrap, argv, s.Environ(env), dir)
	cmd.ExtraFiles = []*os.File{r}
	return cmd, func() { r.Close() }, nil
}

// Command is the bwrap command line that runs binary with args in the
// jail, its options on the command line: for a look at them (tests); a
// process gets them through Cmd.
func (s Spec) Command(binary string, args []string) (string, []string) {
	return s.Bwrap, append(append(s.options(), "--", s.inside(binary)), args...)
}

// options are bwrap's options for the jail, in order: later mounts win.
func (s Spec) options() []string {
	a := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		// A new PID namespace: /proc shows the jail only, and its init
		// kills every process left when the CLI exits.
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		// bwrap (and through its init, the jail) dies with vibe-test,
		// even on SIGKILL.
		"--die-with-parent",
		// As root, bwrap keeps every capability unless told: CAP_SYS_ADMIN
		// could unmount what hides the home.
		"--cap-drop", "ALL",
	}
	for _, p := range s.Hide {
		if isDir(p) {
			a = append(a, "--tmpfs", p)
		}
	}
	if s.Tmp != "" {
		a = append(a, "--bind", s.Tmp, "/tmp")
	} else {
		a = append(a, "--tmpfs", "/tmp")
	}
	a = append(a, "--setenv", "TMPDIR", "/tmp")
	if s.CLIRoot != "" {
		a = append(a, "--ro-bind", s.CLIRoot, CLIMount)
	}
	for _, p := range s.Expose {
		if exists(p) {
			a = append(a, "--ro-bind", p, p)
		}
	}
	for _, p := range s.Writable {
		if p != "" {
			a = append(a, "--bind", p, p)
		}
	}
	for _, p := range s.ReadOnly {
		if exists(p) {
			a = append(a, "--ro-bind", p, p)
		}
	}
	if s.Dir != "" {
		a = append(a, "--chdir", s.Dir)
	}
	return a
}

// inside is the path binary runs from in the jail: its real path (a link
// to it may sit in a hidden folder), at CLIMount when it is in CLIRoot.
func (s Spec) inside(binary string) string {
	if real, err := filepath.EvalSymlinks(binary); err == nil && filepath.IsAbs(binary) {
		binary = real
	}
	return s.atMount(binary)
}

// atMount is host path p as the jail names it: at CLIMount when it is
// CLIRoot or inside it, else p itself.
func (s Spec) atMount(p string) string {
	if s.CLIRoot != "" && (p == s.CLIRoot || strings.HasPrefix(p, s.CLIRoot+"/")) {
		return CLIMount + strings.TrimPrefix(p, s.CLIRoot)
	}
	return p
}

// Environ is env for a process in the jail: PATH's folders in CLIRoot (a
// pinned install's node_modules/.bin) are named at CLIMount, and folders
// the jail hides are left out: empty inside, they only named where things
// live outside (a built clone put on PATH, ~/src/vibe-test, reached the
// agent's environment).
func (s Spec) Environ(env []string) []string {
	out := slices.Clone(env)
	for i, kv := range out {
		path, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		var dirs []string
		for _, d := range filepath.SplitList(path) {
			if m := s.atMount(d); m != d || !s.hides(d) {
				dirs = append(dirs, m)
			}
		}
		out[i] = "PATH=" + strings.Join(dirs, string(filepath.ListSeparator))
	}
	return out
}

// hides says whether host folder d is out of the agent's sight: inside a
// hidden folder (or the host's /tmp, which the jail replaces) and not put
// back by a later mount.
func (s Spec) hides(d string) bool {
	under := func(list []string) bool {
		return slices.ContainsFunc(list, func(p string) bool {
			return p != "" && (d == p || strings.HasPrefix(d, strings.TrimSuffix(p, "/")+"/"))
		})
	}
	hidden := under(s.Hide) || under([]string{"/tmp"})
	return hidden && !under(s.Expose) && !under(s.Writable) && !under(s.ReadOnly)
}

// systemDirs are never hidden, nor any folder above them: the jail needs a
// shell, libraries and certificates. Nor is anything inside them, but for
// /opt and /var, where CI systems keep their users' homes and workspaces
// (Jenkins' /var/lib/jenkins, Buildkite's /var/lib/buildkite-agent,
// TeamCity's /opt/buildagent): those are hidden as a home under /home is,
// all but /var's own first level (/var/lib, /var/cache).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/var", "/nix", "/snap"}

// HideList is what a run hides: the usual places of other people's and
// other runs' files, plus the folders the run itself names (run folder,
// skill, config, cache, working folder, the author's config dir). "/" and
// system folders are left alone.
func HideList(home, tmpdir string, named ...string) []string {
	// Always hidden, though /var/tmp and /var/run lie under a system
	// folder: temp files and sockets (a Docker socket in /run is root on
	// the host).
	fixed := []string{"/home", "/root", "/tmp", "/var/tmp", "/run", "/var/run", "/mnt", "/media"}
	var out []string
	for i, p := range append(append(fixed, home, tmpdir), named...) {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r // bwrap mounts on the real path
		}
		if p == "/" || (i >= len(fixed) && isSystem(p)) {
			continue
		}
		if i >= len(fixed) {
			// Its outermost folder that is not the system's: the jail's own
			// /proc/self/mountinfo lists every mount point, so a hidden
			// /work/me/skills/cases, say, named the case set there; /work
			// names nothing.
			p = outermost(p)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	// A folder inside another hidden one is hidden already; mounting on it
	// too would make its name appear in the empty parent.
	var kept []string
	for _, p := range out {
		if !slices.ContainsFunc(out, func(q string) bool { return strings.HasPrefix(p, q+"/") }) {
			kept = append(kept, p)
		}
	}
	return kept
}

// outermost is p's outermost folder that is not a system folder (p
// itself when its parent is one): /work/me/runs → /work,
// /var/lib/jenkins/workspace → /var/lib/jenkins.
func outermost(p string) string {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i := range parts {
		if a := "/" + strings.Join(parts[:i+1], "/"); !isSystem(a) {
			return a
		}
	}
	return p
}

func isSystem(p string) bool {
	for _, s := range systemDirs {
		switch {
		case p == s || strings.HasPrefix(s, p+"/"):
			return true // a system folder, or a folder above one
		case !strings.HasPrefix(p, s+"/"):
			continue
		case s == "/opt":
			return false
		case s == "/var":
			return filepath.Dir(p) == "/var"
		default:
			return true
		}
	}
	return false
}

// CLIRootOf is Spec.CLIRoot for a CLI binary: its install (its outermost
// node_modules, or its folder), or "" for one in a system folder.
func CLIRootOf(binary string) string {
	real, err := filepath.EvalSymlinks(binary)
	if err != nil {
		return ""
	}
	return cliRootOfReal(real)
}

// cliRootOfReal is CLIRootOf for a binary's real path.
func cliRootOfReal(real string) string {
	if root := installRoot(real); root != "/" && !isSystem(root) {
		return root
	}
	return ""
}

// ExposeList is what the jail needs back from hidden folders: node, when it
// lives in a home or a project folder, and the target of /etc/resolv.conf
// (often under /run) so the real API's host name resolves. (The CLI's own
// install is Spec.CLIRoot.)
func ExposeList(path string) []string {
	var out []string
	for _, dir := range filepath.SplitList(path) {
		if node := filepath.Join(dir, "node"); exists(node) {
			if real, err := filepath.EvalSymlinks(node); err == nil {
				out = append(out, filepath.Dir(filepath.Dir(real))) // …/node/vX/bin/node → …/node/vX
			}
			break
		}
	}
	if real, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && real != "/etc/resolv.conf" {
		out = append(out, real)
	}
	var kept []string
	for _, p := range out {
		if p != "/" && !isSystem(p) && !slices.Contains(kept, p) {
			kept = append(kept, p)
		}
	}
	return kept
}

// installRoot is the outermost node_modules folder above a binary, else
// its folder: npm installs need their whole tree.
func installRoot(binary string) string {
	dir := filepath.Dir(binary)
	root := dir
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			root = d
		}
	}
	return root
}

// Find returns the bwrap binary on path (a PATH list), or "".
func Find(path string) string {
	return execpath.Find("bwrap", path)
}

// Probe reports why no jail can be made here, or nil: it starts bwrap with
// the same namespaces and mounts a real call uses and runs `true`.
func Probe(ctx context.Context, bwrap string) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("no jail on %s: bubblewrap needs Linux, so the agent runs with your user's full view of this machine", runtime.GOOS)
	}
	if bwrap == "" {
		return fmt.Errorf("bubblewrap (bwrap) is not installed, so the agent runs with your user's full view of this machine: install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)")
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	name, args := Spec{Bwrap: bwrap}.Command("true", nil)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// A bwrap killed while it sets up can leave its pid-1 helper behind,
	// holding stderr open: seen once as a resume hung for ten minutes after
	// an interrupt. So the probe gets its own process group, a cancel kills
	// the whole group, and Wait stops waiting for the pipe soon after.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // nothing of the probe outlives it
	}
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return fmt.Errorf("bubblewrap did not start a jail within 20 s: pass --isolation none to run without one")
		case ctx.Err() != nil:
			return fmt.Errorf("trying the jail: %w", ctx.Err()) // interrupted
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("bubblewrap is installed but cannot start a jail here (%s): unprivileged user namespaces are probably switched off; enable them with `sudo sysctl kernel.unprivileged_userns_clone=1` (Debian) or `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 24.04+), or pass --isolation none to run without a jail", firstLine(msg))
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
