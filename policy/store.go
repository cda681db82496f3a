package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
// save merging into what the file holds.
type FileStore struct {
	path string
}

// NewFileStore returns the store of the file at path (created on the
// first save).
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// Path returns the file's path.
func (s *FileStore) Path() string { return s.path }

// pinFile is the file's content.
type pinFile struct {
	Version int   `json:"version"`
	Pins    []Pin `json:"pins"`
}

// Load returns the pins in the file; none when it does not exist.
func (s *FileStore) Load(context.Context) ([]Pin, error) {
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.read()
}

// read reads the file; the lock is held.
func (s *FileStore) read() ([]Pin, error) {
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
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
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	current, err := s.read()
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
	return writeFileAtomic(s.path, append(data, '\n'))
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

// writeFileAtomic writes data to path through a temporary file in the
// same directory, readable by its owner only.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Chmod(name, 0o600)
	}
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		os.Remove(name)
	}
	return werr
}
