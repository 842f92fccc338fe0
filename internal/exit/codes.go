package exit

// Meaning is one exit code as the user reads it: `vibe-test help
// exit-codes` prints Codes, and the README's table says the same.
type Meaning struct {
	Code    int
	Name    string // the constant's name, lower case
	Meaning string // one line
}

// Codes are every exit code vibe-test uses, in order.
var Codes = []Meaning{
	{OK, "ok", "no decay shown: held (the run could have caught --effect) or not enough evidence (it could not; the sentence says how many conversations would, if any number is sure to); compare and eval --against: the candidate is accepted; eval --baseline: the instrument works"},
	{Decay, "decay", "the probes passed significantly less often diluted than fresh (p <= --alpha), or with --rule any-probe-failed a probe failed after a passed baseline; compare and eval --against: the candidate is rejected"},
	{Indeterminate, "indeterminate", "the skill does not work fresh: fewer than half the baselines passed (the gate stopped them, or was bypassed); compare: cannot decide; eval: not enough evidence, or the instrument is doubtful"},
	{Tool, "tool", "vibe-test could not do its job: bad input (a run folder too old to read among it), claude missing, too old or failing, refused credentials, judge or turn errors (or judge repeats that disagreed) that leave the verdict open, budget exhausted, a run record that cannot be written; eval: case set hygiene, a baseline that does not match or was not stored, failed cells"},
	{Interrupted, "interrupted", "SIGINT or SIGTERM: the run folder is kept, and `vibe-test resume RUN_DIR` continues it"},
}

// SuiteRule is how a suite's code follows from its skills' (the order
// record.WorstExit applies).
const SuiteRule = "A suite (and a merge) exits with the worst of its skills' codes: 130 if any skill was interrupted, else 3 if any had a tool error, else 1 if any decayed, else 2 if any does not work fresh, else 0. A shard exits 0, 3 or 130 only: its verdicts are partial."
