// Package rubric extracts, validates and caches the observable-behaviour
// rubric of a skill: 5–8 criteria, each must or should, each optionally with
// a deterministic check over the tool-call trace.
//
// The rubric comes from a cold call (no tools, no skill installed, an empty
// folder), so the model reading the skill is not the agent being measured.
// Criteria describe what can be seen in tool calls, never in prose: an agent
// that writes about running a script without running it must fail.
package rubric

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/vibe-test/vibe-test/internal/jsonerr"
)

// Kind of a criterion: a must failure fails the turn; a should is reported.
const (
	Must   = "must"
	Should = "should"
)

// Check is a deterministic rule over the trace. Tool is a regular expression
// matched against the whole tool name ("Bash", "Edit|Write"); Pattern is
// matched against the call's input as compact JSON.
type Check struct {
	Tool    string `json:"tool"`
	Pattern string `json:"pattern"`
	// Expect is "present" (some call matches) or "absent" (none does).
	Expect string `json:"expect"`
}

// Criterion is one observable behaviour.
type Criterion struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Kind  string `json:"kind"`
	Check *Check `json:"check,omitempty"`
}

// Rubric is the list of criteria a turn is judged against.
type Rubric struct {
	Criteria []Criterion `json:"criteria"`
	// Source says where it came from: "extracted", "cache" or a file path.
	Source string `json:"source,omitempty"`
	Model  string `json:"model,omitempty"`
}

// Schema is the JSON schema the rubric call must answer with (documented in
// the README). Its title routes the call in the scripted model.
const Schema = `{"title":"rubric","type":"object","additionalProperties":false,` +
	`"properties":{"criteria":{"type":"array","minItems":5,"maxItems":8,"items":{"type":"object","additionalProperties":false,` +
	`"properties":{"id":{"type":"string","pattern":"^[a-z0-9][a-z0-9-]*$"},"text":{"type":"string"},"kind":{"type":"string","enum":["must","should"]},` +
	`"check":{"type":"object","additionalProperties":false,"properties":{"tool":{"type":"string"},"pattern":{"type":"string"},"expect":{"type":"string","enum":["present","absent"]}},"required":["tool","pattern","expect"]}},` +
	`"required":["id","text","kind"]}}},"required":["criteria"]}`

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Parse decodes and validates a rubric from the model. Errors name the
// criterion and the field.
func Parse(b []byte) (*Rubric, error) {
	return parse(b, "")
}

// parse is Parse of file's bytes: a decoding error then names the file and
// line, a broken contract the file ("" names none).
func parse(b []byte, file string) (*Rubric, error) {
	var r Rubric
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		// An unknown key: name where it is and what was expected there
		// (encoding/json's message names neither).
		if path, keys, ok := jsonerr.UnknownField(b, &r); ok {
			line, _ := jsonerr.Describe(b, err)
			detail := fmt.Sprintf("field %q is unknown, expected one of: %s", path, strings.Join(keys, ", "))
			if file == "" {
				return nil, fmt.Errorf("not a rubric: line %d: %s", line, detail)
			}
			return nil, fmt.Errorf("%s:%d: not a rubric: %s", file, line, detail)
		}
		return nil, jsonerr.Format(file, b, err, "a rubric")
	}
	if path, line, dup := jsonerr.DuplicateField(b); dup && file != "" {
		// JSON keeps the last: a reviewed rubric.json lost the first
		// silently. (A model's answer is its schema's, checked as such.)
		return nil, fmt.Errorf("%s:%d: not a rubric: field %q given twice, expected it once (only the last would count)", file, line, path)
	}
	// One rubric, nothing after it: a second one back to back was ignored.
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		line := 1 + strings.Count(string(b[:end]), "\n")
		where := "rubric"
		if file != "" {
			where = fmt.Sprintf("%s:%d", file, line)
		}
		return nil, fmt.Errorf("%s: text after the rubric's JSON object, expected the one object alone", where)
	}
	if err := r.Validate(); err != nil {
		if file != "" {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return nil, err
	}
	return &r, nil
}

// Validate checks the rubric's contract: 5–8 criteria with unique ids, at
// least one must, checks that compile.
func (r *Rubric) Validate() error {
	if n := len(r.Criteria); n < 5 || n > 8 {
		return fmt.Errorf("criteria: %d given, expected 5 to 8", n)
	}
	seen := map[string]bool{}
	musts := 0
	for i, c := range r.Criteria {
		where := fmt.Sprintf("criteria[%d]", i)
		if !idRE.MatchString(c.ID) {
			return fmt.Errorf("%s.id: %q, expected lowercase letters, digits and hyphens", where, c.ID)
		}
		if seen[c.ID] {
			return fmt.Errorf("%s.id: %q repeats an earlier id", where, c.ID)
		}
		seen[c.ID] = true
		if strings.TrimSpace(c.Text) == "" {
			return fmt.Errorf("%s.text: empty, expected the observable behaviour", where)
		}
		switch c.Kind {
		case Must:
			musts++
		case Should:
		default:
			return fmt.Errorf("%s.kind: %q, expected \"must\" or \"should\"", where, c.Kind)
		}
		if c.Check != nil {
			if _, err := c.Check.compile(); err != nil {
				return fmt.Errorf("%s.check: %w", where, err)
			}
		}
	}
	if musts == 0 {
		return fmt.Errorf("criteria: none is \"must\", expected at least one (a turn passes when every must passes)")
	}
	return nil
}

// compiled is a check ready to run.
type compiled struct {
	tool, pattern *regexp.Regexp
	present       bool
}

func (c *Check) compile() (compiled, error) {
	tool, err := regexp.Compile(`^(?:` + c.Tool + `)$`)
	if err != nil || c.Tool == "" {
		return compiled{}, fmt.Errorf("tool: %q, expected a tool name or regular expression", c.Tool)
	}
	pat, err := regexp.Compile(c.Pattern)
	if err != nil {
		return compiled{}, fmt.Errorf("pattern: %q: %v", c.Pattern, err)
	}
	switch c.Expect {
	case "present", "absent":
	default:
		return compiled{}, fmt.Errorf("expect: %q, expected \"present\" or \"absent\"", c.Expect)
	}
	return compiled{tool: tool, pattern: pat, present: c.Expect == "present"}, nil
}

// Call is what a check sees of one tool call.
type Call struct {
	Name  string
	Input string // compact JSON
}

// CheckResult is the outcome of a deterministic check on one trace.
type CheckResult struct {
	Pass bool `json:"pass"`
	// Call is the 1-based number of the first matching call, 0 if none.
	Call     int    `json:"call"`
	Evidence string `json:"evidence"`
}

// Run applies the check to a trace.
func (c *Check) Run(calls []Call) (CheckResult, error) {
	cc, err := c.compile()
	if err != nil {
		return CheckResult{}, err
	}
	for i, call := range calls {
		if cc.tool.MatchString(call.Name) && cc.pattern.MatchString(call.Input) {
			n := i + 1
			if cc.present {
				return CheckResult{Pass: true, Call: n, Evidence: fmt.Sprintf("call %d (%s) matches /%s/", n, call.Name, c.Pattern)}, nil
			}
			return CheckResult{Pass: false, Call: n, Evidence: fmt.Sprintf("call %d (%s) matches /%s/, which must not happen", n, call.Name, c.Pattern)}, nil
		}
	}
	if cc.present {
		return CheckResult{Pass: false, Evidence: fmt.Sprintf("no %s call matches /%s/", c.Tool, c.Pattern)}, nil
	}
	return CheckResult{Pass: true, Evidence: fmt.Sprintf("no %s call matches /%s/", c.Tool, c.Pattern)}, nil
}

// ByID finds a criterion.
func (r *Rubric) ByID(id string) (Criterion, bool) {
	if r == nil {
		return Criterion{}, false
	}
	for _, c := range r.Criteria {
		if c.ID == id {
			return c, true
		}
	}
	return Criterion{}, false
}
