package peers

import (
	"errors"
	"os/exec"
	"syscall"
)

// configure puts the child in a process group of its own, so that it and
// anything it starts can be signalled together, and has the kernel kill it
// if the test binary dies first.
func configure(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the process group led by pid. A group that no
// longer exists is not an error.
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
