package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/testenv"
)

// The CLI pinned for tests and the demo is the one this package was
// verified on.
func TestPinnedVersionMatches(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "tools", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if got := pkg.Dependencies["@openai/codex"]; got != VerifiedVersion {
		t.Fatalf("tools/package.json pins @openai/codex %q, VerifiedVersion is %q", got, VerifiedVersion)
	}
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestEnvAllowlist(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/home/me", "OPENAI_API_KEY=sk-author", "ANTHROPIC_API_KEY=sk-ant",
		"AWS_SECRET_ACCESS_KEY=nope", "CODEX_HOME=/home/me/.codex", "KEEP=1", "LANG=de_DE.UTF-8"}
	got := envMap(Env(base, EnvOptions{Home: "/tmp/h", StandIn: true, PassEnv: []string{"KEEP", "OPENAI_API_KEY"}}))
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s reached a stand-in run", k)
		}
	}
	if got["HOME"] != "/tmp/h" || got["CODEX_HOME"] != "/tmp/h/.codex" || got["KEEP"] != "1" || got["LANG"] != "de_DE.UTF-8" || got["PATH"] != "/bin" {
		t.Errorf("%v", got)
	}
	if got[standInKeyVar] != standInKey {
		t.Errorf("the stand-in's key is %q", got[standInKeyVar])
	}
	real := envMap(Env(base, EnvOptions{Home: "/tmp/h"}))
	if real[OpenAIKeyVar] != "sk-author" {
		t.Error("the author's key does not reach OpenAI's API")
	}
	if _, ok := real[standInKeyVar]; ok || real["ANTHROPIC_API_KEY"] != "" {
		t.Errorf("%v", real)
	}
	if !HasCredentials(base) || HasCredentials([]string{"OPENAI_API_KEY="}) {
		t.Error("HasCredentials")
	}
}

func TestConfigTOML(t *testing.T) {
	c := configTOML(Config{BaseURL: "http://127.0.0.1:9/", Instructions: "Say \"hi\".\n[not a table]\n", Retries: 2, Effort: "high"})
	for _, want := range []string{
		`model = "gpt-5.5"`, `model_provider = "local"`, `approval_policy = "never"`, `sandbox_mode = "danger-full-access"`,
		`model_reasoning_effort = "high"`, `developer_instructions = "Say \"hi\".\n[not a table]\n"`,
		"unbounded_connection_retries = false", `base_url = "http://127.0.0.1:9/v1"`, `env_key = "LOCAL_MODEL_KEY"`,
		"request_max_retries = 2", "stream_max_retries = 2", `exclude = ["LOCAL_MODEL_KEY"]`,
		// No marketplace sync from GitHub at each conversation's start.
		"plugins = false",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("config lacks %s:\n%s", want, c)
		}
	}
	if strings.Contains(c, "shell_tool") {
		t.Error("an agent turn's config turns the shell off")
	}
	real := configTOML(Config{})
	if !strings.Contains(real, `base_url = "https://api.openai.com/v1"`) || !strings.Contains(real, `env_key = "OPENAI_API_KEY"`) ||
		!strings.Contains(real, `exclude = ["OPENAI_API_KEY"]`) || strings.Contains(real, "model = ") {
		t.Errorf("OpenAI's config:\n%s", real)
	}
	cold := configTOML(Config{BaseURL: "http://x", Structured: true})
	for _, want := range []string{"shell_tool = false", "plugins = false", "include_instructions = false", "include_environment_context = false"} {
		if !strings.Contains(cold, want) {
			t.Errorf("a cold call's config lacks %s", want)
		}
	}
}

func TestPrepareHome(t *testing.T) {
	home := t.TempDir()
	prompt := filepath.Join(t.TempDir(), "extra.md")
	if err := os.WriteFile(prompt, []byte("Always answer briefly.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Agent{Retries: 3}.PrepareHome(agent.TurnSpec{Home: home, BaseURL: "http://127.0.0.1:1", Model: "gpt-5.4", SystemPromptFile: prompt})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`model = "gpt-5.4"`, `developer_instructions = "Always answer briefly.\n"`, "request_max_retries = 3"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("config.toml lacks %s", want)
		}
	}
	if err := (Agent{}).PrepareHome(agent.TurnSpec{Home: home, SystemPromptFile: filepath.Join(home, "missing")}); err == nil {
		t.Error("a missing system prompt file was accepted")
	}
}

func TestArgs(t *testing.T) {
	if got := ExecArgs("-hi", "", "gpt-5.5"); !slices.Equal(got, []string{"exec", "--json", "--strict-config", "--skip-git-repo-check", "-m", "gpt-5.5", "--", "-hi"}) {
		t.Errorf("exec %q", got)
	}
	if got := ExecArgs("next", "01a2-thread", ""); !slices.Equal(got, []string{"exec", "resume", "--json", "--strict-config", "--skip-git-repo-check", "--", "01a2-thread", "next"}) {
		t.Errorf("resume %q", got)
	}
	if got := StructuredArgs("p", "/f.json", ""); !slices.Equal(got, []string{"exec", "--json", "--strict-config", "--skip-git-repo-check", "--output-schema", "/f.json", "--", "p"}) {
		t.Errorf("structured %q", got)
	}
}

func TestAgentBasics(t *testing.T) {
	var a Agent
	if a.Name() != "codex" || a.SkillDir("x") != filepath.Join(".agents", "skills", "x") || a.CostExact() {
		t.Error("name, skill dir or cost label")
	}
	got := a.NotGranted([]string{"Bash", "Bash(git diff:*)", "Read", "Edit", "Write", "Glob", "Grep", "Skill", "WebFetch", "mcp__db__query", "Task", "TodoWrite"})
	if len(got) != 4 || !strings.HasPrefix(got[0], "WebFetch") || !strings.HasPrefix(got[1], "mcp__db__query") || !strings.HasPrefix(got[3], "TodoWrite") {
		t.Errorf("not granted %q", got)
	}
}
