package plan

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// walk plays a schedule against a context that grows by grow per turn
// (and drops to after at a compaction), returning the steps taken.
func walk(t *testing.T, s *Schedule, grow func(turn int) int64) []Step {
	t.Helper()
	var p Progress
	var steps []Step
	for {
		st, more := s.Next(p)
		if !more {
			return steps
		}
		if st.Turn != p.Turns+1 {
			t.Fatalf("step %+v after %d turns", st, p.Turns)
		}
		steps = append(steps, st)
		p.Turns++
		switch st.Kind {
		case KindProbe:
			p.Probes++
			p.Fillers = 0
		case KindFiller:
			p.Fillers++
		default:
			p.Fillers = 0
		}
		p.Context += grow(st.Turn)
		if len(steps) > 1000 {
			t.Fatal("the schedule never ends")
		}
	}
}

func TestFixedScheduleIsTheSeeds(t *testing.T) {
	for _, s := range []*Schedule{nil, {}, {CompactBefore: []int{2}}, {Fillers: FillersWork}} {
		steps := walk(t, s, func(int) int64 { return 1000 })
		if len(steps) != Turns {
			t.Fatalf("%+v: %d turns", s, len(steps))
		}
		for _, st := range steps {
			if st.Kind != Kind(st.Turn) {
				t.Errorf("%+v: turn %d is %s, the seed's is %s", s, st.Turn, st.Kind, Kind(st.Turn))
			}
			if st.Kind == KindProbe && ProbeTurns[st.Probe-1] != st.Turn {
				t.Errorf("probe %d at turn %d", st.Probe, st.Turn)
			}
			if st.Compact != (s != nil && st.Probe == 2 && len(s.CompactBefore) > 0) {
				t.Errorf("%+v: compact at %+v", s, st)
			}
		}
	}
}

func TestDiluteToAsksEachProbeAtItsLevel(t *testing.T) {
	s := &Schedule{DiluteTo: []int64{20000, 50000, 80000}, CompactBefore: []int{3}}
	// 9k after the baseline, then 7k a filler, 2k a probe.
	steps := walk(t, s, func(turn int) int64 {
		if turn == 1 {
			return 9000
		}
		return 7000
	})
	ctx := int64(0)
	probes := 0
	for i, st := range steps {
		if st.Kind == KindProbe {
			probes++
			level := s.DiluteTo[st.Probe-1]
			if ctx < level {
				t.Errorf("probe %d asked at %d tokens, below its level %d", st.Probe, ctx, level)
			}
			// Within one filler: the turn before had not reached it.
			if prev := steps[i-1]; prev.Kind == KindFiller && ctx-7000 >= level {
				t.Errorf("probe %d asked a filler late (%d tokens, level %d)", st.Probe, ctx, level)
			}
			if st.Compact != (st.Probe == 3) || st.Short {
				t.Errorf("probe step %+v", st)
			}
		}
		if i == 0 {
			ctx += 9000
		} else {
			ctx += 7000
		}
	}
	if probes != 3 || steps[0].Kind != KindBase {
		t.Fatalf("steps %+v", steps)
	}
}

func TestDiluteToCapsFillers(t *testing.T) {
	s := &Schedule{DiluteTo: []int64{1000000, 2000000, 3000000}, MaxFillers: 4}
	steps := walk(t, s, func(int) int64 { return 10 })
	if len(steps) != 1+3*5 {
		t.Fatalf("%d steps, want the baseline and 3 x (4 fillers + probe)", len(steps))
	}
	if last := steps[len(steps)-1]; last.Kind != KindProbe || !last.Short {
		t.Errorf("last step %+v, want a probe asked short of its level", last)
	}
}

func TestScheduleErrors(t *testing.T) {
	for _, c := range []struct {
		s    Schedule
		want string
	}{
		{Schedule{DiluteTo: []int64{5, 6}}, "2 levels given, expected 3"},
		{Schedule{DiluteTo: []int64{5, 5, 6}}, "expected ascending"},
		{Schedule{CompactBefore: []int{4}}, "probe 4, expected a probe number from 1 to 3"},
		{Schedule{Fillers: "novels"}, `"novels", expected passages or work`},
		// The level never fired after a compaction before a probe.
		{Schedule{CompactBefore: []int{1}, CompactAt: 28000}, "both given, expected one of them"},
	} {
		if err := c.s.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.s, err, c.want)
		}
	}
	if l, err := ParseLevels("50k, 100K,1.5m"); err != nil || l[0] != 50000 || l[1] != 100000 || l[2] != 1500000 {
		t.Errorf("ParseLevels: %v %v", l, err)
	}
	// NaN and counts below one token passed, and turned --compact-at off.
	for _, bad := range []string{"", "k", "-5k", "fifty", "nan", "NaN", "0.4", "0.0001k", "inf"} {
		if _, err := ParseTokens(bad); err == nil {
			t.Errorf("ParseTokens(%q) accepted", bad)
		}
	}
	if _, err := ParseProbes("2,5"); err == nil || !strings.Contains(err.Error(), `"5" is not a probe number`) {
		t.Errorf("ParseProbes: %v", err)
	}
	if FormatTokens(150000) != "150k" || FormatTokens(1500000) != "1.5m" || FormatTokens(1234) != "1234" {
		t.Errorf("FormatTokens: %s %s %s", FormatTokens(150000), FormatTokens(1500000), FormatTokens(1234))
	}
}

// goodLines is how many lines the config good holds.
var goodLines = strings.Count(good, "\n")

func TestConfigSchedule(t *testing.T) {
	p := writeConfig(t, good+"schedule:\n  dilute_to: [30k, 60000, 90k]\n  compact_before: [2]\n  fillers: work\n")
	c, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	s := FromConfig(p, c).Schedule
	if s == nil || s.DiluteTo[1] != 60000 || s.CompactBefore[0] != 2 || s.FillerKind() != FillersWork {
		t.Fatalf("schedule %+v", s)
	}
	for body, want := range map[string]string{
		"schedule:\n  dilute_to: [30k, 20k, 90k]\n": `field "schedule.dilute_to": 20k after 30k, expected ascending levels`,
		// The file, its line and the field, as for every other field (the
		// levels' own reader named the file alone).
		"schedule:\n  dilute_to: [30k, lots, 90k]\n": `:` + fmt.Sprint(goodLines+2) + `: field "schedule.dilute_to": "lots" is not a token count`,
		"schedule:\n  dilute_to: 50k\n":              `: field "schedule.dilute_to": expected a list of token counts`,
		"schedule:\n  compact_at: [1]\n":             `:` + fmt.Sprint(goodLines+2) + `: field "schedule.compact_at": "[1]" is not a token count`,
		"schedule:\n  compact_before: [7]\n":         `field "schedule.compact_before": probe 7`,
		"schedule:\n  dilute: [1]\n":                 "dilute",
	} {
		p := writeConfig(t, good+body)
		_, err := LoadConfig(p)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: %v, want %q and the file", body, err, want)
		}
		os.Remove(p)
	}
}

// CompactAt compacts once, before the first turn after the context reached
// its level, whatever kind that turn is; the context it leaves (small
// again) never compacts a second time.
func TestCompactAtOnce(t *testing.T) {
	s := &Schedule{DiluteTo: []int64{20000, 40000, 60000}, CompactAt: 30000}
	var p Progress
	var compacted []Step
	for {
		st, more := s.Next(p)
		if !more {
			break
		}
		if st.Compact {
			compacted = append(compacted, st)
			if p.Context < s.CompactAt {
				t.Errorf("compacted at %d tokens, below %d", p.Context, s.CompactAt)
			}
			p.Compacted, p.Context = true, 5000
		}
		p.Turns++
		switch st.Kind {
		case KindProbe:
			p.Probes++
			p.Fillers = 0
		case KindFiller:
			p.Fillers++
		}
		p.Context += 6000
	}
	if len(compacted) != 1 {
		t.Fatalf("compacted before %d turns (%+v), want exactly one", len(compacted), compacted)
	}
	if p.Probes != 3 {
		t.Errorf("%d probes asked", p.Probes)
	}
	if err := (&Schedule{CompactAt: -1}).Check(); err == nil {
		t.Error("a negative compact_at accepted")
	}
	if (&Schedule{CompactAt: 5}).Default() {
		t.Error("a schedule that compacts is not the seed's")
	}
}
