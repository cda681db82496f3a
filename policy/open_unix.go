//go:build unix

package policy

import (
	"errors"
	"os"
	"syscall"
)

// openRegular opens the file at path as os.OpenFile does, but only a
// regular file: a symbolic link in its last element is refused
// atomically (O_NOFOLLOW), so that a link planted or swapped in its place
// cannot redirect the read or the write, and anything else that is not a
// regular file (a FIFO, a device) is refused without blocking
// (O_NONBLOCK, which changes nothing for a regular file).
func openRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, symlinkError(path)
	}
	if err != nil {
		return nil, err
	}
	return checkRegular(f)
}
