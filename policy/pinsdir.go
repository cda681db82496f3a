package policy

import (
	"fmt"
	"os"

	"github.com/llmkit/toolkit"
)

// root opens the directory of the pins file for one access, as an
// [os.Root]: the file, its lock and the temporary file of a save are
// reached through it, so that nothing leads out of the directory. The
// directory must be the one the store first opened: when a symbolic
// link in its path was swapped since (a mounted configuration directory
// replaced), the access is refused. The caller closes the root.
func (s *FileStore) root() (*os.Root, error) {
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	fi, err := root.Stat(".")
	if err != nil {
		root.Close()
		return nil, err
	}
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	if s.dirID == nil {
		s.dirID = fi
	} else if !os.SameFile(fi, s.dirID) {
		root.Close()
		return nil, fmt.Errorf("%w: %s now leads to another directory than the pins file's: a symbolic link in its path was replaced; restart to use the new one", toolkit.ErrBadParameter, s.dir)
	}
	return root, nil
}

// lock takes the lock of the pins file (its name with ".lock", in root).
func (s *FileStore) lock(root *os.Root) (unlock func(), err error) {
	return lockFile(root, s.name+".lock", s.path+".lock")
}
