package app

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vibe-test/vibe-test/internal/testenv"
)

// helpPage runs vibe-test with args, which must print help: exit 0,
// nothing on stderr.
func helpPage(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), append([]string{"vibe-test"}, args...), IO{Env: []string{"PATH=" + t.TempDir()}, Stdout: &stdout, Stderr: &stderr})
	if code != 0 || stderr.Len() > 0 {
		t.Fatalf("%v: exit %d, stderr %q", args, code, stderr.String())
	}
	return stdout.String()
}

// The root page and the exit-code table, as golden files (the version
// masked). `go test ./internal/app -run TestHelpGolden -update` rewrites
// them after a change that is meant.
func TestHelpGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"root", []string{"--help"}},
		{"exit-codes", []string{"help", "exit-codes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			testenv.Golden(t, filepath.Join("testdata", "help", c.name+".golden"), []byte(helpPage(t, c.args...)),
				testenv.Replace("\n   "+Version+"\n", "\n   (version)\n"))
		})
	}
}

// Every page of help, the root's and every command's, asked either way,
// fits in helpWidth columns, and groups its flags under headings.
func TestHelpWidth(t *testing.T) {
	pages := map[string]string{"--help": helpPage(t, "--help"), "help exit-codes": helpPage(t, "help", "exit-codes")}
	for _, c := range newApp(IO{}, &chosen{}).Commands {
		byHelp := helpPage(t, "help", c.Name)
		// (`vibe-test help --help` is the root page, as urfave/cli has it.)
		if flagHelp := helpPage(t, c.Name, "--help"); c.Name != "help" && flagHelp != byHelp {
			t.Errorf("`vibe-test %s --help` differs from `vibe-test help %s`:\n%s\n%s", c.Name, c.Name, flagHelp, byHelp)
		}
		pages["help "+c.Name] = byHelp
	}
	for name, page := range pages {
		for _, line := range strings.Split(page, "\n") {
			if n := utf8.RuneCountInString(line); n > helpWidth {
				t.Errorf("%s: %d columns: %q", name, n, line)
			}
		}
		if name != "help exit-codes" && !strings.Contains(page, "\n   Help:\n     --help, -h") {
			t.Errorf("%s: no Help heading over --help:\n%s", name, page)
		}
	}
	if !strings.Contains(pages["--help"], "\nEXAMPLES:\n   vibe-test demo ") {
		t.Errorf("the root page has no EXAMPLES:\n%s", pages["--help"])
	}
	for _, cat := range []string{catInput, catAgent, catDilution, catVerdict, catLimits, catOutput} {
		if !strings.Contains(pages["--help"], "\n   "+cat+":\n") {
			t.Errorf("the root page has no %q heading", cat)
		}
	}
}
