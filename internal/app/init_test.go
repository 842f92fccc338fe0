package app

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/draft"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/scripted"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// commentedRubric reads the rubric back from the comment block of a
// written config, the way the header tells the author to.
func commentedRubric(t *testing.T, text string) *rubric.Rubric {
	t.Helper()
	var js []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		if l == `# {"criteria": [` {
			in = true
		}
		if in {
			if !strings.HasPrefix(l, "# ") {
				t.Fatalf("rubric line not a comment: %q", l)
			}
			js = append(js, strings.TrimPrefix(l, "# "))
		}
		if l == "# ]}" {
			break
		}
	}
	r, err := rubric.Parse([]byte(strings.Join(js, "\n")))
	if err != nil {
		t.Fatalf("the commented rubric does not parse: %v\n%s", err, strings.Join(js, "\n"))
	}
	return r
}

func TestInit(t *testing.T) {
	t.Parallel()
	paths, err := demo.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(filepath.Dir(paths.Skill), plan.ConfigName)
	script := scripted.Script{Rules: demo.JudgeRules(false)} // answers the plan and rubric calls

	r := runAgainst(t, script, "init", paths.Skill)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0", r.code)
	}
	cfg, err := plan.LoadConfig(target)
	if err != nil {
		t.Fatalf("the written config does not load: %v", err)
	}
	if cfg.BaseTask != "How many widgets are in stock?" || len(cfg.Probes) != 3 || cfg.Probes[1].Task != "How many hinges are there now?" || cfg.JudgeModel != "" {
		t.Errorf("config %+v", cfg)
	}
	text := string(readFile(t, target))
	for _, key := range []string{"base_task", "probes", "fixture", "files", "model", "judge_model"} {
		if !strings.Contains(text, "#   "+key+" ") {
			t.Errorf("the header does not explain %q", key)
		}
	}
	if got := commentedRubric(t, text); len(got.Criteria) != 6 || got.Criteria[0].ID != "runs-census" || got.Criteria[0].Check == nil {
		t.Errorf("commented rubric %+v", got)
	}
	if !strings.Contains(text, "--rubric FILE") || !strings.Contains(r.stdout, "wrote "+target) {
		t.Error("the rubric comment or the summary is missing")
	}

	// A second init refuses without --force, before any model call.
	before := readFile(t, target)
	again := runAgainst(t, script, "init", paths.Skill)
	if again.code != 3 || !strings.Contains(again.stderr, target) || !strings.Contains(again.stderr, "--force") || strings.Count(again.stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", again.code, again.stderr)
	}
	if n := len(again.srv.Requests()); n != 0 {
		t.Errorf("%d model calls before refusing", n)
	}
	if !bytes.Equal(before, readFile(t, target)) {
		t.Error("the config was overwritten without --force")
	}

	// --force replaces it; the folder form of the path works too.
	forced := runAgainst(t, script, "init", filepath.Dir(paths.Skill), "--force", "--judge-model", "sonnet")
	if forced.code != 0 {
		t.Fatalf("--force: exit %d", forced.code)
	}
	if cfg, err := plan.LoadConfig(target); err != nil || cfg.JudgeModel != "sonnet" {
		t.Errorf("after --force: %+v, %v", cfg, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(target))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}

	// A folder where the config goes: --force cannot replace it, said
	// before any model call (after both, with a rename error, before).
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	folder := runAgainst(t, script, "init", paths.Skill, "--force")
	if folder.code != 3 || !strings.Contains(folder.stderr, target+": a folder, expected a file") || len(folder.srv.Requests()) != 0 {
		t.Errorf("--force over a folder: exit %d, %d model calls, %q", folder.code, len(folder.srv.Requests()), folder.stderr)
	}
}

// Whatever the model drafts, the written file loads back to the same tasks.
func TestInitConfigTextRoundTrip(t *testing.T) {
	t.Parallel()
	rb, err := rubric.Parse(mustJSON(t, demo.Rubric()))
	if err != nil {
		t.Fatal(err)
	}
	rb.Criteria[0].Text = "runs \"census.sh\" # not a comment\u0085: next\u2028line\x7f"
	rb.Source = "extracted"
	tricky := []string{
		`He said "hi": #1 'x'`, "multi\nline\ttab\r\n", "- starts with a dash", "@at `tick` | pipe > gt",
		"% ! & * ? { } [ ]", "next\u0085line and\u2028separator\u2029", "del\x7f and bom\ufeff", "unicode ✓ 日本語 🙂",
		"trailing space ", "yes", "null", "~", "123", "---", "...", `back\slash \n literal`, "\x00nul\x1besc",
	}
	dir := t.TempDir()
	sk := &skill.Skill{Name: "x", Path: filepath.Join(dir, "SKILL.md")}
	for i := 0; i+3 < len(tricky); i++ {
		pl := &plan.Plan{BaseTask: tricky[i]}
		for _, s := range tricky[i+1 : i+4] {
			pl.Probes = append(pl.Probes, plan.Probe{Task: s})
		}
		text := draft.ConfigText(sk, pl, rb, tricky[(i+5)%len(tricky)], time.Now())
		path := filepath.Join(dir, itoa(i)+".yaml")
		os.WriteFile(path, []byte(text), 0o644)
		cfg, err := plan.LoadConfig(path)
		if err != nil {
			t.Fatalf("case %d does not load: %v\n%s", i, err, text)
		}
		got := []string{cfg.BaseTask, cfg.Probes[0].Task, cfg.Probes[1].Task, cfg.Probes[2].Task, cfg.JudgeModel}
		want := []string{pl.BaseTask, pl.Probes[0].Task, pl.Probes[1].Task, pl.Probes[2].Task, tricky[(i+5)%len(tricky)]}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("case %d: got %q, want %q", i, got, want)
		}
		if back := commentedRubric(t, text); !reflect.DeepEqual(back.Criteria, rb.Criteria) {
			t.Errorf("case %d: rubric comment does not read back: %+v", i, back.Criteria[0])
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A refused key stops init's two cold calls at once, with one line naming
// the variables to check: no retried rubric call, not the CLI's "/login"
// text glued to ours.
func TestInitRefusedCredentials(t *testing.T) {
	t.Parallel()
	paths, err := demo.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	refused := []scripted.Step{{Error: &scripted.HTTPError{Status: 401, Count: 1000}}}
	script := scripted.Script{Rules: []scripted.Rule{{Kind: scripted.KindPlan, Steps: refused}, {Kind: scripted.KindRubric, Steps: refused}}}
	r := runAgainst(t, script, "init", paths.Skill)
	if r.code != 3 {
		t.Fatalf("exit %d, want 3", r.code)
	}
	last := strings.TrimSpace(r.stderr)
	last = last[strings.LastIndex(last, "\n")+1:]
	if !strings.Contains(last, "refused the credentials (HTTP 401)") || !strings.Contains(last, "ANTHROPIC_API_KEY") ||
		strings.Contains(last, "Please run /login") || strings.Contains(last, "twice") || strings.Count(last, "refused") != 1 {
		t.Errorf("error line: %q", last)
	}
	sessions := map[string]bool{}
	for _, q := range r.srv.Requests() {
		if q.Kind == scripted.KindRubric {
			sessions[q.SessionID] = true
		}
	}
	if len(sessions) != 1 {
		t.Errorf("%d rubric calls after a 401, want 1 (no retry)", len(sessions))
	}
}

// init on a skill whose folder takes no new file (read-only, another
// user's) is refused before its two model calls: the write failed after
// them. Run as a user who may not write there (root may write anywhere:
// as root, the built binary runs as nobody).
func TestInitReadOnlySkillFolder(t *testing.T) {
	t.Parallel()
	// Folders nobody may enter (t.TempDir's parents are the owner's alone).
	open := func(prefix string) string {
		dir, err := os.MkdirTemp("", prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700); os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	bin := filepath.Join(open("bin-"), "vibe-test")
	b, err := os.ReadFile(vibeTestBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	skillDir := filepath.Join(open("skill-"), "ledger")
	if err := os.Mkdir(skillDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skillDir, "SKILL.md"), []byte("---\nname: ledger\ndescription: d\n---\nRead the ledger.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "init", filepath.Join(skillDir, "SKILL.md"))
	// Outside the repository, with no claude on PATH: the code before
	// went on to look for the CLI, and failed there.
	cmd.Dir = filepath.Dir(skillDir)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "ANTHROPIC_API_KEY=sk-offline-placeholder"}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		if err := os.Chmod(skillDir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(skillDir, 0o755) }) // before its parent goes
	}
	out, _ := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if want := skillDir + ": the skill's folder takes no new file (permission denied), expected one vibe-test.yaml can be written in"; code != 3 || !strings.Contains(string(out), want) {
		t.Errorf("init in a folder that takes no file: exit %d\n%s\nwant 3 and %q", code, out, want)
	}
}

// init drafts a config for a skill Claude Code hides from its model
// (disable-model-invocation), and says that a run under the default agent
// refuses it and which agents run it; its "then run" line names one.
func TestInitOfASkillClaudeCodeHides(t *testing.T) {
	t.Parallel()
	paths, err := demo.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	raw := string(readFile(t, paths.Skill))
	hidden := strings.Replace(raw, "\n---\n", "\ndisable-model-invocation: true\n---\n", 1)
	if hidden == raw {
		t.Fatal("the demo skill has no frontmatter to add the field to")
	}
	if err := os.WriteFile(paths.Skill, []byte(hidden), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runAgainst(t, scripted.Script{Rules: demo.JudgeRules(false)}, "init", paths.Skill)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, `warning: a run under Claude Code (the default agent) refuses it: `) || !strings.Contains(r.stderr, "--agent codex or --agent gemini runs it") {
		t.Errorf("stderr %q", r.stderr)
	}
	if !strings.Contains(r.stdout, "then run: vibe-test "+paths.Skill+" --agent codex\n") {
		t.Errorf("stdout %q", r.stdout)
	}
}
