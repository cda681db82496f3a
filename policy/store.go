package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmkit/toolkit"
)

// maxPinFile bounds the size of a pins file read back.
const maxPinFile = 64 << 20

// pinFileVersion is the version of the pins file's format.
const pinFileVersion = 1

// FileStore keeps pins in one JSON file, readable and writable by its
// owner only. Each save rewrites the file through a temporary file and a
// rename, so a crash leaves the old or the new file, never half of one;
// on Unix an advisory lock on FILE.lock lets several processes (a
// running gateway and the command that approves changes) share it, each
// save merging into what the file holds, and Watch tells one process
// that another changed it. The file and its lock are never opened
// through a symbolic link, nor when they are not regular files: a link
// planted in their place is refused rather than followed, so it can
// neither feed the engine approvals from elsewhere nor redirect a write.
// Their directory is opened through an [os.Root] for each access and
// must be the one the store first found: a symbolic link in the path
// to it (a mounted configuration directory) swapped to lead elsewhere
// is refused, not followed.
type FileStore struct {
	path      string
	dir, name string // path's directory and last element

	dirMu sync.Mutex
	dirID os.FileInfo // the directory first opened; nil before

	mu   sync.Mutex  // held from a read or a write of the file to recording it
	last os.FileInfo // the file as this store last read or wrote it; nil for none
}

// NewFileStore returns the store of the file at path (created on the
// first save).
func NewFileStore(path string) *FileStore {
	return &FileStore{path: path, dir: filepath.Dir(path), name: filepath.Base(path)}
}

// Path returns the file's path.
func (s *FileStore) Path() string { return s.path }

// pinFile is the file's content.
type pinFile struct {
	Version int   `json:"version"`
	Pins    []Pin `json:"pins"`
}

// Load returns the pins in the file; none when it does not exist.
func (s *FileStore) Load(context.Context) ([]Pin, error) {
	root, err := s.root()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	unlock, err := s.lock(root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.read(root)
}

// read reads the file in root and records it as the one this store
// knows; the lock is held.
func (s *FileStore) read(root *os.Root) ([]Pin, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := openRegular(root, s.name, s.path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		s.last = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if s.last, err = f.Stat(); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPinFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPinFile {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", toolkit.ErrBadParameter, s.path, maxPinFile)
	}
	pins, err := DecodePins(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return pins, nil
}

// Save merges changed into the file: pins with the same key are replaced.
func (s *FileStore) Save(_ context.Context, changed []Pin) error {
	root, err := s.root()
	if err != nil {
		return err
	}
	defer root.Close()
	unlock, err := s.lock(root)
	if err != nil {
		return err
	}
	defer unlock()
	current, err := s.read(root)
	if err != nil {
		return err
	}
	byKey := make(map[string]Pin, len(current)+len(changed))
	for _, p := range current {
		byKey[p.Key] = p
	}
	for _, p := range changed {
		byKey[p.Key] = p
	}
	all := make([]Pin, 0, len(byKey))
	for _, p := range byKey {
		all = append(all, p)
	}
	slices.SortFunc(all, func(a, b Pin) int { return strings.Compare(a.Key, b.Key) })
	data, err := json.MarshalIndent(pinFile{Version: pinFileVersion, Pins: all}, "", "  ")
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fi, err := writeFileAtomic(root, s.name, append(data, '\n'))
	if err == nil {
		s.last = fi
	}
	return err
}

// DecodePins reads the content of a pins file. Each pin must have a key
// of the form "namespace.name" and complete digests; a key given twice is
// an error.
func DecodePins(data []byte) ([]Pin, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f pinFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: pins file: %v", toolkit.ErrBadParameter, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: pins file: data after the JSON object", toolkit.ErrBadParameter)
	}
	if f.Version != pinFileVersion {
		return nil, fmt.Errorf("%w: pins file: version %d, want %d", toolkit.ErrBadParameter, f.Version, pinFileVersion)
	}
	seen := make(map[string]bool, len(f.Pins))
	for i, p := range f.Pins {
		ns, name, ok := strings.Cut(p.Key, ".")
		if !ok || ns == "" || name == "" {
			return nil, fmt.Errorf("%w: pins file: pins[%d]: key %q is not namespace.name", toolkit.ErrBadParameter, i, truncate(p.Key))
		}
		if seen[p.Key] {
			return nil, fmt.Errorf("%w: pins file: pins[%d]: key %q is given twice", toolkit.ErrBadParameter, i, truncate(p.Key))
		}
		seen[p.Key] = true
		if p.Approved == nil && p.Pending == nil {
			return nil, fmt.Errorf("%w: pins file: pins[%d] (%s): no definition", toolkit.ErrBadParameter, i, truncate(p.Key))
		}
		for _, d := range []*Definition{p.Approved, p.Pending} {
			if d != nil && (!isDigest(d.Digest) || !isDigest(d.Content)) {
				return nil, fmt.Errorf("%w: pins file: pins[%d] (%s): a definition without its digests", toolkit.ErrBadParameter, i, truncate(p.Key))
			}
		}
	}
	return f.Pins, nil
}

// isDigest reports whether s is a hex SHA-256 digest.
func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// writeFileAtomic writes data to the file name in root through a
// temporary file beside it, readable by its owner only, and returns what
// it wrote. The temporary file is made exclusively (never through a
// link) and its mode set on the open file; the rename replaces whatever
// is at name, a symbolic link included, and writes through none.
func writeFileAtomic(root *os.Root, name string, data []byte) (os.FileInfo, error) {
	var (
		tmp     *os.File
		tmpName string
		err     error
	)
	for range 100 {
		tmpName = "." + name + "." + strconv.FormatUint(rand.Uint64(), 36)
		tmp, err = root.OpenFile(tmpName, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Chmod(0o600)
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	var fi os.FileInfo
	if werr == nil {
		fi, werr = tmp.Stat()
	}
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = root.Rename(tmpName, name)
	}
	if werr != nil {
		root.Remove(tmpName)
		return nil, werr
	}
	return fi, nil
}

// symlinkError is the error of a pins file, or its lock, that is a
// symbolic link.
func symlinkError(path string) error {
	return fmt.Errorf("%w: %s is a symbolic link: a pins file and its lock are never followed through one", toolkit.ErrBadParameter, path)
}

// checkRegular returns f if it is a regular file, and closes it and
// returns an error otherwise.
func checkRegular(f *os.File) (*os.File, error) {
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is not a regular file (%v)", toolkit.ErrBadParameter, f.Name(), fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Watch checks the file every interval until ctx is done, and calls
// changed, on Watch's goroutine, each time it finds it different from
// what this store last read or wrote: another process (the command that
// approves changes) replaced, changed or removed it. The store's own
// saves are not changes, and a change is reported once, whether or not
// changed reads the file again (Engine.ReloadPins does). It returns
// ctx's error. A stat of one file per interval is all it costs, on every
// system, with no dependency.
func (s *FileStore) Watch(ctx context.Context, interval time.Duration, changed func()) error {
	if interval <= 0 {
		return fmt.Errorf("%w: FileStore.Watch: interval %v", toolkit.ErrBadParameter, interval)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var w watchState
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if s.poll(&w) {
			changed()
		}
	}
}

// watchState is what Watch remembers between two looks at the file.
type watchState struct {
	reported os.FileInfo // the state last reported (nil: no file)
	seen     bool        // whether a state was reported
}

// poll looks at the file once and reports whether it changed since this
// store last read or wrote it, and since w's last report.
func (s *FileStore) poll(w *watchState) bool {
	var cur os.FileInfo
	if root, err := s.root(); err == nil {
		if cur, err = root.Lstat(s.name); err != nil {
			cur = nil
		}
		root.Close()
	}
	s.mu.Lock()
	known := sameFile(cur, s.last)
	s.mu.Unlock()
	if known || w.seen && sameFile(cur, w.reported) {
		return false
	}
	w.reported, w.seen = cur, true
	return true
}

// sameFile reports whether a and b describe the same file in the same
// state: the same file (device and inode), size and modification time.
// Two nils (no file) are the same.
func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
