package evalstats

import "fmt"

// Point is one candidate decided against the baseline: its run on the
// main cases and, when the case set has holdout cases, on those.
type Point struct {
	Main, Holdout Run
}

// Grid is the decision of every candidate against one baseline.
type Grid struct {
	// Points are the candidates' decisions, in order. Without holdout
	// cases a point's Holdout decision has no Verdict, and its verdict,
	// exit and sentence are the main decision's.
	Points []Holdout
	// Exit is the worst of the points' exit codes (error, then reject,
	// then not enough evidence, then accept) and Verdict its word.
	Exit    int
	Verdict string
}

// DecideGrid decides candidates against one baseline: one for `vibe-test
// eval --against`, one per generator setting with --grid. It is the
// function that sets the exit code, the worst of the points', so an
// unchanged skill is rejected when any point rejects: with k points each
// point's rejections are held at alpha/k (Bonferroni), and with holdout
// cases each part's at half of that (DecideWithHoldout); four points at
// alpha each would reject an unchanged generator up to four times as
// often. Each point's accept still needs its own 1 − alpha upper bound
// below the margin. Package calibrate measures it.
func DecideGrid(base, holdBase []Run, points []Point, holdout bool, opts Options) Grid {
	opts = opts.withDefaults()
	each := opts
	if len(points) > 1 {
		each.RejectAlpha = opts.RejectAlpha / float64(len(points))
	}
	g := Grid{Points: make([]Holdout, len(points))}
	for i, p := range points {
		var h Holdout
		if holdout {
			h = DecideWithHoldout(base, p.Main, holdBase, p.Holdout, each)
		} else {
			d := Decide(base, p.Main, each)
			h = Holdout{Main: d, Verdict: d.Verdict, Exit: d.Exit, Sentence: d.Sentence}
			if !opts.ExitOnly {
				h.MainGain = Gain(base, p.Main)
			}
		}
		if len(points) > 1 && !opts.ExitOnly {
			if opts.Rule == RuleSeed {
				h.Sentence += fmt.Sprintf(" (Any of the %d grid points rejecting rejects the grid; the seed's margins have no level to split.)", len(points))
			} else {
				h.Sentence += fmt.Sprintf(" (Rejects at alpha %.3g split over the %d grid points.)", opts.RejectAlpha, len(points))
			}
		}
		g.Points[i] = h
		if i == 0 || verdictRank[h.Verdict] > verdictRank[g.Verdict] {
			g.Verdict, g.Exit = h.Verdict, h.Exit
		}
	}
	return g
}
