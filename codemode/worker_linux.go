package codemode

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// addressSlack is the address space a worker may map beyond its heap
// bound: the runtime reserves its heap in arenas of 64 MiB, and maps
// metadata beside them.
const addressSlack = 512 << 20

// limitProcess bounds the worker: its Go heap to lim.Memory (watchHeap),
// its address space to what it has now plus lim.Memory plus
// addressSlack (which stops one allocation too large at once: the
// runtime's mmap fails), and its CPU time to twice the script's Timeout
// plus ten seconds (a backstop: the parent kills the worker at its wall
// time bound; the collector may use more than one core).
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
	as := pages*uint64(os.Getpagesize()) + uint64(lim.Memory) + addressSlack
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
		return fmt.Errorf("RLIMIT_AS: %w", err)
	}
	cpu := 2*uint64(lim.Timeout.Seconds()) + 10
	if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: cpu, Max: cpu}); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	watchHeap(lim.Memory)
	return nil
}
