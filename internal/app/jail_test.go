package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/jail"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// needJail skips (fails in CI) where bubblewrap cannot start.
func needJail(t *testing.T) {
	t.Helper()
	if err := jail.Probe(context.Background(), jail.Find(os.Getenv("PATH"))); err != nil {
		testenv.Missing(t, err.Error())
	}
}

// bash is one Bash tool call of a scripted agent.
func bash(cmd string) scripted.ToolUse {
	return scripted.ToolUse{Name: "Bash", Input: map[string]any{"command": cmd, "description": "look around"}}
}

// sleepers are the live processes on the host whose command line holds
// `sleep <marker>` or `# <marker>`.
func sleepers(marker string) []int {
	var pids []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil && (bytes.Contains(b, []byte("sleep\x00"+marker)) || bytes.Contains(b, []byte("# "+marker))) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// noneLeft fails when `sleep marker` still runs a few seconds on (killing
// what it finds, to leave the machine clean).
func noneLeft(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(sleepers(marker)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if p := sleepers(marker); len(p) > 0 {
		for _, pid := range p {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("the agent's process %s outlived the run: pids %v", marker, p)
	}
}

// An agent that hunts: one real-CLI run whose turn 2 makes every attempt of
// issue 11 in Bash calls. The saved tool results and the host file system
// show it saw and touched nothing outside its jail, and that nothing it
// started outlives the run.
func TestJailedAgentSeesAndKeepsNothing(t *testing.T) {
	t.Parallel()
	needJail(t)
	// What the agent must not reach: a neighbour's secret environment (a
	// host process), another conversation's sandbox in the temp dir, and
	// this run's folder and skill files.
	neighbourSecret := fmt.Sprintf("NEIGHBOUR_SECRET=n%d", time.Now().UnixNano())
	neighbourMarker := fmt.Sprintf("600.%d", time.Now().UnixNano()%1e9)
	neighbour := exec.Command("sleep", neighbourMarker)
	neighbour.Env = []string{neighbourSecret}
	if err := neighbour.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = neighbour.Process.Kill(); _ = neighbour.Wait() })
	other, err := os.MkdirTemp("", "repo-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("another conversation"), 0o644); err != nil {
		t.Fatal(err)
	}
	varTmp, err := os.CreateTemp("/var/tmp", "neighbour-")
	if err != nil {
		t.Fatal(err)
	}
	varTmp.Close()
	t.Cleanup(func() { os.Remove(varTmp.Name()) })
	files, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	m := strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	orphan := "300." + m
	escapes := []string{"/escape-" + m, "/usr/escape-" + m, "/var/tmp/escape-" + m, "/root/escape-" + m,
		filepath.Join(files, "escape-"+m), filepath.Join(other, "escape-"+m), filepath.Join(os.TempDir(), "escape-"+m)}
	hunt := []scripted.Step{{ToolUses: []scripted.ToolUse{
		bash(`cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | sort -u; echo END-ENV`),
		bash(`for p in /proc/[0-9]*; do echo "$p $(tr '\0' ' ' < $p/cmdline)"; done; echo END-PS`),
		bash(`ls -a / /tmp "$TMPDIR" ~ /root /home /var/tmp /run ` + os.TempDir() + ` 2>&1; echo HOME=$HOME; echo END-LS`),
		// Every error is silenced: any output before END-HUNT is a leak.
		bash(`cat ` + out + `/run.json ` + other + `/notes.txt 2>/dev/null | head -c 400; ls ` + files + ` 2>/dev/null; find /tmp /var/tmp /root /home ~ /run ` + os.TempDir() + ` \( -name run.json -o -name vibe-test.yaml -o -name notes.txt \) 2>/dev/null | head; echo END-HUNT`),
		bash(`echo x > /tmp/x-` + m + ` && echo wrote-tmp; for f in ` + strings.Join(escapes, " ") + `; do (echo y > $f) 2>/dev/null; done; echo END-WRITE`),
		bash(`(cd / && setsid nohup sleep ` + orphan + ` >/dev/null 2>&1 &); echo END-BG`),
	}}, {Text: "Done."}}
	script := faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{2}, Steps: hunt})
	srv, err := scripted.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	paths, err := demo.Materialize(files)
	if err != nil {
		t.Fatal(err)
	}
	env := append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+realConversationCLI(t), "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"))
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", paths.Skill, "--config", paths.Config, "--out", out,
		"--seed", "7", "--conversations", "1", "--max-retries", "1", "--isolation", "jail"},
		IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	t.Logf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	r, err := record.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Jail != jail.Bubblewrap || !strings.Contains(stdout.String(), "bubblewrap jail") {
		t.Errorf("run.json jail %q; the summary must say the jail was used", r.Jail)
	}
	noneLeft(t, orphan)

	// The saved tool results, whole, from the transcript.
	f, err := os.Open(filepath.Join(out, r.Conversations[0].TurnAt(2).Transcript))
	if err != nil {
		t.Fatal(err)
	}
	turn, err := claude.ParseTurn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]string{}
	for _, c := range turn.Calls {
		for _, end := range []string{"END-ENV", "END-PS", "END-LS", "END-HUNT", "END-WRITE", "END-BG"} {
			if strings.Contains(c.Result, end) {
				res[end] = c.Result
			}
		}
	}
	if len(res) != 6 {
		t.Fatalf("%d of 6 hunting calls ran to the end; results: %q", len(res), res)
	}
	// The agent read environments, but only the jail's own.
	// The CLI's own leftovers land in the conversation's /tmp, which
	// leaves with it (checked below).
	if !strings.Contains(res["END-LS"], "claude-0") {
		t.Errorf("the CLI's temp files are not in the jail's /tmp:\n%s", res["END-LS"])
	}
	if !strings.Contains(res["END-ENV"], "ANTHROPIC_BASE_URL") {
		t.Errorf("the agent could not read even its own environment; the test proves nothing:\n%s", res["END-ENV"])
	}
	secretValue := strings.SplitN(neighbourSecret, "=", 2)[1]
	for _, k := range []string{"END-ENV", "END-PS"} {
		for _, bad := range []string{secretValue, neighbourMarker, out, filepath.Base(os.Args[0])} {
			if strings.Contains(res[k], bad) {
				t.Errorf("%s: the agent saw %q outside its jail:\n%s", k, bad, res[k])
			}
		}
	}
	if pids := regexp.MustCompile(`(?m)^/proc/\d+ `).FindAllString(res["END-PS"], -1); len(pids) == 0 || len(pids) > 12 {
		t.Errorf("the agent's /proc lists %d processes, want only the jail's few:\n%s", len(pids), res["END-PS"])
	}
	// No other conversation, run folder, skill files or home.
	// files is t.TempDir()'s "001": its parent, the test's own temp
	// folder, is the name a leak would list (a bare "001" also occurs in
	// random folder names, as the agent's own home-725890017).
	for _, bad := range []string{filepath.Base(other), filepath.Base(filepath.Dir(files)), filepath.Base(varTmp.Name()), "SKILL.md", "vibe-test.yaml"} {
		if strings.Contains(res["END-LS"], bad) {
			t.Errorf("the agent's listing shows %q:\n%s", bad, res["END-LS"])
		}
	}
	if got := strings.TrimSpace(res["END-HUNT"]); got != "END-HUNT" {
		t.Errorf("the agent found the run folder, the skill's files or another conversation:\n%s", got)
	}
	if !strings.Contains(res["END-WRITE"], "wrote-tmp") {
		t.Errorf("the agent could not use its own /tmp:\n%s", res["END-WRITE"])
	}
	// Nothing was written outside the sandbox, and its /tmp left with it.
	for _, p := range append(escapes, "/tmp/x-"+m) {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("the agent wrote %s on the host", p)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "*", "x-"+m)); len(left) > 0 {
		t.Errorf("the conversation's temp dir outlived it: %v", left)
	}
	c := r.Conversations[0]
	if c.Sandbox != "" || c.Tmp != "" {
		t.Errorf("sandbox %q and tmp %q still recorded after the run", c.Sandbox, c.Tmp)
	}
}

// SIGKILL of vibe-test while the agent's tool hangs: the CLI, the hanging
// tool and a detached sleep the agent started all die with it (with the
// jail there are no orphans, so resume never meets a second agent).
func TestKillLeavesNoProcess(t *testing.T) {
	t.Parallel()
	needJail(t)
	m := strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	orphan, hang := "300."+m, "301."+m
	steps := []scripted.Step{
		{ToolUses: []scripted.ToolUse{bash(`(cd / && setsid nohup sleep ` + orphan + ` >/dev/null 2>&1 &); echo started`)}},
		// The CLI refuses a bare long sleep; tail waits forever.
		{ToolUses: []scripted.ToolUse{bash(`tail -f /dev/null # ` + hang)}},
	}
	script := faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{2}, Steps: steps})
	srv, files, paths := startDemo(t, script)
	cmd := exec.Command(vibeTestBinary(t), paths.Skill, "--config", paths.Config, "--out", filepath.Join(t.TempDir(), "run"),
		"--conversations", "1", "--max-retries", "1")
	cmd.Env = append(DemoEnv(os.Environ(), srv.URL()), "VIBE_TEST_CLAUDE="+realConversationCLI(t), "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"),
		"TMPDIR="+killedRunTmp(t))
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for (len(sleepers(orphan)) == 0 || len(sleepers(hang)) == 0) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if len(sleepers(orphan)) == 0 || len(sleepers(hang)) == 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the agent's sleeps never started\n%s", buf.String())
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	noneLeft(t, orphan)
	noneLeft(t, hang)
	// Nor the CLI: its environment names this test's scripted server. The
	// kill reaches the jail's processes through two parent-death signals,
	// so they are given until a deadline to be gone, checked as they go.
	alive := func() []string {
		var found []string
		envs, _ := filepath.Glob("/proc/[0-9]*/environ")
		for _, p := range envs {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte("ANTHROPIC_BASE_URL="+srv.URL()+"\x00")) {
				found = append(found, p)
			}
		}
		return found
	}
	for gone := time.Now().Add(10 * time.Second); len(alive()) > 0 && time.Now().Before(gone); {
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range alive() {
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		line := cmdline(pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("a claude process of the killed run is alive 10 s after the kill: %s %s", p, line)
	}
}

// cmdline is a process's command line, for a failure message.
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// The author's own login (no API key) in the jail, end to end with a
// stand-in OAuth login the CLI accepts offline: the ten turns resume their
// session through the one session folder the jail leaves writable, the
// agent sees the credentials file read-only and nothing else of the home or
// the config dir, and the config dir keeps no trace of the sandbox.
func TestAuthorLoginInJail(t *testing.T) {
	t.Parallel()
	needJail(t)
	home := t.TempDir()
	cfg := filepath.Join(home, ".claude")
	creds := `{"claudeAiOauth":{"accessToken":"sk-ant-oat01-standin-access","refreshToken":"sk-ant-ort01-standin-refresh","expiresAt":4102444800000,"scopes":["user:inference","user:profile"],"subscriptionType":"pro"}}`
	planted := map[string]string{
		".claude/.credentials.json":                creds,
		".claude/history.jsonl":                    "private-history-line\n",
		".claude/settings.json":                    `{"env":{"PRIVATE_SETTING":"1"}}`,
		".claude/projects/-home-me-secret/s.jsonl": "private-session\n",
		".claude.json":                             `{"projects":{"/home/me/secret":{}}}`,
		"notes-private.txt":                        "private-notes\n",
	}
	for rel, content := range planted {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	look := []scripted.Step{{ToolUses: []scripted.ToolUse{
		bash(`ls -a ~ ~/.claude ~/.claude/projects 2>&1; cat ~/.claude/history.jsonl ~/.claude/settings.json ~/.claude.json ~/notes-private.txt 2>/dev/null; echo END-HOME`),
		bash(`head -c 30 ~/.claude/.credentials.json; echo; (echo gone > ~/.claude/.credentials.json) 2>/dev/null || echo creds-read-only; echo END-CREDS`),
	}}, {Text: "Done."}}
	script := faultScript(t, scripted.Rule{Kind: scripted.KindAgent, Turns: []int{2}, Steps: look})
	srv, files, paths := startDemo(t, script)
	out := filepath.Join(t.TempDir(), "run")
	var env []string
	for _, kv := range DemoEnv(os.Environ(), srv.URL()) {
		if !strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	// The conversation on the pinned CLI (its session, resumed in the jail,
	// is the subject); its fresh sessions, one-shot, on the stand-in, which
	// takes the same login.
	env = append(env, "HOME="+home, "VIBE_TEST_CLAUDE="+realConversationCLI(t), "VIBE_TEST_CACHE_DIR="+filepath.Join(files, "cache"))
	cmd := exec.Command(vibeTestBinary(t), paths.Skill, "--config", paths.Config, "--out", out, "--seed", "7",
		"--conversations", "1", "--max-retries", "1", "--isolation", "jail")
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("run with the author's login: %v", err)
	}
	r, err := record.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Isolation != "author-config" || r.Jail != jail.Bubblewrap {
		t.Fatalf("isolation %q jail %q", r.Isolation, r.Jail)
	}
	if c := r.Conversations[0]; len(c.Turns) != 10 || c.Status != record.StatusCompleted {
		t.Fatalf("%d turns, status %s: the session did not resume in the jail", len(c.Turns), c.Status)
	}
	bearer := 0
	for _, q := range srv.Requests() {
		if q.Header.Get("X-Api-Key") != "" {
			t.Fatal("a request carried an API key: the run was not on the login")
		}
		if q.Header.Get("Authorization") != "" {
			bearer++
		}
	}
	if bearer == 0 {
		t.Fatal("no request carried the login's bearer token")
	}
	f, err := os.Open(filepath.Join(out, r.Conversations[0].TurnAt(2).Transcript))
	if err != nil {
		t.Fatal(err)
	}
	turn, err := claude.ParseTurn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var all string
	for _, c := range turn.Calls {
		all += c.Result + "\n"
	}
	for _, want := range []string{"END-HOME", "END-CREDS", "creds-read-only", ".credentials.json"} {
		if !strings.Contains(all, want) {
			t.Errorf("tool results lack %q:\n%s", want, all)
		}
	}
	for _, bad := range []string{"private-", "history.jsonl", "settings.json", "-home-me-secret", "/home/me/secret"} {
		if strings.Contains(all, bad) {
			t.Errorf("the agent saw %q of the author's home or config:\n%s", bad, all)
		}
	}
	// The author's files are unchanged, and no session of the sandbox stays.
	for rel, content := range planted {
		if b, err := os.ReadFile(filepath.Join(home, rel)); err != nil || string(b) != content {
			t.Errorf("%s changed: %q, %v", rel, b, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(cfg, "projects", "*repo-*")); len(left) > 0 {
		t.Errorf("the sandbox's sessions stayed in the author's config dir: %v", left)
	}
}

// --isolation: a bad value, and a jail asked for where bubblewrap cannot
// start (user namespaces off), are one-line errors with exit 3 before any
// model call or run folder; without the flag the run goes on, saying loudly
// that there is no jail and how to get one.
func TestIsolationFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skillPath := filepath.Join(dir, "s", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skillPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skillPath, []byte("---\nname: s\ndescription: d\n---\nRun the script.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A bwrap that fails as it does where unprivileged user namespaces are
	// switched off.
	fakeDir := filepath.Join(dir, "bin")
	if err := os.Mkdir(fakeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(fakeDir, "bwrap"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + fakeDir + ":" + os.Getenv("PATH"), "VIBE_TEST_CLAUDE=" + fastCLI(t)}
	out := filepath.Join(dir, "run")
	for _, tc := range []struct {
		flag, want string
	}{
		{"bogus", `--isolation: "bogus", expected "jail" or "none"`},
		{"jail", "kernel.unprivileged_userns_clone=1"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), []string{"vibe-test", skillPath, "--out", out, "--isolation", tc.flag}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
		msg := stderr.String()
		if code != 3 || !strings.Contains(msg, tc.want) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
			t.Errorf("--isolation %s: exit %d, stderr %q; want exit 3 and one line with %q", tc.flag, code, msg, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--isolation %s: a run folder was made", tc.flag)
		}
	}
	kind, note, err := engine.ChooseJail(context.Background(), "", env)
	if err != nil || kind != jail.None || !strings.Contains(note, "kernel.apparmor_restrict_unprivileged_userns=0") {
		t.Errorf("default where bwrap cannot start: %q %q %v", kind, note, err)
	}
	kind, note, err = engine.ChooseJail(context.Background(), "", []string{"PATH=" + filepath.Join(dir, "nothing")})
	if err != nil || kind != jail.None || !strings.Contains(note, "not installed") {
		t.Errorf("default without bwrap: %q %q %v", kind, note, err)
	}
	var w bytes.Buffer
	engine.WarnNoJail(&w, kind, note)
	if !strings.Contains(w.String(), "NO JAIL") {
		t.Errorf("no loud warning: %q", w.String())
	}
}
