package proc

import "syscall"

// SysProcAttr starts a CLI (or bwrap with the jail) in a new session: its
// own process group, so one signal reaches it and its helpers, and no
// controlling terminal, so nothing the agent runs can open /dev/tty and
// push keystrokes into the author's shell (which is why the jail needs no
// --new-session, and the SIGTERM still reaches the CLI itself). Pdeathsig
// kills it if vibe-test dies without stopping it (SIGKILL); without the
// jail its Bash children in their own sessions can still survive, in the
// jail nothing does.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
