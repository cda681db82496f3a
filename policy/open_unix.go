//go:build unix

package policy

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openRegular opens the file name of root (whose path is path, for
// messages) as Root.OpenFile does, but only a regular file: a symbolic
// link in its place is refused atomically (O_NOFOLLOW), so that a link
// planted or swapped in its place cannot redirect the read or the write,
// and anything else that is not a regular file (a FIFO, a device) is
// refused without blocking (O_NONBLOCK, which changes nothing for a
// regular file).
func openRegular(root *os.Root, name, path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := root.OpenFile(name, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if errors.Is(err, syscall.ELOOP) || err != nil && isSymlink(root, name) {
		// A root refuses a link that leads out of it before O_NOFOLLOW
		// applies: either way, it is a link.
		return nil, symlinkError(path)
	}
	if err != nil {
		return nil, err
	}
	return checkRegular(f)
}

// isSymlink reports whether the file name of root is a symbolic link.
func isSymlink(root *os.Root, name string) bool {
	fi, err := root.Lstat(name)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}
