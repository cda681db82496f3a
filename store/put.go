package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	tmp, err := os.CreateTemp(d.dir, "."+name+".*.tmp")
	if err != nil {
		return fmt.Errorf("%w: store %q: %w", errs.ErrUnavailable, name, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
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
	if err := os.Remove(filepath.Join(d.dir, name)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: store %q: %w", errs.ErrNotFound, name, err)
		}
		return fmt.Errorf("%w: store %q: %w", errs.ErrUnavailable, name, err)
	}
	d.reload(true, false, name)
	return nil
}

// checkFileName accepts plain file names the store would serve.
func checkFileName(name string) error {
	if name != filepath.Base(name) || strings.ContainsAny(name, `/\`) || ignored(name) || name == "." || name == ".." {
		return fmt.Errorf("%w: store file name %q: want a plain file name, not hidden, not a backup", errs.ErrBadParameter, name)
	}
	return nil
}
