package jail

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CPUFD is the descriptor on which a Measured command reports its CPU
// time: the caller passes the write end of a pipe as the process's fd 4
// (exec.Cmd's ExtraFiles[1], after the jail's options at OptsFD). The
// command itself sees neither.
const CPUFD = OptsFD + 1

// cpuScript runs its arguments as a child of the shell, not in its place,
// so the shell outlives the command, waits for it, and can then say what
// it and the processes it waited for used: `times`' second line. The
// shell's exit status is the command's (128+n when a signal ended it, as
// bwrap reports a signalled command).
const cpuScript = `"$@" 3<&- 4>&-; s=$?; times >&4; exit $s`

// Measured is Command for a binary whose CPU time the caller wants. In
// the jail's PID namespace the command is reaped by bwrap's init, which
// bwrap's outer process never waits for (it exits as soon as init tells it
// the command ended): so neither the outer process's exit status nor
// getrusage(RUSAGE_CHILDREN) of the caller ever counts the command's CPU.
// Here /bin/sh, inside the jail, runs the command, waits for it and writes
// its CPU time to fd CPUFD (read it with ParseCPU).
func (s Spec) Measured(binary string, args []string) (string, []string) {
	return s.Command("/bin/sh", s.measured(binary, args))
}

// MeasuredCmd is Cmd for a binary whose CPU time the caller wants (see
// Measured): the caller adds the report pipe's write end as
// cmd.ExtraFiles[1], descriptor CPUFD.
func (s Spec) MeasuredCmd(binary string, args, env []string, dir string) (*exec.Cmd, func(), error) {
	return s.cmd("/bin/sh", s.measured(binary, args), env, dir)
}

// measured is the shell's argv that runs binary (by the path Command runs
// it from) and reports its CPU time.
func (s Spec) measured(binary string, args []string) []string {
	return append([]string{"-c", cpuScript, "sh", s.inside(binary)}, args...)
}

// clockRE is one time of `times`: "0m1.230000s" (dash), "0m1.230s"
// (bash), "0m 1.23s" (busybox).
var clockRE = regexp.MustCompile(`(\d+)m\s*(\d+(?:\.\d+)?)s`)

// ParseCPU reads what a Measured command wrote to fd CPUFD: `times`
// prints the shell's own user and system time, then its waited-for
// children's; the second line is the command's (and what it waited for).
func ParseCPU(report []byte) (time.Duration, error) {
	lines := strings.Split(strings.TrimSpace(string(report)), "\n")
	if len(lines) != 2 {
		return 0, fmt.Errorf("the jail's CPU report has %d lines, expected 2 (`times`): %q", len(lines), report)
	}
	m := clockRE.FindAllStringSubmatch(lines[1], -1)
	if len(m) != 2 {
		return 0, fmt.Errorf("the jail's CPU report %q: expected a user and a system time", lines[1])
	}
	var total time.Duration
	for _, t := range m {
		min, err1 := strconv.ParseInt(t[1], 10, 64)
		sec, err2 := strconv.ParseFloat(t[2], 64)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("the jail's CPU report %q: %q is not a time", lines[1], t[0])
		}
		total += time.Duration(min)*time.Minute + time.Duration(sec*float64(time.Second))
	}
	return total, nil
}
