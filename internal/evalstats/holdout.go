package evalstats

import (
	"fmt"

	"github.com/vibe-test/vibe-test/internal/exit"
)

// DecideWithHoldout decides a candidate on a case set with holdout cases.
// The candidate is rejected when either part rejects, so each part's
// rejections are held at half of opts.RejectAlpha (Bonferroni): at alpha
// each, two parts rejected an unchanged skill in up to 0.072 of runs (40
// and 40 cases, a drift of 5 points, alpha 0.05), and halves hold the
// union at alpha whatever the two parts share. Accepting needs both
// parts' upper bounds below the margin, each at 1 − Alpha. DecideGrid,
// which sets the exit code, calls it; package calibrate measures it.
func DecideWithHoldout(base []Run, cand Run, holdBase []Run, holdCand Run, opts Options) Holdout {
	opts = opts.withDefaults()
	part := opts
	part.RejectAlpha = opts.RejectAlpha / 2
	main, hold := Decide(base, cand, part), Decide(holdBase, holdCand, part)
	if opts.ExitOnly {
		return JoinHoldout(main, hold, 0, 0)
	}
	mainGain, holdGain := Gain(base, cand), Gain(holdBase, holdCand)
	h := JoinHoldout(main, hold, mainGain, holdGain)
	if opts.Rule == RuleSeed {
		// The seed's margins have no level to split: each part prints its
		// own simulated rate, and either part's reject rejects.
		if a, b := main.SeedFalseReject, hold.SeedFalseReject; a > 0 && b > 0 {
			h.Sentence += fmt.Sprintf(" Rejecting when either part does, they reject an unchanged skill up to %.0f%% of the time over both (the two parts' rates added).", 100*min(1, a+b))
		}
		return h
	}
	h.Sentence += fmt.Sprintf(" Each part rejects at alpha %.3g, half of %.3g: either part's reject rejects the candidate.", part.RejectAlpha, opts.RejectAlpha)
	return h
}

// verdictRank orders verdicts as the project's exit codes are combined
// everywhere (a suite, a merge): error, reject, not enough, accept.
var verdictRank = map[string]int{ToolFail: 3, Reject: 2, NotEnuf: 1, Accept: 0}

// JoinHoldout joins the main set's decision with the holdout set's. The
// candidate is accepted only when both accept; the worst verdict wins, in
// the order the project's exit codes are combined everywhere (a suite, a
// merge): error (3), then reject (1), then not enough evidence (2), then
// accept (0); the sentence names which set decided what. A holdout
// Decision with no Verdict means the case set has no holdout: the main
// decision stands alone, and the sentence says so. Gap is the overfit
// gap, mainGain − holdoutGain (Gain of each set).
func JoinHoldout(main, holdout Decision, mainGain, holdoutGain float64) Holdout {
	h := Holdout{Main: main, Holdout: holdout}
	if holdout.Verdict == "" {
		h.Verdict, h.Exit = main.Verdict, main.Exit
		h.Sentence = fmt.Sprintf("Main cases: %s (no holdout cases: nothing shows whether the gain holds on cases the editor never saw.)", main.Sentence)
		return h
	}
	h.MainGain, h.HoldoutGain, h.Gap = mainGain, holdoutGain, mainGain-holdoutGain
	worst := main
	if verdictRank[holdout.Verdict] > verdictRank[main.Verdict] {
		worst = holdout
	}
	h.Verdict = worst.Verdict
	h.Exit = map[string]int{ToolFail: exit.Tool, Reject: exit.Decay, NotEnuf: exit.Indeterminate, Accept: exit.OK}[h.Verdict]
	gap := fmt.Sprintf("gain %+.3f on the main cases, %+.3f on the holdout, overfit gap %+.3f", mainGain, holdoutGain, h.Gap)
	switch {
	case main.Verdict == Accept && holdout.Verdict == Accept:
		h.Sentence = "Accept: the main and the holdout cases both accept (" + gap + ")."
	case main.Verdict == holdout.Verdict:
		h.Sentence = fmt.Sprintf("%s on both the main and the holdout cases (%s). Main: %s Holdout: %s", verdictWord(h.Verdict), gap, main.Sentence, holdout.Sentence)
	default:
		h.Sentence = fmt.Sprintf("%s: the main cases say %s, the holdout cases %s (%s). Main: %s Holdout: %s",
			verdictWord(h.Verdict), main.Verdict, holdout.Verdict, gap, main.Sentence, holdout.Sentence)
	}
	return h
}

func verdictWord(v string) string {
	switch v {
	case Accept:
		return "Accept"
	case Reject:
		return "Reject"
	case NotEnuf:
		return "Not enough evidence"
	}
	return "Cannot decide"
}
