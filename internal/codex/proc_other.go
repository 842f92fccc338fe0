//go:build !linux

package codex

import "syscall"

// sysProcAttr: a new session (Pdeathsig is Linux-only).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
