// Command table prints the calibration tables of the README's "Reading the
// numbers": how often the exit code says decay when nothing decayed (the
// false-alarm rate), how often it does when the probes really drop (power),
// what --until-decided costs and saves, and how often compare rejects an
// unchanged skill. Every figure comes from runs simulated by the calibrate
// package and decided by result.Decide (or compare.Decide), the functions
// vibe-test itself uses.
//
//	go run ./internal/calibrate/table [-runs 4000] [-seed 1]
package main

import (
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/vibe-test/vibe-test/internal/calibrate"
	"github.com/vibe-test/vibe-test/internal/exit"
)

func main() {
	runs := flag.Int("runs", 4000, "simulated runs per cell")
	seed := flag.Uint64("seed", 1, "simulation seed")
	flag.Parse()
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', tabwriter.AlignRight|tabwriter.Debug)
	s := *seed
	next := func() uint64 { s++; return s }
	ns := []int{3, 5, 10, 16, 30, 50}
	header := func(first string) {
		fmt.Fprintf(w, "%s\t", first)
		for _, n := range ns {
			fmt.Fprintf(w, "n=%d\t", n)
		}
		fmt.Fprintln(w)
	}

	fmt.Printf("False alarms: share of runs that exit 1 with no dilution effect (alpha 0.05), %d runs a cell.\n", *runs)
	fmt.Println("Worlds: conversations differ (intra-class correlation 0.3), judge noise 5%, 2% turn errors, 2% judge errors, 3% uncertain verdicts, probes of different difficulty.")
	header("per-turn pass q")
	for _, q := range []float64{0.7, 0.8, 0.9, 0.95, 0.99} {
		fmt.Fprintf(w, "%.2f\t", q)
		for _, n := range ns {
			r := calibrate.Run(calibrate.Scenario{N: n, Q: q, Rho: 0.3, Offsets: [3]float64{0.05, -0.1, 0},
				JudgeNoise: 0.05, TurnErrors: 0.02, JudgeErrors: 0.02, Uncertain: 0.03}, *runs, next())
			fmt.Fprintf(w, "%.3f\t", r.Rate(exit.Decay))
		}
		fmt.Fprintln(w)
	}
	w.Flush()

	fmt.Printf("\nPower: share of runs that exit 1 when every diluted probe passes `drop` less often than fresh (fresh pass 0.9, correlation 0.1), %d runs a cell.\n", *runs)
	header("drop")
	for _, d := range []float64{0.1, 0.2, 0.3, 0.4, 0.5} {
		fmt.Fprintf(w, "%.0f points\t", 100*d)
		for _, n := range ns {
			r := calibrate.Run(calibrate.Scenario{N: n, Q: 0.9, Rho: 0.1, Drop: d}, *runs, next())
			fmt.Fprintf(w, "%.3f\t", r.Rate(exit.Decay))
		}
		fmt.Fprintln(w)
	}
	w.Flush()

	fmt.Printf("\nThe any-probe-failed rule (--rule any-probe-failed, the original tool's) on a stable skill: share of runs that exit 1, %d runs a cell.\n", *runs)
	header("per-turn pass q")
	for _, q := range []float64{0.8, 0.9, 0.95, 0.99} {
		fmt.Fprintf(w, "%.2f\t", q)
		for _, n := range ns {
			r := calibrate.Run(calibrate.Scenario{N: n, Q: q, Rule: "any-probe-failed"}, *runs, next())
			fmt.Fprintf(w, "%.3f\t", r.Rate(exit.Decay))
		}
		fmt.Fprintln(w)
	}
	w.Flush()

	fmt.Printf("\n--until-decided with the defaults (batches of 2, cap 20, alpha 0.05, effect 0.3), fresh pass 0.9, %d runs a row:\n", *runs)
	fmt.Fprintln(w, "drop\texit 1\tmean conversations\tfixed n=20: exit 1\t")
	for _, d := range []float64{0, 0.1, 0.3, 0.5} {
		seq := calibrate.Run(calibrate.Scenario{N: 2, Max: 20, Q: 0.9, Rho: 0.1, Drop: d}, *runs, next())
		fixed := calibrate.Run(calibrate.Scenario{N: 20, Q: 0.9, Rho: 0.1, Drop: d}, *runs, next())
		fmt.Fprintf(w, "%.0f points\t%.3f\t%.1f\t%.3f\t\n", 100*d, seq.Rate(exit.Decay), seq.MeanConversations, fixed.Rate(exit.Decay))
	}
	w.Flush()

	fmt.Printf("\ncompare on two runs of the same skill (A/A, 5 criteria, correlation 0.3, judge noise 3%%): share rejected, %d pairs a cell.\n", *runs)
	header("per-turn pass q")
	for _, q := range []float64{0.7, 0.9, 0.99} {
		fmt.Fprintf(w, "%.2f\t", q)
		for _, n := range ns {
			r := calibrate.CompareAA(calibrate.Scenario{N: n, Q: q, Rho: 0.3, Criteria: 5, JudgeNoise: 0.03}, *runs, next())
			fmt.Fprintf(w, "%.3f\t", r.Rate(1))
		}
		fmt.Fprintln(w)
	}
	w.Flush()
}
