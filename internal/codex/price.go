package codex

import "strings"

// Price is what OpenAI charges for one model, in US dollars per million
// tokens. Cached input is the part of the input a prompt-cache hit serves.
type Price struct {
	Input, CachedInput, Output float64
	// LongInput is the input size above which a request is billed at
	// LongFactorIn/LongFactorOut times these rates, the whole request
	// (0: no long-context rate).
	LongInput                   int64
	LongFactorIn, LongFactorOut float64
}

// Prices is the pinned price table the estimated cost uses: the Codex CLI
// reports token counts, never a cost (PROTOCOL.md §4), so vibe-test prices
// them itself and labels the figure estimated (Agent.CostExact is false).
//
// Standard-tier rates as OpenAI's API pricing page
// (https://developers.openai.com/api/docs/pricing) listed them in June
// 2026, read on 2026-12-02 through secondary copies that quote it
// (tokenmix.ai "OpenAI API Cost 2026", data verified 2026-06-04;
// morphllm.com "OpenAI API pricing", June 2026; both agree to the cent).
// The long-context rate (above 272K input tokens, 2x input and 1.5x
// output for the whole request) is the one quoted for gpt-5.5 and applied
// to gpt-5.4 alike. Batch, flex and priority tiers are not modelled.
// The pro models list no cached rate: their cached input is billed as
// input. Reasoning tokens are part of output_tokens and billed as output.
var Prices = map[string]Price{
	"gpt-5.5":      {Input: 5.00, CachedInput: 0.50, Output: 30.00, LongInput: 272_000, LongFactorIn: 2, LongFactorOut: 1.5},
	"gpt-5.5-pro":  {Input: 30.00, CachedInput: 30.00, Output: 180.00},
	"gpt-5.4":      {Input: 2.50, CachedInput: 0.25, Output: 15.00, LongInput: 272_000, LongFactorIn: 2, LongFactorOut: 1.5},
	"gpt-5.4-pro":  {Input: 30.00, CachedInput: 30.00, Output: 180.00},
	"gpt-5.4-mini": {Input: 0.75, CachedInput: 0.075, Output: 4.50},
	"gpt-5.4-nano": {Input: 0.20, CachedInput: 0.02, Output: 1.25},
}

// PriceOf finds the price of a model: its exact name, else the longest
// table entry it starts with followed by "-" (a dated snapshot such as
// gpt-5.5-2026-04-23 is priced as gpt-5.5). ok is false for a model the
// table does not know, whose cost is then 0.
func PriceOf(model string) (Price, bool) {
	if p, ok := Prices[model]; ok {
		return p, true
	}
	best := ""
	for name := range Prices {
		if strings.HasPrefix(model, name+"-") && len(name) > len(best) {
			best = name
		}
	}
	if best == "" {
		return Price{}, false
	}
	return Prices[best], true
}

// CallUsage is the token usage of one model call as codex records it:
// Input counts every input token, Cached the part of it read from the
// prompt cache; Output includes Reasoning.
type CallUsage struct {
	Input, Cached, CacheWrite, Output, Reasoning int64
}

// Cost is the estimated price of one call in US dollars.
func (p Price) Cost(u CallUsage) float64 {
	in, cachedIn, out := p.Input, p.CachedInput, p.Output
	if p.LongInput > 0 && u.Input > p.LongInput {
		in, cachedIn, out = in*p.LongFactorIn, cachedIn*p.LongFactorIn, out*p.LongFactorOut
	}
	cached := min(max(u.Cached, 0), u.Input)
	fresh := u.Input - cached
	return (float64(fresh)*in + float64(cached)*cachedIn + float64(u.Output)*out) / 1e6
}
