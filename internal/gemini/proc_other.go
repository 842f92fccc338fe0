//go:build !linux

package gemini

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// descendants needs /proc; elsewhere a stopped CLI's shell commands may
// outlive it.
func descendants(int) []int { return nil }
