package stats

// EffectiveFraction is the share of a probe's fresh pass rate it must keep,
// diluted, to count as still effective (after NoLiMa's "effective length",
// which uses 85%). result.ComputeStats names the effective turn with it.
const EffectiveFraction = 0.85
