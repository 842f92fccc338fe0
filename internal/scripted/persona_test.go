package scripted

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// demoProcedure is a skill procedure in the shape the demo uses.
var demoProcedure = Procedure{
	TaskPattern: `(?i)health report`,
	Follow: []Step{
		{Text: "Running the health script.", ToolUses: []ToolUse{{Name: "Bash", Input: map[string]string{"command": "python3 health.py"}}}},
		{ToolUses: []ToolUse{{Name: "Read", Input: map[string]string{"file_path": "report.md"}}}},
		{Text: "Health report written following the procedure."},
	},
	Improvise: []Step{
		{ToolUses: []ToolUse{{Name: "Bash", Input: map[string]string{"command": "df -h && uptime"}}}},
		{Text: "I checked things my own way."},
	},
	FromMemory:  "The system is healthy (from memory).",
	FillerReply: "Filler handled.",
}

// conversation plays a multi-turn conversation against the server the way the
// CLI does: the whole history is resent, tool uses get tool results, and the
// loop goes on until a response ends the turn. It returns the tools called
// per turn and the final text of each turn.
type conversation struct {
	t       *testing.T
	url     string
	session string
	history []testMsg
}

func (c *conversation) turn(prompt string) (tools []string, final string) {
	c.t.Helper()
	if len(c.history) == 0 {
		c.history = append(c.history,
			userMsg("<system-reminder>\nCLAUDE.md contents\n</system-reminder>", prompt),
			testMsg{Role: "system", Content: "# Environment"})
	} else {
		c.history = append(c.history, userMsg(prompt))
	}
	for range 20 {
		m := post(c.t, c.url, c.session, reqBody(c.t, agentTools, c.history...))
		if m.Status != 200 {
			c.t.Fatalf("status %d", m.Status)
		}
		var blocks []map[string]any
		if m.Text != "" {
			blocks = append(blocks, map[string]any{"type": "text", "text": m.Text})
		}
		var results []map[string]any
		for _, u := range m.ToolUses {
			tools = append(tools, u["name"].(string))
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": u["id"], "name": u["name"], "input": u["input"]})
			results = append(results, map[string]any{"type": "tool_result", "tool_use_id": u["id"], "content": "ok"})
		}
		c.history = append(c.history, testMsg{Role: "assistant", Content: blocks})
		if m.StopReason != "tool_use" {
			return tools, m.Text
		}
		c.history = append(c.history, testMsg{Role: "user", Content: results})
	}
	c.t.Fatal("agent loop did not end")
	return nil, ""
}

// tenTurns is the demo's conversation shape: the base task at turn 1, probes
// at turns 6, 8 and 10, fillers in between.
func tenTurns() []string {
	var prompts []string
	for turn := 1; turn <= 10; turn++ {
		switch turn {
		case 1:
			prompts = append(prompts, "Please produce the health report for this repo.")
		case 6, 8, 10:
			prompts = append(prompts, fmt.Sprintf("Probe %d: write a HEALTH REPORT again.", turn))
		default:
			prompts = append(prompts, fmt.Sprintf("Filler %d: rename a variable in utils.go.", turn))
		}
	}
	return prompts
}

func TestPersonas(t *testing.T) {
	follow := []string{"Bash", "Read"}
	improvise := []string{"Bash"}
	want := map[string]map[int][]string{ // persona -> task turn -> tools called
		"steady":   {1: follow, 6: follow, 8: follow, 10: follow},
		"decaying": {1: follow, 6: follow, 8: nil, 10: nil},
		"never":    {1: nil, 6: nil, 8: nil, 10: nil},
		"escaping": {1: follow, 6: improvise, 8: improvise, 10: improvise},
		// Never compacted here: it holds.
		"forgetting": {1: follow, 6: follow, 8: follow, 10: follow},
	}
	personas := []string{"steady", "decaying", "never", "escaping", "forgetting"}
	var rules []Rule
	for _, p := range personas {
		r, err := PersonaRules(p, demoProcedure)
		if err != nil {
			t.Fatal(err)
		}
		for _, rule := range r {
			if rule.Persona != p || rule.Kind != KindAgent {
				t.Fatalf("rule %+v: want persona %s, kind agent", rule, p)
			}
		}
		rules = append(rules, r...)
	}
	// A judge rule after the personas' rules still routes: persona rules are
	// agent-only.
	rules = append(rules, Rule{Kind: KindJudge, Steps: []Step{{Text: "judged"}}})
	srv := startServer(t, Script{Personas: personas, Rules: rules})

	for _, p := range personas { // sessions in order of first appearance get personas in order
		t.Run(p, func(t *testing.T) {
			c := &conversation{t: t, url: srv.URL(), session: "session-" + p}
			for i, prompt := range tenTurns() {
				turn := i + 1
				tools, final := c.turn(prompt)
				wantTools, isTask := want[p][turn]
				if !isTask {
					if len(tools) != 0 || final != demoProcedure.FillerReply {
						t.Errorf("turn %d filler: tools %v, text %q", turn, tools, final)
					}
					continue
				}
				if !reflect.DeepEqual(tools, wantTools) {
					t.Errorf("turn %d: tools %v, want %v", turn, tools, wantTools)
				}
				switch {
				case wantTools == nil && final != demoProcedure.FromMemory:
					t.Errorf("turn %d: final %q, want the from-memory answer", turn, final)
				case wantTools != nil && final == demoProcedure.FromMemory:
					t.Errorf("turn %d: answered from memory", turn)
				}
			}
		})
	}
	if m := post(t, srv.URL(), "judge", reqBody(t, structuredTools("verdict"), userMsg("health report"))); m.Text != "judged" {
		t.Errorf("judge call: %q", m.Text)
	}

	// Every recorded agent request carries its session's persona and the turn
	// number of the conversation.
	maxTurn := map[string]int{}
	for _, r := range srv.Requests() {
		if r.Kind != KindAgent {
			continue
		}
		if "session-"+r.Persona != r.SessionID {
			t.Errorf("session %s got persona %q", r.SessionID, r.Persona)
		}
		maxTurn[r.SessionID] = max(maxTurn[r.SessionID], r.Turn)
	}
	for s, n := range maxTurn {
		if n != 10 {
			t.Errorf("%s: last turn %d", s, n)
		}
	}
}

func TestPersonaRulesErrors(t *testing.T) {
	if _, err := PersonaRules("sometimes", demoProcedure); err == nil || !strings.Contains(err.Error(), "unknown persona") {
		t.Errorf("unknown persona: %v", err)
	}
	if _, err := PersonaRules("steady", Procedure{TaskPattern: "("}); err == nil {
		t.Error("bad TaskPattern must be an error")
	}
	if _, err := PersonaRules("steady", Procedure{}); err == nil {
		t.Error("empty TaskPattern must be an error")
	}
}

func TestPersonaDefaults(t *testing.T) {
	rules, err := PersonaRules("never", Procedure{TaskPattern: "task"})
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, Script{Personas: []string{"never"}, Rules: rules})
	c := &conversation{t: t, url: srv.URL(), session: "s"}
	if tools, final := c.turn("do the task"); len(tools) != 0 || final == "" {
		t.Errorf("task: %v %q", tools, final)
	}
	if tools, final := c.turn("something else"); len(tools) != 0 || final == "" || final == "Done." {
		t.Errorf("filler: %v %q", tools, final)
	}
}

// The forgetting persona follows until its session is compacted and
// answers from memory after; it answers the CLI's summary request, in the
// shape the real CLI sent it, with a summary that keeps nothing of the
// procedure.
func TestForgettingPersona(t *testing.T) {
	rules, err := PersonaRules(PersonaForgetting, demoProcedure)
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, Script{Personas: []string{PersonaForgetting}, Rules: rules})
	c := &conversation{t: t, url: srv.URL(), session: "s"}
	if tools, _ := c.turn("Please produce the health report for this repo."); !reflect.DeepEqual(tools, []string{"Bash", "Read"}) {
		t.Fatalf("before compaction: tools %v, want the procedure", tools)
	}
	c.turn("Filler: rename a variable in utils.go.")

	// The real summary request (recorded from the CLI), sent in this
	// session: its instructions ride with a tool result.
	m := post(t, srv.URL(), "s", capturedBody(t, "compact-summary-request.json"))
	if m.Text != forgettingSummary || len(m.ToolUses) != 0 {
		t.Fatalf("summary request answered %q, tools %v", m.Text, m.ToolUses)
	}
	if strings.Contains(strings.ToLower(m.Text), "health") || !strings.Contains(m.Text, "<summary>") {
		t.Errorf("the summary should be in <summary> tags and keep nothing of the procedure: %q", m.Text)
	}

	// The compacted session: the continuation (with that summary) and the
	// last answer, then the prompts go on.
	c.history = []testMsg{
		{Role: "user", Content: Continuation + " The summary below covers the earlier portion of the conversation.\n\nSummary:\nThe user asked questions."},
		{Role: "system", Content: "# Environment"},
		assistantMsg(demoProcedure.FillerReply),
	}
	for i := range 2 {
		tools, final := c.turn("Probe: write a HEALTH REPORT again.")
		if len(tools) != 0 || final != demoProcedure.FromMemory {
			t.Errorf("task %d after compaction: tools %v, text %q, want from memory", i+1, tools, final)
		}
	}
	if tools, final := c.turn("Filler: what is a closure?"); len(tools) != 0 || final != demoProcedure.FillerReply {
		t.Errorf("filler after compaction: %v %q", tools, final)
	}

	// A fresh session of the same persona (never compacted) follows.
	fresh := &conversation{t: t, url: srv.URL(), session: "fresh"}
	if tools, _ := fresh.turn("Probe: write a HEALTH REPORT again."); !reflect.DeepEqual(tools, []string{"Bash", "Read"}) {
		t.Errorf("fresh: tools %v, want the procedure", tools)
	}
}

// A compaction's summary request is answered as one by every persona, even
// when the skill's task pattern matches words of its instructions: no
// procedure, no command, the plain filler reply.
func TestSummaryRequestIsNeverATask(t *testing.T) {
	p := demoProcedure
	p.TaskPattern = `(?i)summary`
	for _, persona := range []string{PersonaSteady, PersonaEscaping} {
		rules, err := PersonaRules(persona, p)
		if err != nil {
			t.Fatal(err)
		}
		srv := startServer(t, Script{Personas: []string{persona}, Rules: rules})
		m := post(t, srv.URL(), "s", capturedBody(t, "compact-summary-request.json"))
		if m.Text != p.FillerReply || len(m.ToolUses) != 0 {
			t.Errorf("%s: summary request answered %q, tools %v", persona, m.Text, m.ToolUses)
		}
	}
}
