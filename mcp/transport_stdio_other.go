//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

var (
	sigTerm = os.Kill
	sigKill = os.Kill
)

// setProcessGroup does nothing where process groups are not available.
func setProcessGroup(cmd *exec.Cmd) {}

// signalGroup signals the child itself where process groups are not
// available.
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}
