//go:build !linux

package codemode

// limitProcess bounds the worker's Go heap (watchHeap); the OS limits of
// Linux are not set on this system.
func limitProcess(lim Limits) error {
	watchHeap(lim.Memory)
	return nil
}
