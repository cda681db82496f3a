//go:build !unix

package testserver

import "os/exec"

// newSession does nothing where sessions are not available.
func newSession(cmd *exec.Cmd) {}
