package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/vibe-test/vibe-test/internal/agent"
	"github.com/vibe-test/vibe-test/internal/claude"
)

func TestNotGranted(t *testing.T) {
	got := Agent{}.NotGranted([]string{"Bash", "Read", "Bash(git diff:*)", "Read(./src/**)", "mcp__github__issue", "NotebookEdit", "Task", "WebFetch"})
	want := []string{"Read(./src/**)", "mcp__github__issue", "NotebookEdit", "Task"}
	if len(got) != len(want) {
		t.Fatalf("not granted %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]+" (") {
			t.Errorf("%d: %q, want %s with why", i, got[i], want[i])
		}
	}
}

// The base tools become tools.core plus policy rules for the ones headless
// mode refuses; a shell prefix grant narrows the shell; a whole grant
// drops the prefixes.
func TestSettingsAndPolicy(t *testing.T) {
	g := grants(claude.BaseTools)
	s := settings("/h", g, 3, nil)
	b, _ := json.Marshal(s)
	core := gjson.GetBytes(b, "tools.core").Array()
	var names []string
	for _, c := range core {
		names = append(names, c.String())
	}
	if got := strings.Join(names, ","); got != "run_shell_command,read_file,replace,write_file,glob,list_directory,grep_search,activate_skill" {
		t.Errorf("tools.core %s", got)
	}
	for path, want := range map[string]string{
		"security.auth.selectedType":                    "gemini-api-key",
		"security.folderTrust.enabled":                  "false",
		"security.environmentVariableRedaction.enabled": "true",
		"privacy.usageStatisticsEnabled":                "false",
		"telemetry.enabled":                             "false",
		"general.maxAttempts":                           "3",
		"advanced.ignoreLocalEnv":                       "true",
		"policyPaths.0":                                 "/h/.gemini/policy.toml",
		"skills.disabled.#":                             "2",
	} {
		if got := gjson.GetBytes(b, path).String(); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	pol := policy(g)
	for _, tool := range []string{"run_shell_command", "write_file", "replace", "activate_skill"} {
		if !strings.Contains(pol, `toolName = "`+tool+`"`) {
			t.Errorf("policy lacks %s:\n%s", tool, pol)
		}
	}
	if strings.Contains(pol, "read_file") || !strings.Contains(pol, "allowRedirection = true") || !strings.Contains(pol, "priority = 500") {
		t.Errorf("policy:\n%s", pol)
	}

	narrow := grants([]string{"Bash(git diff:*)", "Bash(npm test *)", "Read"})
	if len(narrow) != 3 || narrow[0].prefix != "git diff" || narrow[1].prefix != "npm test" {
		t.Fatalf("grants %+v", narrow)
	}
	pol = policy(narrow)
	if !strings.Contains(pol, `commandPrefix = "git diff"`) || strings.Contains(pol, "allowRedirection") {
		t.Errorf("prefix policy:\n%s", pol)
	}
	b, _ = json.Marshal(settings("/h", narrow, 3, nil))
	if got := gjson.GetBytes(b, "tools.core").String(); got != `["run_shell_command(git diff)","run_shell_command(npm test)","read_file"]` {
		t.Errorf("narrow tools.core %s", got)
	}
	if whole := grants([]string{"Bash(git diff:*)", "Bash"}); len(whole) != 1 || whole[0].prefix != "" {
		t.Errorf("a whole grant keeps prefixes: %+v", whole)
	}
}

func TestPrepareHome(t *testing.T) {
	home := t.TempDir()
	sys := filepath.Join(t.TempDir(), "extra.md")
	if err := os.WriteFile(sys, []byte("Always answer in French."), 0o644); err != nil {
		t.Fatal(err)
	}
	a := Agent{MaxAttempts: 99}
	if err := a.PrepareHome(agent.TurnSpec{Home: home, SystemPromptFile: sys}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(settingsFile(home))
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(b, "general.maxAttempts").Int(); got != 10 {
		t.Errorf("maxAttempts %d, the CLI's maximum is 10", got)
	}
	if m, _ := os.ReadFile(filepath.Join(home, ".gemini", "GEMINI.md")); string(m) != "Always answer in French." {
		t.Errorf("GEMINI.md %q", m)
	}
	if _, err := os.Stat(policyFile(home)); err != nil {
		t.Error(err)
	}
	// Prepared again without the file, the memory goes.
	if err := a.PrepareHome(agent.TurnSpec{Home: home}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, ".gemini", "GEMINI.md")); !os.IsNotExist(err) {
		t.Errorf("GEMINI.md left behind: %v", err)
	}
	if err := a.PrepareHome(agent.TurnSpec{}); err == nil {
		t.Error("no home accepted")
	}
	// A skill under test named as a built-in one is not hidden with it.
	if err := a.PrepareHome(agent.TurnSpec{Home: home, SkillNames: []string{"skill-creator-x", "skill-creator"}}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(settingsFile(home))
	if n, got := gjson.GetBytes(b, "skills.disabled.#").Int(), gjson.GetBytes(b, "skills.disabled.0").String(); n != 1 || got != "antigravity-support" {
		t.Errorf("skills.disabled %s with a skill named skill-creator under test, want the other built-in alone", gjson.GetBytes(b, "skills.disabled").Raw)
	}
	if _, err := a.Run(t.Context(), agent.TurnSpec{Home: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "PrepareHome") {
		t.Errorf("a turn in an unprepared home: %v", err)
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

// Only the allowlist passes; with a stand-in the author's key stays out
// and the stand-in's goes in; GEMINI_CLI_HOME and HOME are the turn's.
func TestEnvAllowlist(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/home/me", secretVar + "=" + secretValue, "GEMINI_API_KEY=" + authorKey,
		"GOOGLE_API_KEY=g", "GEMINI_CLI_HOME=/home/me", "KEEP=1", "HTTPS_PROXY=http://proxy"}
	env := envMap(Env(agent.TurnSpec{Home: "/h", BaseEnv: base, PassEnv: []string{"KEEP"}, BaseURL: "http://127.0.0.1:1", Extra: []string{"TMPDIR=/x"}}))
	for k, want := range map[string]string{"PATH": "/bin", "HOME": "/h", "GEMINI_CLI_HOME": "/h", "KEEP": "1",
		"GEMINI_API_KEY": StandInKey, "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1", "GEMINI_CLI_NO_RELAUNCH": "true",
		"TMPDIR": "/x", "HTTPS_PROXY": "http://proxy"} {
		if env[k] != want {
			t.Errorf("%s=%q, want %q", k, env[k], want)
		}
	}
	for _, k := range []string{secretVar, "GOOGLE_API_KEY"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s reached the agent", k)
		}
	}
	// Passed by name, the author's keys still never reach a stand-in
	// (GOOGLE_API_KEY did).
	env = envMap(Env(agent.TurnSpec{Home: "/h", BaseEnv: base, PassEnv: []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"}, BaseURL: "http://127.0.0.1:1"}))
	if _, ok := env["GOOGLE_API_KEY"]; ok || env["GEMINI_API_KEY"] != StandInKey {
		t.Errorf("passed by name, an author's key reached the stand-in: %v", env)
	}
	env = envMap(Env(agent.TurnSpec{Home: "/h", BaseEnv: base}))
	if env["GEMINI_API_KEY"] != authorKey || env["GOOGLE_API_KEY"] != "g" || env["TMPDIR"] != "/h/tmp" {
		t.Errorf("against Google the author's key passes: %v", env)
	}
	if _, ok := env[secretVar]; ok {
		t.Error("a secret reached the agent")
	}
	if !HasCredentials(base) || HasCredentials([]string{"GEMINI_API_KEY="}) {
		t.Error("HasCredentials")
	}
}

func TestArgs(t *testing.T) {
	got := strings.Join(Args("-n is a flag? no", "sid", ""), " ")
	if got != "--prompt=-n is a flag? no --model "+DefaultModel+" --output-format stream-json --resume sid" {
		t.Errorf("args %q", got)
	}
	if got := strings.Join(LiveArgs("gemini-2.5-pro"), " "); got != "--acp --model gemini-2.5-pro" {
		t.Errorf("live args %q", got)
	}
}
