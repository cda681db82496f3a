//go:build !linux

package codemode

import "runtime/debug"

// limitProcess bounds the worker's Go heap; the OS limits of Linux are
// not set on this system.
func limitProcess(lim Limits) error {
	debug.SetMemoryLimit(lim.Memory)
	return nil
}
