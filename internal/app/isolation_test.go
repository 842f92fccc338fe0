package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// A shared run folder's run.json edited to name other folders as the
// conversation's sandbox and home: resume neither uses nor removes them.
// The conversation had errored (its sandbox is gone), so resume restarts it
// at turn 1; the new attempts get new transcript names, and every file of
// the first attempt stays as it was, still named by its abandoned record.
func TestResumeTouchesNoForeignFolderAndOverwritesNoTranscript(t *testing.T) {
	t.Parallel()
	tooLong := scripted.Rule{Kind: scripted.KindAgent, Turns: []int{3}, Steps: []scripted.Step{{Error: &scripted.HTTPError{Status: 400, Count: 1000}}}}
	s := runScript(t, fastCLI(t), faultScript(t, tooLong), 1, nil)
	if s.code != 3 || s.run.Conversations[0].Status != record.StatusError {
		t.Fatalf("exit %d, conversation %s: expected an errored conversation", s.code, s.run.Conversations[0].Status)
	}
	before := map[string][32]byte{}
	filepath.WalkDir(filepath.Join(s.dir, "conv-1"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			before[p] = sha256.Sum256(b)
		}
		return err
	})
	if len(before) < 3 {
		t.Fatalf("%d transcripts before resume", len(before))
	}

	victim := t.TempDir()
	os.WriteFile(filepath.Join(victim, "precious.txt"), []byte("mine"), 0o600)
	victimHome := filepath.Join(t.TempDir(), "alice")
	os.MkdirAll(filepath.Join(victimHome, ".claude"), 0o700)
	os.WriteFile(filepath.Join(victimHome, ".bashrc"), []byte("mine"), 0o600)
	r := s.run
	r.Conversations[0].Sandbox, r.Conversations[0].Home = victim, victimHome
	r.Conversations[0].ConfigDir = filepath.Join(victimHome, ".claude")
	if err := record.Save(s.dir, r); err != nil {
		t.Fatal(err)
	}

	env := DemoEnv(os.Environ(), s.srv.URL())
	env = append(env, "VIBE_TEST_CLAUDE="+fastCLI(t), "VIBE_TEST_CACHE_DIR="+t.TempDir())
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"vibe-test", "resume", s.dir, "--retry-backoff", "200ms"}, IO{Env: env, Stdout: &stdout, Stderr: &stderr})
	t.Logf("resume: exit %d\n%s\n%s", code, stdout.String(), stderr.String())

	for _, p := range []string{filepath.Join(victim, "precious.txt"), filepath.Join(victimHome, ".bashrc"), filepath.Join(victimHome, ".claude")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s did not survive resume: %v", p, err)
		}
	}
	after, err := record.Load(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	c := after.Conversations[0]
	if !strings.Contains(strings.Join(c.Notes, "\n"), "not made by vibe-test") {
		t.Errorf("notes %q: expected one saying the recorded sandbox was not used", c.Notes)
	}
	if c.Sandbox == victim || c.Home == victimHome {
		t.Errorf("the record still names the foreign folders: %s, %s", c.Sandbox, c.Home)
	}
	for p, sum := range before {
		b, err := os.ReadFile(p)
		if err != nil || sha256.Sum256(b) != sum {
			t.Errorf("%s was changed or removed by resume (%v)", p, err)
		}
	}
	names := map[string]bool{}
	restarted := false
	for _, list := range [][]record.Turn{c.Turns, c.Abandoned} {
		for _, tr := range list {
			if names[tr.Transcript] {
				t.Errorf("two records name %s", tr.Transcript)
			}
			names[tr.Transcript] = true
			if _, err := os.Stat(filepath.Join(s.dir, tr.Transcript)); err != nil {
				t.Errorf("turn %d's transcript: %v", tr.Turn, err)
			}
			if tr.Turn == 1 && tr.Transcript != filepath.Join("conv-1", "turn-01.jsonl") {
				restarted = true
			}
		}
	}
	if !restarted {
		t.Errorf("resume did not run turn 1 again under a new name: %v", names)
	}
}
