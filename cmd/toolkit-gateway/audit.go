package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
)

// rotatingFile is an append-only file that is rotated by size: when a
// write would take it past maxBytes, FILE.(maxFiles-1) becomes
// FILE.maxFiles (the oldest is dropped), ..., FILE becomes FILE.1, and a
// new FILE is started. A write is never split across files; one larger
// than maxBytes gets a file of its own. Each Write is one record (slog's
// JSON handler writes a line per call). Safe for concurrent use.
type rotatingFile struct {
	path     string
	maxBytes int64
	maxFiles int
	logger   *slog.Logger

	mu      sync.Mutex
	f       *os.File
	size    int64
	failing bool // the last rotation failed (logged once per streak)
}

// openRotating opens (or creates, mode 0600) the file at path for
// appending.
func openRotating(path string, maxBytes int64, maxFiles int, logger *slog.Logger) (*rotatingFile, error) {
	r := &rotatingFile{path: path, maxBytes: maxBytes, maxFiles: maxFiles, logger: logger}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

// open opens the current file and learns its size. r.mu is held or r is
// not shared.
func (r *rotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past
// maxBytes. When rotating fails, p goes to the current file: a record is
// never lost to a rotation, and the failure is logged.
func (r *rotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, fs.ErrClosed
	}
	if r.size > 0 && r.size+int64(len(p)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			if !r.failing {
				r.logger.Error("audit log: rotating failed; writing on to the current file", "file", r.path, "error", err)
			}
			r.failing = true
		} else {
			r.failing = false
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// rotate shifts the rotated files by one and starts a new file. r.mu is
// held.
func (r *rotatingFile) rotate() error {
	err := r.f.Close()
	r.f = nil
	if err != nil {
		return r.reopen(err)
	}
	for i := r.maxFiles - 1; i >= 1; i-- {
		if err := os.Rename(r.rotated(i), r.rotated(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return r.reopen(err)
		}
	}
	if err := os.Rename(r.path, r.rotated(1)); err != nil {
		return r.reopen(err)
	}
	return r.reopen(nil)
}

// reopen opens the current file again after a rotation (successful when
// cause is nil) and returns cause, or the error of opening.
func (r *rotatingFile) reopen(cause error) error {
	if r.f != nil {
		return cause
	}
	if err := r.open(); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// rotated is the path of the i-th rotated file.
func (r *rotatingFile) rotated(i int) string { return fmt.Sprintf("%s.%d", r.path, i) }

// Close closes the file; later writes fail.
func (r *rotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
