package skill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/cli holds the skills of the frontmatter study, as they were
// installed for the pinned CLI (2.1.328), and listing.txt the lines the
// CLI then listed for them in its first request to the model (probes fm
// and dmi: the fixture and the request bodies are kept with the study).
// What vibe-test says the model will see must be what the CLI showed:
// the same fallbacks, the same cut, the same hidden skills.
func TestListingAsTheCLIShowedIt(t *testing.T) {
	b, err := os.ReadFile("testdata/cli/listing.txt")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{} // folder → the CLI's line
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, _, _ := strings.Cut(strings.TrimPrefix(l, "- "), ":")
		folder, _, _ := strings.Cut(name, " (")
		listed[folder] = l
	}
	entries, err := os.ReadDir("testdata/cli")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		folder := e.Name()
		t.Run(folder, func(t *testing.T) {
			s, err := Load(filepath.Join("testdata/cli", folder))
			want, shown := listed[folder]
			switch {
			case !shown:
				// The CLI hid it: disable-model-invocation read as true.
				if err == nil || !strings.Contains(err.Error(), "which the CLI reads as true") {
					t.Fatalf("the CLI hid this skill; vibe-test: %v", err)
				}
				return
			case folder == "fm-emptybody":
				// Listed, but refused by design: nothing to follow.
				if err == nil || !strings.Contains(err.Error(), "empty body") {
					t.Fatalf("err = %v, want the empty body refused", err)
				}
				return
			case err != nil:
				t.Fatalf("the CLI listed %q; vibe-test refused it: %v", want, err)
			}
			label := folder
			if s.Name != folder {
				label += " (" + s.Name + ")" // a valid declared name the CLI shows beside the folder's
			}
			if got := "- " + label + ": " + s.Listing(); got != want {
				t.Errorf("vibe-test sees\n  %.200q\nthe CLI listed\n  %.200q", got, want)
			}
		})
	}
	if n != len(listed)+8 { // dmi-01 to dmi-08 were hidden
		t.Errorf("%d skills, %d listed: the fixture and the listing disagree", n, len(listed))
	}
}
