package draft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/term"
)

// ConfigText renders a commented vibe-test.yaml: a header explaining each
// key, the drafted tasks, the optional keys commented out, and the rubric as
// a comment block. Task strings are written as double-quoted scalars, so any
// text the model drafted loads back unchanged.
func ConfigText(sk *skill.Skill, pl *plan.Plan, rb *rubric.Rubric, judgeModel string, now time.Time) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	// The name is a folder's, which may hold a newline: one line, or the
	// rest of it would be a key of the file.
	w("# vibe-test.yaml for the %s skill, drafted by `vibe-test init` on %s\n", term.Line(sk.Name), now.Format("2006-01-02"))
	by := "the claude CLI's default model"
	if judgeModel != "" {
		by = yamlString(judgeModel)
	}
	w("# from %s by %s.\n", filepath.Base(sk.Path), by)
	w("# A model wrote the tasks and the rubric below: review them before trusting a run.\n")
	w("#\n")
	w("# Keys (unknown keys are errors):\n")
	w("#   base_task    turn 1: a request the skill clearly applies to; the baseline the\n")
	w("#                probes are compared with (a failing baseline stops the run)\n")
	w("#   probes       exactly three requests, asked at turns 6, 8 and 10, after unrelated\n")
	w("#                filler turns have diluted the context. Each is `- task: ...`, with an\n")
	w("#                optional `setup:` map (path: content) written into the sandbox just\n")
	w("#                before that probe\n")
	w("#   fixture      a folder, relative to this file, copied into the sandbox before turn 1\n")
	w("#   files        a map (path: content) written into the sandbox at the start\n")
	w("#   model        the agent's model (default: the claude CLI's)\n")
	w("#   judge_model  the model that extracts the rubric, judges turns and drafts tasks\n")
	w("#                (default: the claude CLI's)\n")
	w("#   schedule     beyond the ten turns (flags override each key): dilute_to (a context\n")
	w("#                level per probe, such as [50k, 100k, 150k]), compact_before (probe\n")
	w("#                numbers to run the CLI's /compact before), compact_at (a level to\n")
	w("#                compact at once), fillers (passages or work), max_fillers\n")
	w("# vibe-test reads this file when it sits beside SKILL.md; --config FILE picks another.\n")
	w("\n")
	w("base_task: %s\n", yamlString(pl.BaseTask))
	w("probes:\n")
	for _, p := range pl.Probes {
		w("  - task: %s\n", yamlString(p.Task))
	}
	w("\n")
	w("# fixture: fixture\n")
	w("# files:\n")
	w("#   .env: \"API_URL=http://localhost:8080\\n\"\n")
	w("# model: sonnet\n")
	w("# schedule:\n")
	w("#   dilute_to: [50k, 100k, 150k]\n")
	w("#   fillers: work\n")
	if judgeModel != "" {
		w("judge_model: %s\n", yamlString(judgeModel))
	} else {
		w("# judge_model: sonnet\n")
	}
	if rb != nil {
		w("\n")
		w("# Rubric: %d criteria extracted from SKILL.md (%s). A turn passes when every\n", len(rb.Criteria), rb.Source)
		w("# \"must\" passes; a check, when present, decides that criterion without the model.\n")
		w("# Each run extracts the rubric itself (cached by skill content), so its wording\n")
		w("# may differ. To judge with exactly this one after review, copy the JSON below\n")
		w("# without the leading \"# \" into a file outside the skill folder (everything in\n")
		w("# the skill folder is copied into the agent's sandbox) and pass it with\n")
		w("# --rubric FILE.\n")
		w("#\n")
		w("# {\"criteria\": [\n")
		for i, c := range rb.Criteria {
			sep := ","
			if i == len(rb.Criteria)-1 {
				sep = ""
			}
			w("#   %s%s\n", compactJSONLine(c), sep)
		}
		w("# ]}\n")
	}
	return b.String()
}

// yamlString quotes s as a YAML double-quoted scalar (JSON's escapes are a
// subset of YAML's).
func yamlString(s string) string {
	return compactJSONLine(s)
}

// compactJSONLine encodes v as one line of JSON without HTML escaping, with
// the characters YAML does not allow raw (or reads as line breaks) escaped,
// so the line is safe both as a YAML value and inside a YAML comment.
func compactJSONLine(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return `""`
	}
	var out strings.Builder
	for _, r := range strings.TrimRight(buf.String(), "\n") {
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfeff || r == 0xfffe || r == 0xffff {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}
