//go:build !linux

package peers

import (
	"errors"
	"os/exec"
	"syscall"
)

// The pinned Node binary runs only on linux/amd64; elsewhere the helpers skip
// before any process is started, and these only keep the package compiling.

func configure(*exec.Cmd) {}

func signalGroup(int, syscall.Signal) error { return errors.ErrUnsupported }
