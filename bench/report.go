package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vibe-test/vibe-test/internal/claude"
	"github.com/vibe-test/vibe-test/internal/scripted"
)

// figure is one line of the table.
type figure struct {
	id, what string
	values   []float64 // one per repetition
	target   float64
	atMost   bool // target is an upper bound (else a lower bound)
	format   func(float64) string
	err      string
}

func (f figure) median() float64 { return median(f.values) }

func (f figure) status() string {
	switch {
	case f.err != "":
		return "ERROR"
	case len(f.values) == 0:
		return "n/a"
	case f.atMost && f.median() <= f.target, !f.atMost && f.median() >= f.target:
		return "PASS"
	}
	return "MISS"
}

func (r *results) missed() bool {
	for _, f := range r.figures {
		if f.status() == "MISS" {
			return true
		}
	}
	return false
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minMax(v []float64) (float64, float64) {
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

var (
	ratio     = func(x float64) string { return fmt.Sprintf("%.2f", x) }
	percent   = func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	millis    = func(x float64) string { return fmt.Sprintf("%.0f ms", x) }
	mbps      = func(x float64) string { return fmt.Sprintf("%.0f MB/s", x) }
	byteCount = func(x float64) string { return fmt.Sprintf("%.0f B", x) }
)

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// figures computes the table's lines from what was measured.
func figures(o options, r *results) []figure {
	var fs []figure
	if o.only["P1"] {
		f := figure{id: "P1", what: "wall: 4 conversations ÷ 1 conversation (app.Main)", target: 1.25, atMost: true, format: ratio}
		for _, rr := range r.reps {
			if rr.one != nil && rr.four != nil {
				f.values = append(f.values, rr.four.wall.Seconds()/rr.one.wall.Seconds())
			}
		}
		fs = append(fs, f)
	}
	if o.only["P2"] {
		total := figure{id: "P2 total", what: "wall: 1 conversation under vibe-test ÷ plain claude loop", target: 1.05, atMost: true, format: ratio}
		turns := figure{id: "P2 agent", what: "agent-turn time under vibe-test ÷ plain claude loop", target: 1.05, atMost: true, format: ratio}
		for _, rr := range r.reps {
			if rr.one != nil && rr.loop != nil {
				total.values = append(total.values, rr.one.wall.Seconds()/rr.loop.wall.Seconds())
				turns.values = append(turns.values, agentTurnTime(rr.one.run).Seconds()/rr.loop.turns.Seconds())
			}
		}
		fs = append(fs, total, turns)
	}
	if o.only["P3"] {
		f := figure{id: "P3", what: "judge + rubric tokens ÷ agent tokens (scripted usage)", target: 0.10, atMost: true, format: percent}
		for _, rr := range r.reps {
			if rr.one != nil {
				t := tokens(rr.one.reqs)
				if t[scripted.KindAgent] > 0 {
					f.values = append(f.values, float64(t[scripted.KindJudge]+t[scripted.KindRubric])/float64(t[scripted.KindAgent]))
				}
			}
		}
		fs = append(fs, f)
	}
	if o.only["S"] && len(o.personas) > 0 {
		persona := o.personas[0]
		bytesF := figure{id: "S skill", what: "SKILL.md bytes re-sent after turn 1, interactive (" + persona + ")", target: 0, atMost: true, format: byteCount}
		cpuF := figure{id: "S CPU", what: "claude CPU per conversation: interactive ÷ resume (" + persona + ")", target: 1, atMost: true, format: ratio}
		wallF := figure{id: "S wall", what: "wall per conversation: interactive ÷ resume (" + persona + ")", target: 1, atMost: true, format: ratio}
		for _, rr := range r.reps {
			in, re := sessionLoop(rr, claude.SessionInteractive, persona), sessionLoop(rr, claude.SessionResume, persona)
			if in == nil || re == nil {
				continue
			}
			bytesF.values = append(bytesF.values, float64(sessionFiguresOf(in).skillReinjected))
			cpuF.values = append(cpuF.values, in.cpu.children.Seconds()/re.cpu.children.Seconds())
			wallF.values = append(wallF.values, in.wall.Seconds()/re.wall.Seconds())
		}
		fs = append(fs, bytesF, cpuF, wallF)
	}
	if o.only["P4"] {
		rep := figure{id: "P4 report", what: fmt.Sprintf("`vibe-test report` on a %d-conversation run (subprocess)", p4Conversations), target: 200, atMost: true, format: millis, err: r.reportErr}
		for _, d := range r.report {
			rep.values = append(rep.values, float64(d)/float64(time.Millisecond))
		}
		parse := figure{id: "P4 parse", what: "stream-json parse throughput (BenchmarkParseTurn, 50 MB)", target: 200, atMost: false, format: mbps, err: r.parseErr}
		parse.values = r.parse
		fs = append(fs, rep, parse)
	}
	return fs
}

func printReport(w io.Writer, o options, m machine, r *results) {
	if r == nil {
		r = &results{}
	}
	r.figures = figures(o, r)
	fmt.Fprintf(w, "vibe-test bench: %d reps, scripted latency %s per model response, steady persona, demo skill (stock-ledger)\n", o.reps, o.latency)
	fmt.Fprintf(w, "machine: nproc %d · %s · %s · claude %s\n", m.NProc, m.CPU, m.Go, m.Claude)
	fmt.Fprintf(w, "load average (1/5/15 min): %s at start, %s at end\n\n", m.LoadStart, m.LoadEnd)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tmeasures\tmedian\tmin–max\tn\ttarget\t")
	for _, f := range r.figures {
		med, spread := "—", "—"
		if len(f.values) > 0 {
			lo, hi := minMax(f.values)
			med, spread = f.format(f.median()), f.format(lo)+"–"+f.format(hi)
		}
		bound := "≥ "
		if f.atMost {
			bound = "≤ "
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", f.id, f.what, med, spread, len(f.values), bound+f.format(f.target), f.status())
	}
	tw.Flush()
	for _, f := range r.figures {
		if f.err != "" {
			fmt.Fprintf(w, "%s error: %s\n", f.id, f.err)
		}
	}
	printDetails(w, o, r)
}

// printDetails lists the raw measurements behind the ratios.
func printDetails(w io.Writer, o options, r *results) {
	if len(r.reps) == 0 {
		return
	}
	fmt.Fprintf(w, "\nper repetition (wall times; CPU = claude processes + in-process vibe-test and scripted server / other processes on the machine meanwhile):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rep\t1 conv\t4 conv\tloop\t1 conv agent turns\tloop turns\tCPU 1 conv\tCPU 4 conv\tCPU loop\t")
	for i, rr := range r.reps {
		cell := func(ok bool, s func() string) string {
			if !ok {
				return "—"
			}
			return s()
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", i+1,
			cell(rr.one != nil, func() string { return secs(rr.one.wall) }),
			cell(rr.four != nil, func() string { return secs(rr.four.wall) }),
			cell(rr.loop != nil, func() string { return secs(rr.loop.wall) }),
			cell(rr.one != nil, func() string { return secs(agentTurnTime(rr.one.run)) }),
			cell(rr.loop != nil, func() string { return secs(rr.loop.turns) }),
			cell(rr.one != nil, func() string { return cpu(rr.one.cpu) }),
			cell(rr.four != nil, func() string { return cpu(rr.four.cpu) }),
			cell(rr.loop != nil, func() string { return cpu(rr.loop.cpu) }),
		)
	}
	tw.Flush()

	first := r.reps[0]
	if first.one != nil {
		one := first.one
		fmt.Fprintf(w, "\n1-conversation run, rep 1: %d agent API calls in the conversation, %d in all (the fresh triple's too)",
			sessionCalls(one.reqs, one.run.Conversations[0].SessionID), agentCalls(one.reqs))
		if first.loop != nil {
			fmt.Fprintf(w, "; the loop made %d (same script, same work)", first.loop.agentCalls)
		}
		t := tokens(one.reqs)
		n := map[scripted.CallKind]int{}
		for _, q := range one.reqs {
			if q.Status == 200 {
				n[q.Kind]++
			}
		}
		fmt.Fprintf(w, "\n  claude CPU: %.1f s under vibe-test (jail: %s; the fresh triple's, judge and rubric calls too)", one.cpu.children.Seconds(), one.run.Jail)
		if first.loop != nil {
			fmt.Fprintf(w, ", %.1f s in the loop (no jail)", first.loop.cpu.children.Seconds())
		}
		fmt.Fprintf(w, "\n  scripted usage (context + output) by kind: agent %d tokens in %d calls, judge %d in %d, rubric %d in %d\n",
			t[scripted.KindAgent], n[scripted.KindAgent], t[scripted.KindJudge], n[scripted.KindJudge], t[scripted.KindRubric], n[scripted.KindRubric])
		var ctxSum int64
		for _, tr := range one.run.Conversations[0].Turns {
			ctxSum += tr.ContextTokens
		}
		fmt.Fprintf(w, "  run.json: costs.judge_tokens %d, costs.rubric_tokens %d; Σ turn context_tokens %d (last call per turn only, so not the agent total)\n",
			one.run.Costs.JudgeTokens, one.run.Costs.RubricTokens, ctxSum)
		if first.four != nil {
			t4 := tokens(first.four.reqs)
			if t4[scripted.KindAgent] > 0 {
				fmt.Fprintf(w, "  4-conversation run: judge + rubric ÷ agent = %s (one rubric call shared by 4 conversations)\n",
					percent(float64(t4[scripted.KindJudge]+t4[scripted.KindRubric])/float64(t4[scripted.KindAgent])))
			}
		}
	}
	printSessions(w, o, r)
	if o.only["P4"] && len(r.report) > 0 {
		fmt.Fprintf(w, "P4 report: run.json (%d KB) synthesized by repeating rep 1's real 1-conversation run %d times (transcripts copied to conv-1..conv-%d); binary from `go build`; 1 warm-up, then %d timed runs: %s\n",
			r.reportRunSize>>10, p4Conversations, p4Conversations, len(r.report), joinDur(r.report))
	}
	if len(r.parse) > 0 {
		var s []string
		for _, v := range r.parse {
			s = append(s, mbps(v))
		}
		fmt.Fprintf(w, "P4 parse: go test -run '^$' -bench BenchmarkParseTurn -count %d ./internal/claude/: %s\n", o.reps, strings.Join(s, ", "))
	}
}

func cpu(c cpuTimes) string {
	return fmt.Sprintf("%.0f+%.1f / %.0f s", c.children.Seconds(), c.self.Seconds(), c.others().Seconds())
}

func joinDur(ds []time.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)))
	}
	return strings.Join(s, ", ")
}

// sessionLoop is rep rr's S loop of one mode and persona (nil: not run).
func sessionLoop(rr repResult, mode, persona string) *loopRun {
	for _, l := range rr.sessions {
		if l.mode == mode && l.persona == persona {
			return l
		}
	}
	return nil
}

// printSessions is S's table: per persona and session mode, the medians
// over the repetitions.
func printSessions(w io.Writer, o options, r *results) {
	if !o.only["S"] {
		return
	}
	fmt.Fprintf(w, "\nS: the same 10 prompts through plain claude loops in both session modes (medians over %d reps; CPU = the claude processes and what they ran):\n", len(r.reps))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "persona\tsession\trequests/turn\tSKILL.md bytes re-sent after turn 1\t\"already loaded\" answers\tclaude CPU\twall\t")
	for _, persona := range o.personas {
		for _, mode := range []string{claude.SessionInteractive, claude.SessionResume} {
			var reqs, reinj, loaded, cpuS, wall []float64
			for _, rr := range r.reps {
				l := sessionLoop(rr, mode, persona)
				if l == nil {
					continue
				}
				f := sessionFiguresOf(l)
				reqs = append(reqs, f.requestsPerTurn)
				reinj = append(reinj, float64(f.skillReinjected))
				loaded = append(loaded, float64(f.alreadyLoaded))
				cpuS = append(cpuS, l.cpu.children.Seconds())
				wall = append(wall, l.wall.Seconds())
			}
			if len(reqs) == 0 {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.0f\t%.0f\t%.2f s\t%.1f s\t\n", persona, mode,
				median(reqs), median(reinj), median(loaded), median(cpuS), median(wall))
		}
	}
	tw.Flush()
}
