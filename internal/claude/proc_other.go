//go:build !linux

package claude

import "syscall"

// sysProcAttr starts the CLI in a new session: its own process group, so
// one signal reaches it and its helpers, and no controlling terminal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
