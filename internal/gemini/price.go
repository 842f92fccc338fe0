package gemini

import "strings"

// Price is what one model charges per million tokens, Standard tier, text.
// Above LongPrompt prompt tokens (when set) a call is charged the Long
// rates for all of its tokens.
type Price struct {
	Input, Cached, Output             float64
	LongPrompt                        int64
	LongInput, LongCached, LongOutput float64
}

// prices is the pinned price table of the Gemini Developer API (paid tier,
// standard, text input, USD per 1M tokens; output includes thinking
// tokens, which the API bills as output). Source: Google's pricing page,
// https://ai.google.dev/gemini-api/docs/pricing, as quoted by third-party
// copies of it dated March to July 2026 (morphllm.com/gemini-api-pricing,
// factquire.com's gemini-3-flash-preview entry, accessed 2026-07-04);
// pinned 2026-12-02. Context-cache reads are 10% of the input price, the
// page's rate where the copies quote one (2.5, 3 Flash, 3.1 Pro) and
// assumed for the others. The CLI's aliases resolve to names not in
// this table (flash → gemini-3.8-flash, flash-lite → gemini-3.5-flash-lite,
// PROTOCOL §2.2): a turn on them has no estimated cost (Priced is false).
var prices = map[string]Price{
	"gemini-2.5-flash-lite": {Input: 0.10, Cached: 0.01, Output: 0.40},
	"gemini-2.5-flash":      {Input: 0.30, Cached: 0.03, Output: 2.50},
	"gemini-2.5-pro": {Input: 1.25, Cached: 0.125, Output: 10.00,
		LongPrompt: 200_000, LongInput: 2.50, LongCached: 0.25, LongOutput: 15.00},
	"gemini-3-flash-preview": {Input: 0.50, Cached: 0.05, Output: 3.00},
	"gemini-3.1-pro-preview": {Input: 2.00, Cached: 0.20, Output: 12.00,
		LongPrompt: 200_000, LongInput: 4.00, LongCached: 0.40, LongOutput: 18.00},
	"gemini-3.1-flash-lite": {Input: 0.25, Cached: 0.025, Output: 1.50},
	"gemini-3.5-flash":      {Input: 1.50, Cached: 0.15, Output: 9.00},
}

// PricesAsOf is the date the price table was pinned.
const PricesAsOf = "2026-12-02"

// PriceOf is the price of a model as the API names it (the path model of
// the request, which the session file records). A dated or suffixed
// variant (gemini-2.5-flash-001) takes its base model's price.
func PriceOf(model string) (Price, bool) {
	if p, ok := prices[model]; ok {
		return p, true
	}
	best := ""
	for name := range prices {
		if strings.HasPrefix(model, name+"-") && len(name) > len(best) {
			best = name
		}
	}
	if best == "" {
		return Price{}, false
	}
	return prices[best], true
}

// Priced says whether the table has a price for model.
func Priced(model string) bool {
	_, ok := PriceOf(model)
	return ok
}

// CallTokens are the token counts of one model call (the session file's
// tokens record: prompt includes cached; output excludes thoughts).
type CallTokens struct {
	Prompt, Cached, Output, Thoughts int64
}

// Cost estimates one call's cost in USD at the pinned table; 0 for a model
// the table lacks.
func Cost(model string, t CallTokens) float64 {
	p, ok := PriceOf(model)
	if !ok {
		return 0
	}
	in, cached, out := p.Input, p.Cached, p.Output
	if p.LongPrompt > 0 && t.Prompt > p.LongPrompt {
		in, cached, out = p.LongInput, p.LongCached, p.LongOutput
	}
	uncached := max(t.Prompt-t.Cached, 0)
	return (float64(uncached)*in + float64(t.Cached)*cached + float64(t.Output+t.Thoughts)*out) / 1e6
}
