package codemode

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// limitProcess bounds the worker: its address space to what it has now
// plus lim.Memory, its CPU time to the script's Timeout (rounded up, plus
// a second), and its Go heap to lim.Memory (the collector works harder as
// the heap nears it).
func limitProcess(lim Limits) error {
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return err
	}
	f := strings.Fields(string(statm))
	if len(f) == 0 {
		return fmt.Errorf("/proc/self/statm: %q", statm)
	}
	pages, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return err
	}
	as := pages*uint64(os.Getpagesize()) + uint64(lim.Memory)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
		return fmt.Errorf("RLIMIT_AS: %w", err)
	}
	cpu := uint64(lim.Timeout.Seconds()) + 2
	if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: cpu, Max: cpu}); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	debug.SetMemoryLimit(lim.Memory)
	return nil
}
