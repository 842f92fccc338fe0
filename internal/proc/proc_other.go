//go:build !linux

package proc

import "syscall"

// SysProcAttr starts a CLI in a new session: its own process group, so one
// signal reaches it and its helpers, and no controlling terminal
// (Pdeathsig is Linux-only).
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
