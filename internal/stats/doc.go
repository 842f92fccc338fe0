// Package stats holds the few statistics vibe-test reports, each exact or
// closed-form and written out here so a reader can check it by hand.
//
// What each statistic may claim, in plain words:
//
//   - CompareProbes (the test behind the exit code): "the probes pass less
//     often in diluted conversations than the same probes asked fresh",
//     each probe against itself: the arms' rates are means of per-probe
//     rates over the probes both judged, so arms that lost different
//     probes (errored turns) compare like with like; a conversation or
//     fresh triple is the cluster of its probes' variance, floored at each
//     probe's binomial variance; Welch's one-sided t-test. Its false-alarm
//     rate is not argued but measured, by the calibrate package, through
//     the function that sets the exit code.
//   - CompareArms: Welch's test over per-unit shares (each unit scored by
//     the share of its probes that passed): the means, drop and
//     testability `vibe-test compare` reports per measure, whose p-value
//     is its permutation test's (PermuteLower).
//   - MinDetectableDrop and UnitsForDrop: what a run of this size and
//     spread would have caught with a given power, and how many units would
//     catch a given drop. Descriptions of the run, not tests.
//   - Wilson (per-turn pass rate interval): "the pass rate at this turn is
//     plausibly anywhere in [lo, hi]". With 2 of 2 passing the interval is
//     [0.34, 1.00]: it says little, and that is the point of showing it.
//   - FisherLess / FisherGreater / FisherTwoSided (unpaired 2x2, exact):
//     one probe diluted against the same probe fresh, or the skill against
//     the no-skill control. For reading, never the exit code. With 2 per arm
//     nothing goes below 1/3.
//   - StudentTCDF, StudentTQuantile, NormalQuantile, RegIncBeta, SD: the
//     arithmetic under them.
package stats
