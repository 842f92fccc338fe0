package chart

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wilson is the Wilson 95% interval of k passes of n, for fixtures whose
// rates must agree with their intervals.
func wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.959964
	p, nf := float64(k)/float64(n), float64(n)
	centre := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return round3(max(0, centre-half) - 0.0005), round3(min(1, centre+half) + 0.0005)
}

func rateOf(probe, turn int, ctx int64, after, passes, n int, population string) TurnRate {
	lo, hi := wilson(passes, n)
	return TurnRate{Probe: probe, Turn: turn, ContextTokens: ctx, AfterCompaction: after, Population: population, Passes: passes, N: n, Lo: max(0, lo), Hi: min(1, hi)}
}

// contextRun is a run diluted to 50k, 100k and 150k tokens with /compact
// before probe 2 in conversations 2 and 3: the probes fall at different
// turns, the longest conversation runs past 40 turns, and conversation 1
// stopped before its last turns (kind ""). Each conversation's result at
// the baseline and probes 1-3 is given by results.
func contextRun() Data {
	results := [][4]string{
		{"pass", "pass", "pass", "fail"},
		{"pass", "pass", "fail", "fail"},
		{"pass", "fail", "pass", "judge-error"},
	}
	var convs []Conversation
	for i, res := range results {
		growth := int64(4000 + 600*i)
		ctx := int64(6000 + 300*i)
		c := Conversation{Label: fmt.Sprintf("conv %d", i+1), Status: "completed"}
		turn := 1
		c.Turns = append(c.Turns, Point{Turn: 1, Kind: "base", Result: res[0], ContextTokens: ctx, Status: "ok", ToolCalls: 2})
		after := false
		for probe, level := range []int64{50000, 100000, 150000} {
			for ctx+growth < level {
				turn++
				ctx += growth
				c.Turns = append(c.Turns, Point{Turn: turn, Kind: "filler", ContextTokens: ctx, Status: "ok", AfterCompaction: after})
			}
			turn++
			ctx += growth
			p := Point{Turn: turn, Kind: "probe", Probe: probe + 1, Result: res[probe+1], ContextTokens: ctx, Status: "ok", ToolCalls: 1, AfterCompaction: after}
			if probe == 1 && i > 0 {
				before := ctx - growth
				ctx = 18000 + 2000*int64(i)
				p.ContextTokens, p.AfterCompaction, after = ctx, true, true
				p.Compaction = fmt.Sprintf("/compact: %s → %s tokens, summary 3,900 tokens", thousands(before), thousands(ctx))
			}
			if res[probe+1] == "judge-error" {
				p.Escape, p.EscapeReason, p.VerdictError = true, "answered from memory", "the judge's answer was not JSON"
			}
			c.Turns = append(c.Turns, p)
		}
		convs = append(convs, c)
	}
	// Conversation 1 was planned to the longest one's length; it stopped.
	last := 0
	for _, c := range convs {
		last = max(last, c.Turns[len(c.Turns)-1].Turn)
	}
	for t := convs[0].Turns[len(convs[0].Turns)-1].Turn + 1; t <= last && t < convs[0].Turns[len(convs[0].Turns)-1].Turn+4; t++ {
		convs[0].Turns = append(convs[0].Turns, Point{Turn: t})
	}
	medianTurn := func(probe int) (int, int64, int) {
		var turns []int
		var ctxs []int64
		after := 0
		for _, c := range convs {
			for _, p := range c.Turns {
				if p.Probe == probe && p.Kind == "probe" {
					turns, ctxs = append(turns, p.Turn), append(ctxs, p.ContextTokens)
					if p.AfterCompaction {
						after++
					}
				}
			}
		}
		slices.Sort(turns)
		slices.Sort(ctxs)
		return turns[len(turns)/2], ctxs[len(ctxs)/2], after
	}
	const pop = "conversations whose baseline passed"
	t1, c1, a1 := medianTurn(1)
	t2, c2, a2 := medianTurn(2)
	t3, c3, a3 := medianTurn(3)
	return Data{
		Title:     "stock-ledger — decay against context",
		Subtitle:  "3 conversations · model claude-sonnet-5-5",
		Schedule:  "diluted to 50k, 100k, 150k tokens of context; /compact before probe 2",
		ByContext: true,
		Stats: &Stats{
			PerTurn: []TurnRate{
				rateOf(0, 1, 6300, 0, 3, 3, "all conversations"),
				rateOf(1, t1, c1, a1, 2, 3, pop),
				rateOf(2, t2, c2, a2, 2, 3, pop),
				rateOf(3, t3, c3, a3, 0, 2, pop),
			},
			Fresh: []TurnRate{
				rateOf(1, t1, 4100, 0, 3, 3, "fresh sessions"),
				rateOf(2, t2, 4100, 0, 3, 3, "fresh sessions"),
				rateOf(3, t3, 4200, 0, 2, 3, "fresh sessions"),
			},
			DilutedPopulation: pop, Alpha: 0.05,
		},
		Conversations: convs,
	}
}

// TestContextRunFixture guards the fixture's premises: the probes fall at
// different turns, the run is long, and compactions are in it.
func TestContextRunFixture(t *testing.T) {
	d := contextRun()
	span := probeTurns(d.Conversations)
	if span[1][0] == span[1][1] || span[3][1] < 40 {
		t.Fatalf("probe turns %v: want probe 1 at different turns and probe 3 past turn 40", span)
	}
	if p := d.Conversations[0].Turns[len(d.Conversations[0].Turns)-1]; p.Kind != "" {
		t.Fatalf("conv 1 ends with %+v, want a turn never reached", p)
	}
}

func TestContextDemo(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, contextRun()); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join("/tmp/ctxdemo", "chart.html"), buf.Bytes(), 0o644)
	o, _ := ContextOptionJSON(contextRun())
	os.WriteFile(filepath.Join("/tmp/ctxdemo", "ctx.json"), o, 0o644)
	_ = json.Valid
	_ = strings.Contains
}
