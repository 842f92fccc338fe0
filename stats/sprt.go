package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultP0 is the default noise floor: the share of conversations assumed
// to look decayed (baseline passed, some probe failed) when nothing
// decayed. It should be replaced by a measured value when one exists.
const DefaultP0 = 0.05

// SPRT decisions.
const (
	DecisionContinue = "continue" // no bound crossed yet: run another conversation
	DecisionDecay    = "decay"    // upper bound crossed: evidence for P(decayed) = P1
	DecisionNoDecay  = "no-decay" // lower bound crossed: evidence for P(decayed) = P0
	DecisionCap      = "cap"      // Max observations without crossing: undecided
)

// SPRT is Wald's sequential probability ratio test for decay on paired
// conversations. Each conversation whose baseline passed is one Bernoulli
// observation, "decayed" (some probe failed) or "held" (every probe
// passed); conversations whose baseline failed say nothing about decay and
// are not observations (see Classify). H0: P(decayed) = P0, the noise
// floor; H1: P(decayed) = P1 = P0 + delta. Alpha is the false-alarm rate
// (deciding "decay" under H0) and Beta the miss rate (deciding "no-decay"
// under H1).
//
// Why sequential: conversations are expensive, and among tests with the
// same error rates the SPRT has the smallest expected sample size
// (Wald–Wolfowitz 1948). Peeking at a fixed-n test after each conversation
// would instead inflate the false-alarm rate.
//
// Max caps the number of observations (the SPRT is unbounded otherwise);
// reaching it without crossing a bound is "cap", reported as undecided.
// The cap only removes decisions, so it cannot raise the false-alarm rate.
type SPRT struct {
	P0, P1, Alpha, Beta float64
	Max                 int
}

// SPRTState is the running state. The zero value is the start (no
// observations, Decision "" which Update treats as "continue").
type SPRTState struct {
	N, Decayed int
	// LLR is the log-likelihood ratio ln(L(H1)/L(H0)) of the observations.
	LLR      float64
	Decision string // "decay", "no-decay", "continue", "cap"
}

// Validate checks 0 < P0 < P1 < 1, 0 < Alpha < 0.5, 0 < Beta < 0.5 and
// Max >= 1. Outside these the bounds or the likelihood ratio are
// meaningless (a zero probability makes one outcome infinitely
// informative; error rates of 0.5 or more are no test at all).
func (s SPRT) Validate() error {
	var errs []error
	if !(s.P0 > 0 && s.P0 < s.P1 && s.P1 < 1) {
		errs = append(errs, fmt.Errorf("need 0 < p0 < p1 < 1, got p0=%v p1=%v", s.P0, s.P1))
	}
	if !(s.Alpha > 0 && s.Alpha < 0.5) {
		errs = append(errs, fmt.Errorf("need 0 < alpha < 0.5, got %v", s.Alpha))
	}
	if !(s.Beta > 0 && s.Beta < 0.5) {
		errs = append(errs, fmt.Errorf("need 0 < beta < 0.5, got %v", s.Beta))
	}
	if s.Max < 1 {
		errs = append(errs, fmt.Errorf("need max >= 1, got %d", s.Max))
	}
	return errors.Join(errs...)
}

// Bounds returns Wald's bounds on the LLR: upper A = ln((1-beta)/alpha)
// (cross it: "decay") and lower B = ln(beta/(1-alpha)) (cross it:
// "no-decay"). Wald's approximation ignores the overshoot past a bound, so
// the achieved error rates are at most about alpha/(1-beta) and
// beta/(1-alpha), and in practice (as the simulation test shows) below
// alpha and beta.
func (s SPRT) Bounds() (upper, lower float64) {
	return math.Log((1 - s.Beta) / s.Alpha), math.Log(s.Beta / (1 - s.Alpha))
}

// Update adds one observation and returns the new state. A state that has
// already reached a decision ("decay", "no-decay", "cap") is returned
// unchanged: observations after stopping are not part of the test, and
// folding them in would change its error rates. Update panics if s is
// invalid; call Validate on user input first.
func (s SPRT) Update(st SPRTState, decayed bool) SPRTState {
	if err := s.Validate(); err != nil {
		panic("stats.SPRT.Update: " + err.Error())
	}
	switch st.Decision {
	case DecisionDecay, DecisionNoDecay, DecisionCap:
		return st
	}
	st.N++
	if decayed {
		st.Decayed++
	}
	// Recomputed from the counts rather than accumulated, so no rounding
	// drift: each decayed conversation adds ln(p1/p0), each held one
	// ln((1-p1)/(1-p0)).
	st.LLR = float64(st.Decayed)*math.Log(s.P1/s.P0) +
		float64(st.N-st.Decayed)*(math.Log1p(-s.P1)-math.Log1p(-s.P0))
	upper, lower := s.Bounds()
	switch {
	case st.LLR >= upper:
		st.Decision = DecisionDecay
	case st.LLR <= lower:
		st.Decision = DecisionNoDecay
	case st.N >= s.Max:
		st.Decision = DecisionCap
	default:
		st.Decision = DecisionContinue
	}
	return st
}

// Classify turns one conversation into an SPRT observation: counted is
// false when the baseline failed (the conversation says nothing about
// decay); otherwise decayed is true when any judged probe failed. Probes
// not judged (errors, turns not run) must be left out of probes by the
// caller; a conversation with a passed baseline and no judged probe is not
// counted either, since "every probe passed" would be vacuous.
func Classify(baseline bool, probes []bool) (decayed, counted bool) {
	if !baseline || len(probes) == 0 {
		return false, false
	}
	for _, p := range probes {
		if !p {
			return true, true
		}
	}
	return false, true
}

// Simulate runs the SPRT runs times on simulated conversations that each
// decay with probability p, and returns the mean number of observations to
// a decision (a cap counts Max), the share of runs that decided "decay"
// and the share that hit the cap. Under p = P0 decayRate is the observed
// false-alarm rate; under p = P1, 1-decayRate is the observed miss rate
// (counting a cap as a miss, the conservative reading). It is
// deterministic for a given seed (PCG from math/rand/v2) and makes no
// model calls.
func Simulate(s SPRT, p float64, runs int, seed uint64) (meanN, decayRate, capRate float64) {
	if err := s.Validate(); err != nil {
		panic("stats.Simulate: " + err.Error())
	}
	if runs <= 0 {
		return 0, 0, 0
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var totalN, decays, caps int
	for range runs {
		st := SPRTState{}
		for st.Decision == "" || st.Decision == DecisionContinue {
			st = s.Update(st, rng.Float64() < p)
		}
		totalN += st.N
		switch st.Decision {
		case DecisionDecay:
			decays++
		case DecisionCap:
			caps++
		}
	}
	r := float64(runs)
	return float64(totalN) / r, float64(decays) / r, float64(caps) / r
}

// maxFixedN bounds FixedN's search; beyond it a fixed-n design is not a
// practical comparison for a tool that pays per conversation.
const maxFixedN = 100_000

// FixedN returns the smallest n for which the fixed-n one-sided exact
// binomial test of H0: p = p0 against H1: p = p1 at level alpha has power
// at least 1-beta, and its critical count k: reject H0 when decayed >= k,
// where k is the smallest count with P(X >= k | p0) <= alpha. It exists to
// compare with the SPRT's expected sample size for the same error rates.
//
// Because the binomial is discrete, power is not monotone in n (the
// "sawtooth"): a few n just above the returned one can fall short again.
// The returned n is the first that achieves the power, which is the
// figure that favours the fixed design in the comparison.
//
// It returns (0, 0) for invalid parameters (see SPRT.Validate) or if no n
// up to 100000 suffices.
func FixedN(p0, p1, alpha, beta float64) (n, k int) {
	if (SPRT{P0: p0, P1: p1, Alpha: alpha, Beta: beta, Max: 1}).Validate() != nil {
		return 0, 0
	}
	// Relative slack for floating error in the tails (~1e-13), so a tail
	// equal to alpha in exact arithmetic is not rejected by rounding.
	const slack = 1 + 1e-9
	k = 1
	for n = 1; n <= maxFixedN; n++ {
		// The critical count never falls as n grows and rises by at most
		// one per step (X_{n+1} >= k+1 implies X_n >= k), so step up from
		// the previous one.
		for k <= n && binomUpper(n, k, p0) > alpha*slack {
			k++
		}
		if k > n {
			continue // no rejection region of size alpha yet
		}
		if binomUpper(n, k, p1) >= (1-beta)/slack {
			return n, k
		}
	}
	return 0, 0
}
