package draft

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// A skill named after its folder as it is may hold a newline; the file
// init writes names it in a comment, which must stay one line: the rest
// of the name was read as a key of the file ("model: opus").
func TestConfigTextNameOnOneLine(t *testing.T) {
	sk := &skill.Skill{Name: "notes\nmodel: opus", Path: "/s/SKILL.md"}
	pl := &plan.Plan{BaseTask: "Count the stock.", Probes: []plan.Probe{{Task: "a"}, {Task: "b"}, {Task: "c"}}}
	path := filepath.Join(t.TempDir(), plan.ConfigName)
	if err := os.WriteFile(path, []byte(ConfigText(sk, pl, nil, "", time.Now())), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := plan.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "" {
		t.Errorf("the skill's name set model %q", c.Model)
	}
}
