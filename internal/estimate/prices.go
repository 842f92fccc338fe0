package estimate

import (
	"regexp"
	"strings"

	"github.com/vibe-test/vibe-test/internal/claude"
)

// Price is a model's list price in dollars per million tokens: fresh input,
// output, a write to the prompt cache (5-minute) and a read from it.
type Price struct {
	Input, Output, CacheWrite, CacheRead float64
}

// PricesRead is when the table below was read, and from where: the model
// catalog baked into the pinned Claude Code CLI (2.1.328), which is what the
// CLI's own total_cost_usd is computed with, and so what vibe-test reports
// as a run's cost. The CLI may fetch newer prices at run time; a run's
// recorded cost is the truth, this is a forecast.
const PricesRead = "2026-12-02, from the model catalog of the pinned claude CLI 2.1.328"

// prices are the catalog's tiers by model id (first-party names).
var prices = map[string]Price{
	"claude-3-5-haiku":  {0.8, 4, 1, 0.08},
	"claude-haiku-4-5":  {1, 5, 1.25, 0.1},
	"claude-haiku-5-5":  {0.1, 0.5, 0.125, 0.01}, // below 100k prompt tokens; above, 5 times that
	"claude-3-5-sonnet": {3, 15, 3.75, 0.3},
	"claude-3-7-sonnet": {3, 15, 3.75, 0.3},
	"claude-sonnet-4-0": {3, 15, 3.75, 0.3},
	"claude-sonnet-4-5": {3, 15, 3.75, 0.3},
	"claude-sonnet-4-6": {3, 15, 3.75, 0.3},
	"claude-sonnet-5":   {2, 10, 2.5, 0.2},
	"claude-sonnet-5-5": {2, 10, 2.5, 0.1},
	"claude-opus-4-0":   {15, 75, 18.75, 1.5},
	"claude-opus-4-1":   {15, 75, 18.75, 1.5},
	"claude-opus-4-5":   {5, 25, 6.25, 0.5},
	"claude-opus-4-6":   {5, 25, 6.25, 0.5},
	"claude-opus-4-7":   {5, 25, 6.25, 0.5},
	"claude-opus-4-8":   {5, 25, 6.25, 0.5},
	"claude-opus-5":     {5, 25, 6.25, 0.5},
	"claude-opus-5-5":   {4, 20, 5, 0.2},
	"claude-fable-5":    {10, 50, 12.5, 1},
	"claude-fable-5-1":  {10, 50, 12.5, 0.25},
	"claude-fable-5-2":  {8, 40, 10, 0.2},
	"claude-mythos-5":   {10, 50, 12.5, 1},
	"claude-mythos-5-1": {10, 50, 12.5, 0.25},
	"claude-mythos-5-2": {8, 40, 10, 0.2},
}

// aliases the CLI resolves, as the README records them (`sonnet` →
// claude-sonnet-5-5, seen from the pinned CLI's init event). Others are not
// guessed: an alias whose target is not known here gets no estimate.
var aliases = map[string]string{
	"sonnet": "claude-sonnet-5-5",
}

var dated = regexp.MustCompile(`^(.+)-\d{8}$`)

// PriceOf is the list price of a model named as --model takes it (an id,
// an id with its date suffix, or a known alias); ok is false when the model
// is not in the table.
func PriceOf(model string) (p Price, id string, ok bool) {
	id = strings.TrimSpace(model)
	if a, found := aliases[id]; found {
		id = a
	}
	if p, ok = prices[id]; ok {
		return p, id, true
	}
	if m := dated.FindStringSubmatch(id); m != nil {
		if p, ok = prices[m[1]]; ok {
			return p, m[1], true
		}
	}
	return Price{}, id, false
}

// cost is the dollars of a token count at a price per million.
func (p Price) cost(t Tokens) float64 {
	return (t.Input*p.Input + t.Output*p.Output + t.CacheWrite*p.CacheWrite + t.CacheRead*p.CacheRead) / 1e6
}

// SpentCost prices an invocation's API calls (claude.Turn.Spent) at the
// catalogue's list prices: what a try stopped before its result line,
// which alone carries the CLI's own figure, was billed for. ok is false
// when there is no call, or a call's model is not in the table (nothing is
// guessed).
func SpentCost(spent []claude.CallSpend) (cost float64, ok bool) {
	if len(spent) == 0 {
		return 0, false
	}
	for _, c := range spent {
		p, _, found := PriceOf(c.Model)
		if !found {
			return 0, false
		}
		cost += p.cost(Tokens{Input: float64(c.Usage.Input), Output: float64(c.Usage.Output),
			CacheWrite: float64(c.Usage.CacheCreation), CacheRead: float64(c.Usage.CacheRead)})
	}
	return cost, true
}
