package stats

import "fmt"

// EffectiveFraction is the share of the baseline pass rate a turn must keep
// to count as still effective (NoLiMa's "effective length" uses 85%).
const EffectiveFraction = 0.85

// EffectiveTurn returns the last judged turn whose pass rate is still at
// least 85% of the baseline's, scanning turns in order and stopping at the
// first one that falls below: a later recovery does not extend it, because
// a user who met the failure at that turn already met it. turns[0] is the
// baseline and rates[i] is the pass rate of turns[i]. It returns turns[0]
// if the first probe already falls below, and 0 if the baseline rate is 0
// (nothing worked, so nothing decayed) or there are no turns. It panics if
// the slices differ in length.
//
// It is descriptive only: with few conversations the rates move in steps
// of 1/n, so report it next to the intervals, not as a finding.
func EffectiveTurn(turns []int, rates []float64) int {
	if len(turns) != len(rates) {
		panic(fmt.Sprintf("stats.EffectiveTurn: %d turns but %d rates", len(turns), len(rates)))
	}
	if len(turns) == 0 || !(rates[0] > 0) {
		return 0
	}
	// A small absolute slack so that a rate equal to 85% of the baseline
	// in exact arithmetic (0.68 vs 0.85*0.8) is not lost to rounding.
	threshold := EffectiveFraction*rates[0] - 1e-12
	eff := turns[0]
	for i := 1; i < len(turns); i++ {
		if rates[i] < threshold {
			break
		}
		eff = turns[i]
	}
	return eff
}
