package codex

import "syscall"

// sysProcAttr starts codex (or bwrap with the jail) in a new session: its
// own process group, so one signal reaches it and its helpers, and no
// controlling terminal. Pdeathsig kills it if vibe-test dies without
// stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
