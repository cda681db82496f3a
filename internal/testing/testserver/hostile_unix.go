//go:build unix

package testserver

import (
	"os/exec"
	"syscall"
)

// newSession makes cmd start in a new session (setsid), out of its
// parent's process group.
func newSession(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
