package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/prompt"
)

// Put writes data to the file name in the directory atomically: it writes
// a hidden temporary file, syncs it and renames it over name, so a reader
// sees the old content or the new, never a part. A prompt file (*.md) is
// parsed first and refused, with nothing written, when it is not a valid
// prompt. The lists are updated and the events fired before Put returns.
func (d *Dir) Put(name string, data []byte) error {
	if err := checkFileName(name); err != nil {
		return err
	}
	path := filepath.Join(d.dir, name)
	if strings.EqualFold(filepath.Ext(name), PromptExt) {
		if _, err := prompt.Read(namedReader{bytes.NewReader(data), path}); err != nil {
			return err
		}
	}
	root, err := d.confined.root()
	if err != nil {
		return fmt.Errorf("%w: store %q: %w", errs.ErrUnavailable, name, err)
	}
	defer root.Close()
	tmp, f, err := createTemp(root, name)
	if err != nil {
		return fmt.Errorf("%w: store %q: %w", errs.ErrUnavailable, name, err)
	}
	defer root.Remove(tmp) // after a successful rename there is nothing to remove
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644) // on the descriptor: the umask does not narrow it
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		return fmt.Errorf("%w: store %q: %w", errs.ErrUnavailable, name, err)
	}
	d.reload(true, false, name)
	return nil
}

// Remove deletes the file name from the directory. The lists are updated
// and the events fired before Remove returns.
func (d *Dir) Remove(name string) error {
	if err := checkFileName(name); err != nil {
		return err
	}
	root, err := d.confined.root()
	if err != nil {
		return fmt.Errorf("%w: store %q: %w", errs.ErrUnavailable, name, err)
	}
	defer root.Close()
	if err := root.Remove(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: store %q: %w", errs.ErrNotFound, name, err)
		}
		return fmt.Errorf("%w: store %q: %w", errs.ErrUnavailable, name, err)
	}
	d.reload(true, false, name)
	return nil
}

// createTemp creates a new hidden file in root for writing name, and
// returns its name.
func createTemp(root *os.Root, name string) (string, *os.File, error) {
	for try := 0; ; try++ {
		tmp := "." + name + "." + strconv.FormatUint(rand.Uint64(), 36) + ".tmp"
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return tmp, f, err
	}
}

// checkFileName accepts plain file names the store would serve.
func checkFileName(name string) error {
	if name != filepath.Base(name) || strings.ContainsAny(name, `/\`) || ignored(name) || name == "." || name == ".." {
		return fmt.Errorf("%w: store file name %q: want a plain file name, not hidden, not a backup", errs.ErrBadParameter, name)
	}
	return nil
}
