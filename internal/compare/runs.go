package compare

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vibe-test/vibe-test/internal/agents"
	"github.com/vibe-test/vibe-test/internal/judge"
	"github.com/vibe-test/vibe-test/internal/plan"
	"github.com/vibe-test/vibe-test/internal/record"
	"github.com/vibe-test/vibe-test/internal/stats"
	"github.com/vibe-test/vibe-test/internal/term"
)

// What `vibe-test compare` does around the rule: load the runs, score each
// (Units), find the criteria their rubrics share, say what would make the
// comparison unfair (different skills, models, schedules; unfinished runs),
// and apply Decide. Runs gives a Comparison; Write prints it.

// Load reads the run folders, the base runs first and the candidate last.
// A folder given twice is refused: a run counted twice would shrink the
// measured noise.
func Load(dirs []string) ([]Sample, error) {
	seen := map[string]string{}
	sameRun := map[string]string{}  // a base run's identity → its folder
	sameConv := map[string]string{} // a base conversation's session → its run's folder
	runs := make([]Sample, 0, len(dirs))
	for i, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("compare: %s: %w", dir, err)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real // a link to a folder given already is that folder
		}
		if first, ok := seen[abs]; ok {
			return nil, fmt.Errorf("compare: %s is given twice (also as %s): a run counted twice would shrink the measured noise", dir, first)
		}
		seen[abs] = dir
		r, err := record.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		// A copy of a base run among the base runs is the same run
		// counted twice (it turned an accept into a reject); the
		// candidate may be one (an A/A check).
		if id := runIdentity(r); id != "" && i < len(dirs)-1 {
			if first, ok := sameRun[id]; ok {
				return nil, fmt.Errorf("compare: %s is a copy of %s (the same start time and sessions): a run counted twice would shrink the measured noise", dir, first)
			}
			sameRun[id] = dir
			// Nor one conversation in two base runs: a merged suite's run
			// holds its shards' conversations, and a shard beside it
			// pooled them twice.
			for _, c := range r.Conversations {
				if c.SessionID == "" {
					continue
				}
				if first, ok := sameConv[c.SessionID]; ok {
					return nil, fmt.Errorf("compare: %s and %s hold the same conversation (session %s): a conversation counted twice would shrink the measured noise; give each base conversation once", first, dir, c.SessionID)
				}
				sameConv[c.SessionID] = dir
			}
		}
		runs = append(runs, SampleOf(dir, r))
	}
	return runs, nil
}

// runIdentity tells one run from another: its start time and its
// conversations' session ids, which the CLI makes unique ("" for a run
// with no session, which no real run is).
func runIdentity(r *record.Run) string {
	var b strings.Builder
	b.WriteString(r.StartedAt.UTC().Format(time.RFC3339Nano))
	sessions := false
	for _, c := range r.Conversations {
		b.WriteString("|" + c.SessionID)
		sessions = sessions || c.SessionID != ""
	}
	if !sessions {
		return ""
	}
	return b.String()
}

// Sample is one run reduced to what the rule reads.
type Sample struct {
	Dir    string
	Run    *record.Run
	Units  map[string][]stats.Unit // per measure, one unit per scored conversation
	Scored []Scored                // per scored conversation, its measures
	// Criteria are the rubric's ids (or, without a rubric in run.json, the
	// ids seen in verdicts).
	Criteria  []string
	Unscored  int // conversations with no pass/fail judged turn
	GateStops int // conversations the baseline gate stopped after turn 1
	// Judged counts the conversations' turns with a verdict, Unjudged those
	// of them that are judge errors or uncertain: neither pass nor fail.
	Judged, Unjudged int
}

// SampleOf scores a run's conversations (Units).
func SampleOf(dir string, r *record.Run) Sample {
	scored := Score(r)
	cr := Sample{Dir: dir, Run: r, Units: ByMeasure(scored), Scored: scored}
	ids := map[string]bool{}
	if r.Rubric != nil {
		for _, c := range r.Rubric.Criteria {
			ids[c.ID] = true
		}
	} else {
		for id := range cr.Units {
			if id != Total {
				ids[id] = true
			}
		}
	}
	for i := range r.Conversations {
		c := &r.Conversations[i]
		if c.Status == record.StatusBaselineFailed {
			cr.GateStops++
		}
		for k := range c.Turns {
			t := &c.Turns[k]
			if t.Kind == plan.KindFiller || t.Verdict == nil {
				continue
			}
			cr.Judged++
			if res := t.Verdict.Result; res != judge.Pass && res != judge.Fail {
				cr.Unjudged++
			}
		}
	}
	cr.Unscored = len(r.Conversations) - len(cr.Units[Total])
	for id := range ids {
		cr.Criteria = append(cr.Criteria, id)
	}
	slices.Sort(cr.Criteria)
	return cr
}

// Comparison is the outcome of Runs, ready to print (Write).
type Comparison struct {
	Bases     []Sample
	Candidate Sample
	Result    Result
	// Undecided, when set, is why no verdict can be given.
	Undecided string
	// Dropped lists criteria left out of the rule, with why.
	Dropped []string
	// Notes say what else differs between the runs, or what they lack.
	Notes []string
}

// Rejected says the candidate dropped significantly on some measure.
func (cmp *Comparison) Rejected() bool { return cmp.Undecided == "" && cmp.Result.Reject }

// Runs applies the rule. Base runs are pooled; criteria are compared on
// the ids every run's rubric shares.
func Runs(bases []Sample, cand Sample, alpha float64) *Comparison {
	cmp := &Comparison{Bases: bases, Candidate: cand}
	all := append(slices.Clone(bases), cand)

	// The same skill by name; its content is expected to differ.
	name := bases[0].Run.Skill.Name
	for _, r := range all[1:] {
		if r.Run.Skill.Name != name {
			cmp.Undecided = fmt.Sprintf("the runs measure different skills (%s is %q, %s is %q); compare versions of one skill",
				bases[0].Dir, name, r.Dir, r.Run.Skill.Name)
			return cmp
		}
	}
	baseHash := bases[0].Run.Skill.Hash
	for _, b := range bases[1:] {
		if b.Run.Skill.Hash != baseHash {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("WARNING: the base runs measure different contents of the skill (%s has hash %s, %s has %s): they are pooled as one base.",
				bases[0].Dir, short(baseHash), b.Dir, short(b.Run.Skill.Hash)))
			break
		}
	}
	if cand.Run.Skill.Hash != baseHash {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("The candidate's skill content differs from the base (hash %s vs %s), as expected between versions.",
			short(cand.Run.Skill.Hash), short(baseHash)))
	} else {
		cmp.Notes = append(cmp.Notes, "The candidate has the same skill content as the base (same hash): unless the model, the task or the agent changed, this compares the base with itself (an A/A check).")
	}
	// The candidate may be a base run's copy (an A/A check of the tool),
	// but conversations on both sides are compared with themselves: said.
	baseSessions := map[string]bool{}
	for _, b := range bases {
		for _, c := range b.Run.Conversations {
			baseSessions[c.SessionID] = c.SessionID != ""
		}
	}
	inBoth := 0
	for _, c := range cand.Run.Conversations {
		if baseSessions[c.SessionID] {
			inBoth++
		}
	}
	if inBoth > 0 {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("WARNING: %s of the candidate's %d are also in the base runs (the same sessions): compared with themselves, they pull the verdict toward accept.",
			plural(inBoth, "conversation", "conversations"), len(cand.Run.Conversations)))
	}
	for _, field := range []struct {
		what string
		get  func(*record.Run) string
		// unknownEmpty: "" is a record that did not keep the value (older
		// runs have no rubric.model or jail), not a value of its own: no
		// warning against it.
		unknownEmpty bool
	}{
		{"agent CLI", func(r *record.Run) string { return record.AgentOf(r.Config) }, false},
		{"judge CLI", func(r *record.Run) string { return record.JudgeAgentOf(r.Config) }, false},
		{"agent model", func(r *record.Run) string { return r.Config.Model }, false},

		// The judge's instructions decide what a pass is (judge-v2 and v3
		// read n/a differently); repeats make disagreements uncertain.
		{"judge prompt", func(r *record.Run) string { return r.Versions.JudgePrompt }, true},
		{"judge repeats", func(r *record.Run) string { return strconv.Itoa(max(r.Config.JudgeRepeats, 1)) }, false},
		{"agent CLI version", func(r *record.Run) string {
			if record.AgentOf(r.Config) == agents.Claude {
				return r.Versions.Claude
			}
			return r.Versions.Agent
		}, true},
		// The author's login (settings, CLAUDE.md) or a fresh home, in a
		// jail or not: what the agent starts from.
		{"isolation", func(r *record.Run) string { return r.Isolation }, true},
		// The project the agent works in, by its contents (runs before
		// fixtures were hashed have none).
		{"fixture", func(r *record.Run) string {
			if r.Plan == nil || r.Plan.FixtureHash == "" {
				return ""
			}
			return "hash " + short(r.Plan.FixtureHash)
		}, true},
		{"jail", func(r *record.Run) string { return r.Jail }, true},
		// A resumed process re-reads the whole skill at each invocation; a
		// live session answers "already loaded": not the same dilution.
		{"session mode", func(r *record.Run) string { return record.SessionModeOf(r.Config) }, false},
		// Ten turns of passages and 150k tokens of tool output, or a
		// compacted session, are different dilutions.
		{"schedule", func(r *record.Run) string {
			if r.Plan == nil || r.Plan.Schedule.Default() {
				return "the seed's ten turns"
			}
			return r.Plan.Schedule.Describe()
		}, false},
	} {
		for _, r := range all[1:] {
			a, b := field.get(bases[0].Run), field.get(r.Run)
			if field.unknownEmpty && (a == "" || b == "") {
				continue
			}
			if a != b {
				cmp.Notes = append(cmp.Notes, fmt.Sprintf("WARNING: the %s differs (%s: %s, %s: %s): the comparison mixes it with the skill change.",
					field.what, bases[0].Dir, orDefault(a), r.Dir, orDefault(b)))
				break
			}
		}
	}
	// The judge's model: the one named, else the one the CLI's default
	// judged with (the rubric's: "" for both runs hid two defaults).
	// Two defaults one of which a record does not name (an older run) are
	// not warned about; a named model against such a default is, as it
	// always was (its model may be another).
	for _, r := range all[1:] {
		a, b := bases[0].Run, r.Run
		ja, jb := judgedBy(a), judgedBy(b)
		if a.Config.JudgeModel == "" && b.Config.JudgeModel == "" && (ja == "" || jb == "") {
			continue
		}
		if ja != jb {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("WARNING: the judge model differs (%s: %s, %s: %s): the comparison mixes it with the skill change.",
				bases[0].Dir, orDefault(ja), r.Dir, orDefault(jb)))
			break
		}
	}
	// The tasks are what the skill is measured on: a candidate asked other
	// ones compares another measurement (it was called an A/A check).
	for _, r := range all[1:] {
		if !sameTasks(bases[0].Run, r.Run) {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("WARNING: the tasks differ (the base task, a probe, its setup files, or the fixture; %s and %s): the comparison mixes them with the skill change.",
				bases[0].Dir, r.Dir))
			break
		}
	}
	for _, r := range all {
		if r.Run.Status != record.StatusCompleted && r.Run.Status != record.StatusBaselineFailed {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("WARNING: %s has status %q: only what it finished is compared.", r.Dir, r.Run.Status))
		}
		if r.GateStops > 0 {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("%s: the baseline gate stopped %s after turn 1; their scores come from turn 1 alone.", r.Dir, plural(r.GateStops, "conversation", "conversations")))
		}
		if r.Unscored > 0 {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("%s: %s without a judged turn that passed or failed left out.", r.Dir, plural(r.Unscored, "conversation", "conversations")))
		}
		// An error is never a pass or a fail: said, and when most of a
		// run's judged turns are errors its scores rest on what happened
		// to be judged (a candidate whose every probe was a judge error
		// was scored on turn 1 alone, and accepted).
		if r.Unjudged > 0 {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("WARNING: %s: %d of its %d judged turns are judge errors or uncertain (repeats that disagreed): they count as neither pass nor fail.", r.Dir, r.Unjudged, r.Judged))
		}
		// resume, not rejudge: rejudge writes verdicts-N.json beside
		// run.json, which compare does not read.
		if 2*r.Unjudged > r.Judged && cmp.Undecided == "" {
			cmp.Undecided = fmt.Sprintf("%s: %d of its %d judged turns are judge errors or uncertain, so its scores rest on what happened to be judged; `vibe-test resume %s` judges its judge errors again from the saved transcripts, or run it again", r.Dir, r.Unjudged, r.Judged, term.Arg(r.Dir))
		}
	}
	if cmp.Undecided != "" {
		return cmp
	}

	shared := slices.Clone(bases[0].Criteria)
	for _, r := range all[1:] {
		shared = slices.DeleteFunc(shared, func(id string) bool { return !slices.Contains(r.Criteria, id) })
	}
	cmp.Dropped = droppedCriteria(all, shared)
	var baseScored []Scored
	for _, b := range bases {
		baseScored = append(baseScored, b.Scored...)
	}
	base := ByMeasure(baseScored)
	if len(shared) == 0 {
		cmp.Undecided = "the rubrics share no criterion, so the runs do not measure the same behaviour"
		return cmp
	}
	for _, id := range shared {
		switch {
		case len(base[id]) == 0:
			cmp.Dropped = append(cmp.Dropped, id+": no pass or fail for it in the base runs")
		case len(cand.Units[id]) == 0:
			cmp.Dropped = append(cmp.Dropped, id+": no pass or fail for it in the candidate")
		}
	}
	cmp.Result = Decide(baseScored, cand.Scored, shared, alpha)
	cmp.Undecided = cmp.Result.Undecided
	return cmp
}

// judgedBy is the model that judged run r: the one named, else the one
// the CLI's default wrote the rubric with ("" when the record does not
// say).
func judgedBy(r *record.Run) string {
	if r.Config.JudgeModel == "" && r.Rubric != nil {
		return r.Rubric.Model
	}
	return r.Config.JudgeModel
}

// droppedCriteria names each criterion not in every run's rubric, with the
// runs that lack it.
func droppedCriteria(all []Sample, shared []string) []string {
	var ids []string
	for _, r := range all {
		for _, id := range r.Criteria {
			if !slices.Contains(shared, id) && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		var lacking []string
		for _, r := range all {
			if !slices.Contains(r.Criteria, id) {
				lacking = append(lacking, r.Dir)
			}
		}
		out = append(out, fmt.Sprintf("%s: not in the rubric of %s", id, strings.Join(lacking, ", ")))
	}
	return out
}

// sameTasks says whether two runs asked the same tasks of the agent: the
// base task, each probe with its setup files, the fixture's files (by its
// folder's name: machines keep it in different places) and the files
// written at the start.
func sameTasks(a, b *record.Run) bool {
	if a.Plan == nil || b.Plan == nil {
		return a.Plan == b.Plan
	}
	pa, pb := a.Plan, b.Plan
	return pa.BaseTask == pb.BaseTask && reflect.DeepEqual(pa.Probes, pb.Probes) &&
		filepath.Base(pa.Fixture) == filepath.Base(pb.Fixture) && reflect.DeepEqual(pa.Files, pb.Files)
}
