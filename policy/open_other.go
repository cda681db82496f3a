//go:build !unix

package policy

import (
	"errors"
	"io/fs"
	"os"
)

// openRegular opens the file at path as os.OpenFile does, but only a
// regular file: a symbolic link in its last element is refused (without
// O_NOFOLLOW, the check comes before the open), and so is anything else
// that is not a regular file.
func openRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, symlinkError(path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return checkRegular(f)
}
