package codex

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestUnwrapShell(t *testing.T) {
	for in, want := range map[string]string{
		`/bin/bash -lc 'cat .agents/skills/x/SKILL.md'`:             "cat .agents/skills/x/SKILL.md",
		`/bin/bash -lc "echo hi; printf 'a\\nb\\n' > made.txt; ls"`: `echo hi; printf 'a\nb\n' > made.txt; ls`,
		`/bin/bash -lc "echo 'it''s' && ls -a"`:                     "echo 'it''s' && ls -a",
		`/bin/bash -lc 'echo "$HOME"'`:                              `echo "$HOME"`,
		`/bin/bash -lc "echo \"\$HOME\" \\\\ x"`:                    `echo "$HOME" \\ x`,
		`bash -c ls`:                                                "ls",
		`/bin/zsh -lc 'ls'`:                                         "ls",
		`/usr/bin/python3 -c 'print(1)'`:                            `/usr/bin/python3 -c 'print(1)'`,
		`/bin/bash -lc 'unterminated`:                               `/bin/bash -lc 'unterminated`,
		`ls -la`:                                                    "ls -la",
		`/bin/bash -lc 'a' 'b'`:                                     `/bin/bash -lc 'a' 'b'`,
	} {
		if got := unwrapShell(in); got != want {
			t.Errorf("unwrapShell(%s) = %s, want %s", in, got, want)
		}
	}
	if w, ok := shellWords(`a 'b c' "d\"e" f\ g`); !ok || !slices.Equal(w, []string{"a", "b c", `d"e`, "f g"}) {
		t.Errorf("%q %v", w, ok)
	}
}

func TestSkillLoadedByRead(t *testing.T) {
	call := func(cmd string, isErr bool) ToolCall {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		return ToolCall{Name: "Bash", Input: in, HasResult: true, IsError: isErr}
	}
	var a Agent
	for cmd, want := range map[string]bool{
		"cat .agents/skills/release-notes/SKILL.md":                        true,
		"cat /tmp/work/.agents/skills/release-notes/SKILL.md":              true,
		"sed -n '1,200p' .agents/skills/release-notes/SKILL.md":            true,
		"cd /tmp/work && head -50 '.agents/skills/release-notes/SKILL.md'": true,
		"LC_ALL=C cat .agents/skills/release-notes/SKILL.md | wc -l":       true,
		"ls .agents/skills/release-notes/SKILL.md":                         false,
		"echo .agents/skills/release-notes/SKILL.md":                       false,
		"cat .agents/skills/release-notes-old/SKILL.md":                    false,
		"cat .agents/skills/other/SKILL.md":                                false,
		"cat README.md; ls .agents/skills/release-notes/SKILL.md":          false,
		// A cd moves where a relative path starts (it was missed).
		"cd .agents/skills/release-notes && cat SKILL.md":          true,
		"cd .agents/skills; sed -n 1,50p ./release-notes/SKILL.md": true,
		"cd .agents/skills/other && cat SKILL.md":                  false,
		"cat SKILL.md": false,
		"cd .agents/skills/release-notes && cat ../other/SKILL.md": false,
	} {
		turn := Turn{Calls: []ToolCall{call(cmd, false)}}
		if got := a.SkillLoaded(turn, "release-notes"); got != want {
			t.Errorf("%s: loaded %v, want %v", cmd, got, want)
		}
	}
	// A skill installed under its folder's name as it is: the command
	// quotes or escapes what the shell would split at. Each was missed.
	for name, cmd := range map[string]string{
		"a;b":        "cat '.agents/skills/a;b/SKILL.md'",
		"a(b)":       `cat ".agents/skills/a(b)/SKILL.md" | head -5`,
		"Odd Folder": `cat .agents/skills/Odd\ Folder/SKILL.md`,
		"x|y":        `cd /tmp/w && sed -n 1,80p .agents/skills/x\|y/SKILL.md`,
	} {
		if !a.SkillLoaded(Turn{Calls: []ToolCall{call(cmd, false)}}, name) {
			t.Errorf("%s: skill %q not loaded", cmd, name)
		}
	}
	failed := Turn{Calls: []ToolCall{call("cat .agents/skills/release-notes/SKILL.md", true)}}
	if a.SkillLoaded(failed, "release-notes") {
		t.Error("a failed read loaded the skill")
	}
	running := Turn{Calls: []ToolCall{{Name: "Bash", Input: json.RawMessage(`{"command":"cat .agents/skills/release-notes/SKILL.md"}`)}}}
	if a.SkillLoaded(running, "release-notes") {
		t.Error("a read with no result loaded the skill")
	}
	if !a.SkillLoaded(Turn{Skills: []string{"release-notes"}}, "release-notes") || a.SkillLoaded(Turn{}, "") {
		t.Error("injected skills")
	}
}

func TestStderrLineSkipsTheTempHomeWarning(t *testing.T) {
	for stderr, want := range map[string]string{
		"": "",
		"WARNING: proceeding, even though we could not create PATH aliases: Refusing (x)\n":                        "",
		"WARNING: proceeding, even though we could not create PATH aliases: x\n\nError: stream disconnected\nmore": "Error: stream disconnected",
		"  Error: first\nWARNING: proceeding, even though we could not create PATH aliases":                        "Error: first",
		"Reading additional input from stdin...\nError: stream disconnected":                                       "Error: stream disconnected",
	} {
		if got := stderrLine(stderr); got != want {
			t.Errorf("stderrLine(%q) = %q, want %q", stderr, got, want)
		}
	}
}
