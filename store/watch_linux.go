//go:build linux

package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/llmkit/toolkit/internal/errs"
)

// watchMask selects the inotify events the store reacts to. Files are
// re-read when a writer closes them or when they are moved in, never while
// being written; a created file is looked at only when it is a symbolic
// link, which gets no close-write.
const watchMask = syscall.IN_CLOSE_WRITE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM |
	syscall.IN_DELETE | syscall.IN_CREATE | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF |
	syscall.IN_ONLYDIR

// watch follows the directory with inotify until ctx is cancelled.
//
// The inotify descriptor is non-blocking and wrapped in an *os.File, so
// reads wait in the runtime's poller; cancelling ctx sets a past read
// deadline, which wakes the read, and the descriptor is closed before
// watch returns. No goroutine outlives the call.
func (d *Dir) watch(ctx context.Context) error {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("%w: store %q: inotify: %w", errs.ErrUnavailable, d.dir, err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	defer f.Close()
	if _, err := syscall.InotifyAddWatch(fd, d.dir, watchMask); err != nil {
		return fmt.Errorf("%w: store %q: inotify watch: %w", errs.ErrUnavailable, d.dir, err)
	}

	woken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(woken)
		f.SetReadDeadline(time.Unix(1, 0))
	})
	defer func() {
		if !stop() {
			<-woken // the wake-up ran or is running: let it finish
		}
	}()

	if err := d.ready(); err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: store %q: inotify read: %w", errs.ErrUnavailable, d.dir, err)
		}
		files, created, rescan, gone := parseEvents(buf[:n])
		if gone {
			return fmt.Errorf("%w: store %q: the directory was removed or moved", errs.ErrUnavailable, d.dir)
		}
		if rescan {
			if _, err := d.rescan(true, false); err != nil {
				return err
			}
			continue
		}
		for _, name := range created {
			if fi, err := os.Lstat(filepath.Join(d.dir, name)); err == nil && fi.Mode()&os.ModeSymlink != 0 && !slices.Contains(files, name) {
				files = append(files, name)
			}
		}
		if len(files) > 0 {
			d.reload(true, false, files...)
		}
	}
}

// parseEvents decodes a buffer of inotify events into the names of the
// files to reload (each once, in order) and of the entries created, which
// matter only if they are symbolic links. rescan reports a queue overflow;
// gone reports that the watched directory itself went away.
func parseEvents(buf []byte) (files, created []string, rescan, gone bool) {
	seen := make(map[string]bool)
	for len(buf) >= syscall.SizeofInotifyEvent {
		mask := binary.NativeEndian.Uint32(buf[4:8])
		size := int(binary.NativeEndian.Uint32(buf[12:16]))
		end := syscall.SizeofInotifyEvent + size
		if end > len(buf) {
			break
		}
		name := string(bytes.TrimRight(buf[syscall.SizeofInotifyEvent:end], "\x00"))
		buf = buf[end:]
		switch {
		case mask&syscall.IN_Q_OVERFLOW != 0:
			rescan = true
		case mask&(syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF|syscall.IN_IGNORED|syscall.IN_UNMOUNT) != 0:
			gone = true
		case name == "" || ignored(name):
		case mask&syscall.IN_ISDIR != 0:
		case mask&syscall.IN_CREATE != 0:
			// A new file: wait for its writer's close, unless it is a link.
			created = append(created, name)
		default:
			if !seen[name] {
				seen[name] = true
				files = append(files, name)
			}
		}
	}
	return files, created, rescan, gone
}
