package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/vibe-test/vibe-test/internal/scripted"
)

// The eval demo (`vibe-test demo --cases`): a small case set for a tiny
// decision skill, reorder-ruling, in three versions (the baseline, a
// shorter one that rules as well, a broken one whose comparison is the
// wrong way round), and the scripted model's part for each: generator personas
// told apart by their skill's text, and the reader's and the grader's
// answers to each message they can be shown.

//go:embed all:ruling
var rulingFiles embed.FS

// RulingSkill is the eval demo's skill name.
const RulingSkill = "reorder-ruling"

// The eval demo's skill versions, as folders of ruling/skills.
const (
	VersionBaseline = scripted.PersonaBaseline
	VersionShorter  = scripted.PersonaShorter
	VersionBroken   = scripted.PersonaBroken
)

// CasePaths are a materialized eval demo.
type CasePaths struct {
	Cases  string            // the case set
	Skills map[string]string // version → its SKILL.md
}

// MaterializeCases writes the eval demo's case set and skill versions
// under dir.
func MaterializeCases(dir string) (CasePaths, error) {
	err := fs.WalkDir(rulingFiles, "ruling", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, strings.TrimPrefix(p, "ruling"))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := rulingFiles.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		return CasePaths{}, fmt.Errorf("writing the demo's case set: %w", err)
	}
	cp := CasePaths{Cases: filepath.Join(dir, "cases"), Skills: map[string]string{}}
	for _, v := range []string{VersionBaseline, VersionShorter, VersionBroken} {
		cp.Skills[v] = filepath.Join(dir, "skills", v, RulingSkill, "SKILL.md")
	}
	return cp, nil
}

// markers tell the versions apart in the generator's request: a phrase
// only that version's SKILL.md holds (the request carries it in the
// system prompt). The control's empty skill holds none.
var markers = map[string]string{
	scripted.PersonaBaseline: "Name the file behind",
	scripted.PersonaShorter:  "name each number's file",
	scripted.PersonaBroken:   "REORDER only when the count is above",
}

// rulingCase is one case of the demo's set as the scripted model plays it
// (its files in ruling/cases say the same).
type rulingCase struct {
	id, item     string
	count, point int
	lead         int
	leadFile     string
	prompt       string
}

var rulingCases = []rulingCase{
	{"widgets-restocked", "widgets", 45, 20, 9, "suppliers.md", "Widgets came in on this morning's truck: reorder them now, or hold?"},
	{"widgets", "widgets", 12, 20, 9, "suppliers.md", "Should we reorder widgets now, or hold?"},
	{"gaskets", "gaskets", 80, 30, 6, "suppliers.md", "Do we need to order gaskets this week?"},
	{"hinges", "hinges", 30, 30, 14, "suppliers.md", "Hinges look low to me. Reorder or hold?"},
	{"bolts", "bolts", 5, 10, 3, "suppliers.md", "Is it time to reorder bolts?"},
	{"springs", "springs", 0, 25, 21, ".env", "Springs: order more now, or wait for the next count?"},
	{"clamps", "clamps", 7, 15, 12, "suppliers.md", "Should I put in an order for clamps?"},
	{"rivets", "rivets", 90, 40, 5, "suppliers.md", "Rivets: reorder today or hold off?"},
	{"washers", "washers", 10, 25, 8, "suppliers.md", "Washers are running thin. Order now, or wait?"},
	{"nuts", "nuts", 60, 20, 3, "suppliers.md", "Nuts: do we reorder, or is the shelf fine?"},
}

func (c rulingCase) reorder() bool { return c.count <= c.point }

// message is what a persona answers, and its three grades' evidence: the
// words that show the ruling, the facts and the close, and whether each
// passes.
type message struct {
	text                      string
	ruling, facts, close      string
	rulingOK, factsOK, closes bool
	notes                     map[string]any
}

func (c rulingCase) message(persona string) message {
	order := 2 * c.point
	switch persona {
	case scripted.PersonaBaseline:
		if c.reorder() {
			q := fmt.Sprintf("Shall I place an order for %d %s, enough to clear the reorder point again?", order, c.item)
			return message{
				text: fmt.Sprintf("REORDER %s. data/stock.csv lists %d %s against a reorder point of %d, and %s gives a lead time of %d days, so holding would run the shelf down before a delivery could land. Ordering now costs one purchase order at the usual price. %s",
					c.item, c.count, c.item, c.point, c.leadFile, c.lead, q),
				ruling: "REORDER " + c.item, facts: fmt.Sprintf("data/stock.csv lists %d %s against a reorder point of %d", c.count, c.item, c.point), close: q,
				rulingOK: true, factsOK: true, closes: true,
				notes: notes(fmt.Sprintf("Reorder %s: order %d.", c.item, order), nil, fmt.Sprintf("Yes, order %d.", order)),
			}
		}
		q := fmt.Sprintf("Shall I set a reminder to check %s again at the next weekly count?", c.item)
		return message{
			text: fmt.Sprintf("HOLD %s. data/stock.csv lists %d %s against a reorder point of %d, and %s gives a lead time of %d days, so the shelf lasts well past a delivery. Holding costs nothing today. %s",
				c.item, c.count, c.item, c.point, c.leadFile, c.lead, q),
			ruling: "HOLD " + c.item, facts: fmt.Sprintf("data/stock.csv lists %d %s against a reorder point of %d", c.count, c.item, c.point), close: q,
			rulingOK: true, factsOK: true, closes: true,
			notes: notes(fmt.Sprintf("Hold %s until the next count.", c.item), nil, "Yes, remind me at the next count."),
		}
	case scripted.PersonaShorter:
		word, q, decision, answer := "HOLD", "Shall I check again at the next weekly count?", fmt.Sprintf("Hold %s.", c.item), "Yes."
		if c.reorder() {
			word, q, decision, answer = "REORDER", fmt.Sprintf("Shall I order %d now?", order), fmt.Sprintf("Reorder %s: order %d.", c.item, order), fmt.Sprintf("Yes, order %d.", order)
		}
		facts := fmt.Sprintf("data/stock.csv lists %d against a reorder point of %d", c.count, c.point)
		return message{
			text:   fmt.Sprintf("%s %s: %s, with a %d-day lead time in %s. %s", word, c.item, facts, c.lead, c.leadFile, q),
			ruling: word + " " + c.item, facts: facts, close: q, rulingOK: true, factsOK: true, closes: true,
			notes: notes(decision, nil, answer),
		}
	case scripted.PersonaBroken:
		// The broken version flips the comparison: it reorders what is
		// stocked above its point and holds what is at or below it.
		facts := fmt.Sprintf("data/stock.csv lists %d %s against a reorder point of %d", c.count, c.item, c.point)
		if c.count > c.point {
			q := fmt.Sprintf("Shall I place an order for %d %s today?", order, c.item)
			return message{
				text:   fmt.Sprintf("REORDER %s. %s, so the count is above the point. %s", c.item, facts, q),
				ruling: "REORDER " + c.item, facts: facts, close: q, rulingOK: c.reorder(), factsOK: true, closes: true,
				notes: notes(fmt.Sprintf("Reorder %s.", c.item), nil, fmt.Sprintf("Yes, order %d.", order)),
			}
		}
		q := fmt.Sprintf("Shall I check %s again next week?", c.item)
		return message{
			text:   fmt.Sprintf("HOLD %s. %s, so the count is not above the point and no order is needed yet. %s", c.item, facts, q),
			ruling: "HOLD " + c.item, facts: facts, close: q, rulingOK: !c.reorder(), factsOK: true, closes: true,
			notes: notes(fmt.Sprintf("Hold %s.", c.item), nil, "Yes, next week."),
		}
	}
	// The control: no skill, no files read for numbers, no question.
	return message{
		text:   fmt.Sprintf("You should probably reorder %s soon; stock like this tends to run low, and it is better to be safe than sorry.", c.item),
		ruling: "You should probably reorder " + c.item + " soon", facts: "stock like this tends to run low", close: "it is better to be safe than sorry.",
		rulingOK: c.reorder(), factsOK: false, closes: false,
		notes: notes(fmt.Sprintf("Probably reorder %s, but I cannot tell how many.", c.item),
			[]string{fmt.Sprintf("How many %s are in stock?", c.item), "How many should I order?"}, ""),
	}
}

func notes(decision string, followUps []string, close string) map[string]any {
	if followUps == nil {
		followUps = []string{}
	}
	return map[string]any{"decision": decision, "rebuild": "The item's count against its reorder point decides; the lead time says how urgent it is.",
		"follow_ups": followUps, "close_answer": close}
}

func grade(id string, ok bool, quote string) map[string]any {
	res := "fail"
	if ok {
		res = "pass"
	}
	return map[string]any{"id": id, "result": res, "quote": quote}
}

// CasesScript is the scripted model of the eval demo: every version's
// generator, and the reader's and grader's answer to every message.
func CasesScript() (scripted.Script, error) {
	g := scripted.Generation{Markers: markers}
	var readings []scripted.Reading
	var gradings []scripted.Grading
	for _, c := range rulingCases {
		gc := scripted.GenerationCase{Prompt: c.prompt, Searches: []string{c.item}, Answers: map[string]string{}}
		for _, p := range []string{scripted.PersonaBaseline, scripted.PersonaShorter, scripted.PersonaBroken, scripted.PersonaControl} {
			m := c.message(p)
			gc.Answers[p] = m.text
			readings = append(readings, scripted.Reading{Contains: m.text, Notes: m.notes})
			gradings = append(gradings, scripted.Grading{Contains: m.text, Grades: map[string]any{"grades": []map[string]any{
				grade("M1", m.rulingOK, m.ruling), grade("M2", m.factsOK, m.facts), grade("M3", m.closes, m.close),
			}}})
		}
		g.Cases = append(g.Cases, gc)
	}
	rules, err := scripted.EvalRules(g, readings, gradings)
	if err != nil {
		return scripted.Script{}, err
	}
	return scripted.Script{Rules: rules}, nil
}
