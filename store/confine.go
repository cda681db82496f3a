package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/time/rate"

	"github.com/llmkit/toolkit/internal/errs"
)

// ErrOutside, message "not found: the file leads outside the store
// directory", reports a file of the store that leads outside its
// directory: a symbolic link, or a chain of them, whose target is not in
// the directory, such as a link to a secret elsewhere or to
// /proc/self/environ. The store neither lists nor reads such a file. Test
// with errors.Is; it also matches [toolkit.ErrNotFound]: to a client the
// file does not exist.
var ErrOutside = fmt.Errorf("%w: the file leads outside the store directory", errs.ErrNotFound)

// maxLinks bounds the absolute symbolic links followed for one file.
const maxLinks = 40

// Bounds of the log lines about refused files: refusedBurst at once, then
// refusedRate a second, whatever is planted in the directory.
const (
	refusedBurst = 10
	refusedRate  = 1
)

// confinement keeps every access of the store inside its directory. Each
// access (a scan, a read, a write) opens an [os.Root] on the directory,
// checks that it is still the directory Open found (not another put in its
// place), and goes through it. The root refuses a path, a symbolic link or
// a rename that leads out of the directory at the moment of the access, so
// a file swapped for an outside link after a scan is refused at the next
// read. Relative links that stay inside work as they are; absolute ones,
// which os.Root refuses, are followed here when they name a file inside
// the directory. No descriptor is held between accesses, so removing the
// directory is seen at once.
type confinement struct {
	dir     string      // the directory's absolute path
	dirs    []string    // dir, and its real path when it differs
	id      fs.FileInfo // the directory Open found
	escapes error       // what a root returns for a path that escapes (os does not export it)

	lim     *rate.Limiter // of the log lines about refused files
	dropped atomic.Int64  // log lines refused by lim since the last one written
}

// errReplaced reports that the store's path now leads to another
// directory than the one Open found.
var errReplaced = errors.New("the directory was replaced")

// confine returns the confinement to the directory abs.
func confine(abs string) (*confinement, error) {
	c := &confinement{dir: abs, dirs: []string{abs}, lim: rate.NewLimiter(refusedRate, refusedBurst)}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if c.id, err = root.Stat("."); err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		c.dirs = append(c.dirs, real)
	}
	// ".." always escapes; a root answers it with its escape error
	// without touching the file system.
	_, err = root.Lstat("..")
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		err = pe.Err
	}
	c.escapes = err
	return c, nil
}

// root opens the directory for one access. The caller closes it.
func (c *confinement) root() (*os.Root, error) {
	root, err := os.OpenRoot(c.dir)
	if err != nil {
		return nil, err
	}
	fi, err := root.Stat(".")
	if err == nil && !os.SameFile(fi, c.id) {
		err = errReplaced
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}

// follow runs op on name, a path in root, following the absolute links
// that name a file inside the directory. An error that says the file leads
// outside wraps ErrOutside.
func follow[T any](c *confinement, root *os.Root, name string, op func(string) (T, error)) (T, error) {
	p := name
	for range maxLinks {
		v, err := op(p)
		if err == nil || c.escapes == nil || !errors.Is(err, c.escapes) {
			return v, err
		}
		next, ok := c.inside(root, p)
		if !ok {
			return v, fmt.Errorf("%w: %w", ErrOutside, err)
		}
		p = next
	}
	var zero T
	return zero, fmt.Errorf("%w: %s: more than %d links", errs.ErrNotFound, name, maxLinks)
}

// inside returns the path in root that the link p names when that is
// inside the directory.
func (c *confinement) inside(root *os.Root, p string) (string, bool) {
	fi, err := root.Lstat(p)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", false // the escape is not at this name's own link
	}
	target, err := root.Readlink(p)
	if err != nil {
		return "", false
	}
	if !filepath.IsAbs(target) {
		// The root refused it, or a link it leads to: follow one step.
		return filepath.Join(filepath.Dir(p), target), true
	}
	for _, dir := range c.dirs {
		rel, err := filepath.Rel(dir, target)
		if err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel, true
		}
	}
	return "", false
}

// stat returns what the file name in root leads to.
func (c *confinement) stat(root *os.Root, name string) (fs.FileInfo, error) {
	return follow(c, root, name, root.Stat)
}

// open opens the file name in root for reading. It must be a regular
// file: the open never waits (a named pipe planted in the directory does
// not block it), and anything else is refused with an error wrapping
// ErrNotFound.
func (c *confinement) open(root *os.Root, name string) (*os.File, error) {
	f, err := follow(c, root, name, func(p string) (*os.File, error) {
		return root.OpenFile(p, os.O_RDONLY|openNonblock, 0)
	})
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s: not a regular file (%v)", errs.ErrNotFound, name, fi.Mode().Type())
	}
	return f, nil
}

// logRefused writes the log line about a refused file, unless too many
// were written lately; the next line written says how many were dropped.
// It never says anything of the file's content.
func (d *Dir) logRefused(msg, name string, err error) {
	if !d.confined.lim.Allow() {
		d.confined.dropped.Add(1)
		return
	}
	args := []any{"path", filepath.Join(d.dir, name), "err", err}
	if n := d.confined.dropped.Swap(0); n > 0 {
		args = append(args, "dropped", n)
	}
	d.logger.Warn(msg, args...)
}
