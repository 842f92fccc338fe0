// Package stats holds the few statistics vibe-test reports, each exact or
// closed-form and written out here so a reader can check it by hand. Every
// statistic is small-sample honest: with the default 2 conversations most
// of them can only say "underpowered", and the report must say so rather
// than "no decay".
//
// What each statistic may claim, in plain words:
//
//   - Wilson (per-turn pass rate interval): "the pass rate at this turn is
//     plausibly anywhere in [lo, hi]". It is for one turn across
//     independent conversations; probes of one conversation share context
//     and are not independent, so never pool them into one n. With 2 of 2
//     passing the interval is [0.34, 1.00]: it says little, and that is
//     the point of showing it.
//   - SignTest (paired, exact McNemar): "in the conversations where the
//     baseline and the probe disagree, the probe failed more often than a
//     coin flip would explain". It uses only discordant conversations. It
//     cannot reach p <= 0.05 with fewer than 5 discordant pairs
//     (MinDiscordantForSignificance), so a large p from few pairs means
//     "underpowered", never "no decay".
//   - FisherLess / FisherGreater / FisherTwoSided (unpaired 2x2): the same
//     claim for two independent groups, e.g. a diluted probe against the
//     same probe in a fresh session. With 2 per arm nothing goes below
//     1/3.
//   - EffectiveTurn: a description, not a test: the last judged turn whose
//     pass rate is still at least 85% of the baseline's (after NoLiMa's
//     "effective length"). It claims nothing about significance.
//   - SPRT (Wald's sequential test): "decay" means the data favour a decay
//     rate of p1 over the noise floor p0 with error rates about alpha and
//     beta; "no-decay" means the rate looks like p0 rather than p1 (a rate
//     between p0 and p1 is covered by neither guarantee); "cap" means
//     undecided. The guarantees hold only if p0 really is the rate at which
//     a conversation looks decayed when nothing decayed, which with a noisy
//     judge and three probes per conversation must be measured (A/A runs),
//     not assumed. Stopping early is legitimate only with a sequential test
//     like this one: peeking at a fixed-n test inflates false alarms.
//   - FixedN: the sample size a fixed-n exact binomial test would need for
//     the same error rates; it exists to show what the SPRT saves.
//   - SD, AcceptMargin, BinomialSE, Accept (seed 000's acceptance rule): "the
//     candidate did not drop by more than the measured noise". It is a
//     non-inferiority bar set from repeat runs, not a significance test; it
//     can pass a small real drop that the noise hides.
package stats
