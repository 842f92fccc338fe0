package term

import (
	"os/exec"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "turn 6 failed: ran the tests", "turn 6 failed: ran the tests"},
		{"newline and tab kept", "a\n\tb", "a\n\tb"},
		{"unicode kept", "résumé → ✓ 日本", "résumé → ✓ 日本"},
		{"OSC 0 title, BEL", "x\x1b]0;pwned\x07y", "x]0;pwnedy"},
		{"OSC 52 clipboard, ST", "\x1b]52;c;cm0gLXJmIH4=\x1b\\done", "]52;c;cm0gLXJmIH4=\\done"},
		{"erase line", "PASS\r\x1b[2Kall good", "PASS[2Kall good"},
		{"C1 CSI as rune", "a\u009b2Kb", "a2Kb"},
		{"C1 OSC as rune", "a\u009d0;t\u009cb", "a0;tb"},
		{"raw 8-bit CSI byte", "a\x9b2Kb", "a\ufffd2Kb"},
		{"NUL, DEL, backspace", "a\x00b\x7fc\bd", "abcd"},
		{"bidi override", "held \u202eliaf\u202c.", "held liaf."},
		{"bidi isolates and marks", "a\u2066b\u2069c\u200fd\u200ee\u061cf", "abcdef"},
		{"other format characters kept", "zero\u200bwidth", "zero\u200bwidth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clean(tc.in); got != tc.want {
				t.Fatalf("Clean(%q) = %q, expected %q", tc.in, got, tc.want)
			}
		})
	}
	if got := Line("a\nb\tc\x1b[2K"); got != "a b c[2K" {
		t.Fatalf("Line: %q", got)
	}
}

func FuzzClean(f *testing.F) {
	f.Add("x\x1b]0;t\x07\r\u009b")
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range Clean(s) {
			if control(r) {
				t.Fatalf("Clean(%q) kept control %U", s, r)
			}
		}
	})
}

// A folder named in a hint is one word a shell takes back as it was,
// printed through Line as every message is.
func TestArg(t *testing.T) {
	for in, want := range map[string]string{
		"vibe-runs/20261207T150000Z-stock-ledger": "vibe-runs/20261207T150000Z-stock-ledger",
		"vibe-runs/20261207T150000Z-My Skill":     "'vibe-runs/20261207T150000Z-My Skill'",
		"it's":                                    `'it'\''s'`,
		"":                                        "''",
		"a\nb's":                                  `$'a\nb\'s'`,
		"$(rm -rf ~)":                             "'$(rm -rf ~)'",
		"caf\xe9":                                 `$'caf\xe9'`,
		"-x":                                      "./-x",
	} {
		if got := Arg(in); got != want {
			t.Errorf("Arg(%q) = %s, want %s", in, got, want)
		}
	}
	// What bash makes of each word, as Line prints it, is the string
	// itself (a dash first, the same folder as ./-x): a byte that is not
	// UTF-8, a C1 or bidi character came out of Line changed.
	bash, err := exec.LookPath("bash") // .ci/run's own shell
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"My Skill", "it's", "a\nb's\\c", "x\x01y", "$HOME `id`", "ü ñ", "caf\xe9", "caf\xe9\nx", "a\u0085b", "a\u202eb", "-x y"} {
		out, err := exec.Command(bash, "-c", "printf %s "+Line(Arg(in))).Output()
		want := in
		if strings.HasPrefix(in, "-") {
			want = "./" + in
		}
		if err != nil || string(out) != want {
			t.Errorf("bash reads %s as %q (%v), want %q", Line(Arg(in)), out, err, want)
		}
	}
}
