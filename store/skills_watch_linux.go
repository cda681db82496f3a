//go:build linux

package store

import (
	"context"
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// skillsMask selects the inotify events of the skills tree the store
// reacts to: files closed after writing, moved or deleted, and
// directories created, moved or deleted.
const skillsMask = syscall.IN_CLOSE_WRITE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM |
	syscall.IN_DELETE | syscall.IN_CREATE | syscall.IN_DONT_FOLLOW | syscall.IN_ONLYDIR

// rootMask selects the events of the store's directory that matter to
// skills: the skills directory coming and going.
const rootMask = syscall.IN_CREATE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM | syscall.IN_DELETE |
	syscall.IN_DONT_FOLLOW | syscall.IN_ONLYDIR

// maxSkillWatches bounds the directories of the skills tree watched.
const maxSkillWatches = 8192

// watchAll runs watch, and beside it the watch of the skills tree, until
// ctx is cancelled; no goroutine outlives it.
func (d *Dir) watchAll(ctx context.Context) error {
	if d.skillsOnly {
		if err := d.ready(); err != nil {
			return err
		}
		d.watchSkills(ctx)
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.watchSkills(ctx)
	}()
	err := d.watch(ctx)
	cancel()
	wg.Wait()
	return err
}

// watchSkills follows the skills tree with inotify and reloads the skills
// when anything in it changes. A failure to watch is logged: the skills
// are then read again only when the directory is rescanned.
func (d *Dir) watchSkills(ctx context.Context) {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		d.logger.Warn("store: watching skills failed", "dir", d.dir, "err", err)
		return
	}
	f := os.NewFile(uintptr(fd), "inotify-skills")
	defer f.Close()
	rootWD := -1 // OpenSkills: the directory is the skills tree
	if !d.skillsOnly {
		if rootWD, err = syscall.InotifyAddWatch(fd, d.dir, rootMask); err != nil {
			d.logger.Warn("store: watching skills failed", "dir", d.dir, "err", err)
			return
		}
	}
	woken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(woken)
		f.SetReadDeadline(time.Unix(1, 0))
	})
	defer func() {
		if !stop() {
			<-woken
		}
	}()
	d.addSkillWatches(fd)
	d.reloadSkills(true)
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if ctx.Err() != nil || err != nil {
			return
		}
		if skillEvents(buf[:n], int32(rootWD)) {
			d.addSkillWatches(fd)
			d.reloadSkills(true)
		}
	}
}

// addSkillWatches watches every directory of the skills tree, without
// following links, up to maxSkillWatches. Watching a directory again is
// harmless.
func (d *Dir) addSkillWatches(fd int) {
	n := 0
	filepath.WalkDir(filepath.Join(d.dir, d.skillsPath()), func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.IsDir() {
			return nil
		}
		if n++; n > maxSkillWatches {
			return filepath.SkipAll
		}
		syscall.InotifyAddWatch(fd, p, skillsMask)
		return nil
	})
}

// skillEvents reports whether a buffer of inotify events touches the
// skills: any event of the tree, or one in the store's directory (rootWD)
// that names the skills directory.
func skillEvents(buf []byte, rootWD int32) bool {
	for len(buf) >= syscall.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(buf[0:4]))
		mask := binary.NativeEndian.Uint32(buf[4:8])
		size := int(binary.NativeEndian.Uint32(buf[12:16]))
		end := syscall.SizeofInotifyEvent + size
		if end > len(buf) {
			return true
		}
		name := string(trimNUL(buf[syscall.SizeofInotifyEvent:end]))
		buf = buf[end:]
		switch {
		case mask&syscall.IN_IGNORED != 0 && wd != rootWD:
			// A removed directory's watch ends; its parent saw the removal.
		case wd == rootWD:
			if name == SkillsDir {
				return true
			}
		case mask&syscall.IN_CREATE != 0 && mask&syscall.IN_ISDIR == 0:
			// A new file: wait for its writer's close.
		default:
			return true
		}
	}
	return false
}

// trimNUL drops the NUL padding of an inotify event's name.
func trimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}
