package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/demo"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/skill"
)

const cachedRubric = `{"criteria": [
 {"id": "runs-census", "kind": "must", "text": "runs scripts/census.sh with Bash", "check": {"tool": "Bash", "pattern": "census\\.sh", "expect": "present"}},
 {"id": "appends-ledger", "kind": "must", "text": "appends to ledger.log"},
 {"id": "no-ledger-rewrite", "kind": "must", "text": "never rewrites ledger.log"},
 {"id": "no-csv-edit", "kind": "should", "text": "never edits the csv"},
 {"id": "answers-from-census", "kind": "should", "text": "answers from the census"}
]}`

// A rubric the cache holds for this skill and judge model costs no call,
// as in the run (rubric.Extract reads the same file first); without it, or
// for another judge model, the extraction call is counted.
func TestDryRunSeesTheRubricCache(t *testing.T) {
	paths, err := demo.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sk, err := skill.Load(paths.Skill)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	if err := os.WriteFile(filepath.Join(cache, rubric.CacheKey(sk, "claude-haiku-4-5", "")+".json"), []byte(cachedRubric), 0o644); err != nil {
		t.Fatal(err)
	}
	counts := func(judge string, agent ...string) bool {
		o := Settings{SkillPath: paths.Skill, ConfigPath: paths.Config, Conversations: 2, JudgeRepeats: 1, CacheDir: cache, JudgeModel: judge}
		if len(agent) > 0 {
			o.JudgeAgent = agent[0]
		}
		e, err := DryRun(context.Background(), o, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range e.Lines {
			if strings.HasPrefix(l.What, "rubric") {
				return true
			}
		}
		return false
	}
	if counts("claude-haiku-4-5") {
		t.Error("a rubric call counted although the cache holds the rubric")
	}
	if !counts("claude-sonnet-5-5") {
		t.Error("no rubric call counted for a judge model the cache has no rubric for")
	}
	// Another judge agent's rubrics are cached apart (RubricCache), so
	// claude's rubric costs it a call: the dry run said "cached, no call".
	if !counts("claude-haiku-4-5", "codex") {
		t.Error("no rubric call counted for a codex judge, whose run does not read claude's cache")
	}
}

// A rubric a stand-in server wrote is cached apart from the vendor's API's
// (it was reused by a run against the real one), for each judge agent;
// stand-ins share one folder (a scripted server's port changes per run).
func TestRubricCacheKeepsStandInsApart(t *testing.T) {
	for _, judge := range []string{"claude", "codex", "gemini"} {
		urlVar := map[string]string{"claude": "ANTHROPIC_BASE_URL", "codex": "OPENAI_BASE_URL", "gemini": "GOOGLE_GEMINI_BASE_URL"}[judge]
		real := RubricCache("/c", judge, nil).Dir
		one := RubricCache("/c", judge, []string{urlVar + "=http://127.0.0.1:4001"}).Dir
		two := RubricCache("/c", judge, []string{urlVar + "=http://127.0.0.1:4002/"}).Dir
		if real == one || one != two {
			t.Errorf("%s: the vendor's %s, stand-ins %s and %s", judge, real, one, two)
		}
	}
}
