package app

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// Every kind of secret, planted in the author's environment, passed to the
// agent with --pass-env, echoed by the agent's tool and quoted by the judge,
// is absent from every file of the run folder, the JUnit file, stdout
// (--json) and stderr (the summary); and the run folder is owner-only.
func TestPlantedSecretsReachNoArtifact(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"secret-looking variable": "planted-env-token-AAAA1111",
		"--pass-env value":        "planted-pass-env-BBBB2222",
		"custom header":           "planted-header-CCCC3333",
		"github fine-grained":     "github_pat_11PLANTED0" + strings.Repeat("Zq7", 20),
		"github classic":          "ghp_" + strings.Repeat("Pl4n", 9),
		"aws access key id":       "AKIAPLANTED000000000",
		"aws secret":              "PlAnTeD/AwsSecretKey+0123456789abcdefghij",
		"anthropic key":           "sk-ant-api03-PLANTEDxxxxxxxxxxxxxxxx",
	}
	env := []string{
		"MY_SERVICE_TOKEN=" + secrets["secret-looking variable"],
		"CUSTOM_PASSED_VAR=" + secrets["--pass-env value"],
		"ANTHROPIC_CUSTOM_HEADERS=X-Gateway-Key: " + secrets["custom header"],
		"GH_FINE_GRAINED=" + secrets["github fine-grained"], // shape only: the name is not secret-looking
	}
	// The agent types most of them (a model can leak what it read
	// anywhere) and prints the --pass-env value from its environment.
	cmd := "echo " + secrets["secret-looking variable"] + " $CUSTOM_PASSED_VAR " + secrets["custom header"] + " " +
		secrets["github fine-grained"] + " " + secrets["github classic"] + " " + secrets["aws access key id"] +
		" aws_secret_access_key=" + secrets["aws secret"] + " " + secrets["anthropic key"]
	leak := []scripted.Step{
		{ToolUses: []scripted.ToolUse{{Name: "Bash", Input: map[string]any{"command": cmd, "description": "look around"}}}},
		{Text: "Done: " + secrets["custom header"]},
	}
	// The judge quotes the command, as a judge citing evidence would.
	quote := []string{strings.ReplaceAll(cmd, "$CUSTOM_PASSED_VAR", secrets["--pass-env value"])}
	var criteria []map[string]any
	for _, c := range demo.Rubric()["criteria"].([]map[string]any) {
		criteria = append(criteria, map[string]any{"id": c["id"], "result": "fail", "evidence": "the agent printed " + strings.Join(quote, " "), "call": 1})
	}
	judged := map[string]any{"criteria": criteria, "escape_hatch": true, "escape_reason": "it echoed " + strings.Join(quote, ", ")}
	junit := filepath.Join(t.TempDir(), "junit.xml")
	s := runScript(t, fastCLI(t), faultScript(t,
		scripted.Rule{Kind: scripted.KindAgent, Turns: []int{6}, Steps: leak},
		scripted.Rule{Kind: scripted.KindJudge, Contains: "planted-env-token", Steps: []scripted.Step{{ToolUses: []scripted.ToolUse{{Name: "StructuredOutput", Input: judged}}}}},
	), 1, env, "--pass-env", "CUSTOM_PASSED_VAR", "--json", "--junit", junit)

	// The test proves something only if the secrets went round: the tool
	// printed the --pass-env value, and the judge's words were used.
	sawPassEnv := false
	for _, r := range s.srv.Requests() {
		if r.Kind == scripted.KindJudge && bytes.Contains(r.Body, []byte(secrets["--pass-env value"])) {
			sawPassEnv = true
		}
	}
	if !sawPassEnv {
		t.Fatal("the --pass-env value never reached the judge's trace: the test proves nothing")
	}
	v := s.run.Conversations[0].TurnAt(6)
	if v == nil || v.Verdict == nil || !v.Verdict.EscapeHatch || !strings.Contains(v.Verdict.EscapeReason, "[REDACTED]") {
		t.Fatalf("turn 6 was not judged by the planted verdict: %+v", v)
	}

	check := func(where string, b []byte) {
		for kind, secret := range secrets {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the %s %q", where, kind, secret)
			}
		}
	}
	check("stdout", []byte(s.stdout))
	check("stderr", []byte(s.stderr))
	files := 0
	for _, root := range []string{s.dir, junit} {
		if root == "" {
			continue
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if root == s.dir {
				want := fs.FileMode(0o600)
				if d.IsDir() {
					want = 0o700
				}
				if info.Mode().Perm() != want {
					t.Errorf("%s: mode %v, expected %v (owner-only run folder)", p, info.Mode().Perm(), want)
				}
			}
			if d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			check(p, b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 10 {
		t.Fatalf("read %d files (junit %q): the test proves nothing", files, junit)
	}
}
