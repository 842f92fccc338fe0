package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/engine"
	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/rubric"
	"github.com/vibe-test/vibe-test/internal/skill"
	"github.com/vibe-test/vibe-test/internal/term"
)

func initFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "force", Usage: "overwrite an existing vibe-test.yaml"},
		&cli.StringFlag{Name: "judge-model", Usage: "the model that drafts the tasks and extracts the rubric; written into the config as judge_model", DefaultText: "the CLI's"},
	}
}

// InitOptions are `vibe-test init`'s.
type InitOptions struct {
	Skill      string // the SKILL.md or its folder
	Force      bool   // replace an existing vibe-test.yaml
	JudgeModel string // "": the CLI's default
}

func initOptions(c *cli.Context) (InitOptions, error) {
	if c.NArg() != 1 {
		return InitOptions{}, exit.Errorf(exit.Tool, "init: expected one path to a SKILL.md or its folder, got %d arguments", c.NArg())
	}
	return InitOptions{Skill: c.Args().First(), Force: c.Bool("force"), JudgeModel: c.String("judge-model")}, nil
}

// runInit drafts a vibe-test.yaml beside a SKILL.md: the base task and
// three probes from one cold call, the rubric (extracted or cached) shown as
// a comment block for review. An existing config is kept unless --force.
func runInit(ctx context.Context, o InitOptions, stdio IO) error {
	sk, err := skill.Load(o.Skill)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	target := filepath.Join(sk.Dir, plan.ConfigName)
	force := o.Force
	if _, err := os.Lstat(target); err == nil && !force {
		return exit.Errorf(exit.Tool, "%s: already exists, not overwritten (pass --force to replace it)", target)
	}
	binary, err := engine.FindClaude(stdio.Env)
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	model := o.JudgeModel
	caller := engine.ColdCaller(binary, stdio.Env, claude.HasCredentials(stdio.Env), 2, 10*time.Minute, engine.DefaultGrace)
	fmt.Fprintf(stdio.Stderr, "vibe-test: drafting the tasks and extracting the rubric of %s (model %s)\n", sk.Name, engine.ModelName(model))

	var (
		pl        *plan.Plan
		planTurn  claude.Turn
		rb        *rubric.Rubric
		usage     rubric.Usage
		planErr   error
		rubricErr error
		wg        sync.WaitGroup
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		pl, planTurn, planErr = plan.Draft(ctx, caller, sk, model)
	}()
	go func() {
		defer wg.Done()
		rb, usage, rubricErr = rubric.Extract(ctx, caller, sk, model, engine.CacheDir("", stdio.Env))
	}()
	wg.Wait()
	if ctx.Err() != nil {
		return exit.Errorf(exit.Interrupted, "interrupted: nothing written")
	}
	// A refused key fails both calls the same way: say it once.
	for _, err := range []error{planErr, rubricErr} {
		if errors.Is(err, claude.ErrCredentials) {
			return exit.With(exit.Tool, err)
		}
	}
	switch {
	case planErr != nil && rubricErr != nil:
		// Two causes on one line, told apart.
		return exit.Errorf(exit.Tool, "%v; and %v", planErr, rubricErr)
	case planErr != nil:
		return exit.With(exit.Tool, planErr)
	case rubricErr != nil:
		return exit.With(exit.Tool, rubricErr)
	}

	text := ConfigText(sk, pl, rb, model, time.Now().UTC())
	// The file is checked to load before it takes the config's name.
	tmp, err := atomicfile.WriteTemp(sk.Dir, "."+plan.ConfigName+".*", []byte(text))
	if err != nil {
		return exit.With(exit.Tool, err)
	}
	defer os.Remove(tmp)
	if _, err := plan.LoadConfig(tmp); err != nil {
		return exit.Errorf(exit.Tool, "the drafted config does not load (a vibe-test bug): %v", err)
	}
	if force {
		err = os.Rename(tmp, target)
	} else {
		err = atomicfile.LinkNew(tmp, target, []byte(text), record.FileMode)
		if errors.Is(err, fs.ErrExist) {
			return exit.Errorf(exit.Tool, "%s: already exists, not overwritten (pass --force to replace it)", target)
		}
	}
	if err != nil {
		return exit.Errorf(exit.Tool, "writing %s: %v", target, err)
	}
	fmt.Fprintf(stdio.Stdout, "wrote %s\n", target)
	fmt.Fprintf(stdio.Stdout, "  %-20s %s\n", "base task (turn 1):", term.Clean(pl.BaseTask))
	for i, p := range pl.Probes {
		fmt.Fprintf(stdio.Stdout, "  %-20s %s\n", fmt.Sprintf("probe (turn %d):", plan.ProbeTurns[i]), term.Clean(p.Task))
	}
	fmt.Fprintf(stdio.Stdout, "  rubric: %d criteria (%s), in a comment block at the end of the file\n", len(rb.Criteria), rb.Source)
	fmt.Fprintf(stdio.Stdout, "model cost $%.4f. Review the file (a model wrote it), then run: vibe-test %s\n", planTurn.CostUSD+usage.Cost, sk.Path)
	return nil
}

// ConfigText renders a commented vibe-test.yaml: a header explaining each
// key, the drafted tasks, the optional keys commented out, and the rubric as
// a comment block. Task strings are written as double-quoted scalars, so any
// text the model drafted loads back unchanged.
func ConfigText(sk *skill.Skill, pl *plan.Plan, rb *rubric.Rubric, judgeModel string, now time.Time) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# vibe-test.yaml for the %s skill, drafted by `vibe-test init` on %s\n", sk.Name, now.Format("2006-01-02"))
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
