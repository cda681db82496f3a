//go:build !unix

package policy

import (
	"errors"
	"io/fs"
	"os"
)

// openRegular opens the file name of root (whose path is path, for
// messages) as Root.OpenFile does, but only a regular file: a symbolic
// link in its place is refused (without O_NOFOLLOW, the check comes
// before the open), and so is anything else that is not a regular file.
func openRegular(root *os.Root, name, path string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := root.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, symlinkError(path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := root.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return checkRegular(f)
}
