package eval

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/atomicfile"
	"github.com/vibe-test/vibe-test/internal/cases"
	"github.com/vibe-test/vibe-test/internal/jsonerr"
	"github.com/vibe-test/vibe-test/internal/readfile"
	"github.com/vibe-test/vibe-test/internal/skill"
)

// ManifestFile is a stored baseline's description: what it measured,
// with the hashes an --against run is checked with.
const ManifestFile = "manifest.json"

// Manifest is a stored baseline's manifest.json.
type Manifest struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"` // "baseline"
	Name          string    `json:"name"`
	CreatedAt     time.Time `json:"created_at"`
	// Eval is the folder of the eval that made it (for the record; the
	// baseline holds its cells itself).
	Eval         string            `json:"eval"`
	Skill        SkillInfo         `json:"skill"`
	CasesHash    string            `json:"cases_hash"`
	MeasuresHash string            `json:"measures_hash"`
	Cases        map[string]string `json:"cases"` // id → hash, main and holdout
	Main         []string          `json:"main"`
	Holdout      []string          `json:"holdout,omitempty"`
	Model        string            `json:"model"`
	Effort       string            `json:"effort,omitempty"`
	ReaderModel  string            `json:"reader_model"`
	GraderModel  string            `json:"grader_model"`
	Tools        []string          `json:"tools"`
	Deliver      string            `json:"deliver"`
	Repeats      int               `json:"repeats"`
	Claude       string            `json:"claude"`
	Codex        string            `json:"codex,omitempty"`
	Gemini       string            `json:"gemini,omitempty"`
	Agent        string            `json:"agent,omitempty"`       // "": claude
	JudgeAgent   string            `json:"judge_agent,omitempty"` // "": claude
	// Environment is where the generator ran (Environment): seed 000 saw
	// the environment change what the model does. "": a baseline made
	// before it was kept, compared on the rest.
	Environment  string    `json:"environment,omitempty"`
	ReaderPrompt string    `json:"reader_prompt"`
	GraderPrompt string    `json:"grader_prompt"`
	Runs         []RunInfo `json:"runs"`
	Instrument   Outcome   `json:"instrument"`
	// CellsHash is the stored cells' digest (CellsHash): what decides
	// (grades, words) and what a rejudge grades again (messages). A
	// grade edited by hand made a broken skill's rejection "not enough
	// evidence" without a word.
	CellsHash string `json:"cells_hash"`
	// ManifestHash digests every other field (ManifestHash): the settings
	// --against holds the candidate to. A model edited by hand decided an
	// opus candidate against cells a sonnet made, and accepted it.
	ManifestHash string `json:"manifest_hash"`
}

// ManifestHash digests a manifest's fields but its own: their values, not
// the file's bytes, as CellsHash reads the cells. A field added to
// Manifest must be omitempty (or omitzero): else every baseline stored
// before it digests differently and reads as edited.
func ManifestHash(m Manifest) string {
	m.ManifestHash = ""
	b, _ := json.Marshal(m)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Baseline is a loaded stored baseline.
type Baseline struct {
	Dir string
	Manifest
}

// BaselineDir is where a case set keeps the baseline called name.
func BaselineDir(set *cases.Set, name string) string {
	return filepath.Join(set.Dir, cases.BaselinesDir, name)
}

// MeasuresHash covers what the grader is given besides the message and
// the key: the goal and each measure's id, question and fields.
func MeasuresHash(set *cases.Set) string {
	b, _ := json.Marshal(struct {
		Goal     string          `json:"goal"`
		Measures []cases.Measure `json:"measures"`
	}{set.Goal, set.Measures})
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// KeyHash covers a case's key.json.
func KeyHash(c *cases.Case) string {
	s := sha256.Sum256(c.KeyRaw)
	return hex.EncodeToString(s[:])
}

// LoadBaseline reads the baseline called name of the case set, and checks
// that its cells are what its manifest claims: every case's repeats in
// every run, each cell of the case version the manifest names.
func LoadBaseline(set *cases.Set, name string) (*Baseline, error) {
	dir := BaselineDir(set, name)
	path := filepath.Join(dir, ManifestFile)
	b, err := readfile.Regular(path, 16<<20)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			have := baselineNames(set)
			hint := "no baseline is stored yet"
			if len(have) > 0 {
				hint = "stored: " + strings.Join(have, ", ")
			}
			return nil, fmt.Errorf("--against %s: %s: no such file (%s); make one with `vibe-test eval SKILL --baseline %s`", name, path, hint, name)
		}
		return nil, err
	}
	bl := &Baseline{Dir: dir}
	if err := json.Unmarshal(b, &bl.Manifest); err != nil {
		return nil, jsonerr.Format(path, b, err, "a baseline's manifest")
	}
	if bl.Kind != "baseline" || bl.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: kind %q, schema_version %d: expected a baseline this vibe-test reads", path, bl.Kind, bl.SchemaVersion)
	}
	if bl.ManifestHash == "" {
		return nil, fmt.Errorf("%s: field \"manifest_hash\": missing, expected the digest of the manifest's fields (a baseline stored before vibe-test kept one): store the baseline again under a new name", path)
	}
	if got := ManifestHash(bl.Manifest); got != bl.ManifestHash {
		return nil, fmt.Errorf("%s: its fields hash to %s, its manifest_hash is %s: a setting (the models, repeats, tools, versions, cases) changed since the baseline was stored; restore it (git checkout) or store a new baseline", path, short(got), short(bl.ManifestHash))
	}
	var all []*Cell
	for _, r := range bl.Runs {
		main, hold, err := loadRunCells(dir, r.Dir)
		if err != nil {
			return nil, err
		}
		all = append(append(all, main...), hold...)
		for _, part := range []struct {
			dir   string // where the part's cells are, for the errors
			ids   []string
			cells []*Cell
			held  bool
		}{{filepath.Join(dir, r.Dir), bl.Main, main, false}, {filepath.Join(dir, HoldoutCellsDir, r.Dir), bl.Holdout, hold, true}} {
			// A holdout case is counted, never named, as everywhere an
			// editing agent may read (this refusal is on stderr): the
			// folder and its manifest say which.
			name := func(id string) string {
				if part.held {
					return "a holdout case"
				}
				return "case " + id
			}
			count := map[string]int{}
			for _, c := range part.cells {
				if want := bl.Cases[c.Case]; c.CaseHash != want {
					return nil, fmt.Errorf("%s: a cell of %s (repeat %d) graded case version %s, but the manifest claims %s: the baseline's files do not match its manifest", part.dir, name(c.Case), c.Repeat, short(c.CaseHash), short(want))
				}
				count[c.Case]++
			}
			for _, id := range part.ids {
				if count[id] != bl.Repeats {
					return nil, fmt.Errorf("%s: %s has %d cells, the manifest claims %d repeats: the baseline's files do not match its manifest", part.dir, name(id), count[id], bl.Repeats)
				}
			}
		}
	}
	if bl.CellsHash == "" {
		return nil, fmt.Errorf("%s: field \"cells_hash\": missing, expected the digest of the stored cells (a baseline stored before vibe-test kept one): store the baseline again under a new name", filepath.Join(dir, ManifestFile))
	}
	if got := CellsHash(all); got != bl.CellsHash {
		return nil, fmt.Errorf("%s: its cells hash to %s, the manifest's cells_hash is %s: a cell's grades, words or message changed since the baseline was stored; restore them (git checkout) or store a new baseline", dir, short(got), short(bl.CellsHash))
	}
	return bl, nil
}

// CellsHash digests cells as a baseline stores them: each cell's place
// (run, case, repeat, holdout), status, message, words and grades, in a
// fixed order. It reads the values, not the files' bytes, so a checkout
// that rewrites line endings or indentation does not change it.
func CellsHash(cells []*Cell) string {
	type grade struct{ Measure, Result string }
	type entry struct {
		Run, Case, Status, Message string
		Repeat, Words              int
		Holdout                    bool
		Grades                     []grade
	}
	entries := make([]entry, 0, len(cells))
	for _, c := range cells {
		e := entry{Run: c.Run, Case: c.Case, Status: c.Status, Message: c.Message, Repeat: c.Repeat, Words: c.Words, Holdout: c.Holdout}
		for _, g := range c.Grades {
			e.Grades = append(e.Grades, grade{g.Measure, g.Result})
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Case, b.Case), cmp.Compare(a.Repeat, b.Repeat), boolCmp(a.Holdout, b.Holdout))
	})
	b, _ := json.Marshal(entries)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func baselineNames(set *cases.Set) []string {
	entries, _ := os.ReadDir(filepath.Join(set.Dir, cases.BaselinesDir))
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// movedCases says which cases of the set changed part (main, holdout)
// since a record whose cases were then (id → hash) and holdout
// holdoutThen.
// Its hash covers its files, not its part: a case moved from the holdout
// was compared in neither part (the baseline's holdout runs lack it, its
// main runs too). A case now in the holdout is not named: the holdout is
// named nowhere an editing agent may read.
func movedCases(set *cases.Set, then map[string]string, holdoutThen []string) []string {
	var out []string
	for _, c := range set.Cases {
		if slices.Contains(holdoutThen, c.ID) {
			out = append(out, fmt.Sprintf("case %s moved from the holdout to the main cases", c.ID))
		}
	}
	moved := 0
	for _, c := range set.Holdout {
		if _, known := then[c.ID]; known && !slices.Contains(holdoutThen, c.ID) {
			moved++
		}
	}
	if moved > 0 {
		out = append(out, fmt.Sprintf("%d main %s moved to the holdout", moved, plural(moved, "case", "cases")))
	}
	return out
}

// Compatible says what differs between the baseline and a run about to be
// compared with it, or nil: the case set's measures and every case (by
// hash), the generator's model and effort (not for a grid, whose point is
// to change them), the reader's and grader's models and prompts, the
// tools, how the skill is delivered, the CLI version.
// Environment names where an eval's agents ran: the jail ("bubblewrap" or
// "none") and whether they signed in with a key in a fresh home or with
// the author's login (whose settings and CLAUDE.md the agent then reads).
func Environment(jailKind string, hermetic bool) string {
	if hermetic {
		return "jail " + jailKind + ", a fresh home signed in by key"
	}
	return "jail " + jailKind + ", the author's login and settings"
}

func (b *Baseline) Compatible(set *cases.Set, cfg Config, agent, judgeAgent string, v Versions, env string, grid bool) error {
	var diff []string
	changed := func(what, now, then string) {
		if now != then {
			diff = append(diff, fmt.Sprintf("%s is %s, the baseline's %s", what, orNone(now), orNone(then)))
		}
	}
	if MeasuresHash(set) != b.MeasuresHash {
		diff = append(diff, "cases.yaml's goal or measures changed (questions or the key fields they use)")
	}
	// Main cases by id; holdout cases counted, as everywhere an editing
	// agent may read (its progress lines too).
	now := map[string]string{}
	var heldNew, heldChanged, heldGone int
	for _, c := range set.All() {
		now[c.ID] = c.Hash
		switch then, ok := b.Cases[c.ID]; {
		case !ok && c.Holdout:
			heldNew++
		case !ok:
			diff = append(diff, fmt.Sprintf("case %s is new", c.ID))
		case then != c.Hash && c.Holdout:
			heldChanged++
		case then != c.Hash:
			diff = append(diff, fmt.Sprintf("case %s changed (its case.yaml, key.json or fixture)", c.ID))
		}
	}
	diff = append(diff, movedCases(set, b.Cases, b.Holdout)...)
	var gone []string
	for id := range b.Cases {
		if _, ok := now[id]; !ok {
			if slices.Contains(b.Holdout, id) {
				heldGone++
				continue
			}
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		diff = append(diff, fmt.Sprintf("case %s is gone", id))
	}
	for _, h := range []struct {
		n    int
		what string
	}{{heldNew, "new"}, {heldChanged, "changed (case.yaml, key.json or fixture)"}, {heldGone, "gone"}} {
		if h.n > 0 {
			diff = append(diff, fmt.Sprintf("%d holdout %s %s", h.n, plural(h.n, "case", "cases"), h.what))
		}
	}
	if !grid {
		changed("the generator model", cfg.Model, b.Model)
		changed("the effort", cfg.Effort, b.Effort)
	}
	changed("the reader model", cfg.ReaderModel, b.ReaderModel)
	changed("the grader model", cfg.GraderModel, b.GraderModel)
	changed("the reader prompt", ReaderPromptVersion, b.ReaderPrompt)
	changed("the grader prompt", GraderPromptVersion, b.GraderPrompt)
	changed("the tools", strings.Join(cfg.Tools, ","), strings.Join(b.Tools, ","))
	changed("the skill's delivery", cfg.Deliver, b.Deliver)
	changed("the agent", agent, firstNonEmpty(b.Agent, agents.Claude))
	changed("the judge agent", judgeAgent, firstNonEmpty(b.JudgeAgent, agents.Claude))
	changed("claude", v.Claude, b.Claude)
	changed("codex", v.Codex, b.Codex)
	changed("gemini", v.Gemini, b.Gemini)
	if b.Environment != "" {
		changed("the environment", env, b.Environment)
	}
	if len(diff) == 0 {
		return nil
	}
	return fmt.Errorf("--against %s: the baseline does not measure what this run would: %s; make a new baseline with --baseline NAME (or `vibe-test rejudge` an eval when only the grader changed)", b.Name, strings.Join(diff, "; "))
}

// Notes say what the comparison is, for the record.
func (b *Baseline) Notes(set *cases.Set, sk *skill.Skill) []string {
	n := []string{fmt.Sprintf("baseline %s: skill %s (%s, %d lines), %d %s, made %s", b.Name, b.Skill.Name, short(b.Skill.Hash), b.Skill.Lines, b.Repeats, plural(b.Repeats, "repeat", "repeats"), b.CreatedAt.Format("2006-01-02"))}
	if sk.Hash == b.Skill.Hash {
		n = append(n, "the candidate is the baseline's skill itself (same hash): an A/A comparison")
	}
	return n
}

// CopyInto copies the baseline's runs into an eval folder: baseline/<run>
// and holdout/baseline/<run>.
func (b *Baseline) CopyInto(dir string) error {
	for _, r := range b.Runs {
		for _, part := range [][2]string{
			{filepath.Join(b.Dir, r.Dir), filepath.Join(dir, "baseline", r.Dir)},
			{filepath.Join(b.Dir, HoldoutCellsDir, r.Dir), filepath.Join(dir, HoldoutCellsDir, "baseline", r.Dir)},
		} {
			if _, err := os.Stat(part[0]); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err := copyCells(part[0], part[1], false); err != nil {
				return fmt.Errorf("copying baseline %s: %w", b.Name, err)
			}
		}
	}
	return nil
}

// copyCells copies a run's cell files (<case>/<repeat>.json) from src to
// dst; stored drops what only the eval folder has (the transcript's path).
func copyCells(src, dst string, stored bool) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, ce := range entries {
		if !ce.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(src, ce.Name()))
		if err != nil {
			return err
		}
		for _, f := range files {
			if f.IsDir() || !strings.HasSuffix(f.Name(), ".json") || strings.Contains(f.Name(), ".generator") {
				continue
			}
			c, err := loadCell(filepath.Join(src, ce.Name(), f.Name()))
			if err != nil || c == nil {
				return err
			}
			if stored {
				c.Generator.Transcript = ""
			}
			if err := os.MkdirAll(filepath.Join(dst, ce.Name()), 0o755); err != nil {
				return err
			}
			out, err := json.MarshalIndent(c, "", "  ")
			if err != nil {
				return err
			}
			if err := atomicfile.Write(filepath.Join(dst, ce.Name(), f.Name()), append(out, '\n'), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteBaseline stores a finished --baseline eval's runs in the case set
// as baselines/<name>/: a manifest and one small file per cell (message,
// reader notes, grades), meant to be committed with the case set. It never
// writes over a baseline.
func WriteBaseline(set *cases.Set, name, evalDir string, rec *Record) (string, error) {
	dir := BaselineDir(set, name)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("--baseline %s: %s exists (made while this eval ran), expected a new name; this eval's runs are in %s", name, dir, evalDir)
		}
		return "", err
	}
	m := Manifest{
		SchemaVersion: SchemaVersion, Kind: "baseline", Name: name, CreatedAt: time.Now().UTC(), Eval: evalDir,
		Skill: rec.Skill, CasesHash: rec.Cases.Hash, MeasuresHash: rec.Cases.MeasuresHash, Cases: rec.Cases.CaseHashes,
		Main: rec.Cases.Main, Holdout: rec.Cases.Holdout,
		Model: rec.Config.Model, Effort: rec.Config.Effort, ReaderModel: rec.Config.ReaderModel, GraderModel: rec.Config.GraderModel,
		Tools: rec.Config.Tools, Deliver: rec.Config.Deliver, Repeats: rec.Config.Repeats, Claude: rec.Versions.Claude,
		Codex: rec.Versions.Codex, Gemini: rec.Versions.Gemini, Agent: rec.Agent, JudgeAgent: rec.JudgeAgent,
		ReaderPrompt: rec.Versions.ReaderPrompt, GraderPrompt: rec.Versions.GraderPrompt,
		Environment: Environment(rec.Jail, rec.Hermetic), Instrument: rec.Outcome,
	}
	for _, r := range rec.Runs {
		for _, part := range [][2]string{
			{filepath.Join(evalDir, r.Dir), filepath.Join(dir, r.Dir)},
			{filepath.Join(evalDir, HoldoutCellsDir, r.Dir), filepath.Join(dir, HoldoutCellsDir, r.Dir)},
		} {
			if _, err := os.Stat(part[0]); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err := copyCells(part[0], part[1], true); err != nil {
				return "", fmt.Errorf("storing baseline %s: %w", name, err)
			}
		}
		m.Runs = append(m.Runs, r)
	}
	// Digested as stored, read back: what LoadBaseline will read.
	var all []*Cell
	for _, r := range m.Runs {
		main, hold, err := loadRunCells(dir, r.Dir)
		if err != nil {
			return "", fmt.Errorf("storing baseline %s: %w", name, err)
		}
		all = append(append(all, main...), hold...)
	}
	m.CellsHash = CellsHash(all)
	m.ManifestHash = ManifestHash(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	if err := atomicfile.Write(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "(none)"
	}
	return h
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
