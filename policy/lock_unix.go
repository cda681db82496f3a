//go:build unix

package policy

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on the file name of root,
// at path (created if need be; never through a symbolic link), and
// returns the function that releases it.
func lockFile(root *os.Root, name, path string) (unlock func(), err error) {
	f, err := openRegular(root, name, path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
