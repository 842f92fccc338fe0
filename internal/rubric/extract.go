package rubric

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"os"
	"path/filepath"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/readfile"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// PromptVersion changes whenever the extraction prompt or schema changes, so
// cached rubrics from an older prompt are not reused.
// rubric-v2: a must is a step or prohibition of every task the skill
// covers; one required only in some situations is a should (a must the
// judge finds not applicable fails the turn).
const PromptVersion = "rubric-v2"

// Caller is the cold-call seam: claude.Structured.
type Caller = claude.Structured

// Usage counts what extraction cost.
type Usage struct {
	Calls  int     `json:"calls"`
	Tokens int64   `json:"tokens"`
	Cost   float64 `json:"cost_usd"`
}

// Prompt is the extraction prompt for a skill.
func Prompt(s *skill.Skill) string {
	return `Read the instructions below, written for an AI coding agent that works through tool calls (Bash, Read, Edit, Write, Glob, Grep, Skill).
List 5 to 8 criteria that tell whether the agent followed these instructions, judged ONLY from the tool calls it executed (names and inputs, in order), never from what it wrote about its work.
Each criterion:
- id: short lowercase-hyphenated name
- text: the observable behaviour, e.g. "runs scripts/health.py with Bash before any analysis"
- kind: "must" for the procedure's required steps and prohibitions that apply to every task these instructions cover (a task passes only when every must criterion is shown by its calls), "should" for the rest, including a step required only in some situations
- check (optional, only when a regular expression can decide it): tool = the tool name (a regular expression over the name, e.g. "Bash" or "Edit|Write"), pattern = a regular expression over the call's input as compact JSON (Bash input is {"command":...}, Read {"file_path":...}, Edit {"file_path","old_string","new_string"}, Write {"file_path","content"}, Skill {"skill":...}), expect = "present" (some call must match) or "absent" (no call may match).
Answer with the StructuredOutput tool.

--- INSTRUCTIONS (` + s.Name + `) ---
` + s.Raw
}

// Cache is where rubrics are cached ("" Dir: nowhere), and what an
// unnamed model ("": the CLI's default) resolves from there: its model
// variable, how it signs in. A rubric one default model wrote is not
// reused when the CLI would answer with another.
type Cache struct {
	Dir     string
	Unnamed string
}

// CacheKey identifies a rubric by skill content, model and prompt
// version; an unnamed model by what its default resolves from (unnamed).
func CacheKey(s *skill.Skill, model, unnamed string) string {
	if model == "" {
		model = "default: " + unnamed
	}
	h := sha256.Sum256([]byte(s.Hash + "\x00" + model + "\x00" + PromptVersion))
	return hex.EncodeToString(h[:16])
}

// DefaultCacheDir is where rubrics are cached ($VIBE_TEST_CACHE_DIR wins).
func DefaultCacheDir() string {
	if d := os.Getenv("VIBE_TEST_CACHE_DIR"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "vibe-test", "rubrics")
}

// maxCacheFile bounds a cached rubric's size (a rubric is a few KiB).
const maxCacheFile = 4 << 20

// Extract returns the skill's rubric from the cache, or from a cold call
// validated and retried once. The usage covers the calls made.
//
// The rubric's Model is the model that wrote it: the one named, or for an
// unnamed model the one the CLI said it ran (kept in the cache with it).
func Extract(ctx context.Context, c Caller, s *skill.Skill, model string, cache Cache) (*Rubric, Usage, error) {
	var u Usage
	cachePath := ""
	if cache.Dir != "" {
		cachePath = filepath.Join(cache.Dir, CacheKey(s, model, cache.Unnamed)+".json")
		// A regular file only (readfile.Regular): a FIFO at the cache path
		// hung the run on its read.
		if b, err := readfile.Regular(cachePath, maxCacheFile); err == nil {
			if r, err := Parse(b); err == nil {
				r.Source = "cache"
				if model != "" || r.Model == "" {
					r.Model = model
				}
				return r, u, nil
			}
		}
	}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		turn, err := c.Structured(ctx, Prompt(s), Schema, model)
		u.Calls++
		u.Tokens += turn.LastUsage.Context() + turn.OutputTokens
		u.Cost += turn.CostUSD
		if err != nil {
			if ctx.Err() != nil {
				return nil, u, ctx.Err()
			}
			if errors.Is(err, claude.ErrCredentials) {
				// A second call would be refused the same way.
				return nil, u, fmt.Errorf("extracting the rubric: %w", err)
			}
			lastErr = err
			continue
		}
		r, err := Parse(turn.StructuredOutput)
		if err != nil {
			lastErr = fmt.Errorf("invalid rubric: %w", err)
			continue
		}
		r.Source = "extracted"
		r.Model = model
		if model == "" {
			r.Model = answeredBy(turn)
		}
		if cachePath != "" {
			_ = writeCache(cachePath, r) // a cache that cannot be written only costs a call next time
		}
		return r, u, nil
	}
	return nil, u, fmt.Errorf("extracting the rubric failed twice: %w", lastErr)
}

// answeredBy is the model a call ran on: the one the API said answered,
// else the one the CLI resolved.
func answeredBy(t claude.Turn) string {
	if len(t.AnsweredBy) > 0 {
		return t.AnsweredBy[len(t.AnsweredBy)-1]
	}
	return t.Model
}

func writeCache(path string, r *Rubric) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(Rubric{Criteria: r.Criteria, Model: r.Model}, "", "  ")
	if err != nil {
		return err
	}
	// A unique temp name: two runs filling the cache at once never share one.
	return atomicfile.Write(path, b, 0o644)
}

// MaxFileSize bounds a rubric file: a few dozen criteria, not data.
const MaxFileSize = 1 << 20

// Load reads a reviewed rubric file (--rubric).
func Load(path string) (*Rubric, error) {
	b, err := readfile.Regular(path, MaxFileSize)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file (expected a rubric JSON file)", path)
		}
		return nil, err
	}
	r, err := parse(b, path)
	if err != nil {
		return nil, err
	}
	r.Source = path
	return r, nil
}
