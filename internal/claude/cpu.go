package claude

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/vibe-test/vibe-test/internal/jail"
)

// cpuMeter reads the CPU time of one claude process and of the processes it
// waited for (its tools), once it has ended. Outside the jail the process's
// wait status carries it. In the jail it does not: the CLI is reaped by
// bwrap's init inside the PID namespace, never by vibe-test, so a shell
// in the jail waits for it and reports (jail.Spec.Measured) on a pipe
// passed as fd jail.CPUFD.
type cpuMeter struct {
	r, w   *os.File // the report pipe, jailed only
	jailed func()   // inv.command's started: closes the jail's options
}

// meter prepares cmd, whose command line came from inv.command (with
// jailed, its started), for its CPU time to be read. Its started and
// close call jailed.
func (inv Invocation) meter(cmd *exec.Cmd, jailed func()) (*cpuMeter, error) {
	m := &cpuMeter{jailed: jailed}
	if inv.Jail == nil {
		return m, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		jailed()
		return nil, fmt.Errorf("claude CPU report pipe: %w", err)
	}
	m.r, m.w = r, w
	// ExtraFiles[k] is descriptor 3+k: the jail's options come first.
	if len(cmd.ExtraFiles) != jail.CPUFD-3 {
		m.close()
		return nil, fmt.Errorf("claude CPU report pipe: %d descriptors before it, expected %d", len(cmd.ExtraFiles), jail.CPUFD-3)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	return m, nil
}

// started closes the parent's copy of the write end (the process has its
// own), so the read end sees EOF once the jail is gone, and the jail's
// options' read end.
func (m *cpuMeter) started() {
	if m.jailed != nil {
		m.jailed()
		m.jailed = nil
	}
	if m.w != nil {
		_ = m.w.Close()
		m.w = nil
	}
}

// close releases the pipe of a process that never started.
func (m *cpuMeter) close() {
	m.started()
	if m.r != nil {
		_ = m.r.Close()
		m.r = nil
	}
}

// jailedCPU sums what every jailed process reported.
var jailedCPU atomic.Int64

// JailedCPU is the CPU time of every jailed claude process this program has
// waited for: what getrusage(RUSAGE_CHILDREN) of this process cannot see,
// since those processes are reaped inside the jail. Unjailed ones are in
// RUSAGE_CHILDREN already and are not counted here, so the two add up to
// every claude process's CPU (the benchmark's figure).
func JailedCPU() time.Duration { return time.Duration(jailedCPU.Load()) }

// used is the CPU time of the process once cmd.Wait has returned; 0 when
// it is unknown (a jailed process killed before its shell could report).
func (m *cpuMeter) used(ps *os.ProcessState) time.Duration {
	if m.r == nil {
		if ps == nil {
			return 0
		}
		return ps.UserTime() + ps.SystemTime()
	}
	defer m.close()
	// The shell wrote its report before it exited, and bwrap's outer
	// process exits only after that: it is in the pipe by now. The
	// deadline only bounds a report that never comes (a killed jail
	// closes the pipe itself).
	_ = m.r.SetReadDeadline(time.Now().Add(time.Second))
	var b bytes.Buffer
	buf := make([]byte, 256)
	for bytes.Count(b.Bytes(), []byte{'\n'}) < 2 && b.Len() < 4096 {
		n, err := m.r.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	cpu, err := jail.ParseCPU(b.Bytes())
	if err != nil {
		return 0
	}
	jailedCPU.Add(int64(cpu))
	return cpu
}
