package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Filler kinds: what dilutes the context between probes.
const (
	// FillersPassages are everyday passages the agent is asked to read
	// (the seed's fillers, and the default).
	FillersPassages = "passages"
	// FillersWork are ordinary coding chores in the sandbox (read a log, run
	// a command): the context fills with tool calls and tool output.
	FillersWork = "work"
)

// DefaultMaxFillers caps the fillers asked before any one probe of a
// diluted-to schedule: a context that stops growing (a CLI that compacts on
// its own, a model that answers in a word) must not run the conversation
// for ever. The probe is then asked where the context got to, and the
// record says so.
const DefaultMaxFillers = 60

// MaxFillersLimit is the largest cap of fillers a run may set
// (--max-fillers, schedule.max_fillers).
const MaxFillersLimit = 1000

// Schedule says when a conversation's probes are asked and what dilutes the
// context before them. The zero schedule is the seed's: ten turns, the
// probes at turns 6, 8 and 10, passages between.
type Schedule struct {
	// DiluteTo are context sizes in tokens, one per probe, ascending: fillers
	// are asked until the context of the last call reaches the next level,
	// then that level's probe. Empty: the fixed turns 6, 8 and 10.
	DiluteTo []int64 `json:"dilute_to,omitempty"`
	// CompactBefore are probe numbers (1-based) before which the CLI's own
	// /compact runs on the conversation's session.
	CompactBefore []int `json:"compact_before,omitempty"`
	// CompactAt, when set, runs /compact once, before the first turn asked
	// after the context of the last call reached it (tokens).
	CompactAt int64 `json:"compact_at,omitempty"`
	// Fillers is FillersPassages or FillersWork ("" is passages).
	Fillers string `json:"fillers,omitempty"`
	// MaxFillers caps the fillers before any one probe of a diluted-to
	// schedule (0: DefaultMaxFillers).
	MaxFillers int `json:"max_fillers,omitempty"`
}

// Fixed reports whether the schedule is the seed's ten turns.
func (s *Schedule) Fixed() bool { return s == nil || len(s.DiluteTo) == 0 }

// FillerKind is the schedule's filler kind, passages by default.
func (s *Schedule) FillerKind() string {
	if s == nil || s.Fillers == "" {
		return FillersPassages
	}
	return s.Fillers
}

// Default reports whether the schedule is exactly the seed's.
func (s *Schedule) Default() bool {
	return s.Fixed() && !s.Compacts() && s.FillerKind() == FillersPassages
}

// Compacts reports whether the schedule runs /compact at all.
func (s *Schedule) Compacts() bool {
	return s != nil && (len(s.CompactBefore) > 0 || s.CompactAt > 0)
}

// CompactsBefore reports whether /compact runs before probe k (1-based).
func (s *Schedule) CompactsBefore(k int) bool {
	return s != nil && slices.Contains(s.CompactBefore, k)
}

// MaxFillersOrDefault is the cap of fillers before any one probe.
func (s *Schedule) MaxFillersOrDefault() int { return s.maxFillers() }

func (s *Schedule) maxFillers() int {
	if s == nil || s.MaxFillers <= 0 {
		return DefaultMaxFillers
	}
	return s.MaxFillers
}

// Progress is where a conversation stands: what its completed turns were.
type Progress struct {
	Turns   int   // completed turns
	Probes  int   // probes among them
	Fillers int   // fillers since the last judged turn (base or probe)
	Context int64 // context of the last call of the last completed turn
	// Compacted: vibe-test has run /compact on the session (CompactAt
	// compacts once).
	Compacted bool
}

// Step is what a conversation's next turn is.
type Step struct {
	Turn  int    // 1-based
	Kind  string // KindBase, KindProbe or KindFiller
	Probe int    // 1-based probe number, for a probe
	// Compact: the CLI's /compact runs on the session just before the turn.
	Compact bool
	// Short: a probe of a diluted-to schedule asked before its level was
	// reached, because MaxFillers fillers did not get the context there.
	Short bool
}

// Next is the step after p, and false when the conversation is over. It
// depends only on the completed turns, so a resumed conversation carries
// on exactly where it stopped.
func (s *Schedule) Next(p Progress) (Step, bool) {
	st, more := s.next(p)
	if more && s != nil && s.CompactAt > 0 && !p.Compacted && p.Turns > 0 && p.Context >= s.CompactAt {
		st.Compact = true
	}
	return st, more
}

func (s *Schedule) next(p Progress) (Step, bool) {
	turn := p.Turns + 1
	if s.Fixed() {
		if turn > Turns {
			return Step{}, false
		}
		st := Step{Turn: turn, Kind: Kind(turn)}
		if st.Kind == KindProbe {
			st.Probe = slices.Index(ProbeTurns[:], turn) + 1
			st.Compact = s.CompactsBefore(st.Probe)
		}
		return st, true
	}
	if p.Turns == 0 {
		return Step{Turn: 1, Kind: KindBase}, true
	}
	if p.Probes >= len(s.DiluteTo) {
		return Step{}, false
	}
	level := s.DiluteTo[p.Probes]
	if p.Context < level && p.Fillers < s.maxFillers() {
		return Step{Turn: turn, Kind: KindFiller}, true
	}
	k := p.Probes + 1
	return Step{Turn: turn, Kind: KindProbe, Probe: k, Compact: s.CompactsBefore(k), Short: p.Context < level}, true
}

// Level is the context level of probe k (1-based) in a diluted-to
// schedule, 0 in the fixed one.
func (s *Schedule) Level(k int) int64 {
	if s.Fixed() || k < 1 || k > len(s.DiluteTo) {
		return 0
	}
	return s.DiluteTo[k-1]
}

// ProbeTurn is the turn of probe k (1-based) in the fixed schedule, 0 when
// the schedule decides it as it goes.
func (s *Schedule) ProbeTurn(k int) int {
	if !s.Fixed() || k < 1 || k > len(ProbeTurns) {
		return 0
	}
	return ProbeTurns[k-1]
}

// Check says what is wrong with a schedule, naming the field.
func (s *Schedule) Check() error {
	if s == nil {
		return nil
	}
	if n := len(s.DiluteTo); n != 0 && n != len(ProbeTurns) {
		return fmt.Errorf("dilute_to: %d levels given, expected %d (one per probe)", n, len(ProbeTurns))
	}
	for i, l := range s.DiluteTo {
		if l <= 0 {
			return fmt.Errorf("dilute_to: level %d is %d, expected a positive token count such as 50k", i+1, l)
		}
		if i > 0 && l <= s.DiluteTo[i-1] {
			return fmt.Errorf("dilute_to: %s after %s, expected ascending levels", FormatTokens(l), FormatTokens(s.DiluteTo[i-1]))
		}
	}
	for _, k := range s.CompactBefore {
		if k < 1 || k > len(ProbeTurns) {
			return fmt.Errorf("compact_before: probe %d, expected a probe number from 1 to %d", k, len(ProbeTurns))
		}
	}
	switch s.Fillers {
	case "", FillersPassages, FillersWork:
	default:
		return fmt.Errorf("fillers: %q, expected %s or %s", s.Fillers, FillersPassages, FillersWork)
	}
	if s.CompactAt < 0 {
		return fmt.Errorf("compact_at: %d, expected a positive token count such as 120k", s.CompactAt)
	}
	// compact_at compacts once, in a session never compacted before: with
	// compact_before too it never fired, though the summary announced it.
	if s.CompactAt > 0 && len(s.CompactBefore) > 0 {
		return fmt.Errorf("compact_at and compact_before (--compact-at, --compact-before): both given, expected one of them (a session compacts at a context level or before given probes)")
	}
	if s.MaxFillers < 0 || s.MaxFillers > MaxFillersLimit {
		return fmt.Errorf("max_fillers: %d, expected 1 to %d", s.MaxFillers, MaxFillersLimit)
	}
	return nil
}

// ParseLevels reads context levels such as "50k,100k,150k" (k = 1000,
// m = 1000000; plain numbers are tokens).
func ParseLevels(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		n, err := ParseTokens(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseTokens reads one token count: 150000, 150k or 1.5m.
func ParseTokens(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1e3, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		mult, t = 1e6, strings.TrimSuffix(t, "m")
	}
	f, err := strconv.ParseFloat(t, 64)
	// !(f*mult >= 1) also refuses NaN (every comparison with it is
	// false) and counts below one token, which rounded to 0 and turned
	// --compact-at off without a word.
	if err != nil || !(f*mult >= 1) || f*mult > 1e9 {
		return 0, fmt.Errorf("%q is not a token count, expected a number such as 50000 or 50k", s)
	}
	return int64(f * mult), nil
}

// ParseProbes reads probe numbers such as "2" or "2,3".
func ParseProbes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 || k > len(ProbeTurns) {
			return nil, fmt.Errorf("%q is not a probe number, expected 1 to %d (in the fixed schedule probe 1 is turn 6, 2 is turn 8, 3 is turn 10)", f, len(ProbeTurns))
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

// FormatTokens writes a token count the way levels are given: 50k, 1.5m.
func FormatTokens(n int64) string {
	switch {
	case n >= 1e6 && n%1e5 == 0:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "m"
	case n >= 1e3 && n%100 == 0:
		return strconv.FormatFloat(float64(n)/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// Describe says in a line what a schedule other than the seed's does
// (the summary, chart and compare print it).
func (s *Schedule) Describe() string {
	var parts []string
	if s.Fixed() {
		parts = append(parts, "the seed's ten turns, probes at 6, 8 and 10")
	} else {
		var lv []string
		for _, l := range s.DiluteTo {
			lv = append(lv, FormatTokens(l))
		}
		parts = append(parts, fmt.Sprintf("each probe asked once the context reached %s tokens (at most %d fillers before each)", strings.Join(lv, ", "), s.MaxFillersOrDefault()))
	}
	if len(s.CompactBefore) > 0 {
		var ps []string
		for _, k := range s.CompactBefore {
			p := fmt.Sprintf("probe %d", k)
			if t := s.ProbeTurn(k); t > 0 {
				p += fmt.Sprintf(" (turn %d)", t)
			}
			ps = append(ps, p)
		}
		parts = append(parts, "the CLI's /compact before "+strings.Join(ps, " and "))
	}
	if s.CompactAt > 0 {
		parts = append(parts, "the CLI's /compact once the context passed "+FormatTokens(s.CompactAt)+" tokens")
	}
	parts = append(parts, s.FillerKind()+" as fillers")
	return strings.Join(parts, "; ")
}
