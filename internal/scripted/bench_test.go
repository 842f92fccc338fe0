package scripted

import (
	"path/filepath"
	"strings"
	"testing"
)

// fixtureNames lists the recorded request bodies of one testdata folder.
func fixtureNames(b *testing.B, dir string) []string {
	b.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil {
		b.Fatal(err)
	}
	var names []string
	for _, f := range files {
		if name := filepath.Base(f); name != "index.json" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		b.Fatalf("no fixtures in testdata/%s", dir)
	}
	return names
}

// The classification of each request body the real CLIs sent: the work
// the server does per request before it routes, on bodies that carry a
// whole conversation.
func BenchmarkClassify(b *testing.B) {
	for _, name := range fixtureNames(b, "requests") {
		body := capturedBody(b, name)
		b.Run(strings.TrimSuffix(name, "-request.json"), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := classify(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkClassifyResponses(b *testing.B) {
	for _, name := range fixtureNames(b, "responses") {
		body := responsesBody(b, name)
		b.Run(strings.TrimSuffix(name, ".json"), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, _, err := classifyResponses(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkClassifyGemini(b *testing.B) {
	for _, name := range fixtureNames(b, "gemini") {
		name = strings.TrimSuffix(name, ".json")
		body := geminiBody(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := classifyGemini("gemini-2.5-flash", "streamGenerateContent", body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Matching the rules of every persona against a filler prompt, as route
// does at each step of a filler turn (the demo's task pattern, a
// case-insensitive alternation, over a passage of a few KB).
func BenchmarkRuleMatch(b *testing.B) {
	var rules []Rule
	for _, persona := range []string{PersonaSteady, PersonaDecaying, PersonaNever, PersonaEscaping, PersonaNoisy, PersonaForgetting} {
		rs, err := PersonaRules(persona, Procedure{TaskPattern: `(?i)in stock|widgets|gaskets|hinges`})
		if err != nil {
			b.Fatal(err)
		}
		rules = append(rules, rs...)
	}
	compiled, err := compile(rules)
	if err != nil {
		b.Fatal(err)
	}
	prompt := strings.Repeat("Read this passage about the harbour's history and tell me what you make of it. ", 50)
	c := classified{Kind: KindAgent, Turn: 3, Step: 1, Prompt: prompt, Body: []byte(`{}`)}
	for b.Loop() {
		for i := range compiled {
			compiled[i].matches(c, PersonaForgetting)
		}
	}
}

// The data of one answer's stream events: sseEvents against the maps
// marshalled through reflection that writeSSE sent before it.
func BenchmarkSSEEvents(b *testing.B) {
	m := message{ID: "msg_scripted_000042", Model: "claude-opus-5-5", Text: "Running the census first.",
		Uses:  []toolUse{{Name: "Bash", Input: []byte(`{"command":"bash .claude/skills/stock-ledger/scripts/census.sh","description":"Run the stock census"}`)}},
		Usage: Usage{Input: 40, CacheCreation: 2100, CacheRead: 14000, Output: 40}, Seq: 42}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			m.sseEvents()
		}
	})
	b.Run("maps", func(b *testing.B) {
		for b.Loop() {
			marshalledEvents(b, m)
		}
	})
}
