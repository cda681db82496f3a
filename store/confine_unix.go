//go:build unix

package store

import "syscall"

// openNonblock makes opening a named pipe return at once instead of
// waiting for a writer.
const openNonblock = syscall.O_NONBLOCK
