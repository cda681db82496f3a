package resource

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/names"
)

// Scheme is the URI scheme of the resources made by this package.
const Scheme = "mem"

var (
	// processID is drawn once per process; with seq it makes every
	// generated URI unique.
	processID = newProcessID()
	seq       atomic.Uint64
)

func newProcessID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails since Go 1.24
	return hex.EncodeToString(b[:])
}

// maxGeneratedURI bounds the generated URI: scheme, ':', name, '/',
// process ID, '-', and a decimal uint64.
const maxGeneratedURI = len(Scheme) + 1 + names.MaxName + 1 + 16 + 1 + 20

// newURI returns mem:<name>/<process>-<n> with one allocation.
func newURI(name string) string {
	var buf [maxGeneratedURI]byte
	b := append(buf[:0], Scheme...)
	b = append(b, ':')
	b = append(b, name...)
	b = append(b, '/')
	b = append(b, processID...)
	b = append(b, '-')
	b = strconv.AppendUint(b, seq.Add(1), 10)
	return string(b)
}

// CheckURI returns an error wrapping toolkit.ErrBadParameter unless uri is an
// absolute URI: a scheme, a colon and something after it, parsed by
// [net/url.Parse], with no whitespace, control or format characters and only
// valid UTF-8.
func CheckURI(uri string) error {
	if uri == "" {
		return fmt.Errorf("%w: resource URI is empty", errs.ErrBadParameter)
	}
	for i, r := range uri {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(uri[i:]); size == 1 {
				return fmt.Errorf("%w: resource URI %q: invalid UTF-8 at byte %d", errs.ErrBadParameter, uri, i)
			}
		}
		if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return fmt.Errorf("%w: resource URI %q: whitespace, control or format character %U at byte %d", errs.ErrBadParameter, uri, r, i)
		}
	}
	u, err := url.Parse(uri)
	if err != nil {
		return fmt.Errorf("%w: resource URI %q: %w", errs.ErrBadParameter, uri, err)
	}
	if u.Scheme == "" {
		return fmt.Errorf("%w: resource URI %q: not absolute, want a scheme such as file: or mem:", errs.ErrBadParameter, uri)
	}
	if len(uri) == len(u.Scheme)+1 {
		return fmt.Errorf("%w: resource URI %q: nothing after the scheme", errs.ErrBadParameter, uri)
	}
	return nil
}
