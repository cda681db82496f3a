package resource

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/names"
)

// DefaultMaxSize is the most [Read] reads unless [WithMaxSize] says otherwise:
// 64 MiB.
const DefaultMaxSize = 64 << 20

// DefaultName names a resource made by [Read] when the reader has no file
// name.
const DefaultName = "data"

// ReadOption configures [Read].
type ReadOption func(*readConfig)

type readConfig struct {
	maxSize  int64
	fileName string
}

// WithMaxSize sets the most bytes [Read] accepts; a reader with more content
// makes Read fail with an error wrapping toolkit.ErrBadParameter. n <= 0
// means [DefaultMaxSize].
func WithMaxSize(n int64) ReadOption {
	return func(c *readConfig) {
		if n <= 0 {
			n = DefaultMaxSize
		}
		c.maxSize = n
	}
}

// WithFileName gives [Read] the file name (a path is allowed) that names the
// resource and whose extension guides MIME detection, in place of the
// reader's own Name method.
func WithFileName(name string) ReadOption {
	return func(c *readConfig) { c.fileName = name }
}

// Read reads r to the end and returns a resource holding its content, typed
// and converted as [Data] does. At most [DefaultMaxSize] bytes are read (see
// [WithMaxSize]); a longer input is an error, and only that much is ever held in
// memory.
//
// When r has a Name() string method, as *os.File does, or [WithFileName] is
// given, the resource is named after the file's base name without its
// extension, made an identifier with invalid characters replaced by '_'
// ("report-2024.pdf" becomes "report_2024"), and the extension guides MIME
// detection. Otherwise the resource is named [DefaultName].
func Read(r io.Reader, opts ...ReadOption) (Resource, error) {
	c := readConfig{maxSize: DefaultMaxSize}
	for _, opt := range opts {
		opt(&c)
	}
	if f, ok := r.(*os.File); ok && f == nil {
		r = nil // a nil *os.File would panic in Name
	}
	if c.fileName == "" {
		if n, ok := r.(interface{ Name() string }); ok {
			c.fileName = n.Name()
		}
	}
	name, ext := nameFromFile(c.fileName)
	if r == nil {
		return nil, fmt.Errorf("%w: resource %q: nil reader", errs.ErrBadParameter, name)
	}

	// Refuse early what is known to be too large, and size the buffer.
	hint := int64(-1)
	switch x := r.(type) {
	case interface{ Len() int }:
		hint = int64(x.Len())
		if hint > c.maxSize {
			return nil, tooLarge(name, c.maxSize)
		}
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := x.Stat(); err == nil && fi.Mode().IsRegular() {
			hint = fi.Size()
		}
	}
	s, err := readAll(r, c.maxSize, hint)
	if errors.Is(err, errTooLarge) {
		return nil, tooLarge(name, c.maxSize)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: resource %q: reading: %w", errs.ErrBadParameter, name, err)
	}
	return fromContent(name, ext, []byte(s[:min(len(s), sniffLen)]), s), nil
}

var errTooLarge = errors.New("too large")

// maxEmptyReads is how many reads in a row may return no data and no error
// before readAll gives up, as bufio does.
const maxEmptyReads = 100

// readAll reads r to EOF into a string, failing with errTooLarge once more
// than limit bytes arrive. hint, when not negative, is the expected size.
func readAll(r io.Reader, limit, hint int64) (string, error) {
	size := int64(sniffLen)
	if hint >= 0 {
		// One byte more than expected, so that reading EOF needs no growth.
		size = min(hint, limit, DefaultMaxSize) + 1
	}
	b := make([]byte, 0, size)
	for empty := 0; ; {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow
		}
		room := min(int64(cap(b)-len(b)), limit+1-int64(len(b)))
		n, err := r.Read(b[len(b) : len(b)+int(room)])
		if n < 0 || int64(n) > room {
			return "", fmt.Errorf("reader returned an invalid count %d", n)
		}
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return "", errTooLarge
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		// A reader that keeps returning nothing would spin forever.
		if n > 0 {
			empty = 0
		} else if empty++; empty == maxEmptyReads {
			return "", io.ErrNoProgress
		}
	}
	if len(b) == 0 {
		return "", nil
	}
	if cap(b)-len(b) > len(b)/8+sniffLen {
		return string(b), nil // release the unused part of a grown buffer
	}
	// b is never used again, so the string may share its memory.
	return unsafe.String(&b[0], len(b)), nil
}

func tooLarge(name string, limit int64) error {
	return fmt.Errorf("%w: resource %q: content larger than %d bytes", errs.ErrBadParameter, name, limit)
}

// nameFromFile returns the resource name and the extension for a file name:
// the base name without extension made an identifier, and the extension
// with its dot. An empty or nameless file name gives DefaultName.
func nameFromFile(fileName string) (name, ext string) {
	if fileName == "" {
		return DefaultName, ""
	}
	base := filepath.Base(fileName)
	ext = filepath.Ext(base)
	stem := base[:len(base)-len(ext)]
	if stem == "" { // a dot file such as ".env": all name, no extension
		stem, ext = strings.TrimPrefix(base, "."), ""
	}
	stem = strings.Trim(stem, string(filepath.Separator)+".")
	if stem == "" {
		return DefaultName, ext
	}
	return names.Sanitize(stem), ext
}
