package evalstats

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vibe-test/vibe-test/internal/exit"
	"github.com/vibe-test/vibe-test/internal/stats"
)

// mkRun builds a run from one line per case, "id: cell cell ...", each
// cell a letter per measure: P pass, F fail, N n/a, E error.
func mkRun(label string, measures []string, lines ...string) Run {
	r := Run{Label: label, Measures: measures}
	for _, line := range lines {
		id, cells, _ := strings.Cut(line, ":")
		c := Case{ID: strings.TrimSpace(id)}
		for _, cell := range strings.Fields(cells) {
			var g []Grade
			for _, ch := range cell {
				g = append(g, map[rune]Grade{'P': Pass, 'F': Fail, 'N': NA, 'E': Error}[ch])
			}
			c.Cells = append(c.Cells, Cell{Grades: g})
		}
		r.Cases = append(r.Cases, c)
	}
	return r
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.10g, want %.10g (±%g)", what, got, want, tol)
	}
}

var m1 = []string{"M1"}

// The paired rule's arithmetic by hand, one measure (so each cell's total
// is its M1 grade), two base runs of 2 repeats, 4 cases:
//
//	case  base 1  base 2  pooled  candidate  drop  cells' noise
//	c1    PP 1    PF .5   .75     FP .5      .25   (.75 + .5)/4 · (1/4 + 1/2) = .234375
//	c2    PF .5   PP 1    .75     FF 0       .75   (.75 + 0)/4 · .75 = .140625
//	c3    PP 1    PP 1    1       PF .5      .5    (0 + .5)/4 · .75 = .09375
//	c4    FF 0    PF .5   .25     FF 0       .25   (.75 + 0)/4 · .75 = .140625
//
// D = 1.75/4 = 0.4375; deviations −.1875 .3125 .0625 −.1875, squares sum
// 0.171875, s² = 0.0572917: less than the cells' own noise makes drops
// vary (each side's cells about their own mean, sums of squares pooled
// over 4 + 2 − 2 degrees of freedom, over each side's count), whose mean
// 0.609375/4 = 0.15234375 counts instead, with 4·4 = 16 degrees of
// freedom: V_e = 0.15234375/4 = 0.0380859375.
// Drift: run means .625 and .75 (grand .6875): MS_run = 4·2·.0625² =
// 0.03125; interaction residuals ±.3125 ±.1875 ±.0625 ±.1875, squares
// sum 0.34375 over 1·3 df, MS_int = 0.1145833; (MS_run − MS_int)/4 < 0,
// so the floor counts: 0.03² · (1 + 1/2) = 0.00135, known (no df).
// Var(D) = 0.0394359375, SE = 0.1985848; df = 16·(0.0394359/0.0380859)² =
// 17.15438 (Welch–Satterthwaite with the floor's part known); t = 2.203089.
// The upper bound also floors the per-case variance by the grades'
// binomial noise at each side's rate pulled towards one half by z²/2
// passes and fails (z = 1.6448536, z² = 2.7055435): base (11 + 1.3527717)
// / 18.7055435 = 0.6603803, candidate 3.3527717/10.7055435 = 0.3131809;
// 0.2242782/4 + 0.2150986/2 = 0.1636189 per case, above the cells'
// 0.1523438, with their 16 degrees of freedom: V = 0.0409047 + 0.00135,
// df = 16·(0.0422547/0.0409047)² = 17.07354, upper = 0.4375 + t(0.95,
// 17.07354)·0.2055595 = 0.7950041.
func TestPairedByHand(t *testing.T) {
	b1 := mkRun("base 1", m1, "c1: P P", "c2: P F", "c3: P P", "c4: F F")
	b2 := mkRun("base 2", m1, "c1: P F", "c2: P P", "c3: P P", "c4: P F")
	c := mkRun("candidate", m1, "c1: F P", "c2: F F", "c3: P F", "c4: F F")
	l := score([]Run{b1, b2, c})
	ps := paired(l, l.runs[:2], l.runs[2:], 0, 0.05, 0, true)
	near(t, "D", ps.d, 0.4375, 1e-12)
	near(t, "per-case variance (the cells' noise)", ps.perCase, 0.609375/4, 1e-12)
	if ps.noiseDF != 16 {
		t.Errorf("noise df = %d, want 16 (4 cases of 4 + 2 cells)", ps.noiseDF)
	}
	ve := 0.609375 / 16
	near(t, "V_e", ps.ve, ve, 1e-12)
	near(t, "drift estimate", driftVar(l, l.runs[:2], 0), 0, 0)
	near(t, "V_a", ps.va, 0.0009*1.5, 1e-15)
	if ps.driftDF != 0 || ps.sigmaA != DriftFloor {
		t.Errorf("the floor should count (drift df 0, sigma %v): got df %d, sigma %v", DriftFloor, ps.driftDF, ps.sigmaA)
	}
	v := ve + 0.00135
	near(t, "SE", ps.se, math.Sqrt(v), 1e-12)
	near(t, "SE (hand)", ps.se, 0.1985848, 1e-7)
	near(t, "df", ps.df, 16*(v/ve)*(v/ve), 1e-9)
	near(t, "df (hand)", ps.df, 17.15438, 1e-5)
	near(t, "t (hand)", ps.d/ps.se, 2.203089, 1e-6)
	near(t, "p", ps.p, 1-stats.StudentTCDF(0.4375/math.Sqrt(v), ps.df), 1e-12)
	near(t, "upper's per-case variance (the grades' binomial noise)", ps.upperCase, 0.1636189, 1e-7)
	vu := ps.upperCase/4 + 0.00135
	near(t, "upper", ps.upper, 0.4375+stats.StudentTQuantile(0.95, 16*(vu/(vu-0.00135))*(vu/(vu-0.00135)))*math.Sqrt(vu), 1e-9)
	near(t, "upper (hand)", ps.upper, 0.7950041, 1e-6)
	if ps.p > 0.05 || ps.p < 0.005 {
		t.Errorf("p = %v: a drop of 0.44 over 4 cases should be significant at 0.05, not at 0.005", ps.p)
	}

	// Drops that vary more than the cells' noise: their sample variance
	// counts, with n − 1 degrees of freedom. c1 and c3 drop by 1, c2 and
	// c4 by 0, and every side's cells agree within a case (noise 0):
	// s² = 1/3.
	b := mkRun("base", m1, "c1: P P", "c2: F F", "c3: P P", "c4: F F")
	b2 = mkRun("base 2", m1, "c1: P P", "c2: F F", "c3: P P", "c4: F F")
	c = mkRun("candidate", m1, "c1: F F", "c2: F F", "c3: F F", "c4: F F")
	l = score([]Run{b, b2, c})
	ps = paired(l, l.runs[:2], l.runs[2:], 0, 0.05, 0, true)
	near(t, "s² of drops 1 0 1 0", ps.perCase, 1.0/3, 1e-12)
	if ps.noiseDF != 0 {
		t.Errorf("noise df = %d, want 0: the drops' own variance counts", ps.noiseDF)
	}
	near(t, "df of drops 1 0 1 0", ps.df, welch(1.0/12, 3, 0.00135, 0), 1e-12)
}

// Cases that drop by the same lattice step give a sample variance of 0;
// read as no noise at all, it made an unchanged skill's 2-case holdout
// reject in 0.10 to 0.13 of runs. The cells' noise counts instead, and 2
// cases never reject.
func TestEqualDropsAreNotCertainty(t *testing.T) {
	// Each case: every base cell passed, one candidate cell of 3 failed.
	b1 := mkRun("base 1", m1, "c1: P P P", "c2: P P P", "c3: P P P")
	b2 := mkRun("base 2", m1, "c1: P P P", "c2: P P P", "c3: P P P")
	c := mkRun("candidate", m1, "c1: P P F", "c2: F P P", "c3: P F P")
	two := func(r Run) Run { r.Cases = r.Cases[:2]; return r }
	if d := Decide([]Run{two(b1), two(b2)}, two(c), Options{}); d.Exit == exit.Decay {
		t.Fatalf("one fail in 3 repeats on each of 2 cases rejected: %s", d.Sentence)
	} else if !strings.Contains(d.Sentence, "2 cases cannot show a drop") {
		t.Errorf("the sentence should say why 2 cases do not reject: %s", d.Sentence)
	}
	l := score([]Run{b1, b2, c})
	ps := paired(l, l.runs[:2], l.runs[2:], 0, 0.05, 0, true)
	// The candidate's cells: 2 of 3 passed, a sum of squares of 2 − 4/3
	// over 6 + 3 − 2 degrees of freedom, times 1/6 + 1/3.
	near(t, "per-case variance", ps.perCase, (2-4.0/3)/7*0.5, 1e-12)
	if ps.noiseDF != 21 {
		t.Errorf("noise df = %d, want 21 (3 cases of 6 + 3 cells)", ps.noiseDF)
	}

	// The p-value printed for 2 cases is 1 by rule, even for a drop from
	// every cell passing to none (its test statistic alone says p = 0).
	all := mkRun("candidate", m1, "c1: F F F", "c2: F F F")
	l = score([]Run{two(b1), two(b2), all})
	ps = paired(l, l.runs[:2], l.runs[2:], 0, 0.05, 0, true)
	if ps.d != 1 || ps.p != 1 {
		t.Errorf("2 cases dropping from all to none: D = %v, p = %v; want D 1, p 1", ps.d, ps.p)
	}
}

// A measure that went from every cell passing to none can drop by 1 at
// most: its upper bound says 1, not 1 plus the noise (the demo's broken
// version printed +1.060).
func TestUpperBoundIsAPossibleDrop(t *testing.T) {
	lines := func(g string) []string {
		var out []string
		for _, id := range []string{"c1", "c2", "c3", "c4", "c5", "c6"} {
			out = append(out, id+": "+g)
		}
		return out
	}
	b1 := mkRun("base 1", m1, lines("P")...)
	b2 := mkRun("base 2", m1, lines("P")...)
	c := mkRun("candidate", m1, lines("F")...)
	d := Decide([]Run{b1, b2}, c, Options{})
	if d.Exit != exit.Decay {
		t.Fatalf("all to none not rejected: %s", d.Sentence)
	}
	for _, m := range d.Measures {
		if m.Upper > 1 {
			t.Errorf("%s: upper bound of the drop %.3f, more than any score can drop", m.Name, m.Upper)
		}
	}
	near(t, "total's drop", d.Measures[0].Drop, 1, 1e-12)
	near(t, "total's upper bound", d.Measures[0].Upper, 1, 1e-12)
}

// A drift the base runs do show, by hand: base 1 passes nearly
// everything, base 2 little.
//
//	case  base 1  base 2  r1 − r2
//	c1    PP 1    FF 0    1
//	c2    PP 1    PF .5   .5
//	c3    PF .5   FF 0    .5
//	c4    PP 1    PF .5   .5
//
// δ = .625, s²(r1 − r2) = (.375² + 3·.125²)/3 = 0.0625, so the drift
// variance is (δ² − s²/4)/2 = (0.390625 − 0.015625)/2 = 0.1875, from the
// two-way layout as (MS_run 0.78125 − MS_int 0.03125)/4.
func TestDriftByHand(t *testing.T) {
	b1 := mkRun("base 1", m1, "c1: P P", "c2: P P", "c3: P F", "c4: P P")
	b2 := mkRun("base 2", m1, "c1: F F", "c2: P F", "c3: F F", "c4: P F")
	c := mkRun("candidate", m1, "c1: P F", "c2: P F", "c3: P F", "c4: P F")
	l := score([]Run{b1, b2, c})
	near(t, "drift variance", driftVar(l, l.runs[:2], 0), 0.1875, 1e-12)
	ps := paired(l, l.runs[:2], l.runs[2:], 0, 0.05, 0, true)
	if ps.driftDF != 1 {
		t.Errorf("drift df = %d, want 1 (two base runs)", ps.driftDF)
	}
	near(t, "V_a", ps.va, 0.1875*1.5, 1e-12)
	// Base pooled .5 .75 .25 .75, candidate .5 each: drops 0 .25 −.25 .25,
	// mean .0625, deviations −.0625 .1875 −.3125 .1875, squares 0.171875.
	near(t, "D", ps.d, 0.0625, 1e-12)
	// Their sample variance, 0.171875/3, is below the cells' noise: each
	// side's cells about their own mean, c1 base PPFF (1) and PF (.5),
	// c2 PPPF (.75) and PF, c3 PFFF (.75) and PF, c4 as c2: sums of
	// squares 1.5 1.25 1.25 1.25 over 4 df each, times 1/4 + 1/2, so
	// 0.984375/4 with 16 degrees of freedom.
	ve := 0.984375 / 16
	near(t, "V_e", ps.ve, ve, 1e-12)
	va := 0.1875 * 1.5
	near(t, "df", ps.df, (ve+va)*(ve+va)/(ve*ve/16+va*va/1), 1e-9)

	// A measure counts at least the drift the total shows.
	shared := paired(l, l.runs[:2], l.runs[2:], 0, 0.05, 0.5, true)
	near(t, "shared drift", shared.va, 0.5*1.5, 1e-12)
	// One base run cannot show it: the floor, doubled (1 + 1/1).
	one := paired(score([]Run{b1, c}), score([]Run{b1, c}).runs[:1], score([]Run{b1, c}).runs[1:], 0, 0.05, 0, true)
	near(t, "one base run's drift part", one.va, 2*DriftFloor*DriftFloor, 1e-15)
}

// The total of a cell is the share of its graded measures that passed; a
// case's total the mean over its cells; n/a and errors count as neither.
func TestTotalIsTheShareOfGradedMeasures(t *testing.T) {
	ms := []string{"A", "B", "C"}
	r := mkRun("r", ms, "c1: PFN PPP", "c2: EEE FFP")
	l := score([]Run{r})
	near(t, "c1 total", l.runs[0].cells[0][3].mean(), (0.5+1)/2, 1e-12)
	near(t, "c2 total", l.runs[0].cells[1][3].mean(), 1.0/3, 1e-12)
	if m := l.runs[0].cells[1][3].m; m != 1 {
		t.Errorf("c2's all-error cell counted in its total: %d cells", m)
	}
	// The pooled total (seed 000's, and Table's): c1 P F, P P P; c2 F F P:
	// 5 passes of 8 graded.
	if r := sideRate(l.runs, 3); r.Passed != 5 || r.Graded != 8 || r.Rate != 0.625 {
		t.Errorf("pooled total %d/%d, want 5/8", r.Passed, r.Graded)
	}
}

// Holm by hand: p = .01 .04 .03 .005 sorted .005 .01 .03 .04, times 4 3 2
// 1 = .02 .03 .06 .04, each at least the one before: .02 .03 .06 .06.
func TestHolmByHand(t *testing.T) {
	got := holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		near(t, fmt.Sprintf("adjusted p[%d]", i), got[i], want[i], 1e-15)
	}
	// A measure not tested (-1) is left out of the count and adjusted to 1.
	got = holm([]float64{0.02, -1, 0.04})
	for i, w := range []float64{0.04, 1, 0.04} {
		near(t, fmt.Sprintf("with one untested, p[%d]", i), got[i], w, 1e-15)
	}
	// Capped at 1.
	if got := holm([]float64{0.6, 0.7}); got[0] != 1 || got[1] != 1 {
		t.Errorf("holm(.6, .7) = %v, want [1 1]", got)
	}
}

func TestWelch(t *testing.T) {
	near(t, "classic", welch(1, 9, 1, 9), 18, 1e-12)
	near(t, "no second part", welch(2, 7, 0, 1), 7, 0)
	near(t, "known second part", welch(1, 4, 1, 0), 16, 1e-12)
	if !math.IsInf(welch(0, 4, 1, 0), 1) {
		t.Error("both parts known: the degrees of freedom are infinite")
	}
}

// studentQuantile replaces stats.StudentTQuantile where the grid needs
// speed; it must be the same number.
func TestStudentQuantile(t *testing.T) {
	for _, df := range []float64{1.5, 3, 7.9, 8, 9.3, 12, 30, 100, 1000, 1e5, 1e7} {
		for _, p := range []float64{0.9, 0.95, 0.99, 0.995, 0.999, 0.9999} {
			want := stats.StudentTQuantile(p, df)
			if got := studentQuantile(p, df); math.Abs(got-want) > 1e-8*want {
				t.Errorf("studentQuantile(%v, %v) = %v, want %v", p, df, got, want)
			}
			if df >= 5 && p <= 0.995 {
				if got := tQuantile(p, df); math.Abs(got-want) > 0.01*want {
					t.Errorf("tQuantile(%v, %v) = %v, more than 1%% from %v", p, df, got, want)
				}
			}
		}
	}
	near(t, "normal beyond maxDF", studentQuantile(0.95, math.Inf(1)), stats.NormalQuantile(0.95), 1e-15)
	near(t, "normal CDF beyond maxDF", tCDF(1.6448536269514722, math.Inf(1)), 0.95, 1e-12)
}

// cases makes n case lines where the first `pass` of each cell pattern
// pass: a compact way to build case sets of a given rate.
func caseLines(n int, cell func(i int) string) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("c%02d: %s", i, cell(i)))
	}
	return out
}

func TestDecideVerdicts(t *testing.T) {
	ms := []string{"M1", "M2"}
	// Base: every case passes both measures in 5 of 6 cells (two runs of 3).
	good := func(i int) string { return []string{"PP PP PF", "PP FP PP", "PP PP PP"}[i%3] }
	b1 := mkRun("base 1", ms, caseLines(30, good)...)
	b2 := mkRun("base 2", ms, caseLines(30, func(i int) string { return good(i + 1) })...)

	// The same skill: accepted.
	same := mkRun("candidate", ms, caseLines(30, func(i int) string { return good(i + 2) })...)
	d := Decide([]Run{b1, b2}, same, Options{})
	if d.Verdict != Accept || d.Exit != exit.OK {
		t.Fatalf("an unchanged skill: %s (%d): %s", d.Verdict, d.Exit, d.Sentence)
	}
	if !strings.HasPrefix(d.Sentence, "Accept: ") || !strings.Contains(d.Sentence, "paired over 30 cases") || !strings.Contains(d.Sentence, "Holm over the total and 2 measures") {
		t.Errorf("accept sentence: %s", d.Sentence)
	}
	if len(d.Measures) != 3 || d.Measures[0].Name != Total || d.Measures[1].Name != "M1" || d.Measures[0].Margin != DefaultMargin {
		t.Errorf("measures: %+v", d.Measures)
	}
	if d.Drift != DriftFloor {
		t.Errorf("drift %v: two base runs that do not differ show none, so the floor %v counts", d.Drift, DriftFloor)
	}

	// M2 broken: rejected, naming M2 and its adjusted p.
	broken := mkRun("candidate", ms, caseLines(30, func(i int) string { return []string{"PF PF PF", "PF PP PF", "PF PF PF"}[i%3] })...)
	d = Decide([]Run{b1, b2}, broken, Options{})
	if d.Verdict != Reject || d.Exit != exit.Decay {
		t.Fatalf("M2 broken: %s: %s", d.Verdict, d.Sentence)
	}
	if !d.Measures[2].Reject || d.Measures[1].Reject {
		t.Errorf("expected M2 rejected and M1 not: %+v", d.Measures)
	}
	if !strings.Contains(d.Sentence, "M2 (drop 0.") || !strings.Contains(d.Sentence, "adjusted p") {
		t.Errorf("reject sentence should name M2 with its drop and adjusted p: %s", d.Sentence)
	}

	// Four cases, the candidate better on some and worse on others: the
	// base's case totals are .833 .917 .917 .833, the candidate's 1 .667
	// 1 .833, drops −.167 .25 −.083 0 (mean 0, s² .0324): not enough
	// evidence, with a size that would decide; and that size, at the same
	// spread (copies of the four), does.
	var fb1, fb2, fc, wc []string
	zero := []string{"PP PP PP", "FF PP PP", "PP PP PP", "PP PF PP"}
	worse := []string{"PP PP PP", "FF PP PP", "PP PP PP", "FF PP PP"}
	lines := func(copies int, cell func(i int) string) []string {
		var out []string
		for k := range copies {
			for i := range 4 {
				out = append(out, fmt.Sprintf("k%d-c%d: %s", k, i, cell(i)))
			}
		}
		return out
	}
	fb1, fb2 = lines(1, good), lines(1, func(i int) string { return good(i + 1) })
	fc, wc = lines(1, func(i int) string { return zero[i] }), lines(1, func(i int) string { return worse[i] })
	d = Decide([]Run{mkRun("base 1", ms, fb1...), mkRun("base 2", ms, fb2...)}, mkRun("candidate", ms, fc...), Options{})
	near(t, "4 cases: D", d.Measures[0].Drop, 0, 1e-12)
	if d.Verdict != NotEnuf || d.Exit != exit.Indeterminate || d.Need <= 4 {
		t.Fatalf("4 cases: %s, need %d: %s", d.Verdict, d.Need, d.Sentence)
	}
	if !strings.Contains(d.Sentence, fmt.Sprintf("About %d cases", d.Need)) {
		t.Errorf("not-enough sentence should say the size: %s", d.Sentence)
	}
	copies := (d.Need + 3) / 4
	big := Decide([]Run{mkRun("base 1", ms, lines(copies, good)...), mkRun("base 2", ms, lines(copies, func(i int) string { return good(i + 1) })...)},
		mkRun("candidate", ms, lines(copies, func(i int) string { return zero[i] })...), Options{})
	if big.Measures[0].Upper >= DefaultMargin {
		t.Errorf("at the %d cases Need named (%d copies of the 4), the total's upper bound is %.3f, not below the margin: %s", d.Need, copies, big.Measures[0].Upper, big.Sentence)
	}
	// A mean drop of .042: the counted drift alone (1.645 × √(1.5 × 0.03²)
	// = 0.060) keeps the bound above 0.1 − 0.042 at any size.
	d = Decide([]Run{mkRun("base 1", ms, fb1...), mkRun("base 2", ms, fb2...)}, mkRun("candidate", ms, wc...), Options{})
	near(t, "4 cases, worse: D", d.Measures[0].Drop, 1.0/24, 1e-12)
	if d.Verdict != NotEnuf || d.Need != 0 || !strings.Contains(d.Sentence, "No number of cases up to 10000 would decide") {
		t.Errorf("a drop the drift alone keeps undecidable: %s, need %d: %s", d.Verdict, d.Need, d.Sentence)
	}

	// One base run: the caveat.
	d = Decide([]Run{b1}, same, Options{})
	if !strings.Contains(d.Sentence, "With one base run the run-to-run drift cannot be seen") {
		t.Errorf("one base run without the caveat: %s", d.Sentence)
	}

	// Deterministic.
	if a, b := Decide([]Run{b1, b2}, broken, Options{}), Decide([]Run{b1, b2}, broken, Options{}); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("two decisions on the same input differ")
	}
}

// Decisions that cannot be made are tool errors (exit 3) that say why.
func TestDecideToolErrors(t *testing.T) {
	ms := []string{"M1", "M2"}
	ok := mkRun("base", ms, "a: PP PF", "b: FP PP", "c: PP PP")
	cand := mkRun("candidate", ms, "a: PP PF", "b: FP PP", "c: PP PP")
	bad := ok
	bad.Cases = append([]Case{}, ok.Cases...)
	bad.Cases[1] = Case{ID: "b", Cells: []Cell{{Grades: []Grade{Pass}}}}
	twice := mkRun("base", ms, "a: PP", "a: PP", "b: PP")
	other := mkRun("candidate", []string{"X"}, "a: P", "b: P")
	errs := mkRun("candidate", ms, "a: EE EP", "b: EE EE", "c: PE EE")
	one := mkRun("candidate", ms, "a: PP", "b: EE", "c: NN")
	for _, c := range []struct {
		name string
		base []Run
		cand Run
		opts Options
		want string
	}{
		{"no base", nil, cand, Options{}, "no baseline run"},
		{"malformed cell", []Run{bad}, cand, Options{}, `case "b" repeat 1 has 1 grades for 2 measures`},
		{"case twice", []Run{twice}, cand, Options{}, `case "a" appears twice`},
		{"no shared measure", []Run{ok}, other, Options{}, "share no measure"},
		{"mostly errors", []Run{ok}, errs, Options{}, "83.3% of the candidate's are errors (at most 50% can"},
		{"one case on both sides", []Run{ok}, one, Options{}, "only 1 case(s) have a graded total"},
		{"unknown rule", []Run{ok}, cand, Options{Rule: "vibes"}, `unknown rule "vibes"`},
		{"seed rule, one repeat", []Run{mkRun("base", ms, "a: PP", "b: FP")}, mkRun("c", ms, "a: PP", "b: FP"), Options{Rule: RuleSeed}, "at least 2 baseline repeats"},
	} {
		d := Decide(c.base, c.cand, c.opts)
		// A whole sentence, with its full stop: the holdout's quotes it
		// before the next ("... needs at least 2 Holdout: ..." before).
		if d.Verdict != ToolFail || d.Exit != exit.Tool || !strings.Contains(d.Sentence, c.want) || !strings.HasPrefix(d.Sentence, "Cannot decide: ") || !strings.HasSuffix(d.Sentence, ".") || strings.HasSuffix(d.Sentence, "..") {
			t.Errorf("%s: %s (%d) %q, want a tool error saying %q", c.name, d.Verdict, d.Exit, d.Sentence, c.want)
		}
	}
	// Errors below the limit are counted, not fatal.
	some := mkRun("candidate", ms, "a: PE PF", "b: FP PP", "c: PP PP")
	if d := Decide([]Run{ok}, some, Options{}); d.Exit == exit.Tool || d.GradeErrors != 1 {
		t.Errorf("one error grade: exit %d, grade errors %d: %s", d.Exit, d.GradeErrors, d.Sentence)
	}
}

// seedBase is seed 000's baseline shape: 2 runs × 3 repeats whose repeat
// totals are 0.794 0.638 0.742 0.690 0.716 0.716 (mean 0.716, deviations
// ±.078 ±.026 0 0, squares 2·(6084 + 676)·10⁻⁶ = 0.01352 over 5: sd
// 0.052 exactly), each repeat 100 cases × 10 measures = 1000 grades, the
// first P of them (case by case) passed.
var seedTotals = [][]int{{794, 638, 742}, {690, 716, 716}}

var tenMeasures = []string{"M1", "M2", "M3", "M4", "M5", "M6", "M7", "M8", "M9", "M10"}

func seedRun(label string, passes []int) Run {
	r := Run{Label: label, Measures: tenMeasures}
	for c := range 100 {
		cs := Case{ID: fmt.Sprintf("case-%03d", c)}
		for _, p := range passes {
			g := make([]Grade, 10)
			for j := range g {
				g[j] = Fail
				if c*10+j < p {
					g[j] = Pass
				}
			}
			cs.Cells = append(cs.Cells, Cell{Grades: g})
		}
		r.Cases = append(r.Cases, cs)
	}
	return r
}

// Seed 000's arithmetic: sd 0.052, n₁ = 3, n₂ = 6 → total margin
// 2 × 0.052 × √(1/3 + 1/6) = 0.0735391; M1's base rate is 432/600 = 0.72
// (a repeat with P passes passes M1 on ⌈P/10⌉ cases: 80 64 75 69 72 72),
// so its margin is 2·√(0.72·0.28/600) = 0.0366606.
func TestSeedRuleArithmetic(t *testing.T) {
	base := []Run{seedRun("base 1", seedTotals[0]), seedRun("base 2", seedTotals[1])}
	near(t, "sd of the repeat totals", stats.SD([]float64{0.794, 0.638, 0.742, 0.690, 0.716, 0.716}), 0.052, 1e-12)
	opts := Options{Rule: RuleSeed, SeedSims: -1}
	hold := Decide(base, seedRun("candidate", []int{650, 650, 650}), opts)
	tot := hold.Measures[0]
	near(t, "total margin", tot.Margin, 2*0.052*math.Sqrt(1.0/3+1.0/6), 1e-12)
	near(t, "total margin (seed 000: 0.074)", tot.Margin, 0.0735391, 1e-7)
	if fmt.Sprintf("%.4f", tot.Margin) != "0.0735" {
		t.Errorf("margin %.4f, seed 000's arithmetic says 0.0735", tot.Margin)
	}
	near(t, "base total", tot.Base.Rate, 0.716, 1e-12)
	// 0.650 stays above 0.716 − 0.0735 = 0.6425 on the total...
	if tot.Reject {
		t.Errorf("a total of 0.650 against 0.716 − 0.0735 was rejected")
	}
	// ...but M1 (0.65 against 0.72 − 0.0367) does not.
	mm := hold.Measures[1]
	near(t, "M1 base rate", mm.Base.Rate, 0.72, 1e-12)
	near(t, "M1 margin", mm.Margin, 2*math.Sqrt(0.72*0.28/600), 1e-12)
	near(t, "M1 margin (hand)", mm.Margin, 0.0366606, 1e-7)
	if !mm.Reject || hold.Verdict != Reject || !strings.Contains(hold.Sentence, "M1 0.650 below 0.720 − 0.037") {
		t.Errorf("M1 at 0.650 against 0.720 − 0.037: %+v, %s", mm, hold.Sentence)
	}
	// 0.640 is below 0.6425: the total rejects too.
	if d := Decide(base, seedRun("candidate", []int{640, 640, 640}), opts); !d.Measures[0].Reject {
		t.Errorf("a total of 0.640 against 0.716 − 0.0735 was not rejected: %s", d.Sentence)
	}
	// The same baseline against itself is accepted, with the margin in the
	// sentence.
	d := Decide(base, seedRun("candidate", seedTotals[0]), opts)
	if d.Verdict != Accept || !strings.Contains(d.Sentence, "2 × sd 0.052 × √(1/3 + 1/6)") {
		t.Errorf("base run 1 against the baseline: %s", d.Sentence)
	}
	// Its printed false-reject rate: simulated, deterministic, a rate.
	opts.SeedSims = 300
	a, b := Decide(base, seedRun("candidate", seedTotals[0]), opts), Decide(base, seedRun("candidate", seedTotals[0]), opts)
	if a.SeedFalseReject != b.SeedFalseReject || a.SeedFalseReject <= 0 || a.SeedFalseReject >= 1 {
		t.Errorf("printed false-reject rates %v and %v: want one rate in (0, 1)", a.SeedFalseReject, b.SeedFalseReject)
	}
	if !strings.Contains(a.Sentence, fmt.Sprintf("reject about %.0f%% of the time", 100*a.SeedFalseReject)) {
		t.Errorf("the sentence should print the rate: %s", a.Sentence)
	}
}

// A constructed baseline: 20 cases, 3 measures, two base runs that agree,
// a control that fails most of what they pass.
func TestCheckInstrument(t *testing.T) {
	ms := []string{"M1", "M2", "M3"}
	pat := []string{"PPP PPF PPP", "PFP PPP PPP", "PPP PPP FPP", "FPP PPP PPF"}
	b1 := mkRun("base 1", ms, caseLines(20, func(i int) string { return pat[i%4] })...)
	b2 := mkRun("base 2", ms, caseLines(20, func(i int) string { return pat[(i+1)%4] })...)
	ctl := mkRun("control", ms, caseLines(20, func(i int) string { return []string{"FFP FFF PFF", "FFF FPF FFF"}[i%2] })...)
	in := CheckInstrument([]Run{b1, b2}, &ctl, Options{})
	if !in.SecondAccepted || in.Second.Verdict != Accept {
		t.Errorf("base run 2 against base run 1: %s", in.Second.Sentence)
	}
	if !strings.Contains(in.Second.Sentence, "With one base run") {
		t.Errorf("run 2 against run 1 is a one-base-run decision and should say so: %s", in.Second.Sentence)
	}
	if !in.ControlRejected || in.Control.Verdict != Reject {
		t.Errorf("the control: %s", in.Control.Sentence)
	}
	// Halves of 3 cells per case against each other are one-base-run
	// decisions: the drift floor counts twice over, and at 20 cases the
	// bound often stays above the margin. Most are accepted.
	if in.Resplits != Resplits || in.ResplitAccept < 0.5 || in.ResplitAccept == 1 {
		t.Errorf("re-splits: %d accepted %.3f, expected %d re-splits, most but not all accepted", in.Resplits, in.ResplitAccept, Resplits)
	}
	if !strings.HasPrefix(in.Sentence, "The instrument works: base 2 was accepted against base 1, the control was rejected and re-splits") {
		t.Errorf("sentence: %s", in.Sentence)
	}
	if again := CheckInstrument([]Run{b1, b2}, &ctl, Options{}); again.ResplitAccept != in.ResplitAccept {
		t.Error("re-splits are not deterministic")
	}

	// A control that does as well as the skill: the measures do not see
	// what the skill does, and the check says so.
	same := mkRun("control", ms, caseLines(20, func(i int) string { return pat[(i+2)%4] })...)
	in = CheckInstrument([]Run{b1, b2}, &same, Options{})
	if in.ControlRejected || !strings.HasPrefix(in.Sentence, "Check the instrument: the control was not rejected") {
		t.Errorf("a control as good as the skill: %s", in.Sentence)
	}
	// One base run: no second run to check; one cell per case: nothing to
	// re-split.
	single := mkRun("base 1", ms, caseLines(20, func(i int) string { return strings.Fields(pat[i%4])[0] })...)
	in = CheckInstrument([]Run{single}, nil, Options{})
	if in.SecondAccepted || in.Resplits != 0 || !strings.Contains(in.Sentence, "one base run") {
		t.Errorf("one base run of one repeat: %+v", in)
	}
}

// Two base runs of one repeat on 6 cases have 2^6 = 64 re-splits: every
// one is decided, once, and the sentence says all, not 200 random draws
// that would repeat some and miss others.
func TestResplitsAllWhenFew(t *testing.T) {
	ms := []string{"M1", "M2"}
	pat := []string{"PP", "PF", "PP", "FP", "PP", "PP"}
	b1 := mkRun("base 1", ms, caseLines(6, func(i int) string { return pat[i] })...)
	b2 := mkRun("base 2", ms, caseLines(6, func(i int) string { return pat[(i+1)%6] })...)
	in := CheckInstrument([]Run{b1, b2}, nil, Options{})
	if in.Resplits != 64 {
		t.Fatalf("%d re-splits decided, want all 64", in.Resplits)
	}
	if !strings.Contains(in.Sentence, "(all 64 re-splits)") {
		t.Errorf("sentence: %s", in.Sentence)
	}
	// The share is a count over the 64: a whole number of 64ths.
	if k := in.ResplitAccept * 64; math.Abs(k-math.Round(k)) > 1e-9 {
		t.Errorf("accepted share %.6f is not a count of 64", in.ResplitAccept)
	}
	for _, c := range []struct{ n, h, want int }{{2, 1, 2}, {3, 1, 3}, {4, 2, 6}, {5, 2, 10}, {6, 3, 20}} {
		got := choices(c.n, c.h)
		seen := map[string]bool{}
		for _, p := range got {
			seen[fmt.Sprint(p)] = true
		}
		if len(got) != c.want || len(seen) != c.want || binomialUpTo(c.n, c.h, 1000) != c.want {
			t.Errorf("choices(%d, %d): %d (%d distinct), binomial %d, want %d", c.n, c.h, len(got), len(seen), binomialUpTo(c.n, c.h, 1000), c.want)
		}
	}
	if got := binomialUpTo(40, 20, Resplits); got != Resplits {
		t.Errorf("40 choose 20 up to %d: %d", Resplits, got)
	}
}

func TestJoinHoldout(t *testing.T) {
	dec := func(v string) Decision {
		return Decision{Verdict: v, Exit: map[string]int{Accept: 0, Reject: 1, NotEnuf: 2, ToolFail: 3}[v], Sentence: v + "."}
	}
	verdicts := []string{Accept, Reject, NotEnuf, ToolFail}
	// The worst wins, in the project's order: error, reject, not enough,
	// accept.
	want := map[[2]string]string{}
	rank := map[string]int{Accept: 0, NotEnuf: 1, Reject: 2, ToolFail: 3}
	for _, a := range verdicts {
		for _, b := range verdicts {
			w := a
			if rank[b] > rank[a] {
				w = b
			}
			want[[2]string{a, b}] = w
		}
	}
	// The four the design names, spelled out.
	for k, v := range map[[2]string]string{
		{Accept, Accept}: Accept, {Accept, Reject}: Reject, {Reject, Accept}: Reject, {Reject, Reject}: Reject,
	} {
		if want[k] != v {
			t.Fatalf("table: %v -> %s, want %s", k, want[k], v)
		}
	}
	for k, w := range want {
		h := JoinHoldout(dec(k[0]), dec(k[1]), 0.156, 0.071)
		exitOf := map[string]int{Accept: 0, Reject: 1, NotEnuf: 2, ToolFail: 3}[w]
		if h.Verdict != w || h.Exit != exitOf {
			t.Errorf("main %s, holdout %s: %s (%d), want %s (%d)", k[0], k[1], h.Verdict, h.Exit, w, exitOf)
		}
		near(t, "gap", h.Gap, 0.156-0.071, 1e-12)
		if !strings.Contains(h.Sentence, "overfit gap +0.085") {
			t.Errorf("main %s, holdout %s: the sentence should show the gap: %s", k[0], k[1], h.Sentence)
		}
		if k[0] != k[1] && !strings.Contains(h.Sentence, "the main cases say "+k[0]+", the holdout cases "+k[1]) {
			t.Errorf("main %s, holdout %s: the sentence should say which set decided what: %s", k[0], k[1], h.Sentence)
		}
	}
	// No holdout: the main decision alone, said so.
	h := JoinHoldout(dec(Accept), Decision{}, 0.1, 0)
	if h.Verdict != Accept || h.Gap != 0 || !strings.Contains(h.Sentence, "no holdout cases") {
		t.Errorf("no holdout: %+v", h)
	}
}

func TestTableAndGain(t *testing.T) {
	ctl := mkRun("control", []string{"M1", "M2"}, "a: PF FF", "b: FN FE")
	base := mkRun("base 1", []string{"M1", "M2", "M3"}, "a: PPP PPF", "b: PNP PPE")
	rows := Table(ctl, base)
	if len(rows) != 4 || rows[0].Measure != Total || rows[3].Measure != "M3" {
		t.Fatalf("rows: %+v", rows)
	}
	// Control total: 1 pass of 6 graded (n/a and the error left out).
	if r := rows[0].Rates[0]; r.Passed != 1 || r.Graded != 6 {
		t.Errorf("control total %d/%d, want 1/6", r.Passed, r.Graded)
	}
	// Base M2: a P, P (cell 2), b N, P: 3 of 3.
	if r := rows[2].Rates[1]; r.Passed != 3 || r.Graded != 3 || r.Rate != 1 {
		t.Errorf("base M2 %+v, want 3/3", r)
	}
	lo, hi := stats.Wilson(3, 3, stats.Z95)
	if r := rows[2].Rates[1]; r.Lo != lo || r.Hi != hi {
		t.Errorf("base M2 interval [%v, %v], want Wilson's [%v, %v]", r.Lo, r.Hi, lo, hi)
	}
	// The control has no M3: an empty rate.
	if r := rows[3].Rates[0]; r.Graded != 0 || r.Lo != 0 || r.Hi != 1 {
		t.Errorf("control M3 %+v, want 0/0 in [0, 1]", r)
	}
	// Gain over the measures both grade (M1, M2): the base passed 7 of 7
	// graded (a: PP PP, b: PN PP), the control 1 of 6: 1/6 − 1.
	near(t, "gain", Gain([]Run{base}, ctl), 1.0/6-1, 1e-12)
	near(t, "no base", Gain(nil, ctl), 0, 0)
}

func TestRegressions(t *testing.T) {
	ms := []string{"M1", "M2"}
	b1 := mkRun("base 1", ms,
		"reg: PP PP PF",   // M1 3/3 passed, M2 2/3
		"half: PP FF PF",  // M1 2/3, M2 1/3
		"err: PP PP PP",   // candidate errs on M1
		"na: PP PP PP",    // candidate says n/a on M1
		"mixed: PE PN FP", // base M1 P P F (2/3 graded), M2: E, N, P (1/1)
		"never: NN NN NN", // the measures never applied
	)
	b2 := mkRun("base 2", ms, "reg: PF PP PP")
	cand := mkRun("candidate", ms,
		"reg: FF FF FF",
		"half: FF FF FF",
		"err: EF FF FF",
		"na: NF FF FF",
		"mixed: FF FF FF",
		"never: FF FF FF",
	)
	got := fmt.Sprint(Regressions([]Run{b1, b2}, cand))
	// reg: M1 passed 6 of 6 base repeats, M2 5 of 6. half: M1 2/3 (passes
	// exactly at 2/3), M2 1/3 (no). err: M2 3/3 base, all failed: yes; M1
	// has an error: no. na: likewise, M2 only. mixed: M1 2 of 3 graded,
	// M2 1 of 1 graded. never: no base grade.
	want := "[{reg M1} {reg M2} {half M1} {err M2} {na M2} {mixed M1} {mixed M2}]"
	if got != want {
		t.Errorf("regressions\n got %s\nwant %s", got, want)
	}
	if r := Regressions(nil, cand); r != nil {
		t.Errorf("no base: %v", r)
	}
}

// Cases pair by id, whatever order each run lists them in; a case only
// one side has is left out.
func TestCasesPairByID(t *testing.T) {
	b1 := mkRun("base 1", m1, "c1: P P", "c2: P F", "c3: P P", "c4: F F")
	b2 := mkRun("base 2", m1, "c1: P F", "c2: P P", "c3: P P", "c4: P F")
	c := mkRun("candidate", m1, "c1: F P", "c2: F F", "c3: P F", "c4: F F")
	shuffled := mkRun("candidate", m1, "c3: P F", "extra: P P", "c1: F P", "c4: F F", "c2: F F")
	b2r := mkRun("base 2", m1, "c4: P F", "c3: P P", "c2: P P", "c1: P F")
	a := Decide([]Run{b1, b2}, c, Options{})
	b := Decide([]Run{b1, b2r}, shuffled, Options{})
	if a.Measures[0].Cases != 4 || b.Measures[0].Cases != 4 {
		t.Fatalf("paired cases %d and %d, want 4", a.Measures[0].Cases, b.Measures[0].Cases)
	}
	near(t, "D, shuffled", b.Measures[0].Drop, a.Measures[0].Drop, 1e-12)
	near(t, "p, shuffled", b.Measures[0].P, a.Measures[0].P, 1e-12)
	near(t, "D", a.Measures[0].Drop, 0.4375, 1e-12)
}

// With a holdout, the candidate is rejected when either part rejects, so
// each part rejects at half of alpha: a drop the main cases show at 0.05
// but not at 0.025 no longer rejects.
func TestDecideWithHoldoutSplitsAlpha(t *testing.T) {
	ms := []string{"M1", "M2", "M3"}
	pat := []string{"PPP PPF PPP", "PFP PPP PPP", "PPP PPP FPP", "FPP PPP PPF"}
	b1 := mkRun("base 1", ms, caseLines(20, func(i int) string { return pat[i%4] })...)
	b2 := mkRun("base 2", ms, caseLines(20, func(i int) string { return pat[(i+1)%4] })...)
	hold := mkRun("base 1", ms, caseLines(6, func(i int) string { return pat[i%4] })...)
	hold2 := mkRun("base 2", ms, caseLines(6, func(i int) string { return pat[(i+1)%4] })...)
	holdCand := mkRun("candidate", ms, caseLines(6, func(i int) string { return pat[(i+2)%4] })...)
	// Find a candidate the main part rejects at 0.05 and not at 0.025:
	// the worse lines added one case at a time.
	worse := []string{"PPF PFP FPP", "FPF PPP PPF", "PPP FPF PFP", "FPP PFP PPF"}
	var cand Run
	found := false
	for k := 1; k <= 20 && !found; k++ {
		cand = mkRun("candidate", ms, caseLines(20, func(i int) string {
			if i < k {
				return worse[i%4]
			}
			return pat[(i+2)%4]
		})...)
		at5 := Decide([]Run{b1, b2}, cand, Options{Alpha: 0.05})
		at25 := Decide([]Run{b1, b2}, cand, Options{RejectAlpha: 0.025})
		found = at5.Verdict == Reject && at25.Verdict != Reject
	}
	if !found {
		t.Fatal("no candidate between the two levels: the test needs another pattern")
	}
	h := DecideWithHoldout([]Run{b1, b2}, cand, []Run{hold, hold2}, holdCand, Options{Alpha: 0.05})
	if h.Main.Verdict == Reject || h.Verdict == Reject {
		t.Errorf("a drop significant at 0.05 but not at 0.025 rejected with a holdout: %s", h.Sentence)
	}
	if !strings.Contains(h.Main.Sentence, "at alpha 0.025") || !strings.Contains(h.Sentence, "rejects at alpha 0.025, half of 0.05") {
		t.Errorf("the sentences should name the halved level: %s", h.Sentence)
	}
	want := Decide([]Run{b1, b2}, cand, Options{RejectAlpha: 0.025})
	if h.Main.Verdict != want.Verdict || h.Main.Measures[0].Upper != want.Measures[0].Upper {
		t.Error("the main part is not Decide rejecting at half of alpha, its bound at 95%")
	}
	if at5 := Decide([]Run{b1, b2}, cand, Options{}); h.Main.Measures[0].Upper != at5.Measures[0].Upper {
		t.Error("the upper bound moved with the reject level")
	}
	near(t, "main gain", h.MainGain, Gain([]Run{b1, b2}, cand), 1e-12)
	near(t, "gap", h.Gap, h.MainGain-h.HoldoutGain, 1e-12)
}

// A grid's exit is the worst of its points', each rejecting at alpha
// split over the points; one point is Decide itself.
func TestDecideGrid(t *testing.T) {
	ms := []string{"M1", "M2", "M3"}
	pat := []string{"PPP PPF PPP", "PFP PPP PPP", "PPP PPP FPP", "FPP PPP PPF"}
	b1 := mkRun("base 1", ms, caseLines(20, func(i int) string { return pat[i%4] })...)
	b2 := mkRun("base 2", ms, caseLines(20, func(i int) string { return pat[(i+1)%4] })...)
	same := mkRun("candidate", ms, caseLines(20, func(i int) string { return pat[(i+2)%4] })...)
	broken := mkRun("candidate", ms, caseLines(20, func(i int) string { return "FFF FFP FPF" })...)
	base := []Run{b1, b2}
	one := DecideGrid(base, nil, []Point{{Main: same}}, false, Options{})
	if d := Decide(base, same, Options{}); one.Exit != d.Exit || one.Points[0].Sentence != d.Sentence {
		t.Errorf("one point: %d %q, Decide: %d %q", one.Exit, one.Points[0].Sentence, d.Exit, d.Sentence)
	}
	g := DecideGrid(base, nil, []Point{{Main: same}, {Main: broken}}, false, Options{})
	if g.Exit != exit.Decay || g.Verdict != Reject || g.Points[1].Verdict != Reject {
		t.Errorf("a broken point should reject the grid: exit %d, %s", g.Exit, g.Points[1].Sentence)
	}
	seed := DecideGrid(base, nil, []Point{{Main: same}, {Main: broken}}, false, Options{Rule: RuleSeed, SeedSims: -1})
	if s := seed.Points[0].Sentence; strings.Contains(s, "split over") || !strings.Contains(s, "no level to split") {
		t.Errorf("the seed's margins split no alpha over a grid: %s", s)
	}
	for i, c := range []Run{same, broken} {
		want := Decide(base, c, Options{RejectAlpha: 0.025})
		if g.Points[i].Main.Verdict != want.Verdict || !strings.Contains(g.Points[i].Sentence, "split over the 2 grid points") {
			t.Errorf("point %d: %s, want Decide rejecting at 0.025: %s", i, g.Points[i].Sentence, want.Sentence)
		}
	}
}

// Under the seed's margins a holdout's sentence bounds the rate over both
// parts by the sum of the two it printed, and claims no alpha split.
func TestSeedRuleWithHoldoutSaysTheUnion(t *testing.T) {
	ms := []string{"M1", "M2", "M3"}
	pat := []string{"PPP PPF PPP", "PFP PPP PPP", "PPP PPP FPP", "FPP PPP PPF"}
	run := func(label string, n, shift int) Run {
		return mkRun(label, ms, caseLines(n, func(i int) string { return pat[(i+shift)%4] })...)
	}
	h := DecideWithHoldout([]Run{run("base 1", 12, 0), run("base 2", 12, 1)}, run("candidate", 12, 2),
		[]Run{run("base 1", 6, 0), run("base 2", 6, 1)}, run("candidate", 6, 2), Options{Rule: RuleSeed, SeedSims: 300})
	a, b := h.Main.SeedFalseReject, h.Holdout.SeedFalseReject
	want := fmt.Sprintf("up to %.0f%% of the time over both", 100*min(1, a+b))
	if a <= 0 || b <= 0 || !strings.Contains(h.Sentence, want) || strings.Contains(h.Sentence, "half of") {
		t.Errorf("rates %.3f and %.3f; sentence: %s", a, b, h.Sentence)
	}
}

// A measure whose grades are mostly errors on one side cannot be decided
// on: the errors drop it from that side's totals, and a grader that errs
// where messages fail hides the drop. A candidate whose every M1 grade
// was an error was accepted (exit 0).
func TestMeasureOfErrorsIsNoVerdict(t *testing.T) {
	ms := []string{"M1", "M2", "M3"}
	var pass, errM1 []string
	for c := range 16 {
		pass = append(pass, fmt.Sprintf("c%02d: PPP PPP PPP", c))
		errM1 = append(errM1, fmt.Sprintf("c%02d: EPP EPP EPP", c))
	}
	b1, b2 := mkRun("base 1", ms, pass...), mkRun("base 2", ms, pass...)
	d := Decide([]Run{b1, b2}, mkRun("candidate", ms, errM1...), Options{})
	if d.Exit != exit.Tool || !strings.Contains(d.Sentence, "on M1") {
		t.Fatalf("every candidate M1 grade an error: %s (exit %d), want exit 3 naming M1", d.Sentence, d.Exit)
	}
	// The base side's too.
	d = Decide([]Run{mkRun("base 1", ms, errM1...), mkRun("base 2", ms, errM1...)}, mkRun("candidate", ms, pass...), Options{})
	if d.Exit != exit.Tool {
		t.Errorf("every base M1 grade an error: %s (exit %d), want exit 3", d.Sentence, d.Exit)
	}
	// A few errors on a measure still decide.
	few := append([]string{}, pass...)
	few[0] = "c00: EPP PPP PPP"
	if d := Decide([]Run{b1, b2}, mkRun("candidate", ms, few...), Options{}); d.Exit != exit.OK {
		t.Errorf("one M1 error in 48: %s (exit %d), want accept", d.Sentence, d.Exit)
	}
}

// An accepted bound is printed as below the margin: 0.099602 is not
// "0.100" beside a margin of 0.1.
func TestAcceptedBoundPrintedBelowTheMargin(t *testing.T) {
	for _, tc := range []struct {
		bound, margin float64
		want          string
	}{{0.099602, 0.1, "0.0996"}, {0.0834, 0.1, "0.083"}, {0.0999996, 0.1, "0.0999996"}, {0, 0.1, "0.000"}} {
		if got := below(tc.bound, tc.margin); got != tc.want {
			t.Errorf("below(%v, %v) = %q, want %q", tc.bound, tc.margin, got, tc.want)
		}
	}
}

// Grade errors need not fall at random: a grader that cannot quote a
// failing message errs exactly where the candidate got worse. With half
// of a measure's grades errors, exactly on the cases it got wrong, a
// candidate was accepted (exit 0). A decision stands only while the side
// the errors could favour does not err significantly more often.
func TestGradeErrorsThatCouldHideADrop(t *testing.T) {
	ms := []string{"M1", "M2", "M3"}
	var pass, halfHidden, oneError, brokenWithErrors []string
	for c := range 6 {
		pass = append(pass, fmt.Sprintf("c%02d: PPP PPP PPP", c))
		if c%2 == 0 {
			halfHidden = append(halfHidden, fmt.Sprintf("c%02d: PPP PPP PPP", c))
			brokenWithErrors = append(brokenWithErrors, fmt.Sprintf("c%02d: FFP FFP EFP", c))
		} else {
			halfHidden = append(halfHidden, fmt.Sprintf("c%02d: EPP EPP EPP", c))
			brokenWithErrors = append(brokenWithErrors, fmt.Sprintf("c%02d: FFP FFP FFP", c))
		}
	}
	b1, b2 := mkRun("base 1", ms, pass...), mkRun("base 2", ms, pass...)
	d := Decide([]Run{b1, b2}, mkRun("candidate", ms, halfHidden...), Options{})
	if d.Verdict != ToolFail || d.Exit != exit.Tool || !strings.Contains(d.Sentence, "Cannot decide: the candidate's grades on M1 are errors 9 of 18 times against the baseline's 0 of 36 (Fisher's exact p ") ||
		!strings.Contains(d.Sentence, "with them left out the decision (accept) rests on how they fell (counted as fails for the candidate and passes for the baseline, the 9 cells with grade errors would make it not-enough-evidence).") {
		t.Errorf("M1's errors on exactly the cases it got wrong: %s (exit %d): %s", d.Verdict, d.Exit, d.Sentence)
	}
	// A collapse whose errors are the candidate's stands: they can only
	// hide more of its fails.
	if d := Decide([]Run{b1, b2}, mkRun("candidate", ms, brokenWithErrors...), Options{}); d.Verdict != Reject {
		t.Errorf("a collapse with 3 grade errors: %s (exit %d): %s", d.Verdict, d.Exit, d.Sentence)
	}
	// An accept with one error, the sides' error rates alike.
	for c := range 24 {
		oneError = append(oneError, fmt.Sprintf("c%02d: PPP PPP PPP", c))
	}
	long := mkRun("base", ms, oneError...)
	oneError[0] = "c00: EPP PPP PPP"
	if d := Decide([]Run{long, long}, mkRun("candidate", ms, oneError...), Options{}); d.Verdict != Accept || d.GradeErrors != 1 {
		t.Errorf("one M1 error in 72 cells: %s (exit %d, %d errors): %s", d.Verdict, d.Exit, d.GradeErrors, d.Sentence)
	}
	// Errors that could change an accept but fall on both sides alike are
	// read as chance: the accept stands, and says what they could do.
	var even []string
	for c := range 8 {
		even = append(even, fmt.Sprintf("c%02d: PPP PPP PPP", c))
	}
	even[1], even[2], even[3] = "c01: EEP PPP PPP", "c02: PEE PPP PPP", "c03: EPE PPP PPP"
	evenRun := mkRun("x", ms, even...)
	d = Decide([]Run{evenRun, evenRun}, evenRun, Options{})
	if d.Verdict != Accept || !strings.Contains(d.Sentence, "The 9 cells with grade errors are left out; the candidate does not err significantly more often than the baseline on any measure (Fisher's exact test, one-sided), so they are read as chance.") {
		t.Errorf("errors alike on both sides: %s (exit %d): %s", d.Verdict, d.Exit, d.Sentence)
	}
	// One error: "is". A reject says which side it tested: the baseline's
	// errors are the ones that could make a drop that is none.
	var one, candErrs []string
	for c := range 6 {
		one = append(one, fmt.Sprintf("c%02d: FPP FPP FPP", c))
		candErrs = append(candErrs, fmt.Sprintf("c%02d: EPP FPP FPP", c))
	}
	one[0] = "c00: EPP FPP FPP"
	d = Decide([]Run{b1, b2}, mkRun("candidate", ms, one...), Options{})
	if d.Verdict != Reject || !strings.Contains(d.Sentence, "The 1 cell with a grade error is left out; the baseline does not err significantly more often than the candidate on any measure") {
		t.Errorf("a reject with one candidate error: %s: %s", d.Verdict, d.Sentence)
	}
	// The candidate's errors alone do not block a reject: they can only
	// hide its fails.
	if d := Decide([]Run{b1, b2}, mkRun("candidate", ms, candErrs...), Options{}); d.Verdict != Reject {
		t.Errorf("a reject whose errors are all the candidate's: %s: %s", d.Verdict, d.Sentence)
	}
}
