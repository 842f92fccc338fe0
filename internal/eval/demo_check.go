package eval

import (
	"fmt"

	"github.com/vibe-test/vibe-test/internal/evalstats"
)

// CheckDemo says whether the eval demo did what its versions script: the
// baseline's instrument works (base run 2 accepted, the control rejected,
// and the control's total below the baseline's), the shorter version is
// accepted in fewer words, and the broken one is rejected on M1, the
// decision it gets wrong.
func CheckDemo(baseline, shorter, broken *Result) error {
	in := baseline.Instrument
	switch {
	case in == nil:
		return fmt.Errorf("the baseline eval made no instrument check")
	case !in.SecondAccepted:
		return fmt.Errorf("base run 2 should be accepted against base run 1: %s", in.Second.Sentence)
	case !in.ControlRejected:
		return fmt.Errorf("the control should be rejected: %s", in.Control.Sentence)
	}
	ctl, bases := baseline.Control(), baseline.Bases()
	if ctl == nil || len(bases) != 2 {
		return fmt.Errorf("the baseline eval should hold the control and two base runs")
	}
	ct := evalstats.Table(ctl.MainRun, bases[0].MainRun)
	if ct[0].Rates[0].Rate >= ct[0].Rates[1].Rate {
		return fmt.Errorf("the control's total %.3f should be below the baseline's %.3f", ct[0].Rates[0].Rate, ct[0].Rates[1].Rate)
	}
	if shorter.Exit != 0 || len(shorter.Comparisons) != 1 {
		return fmt.Errorf("the shorter version should be accepted (exit 0), it exits %d: %s", shorter.Exit, shorter.Sentence)
	}
	if sw, bw := MeanWords(shorter.Candidates()[0].Main), MeanWords(bases[0].Main); sw >= bw {
		return fmt.Errorf("the shorter version's messages should be shorter: %.0f words against %.0f", sw, bw)
	}
	if broken.Exit != 1 || len(broken.Comparisons) != 1 {
		return fmt.Errorf("the broken version should be rejected (exit 1), it exits %d: %s", broken.Exit, broken.Sentence)
	}
	for _, m := range broken.Comparisons[0].Main.Measures {
		if m.Name == "M1" && !m.Reject {
			return fmt.Errorf("the broken version should be rejected on M1 (the ruling): %s", broken.Comparisons[0].Main.Sentence)
		}
	}
	return nil
}
