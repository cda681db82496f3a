//go:build linux

package store

import (
	"encoding/binary"
	"slices"
	"syscall"
	"testing"
)

// event encodes one inotify event as the kernel does, name padded with
// NULs.
func event(mask uint32, name string) []byte {
	size := 0
	if name != "" {
		size = (len(name) + 1 + 15) &^ 15
	}
	b := make([]byte, syscall.SizeofInotifyEvent+size)
	binary.NativeEndian.PutUint32(b[0:], 1)
	binary.NativeEndian.PutUint32(b[4:], mask)
	binary.NativeEndian.PutUint32(b[12:], uint32(size))
	copy(b[syscall.SizeofInotifyEvent:], name)
	return b
}

func TestParseEvents(t *testing.T) {
	buf := slices.Concat(
		event(syscall.IN_CLOSE_WRITE, "a.md"),
		event(syscall.IN_CREATE, "b.txt"),
		event(syscall.IN_CLOSE_WRITE, "a.md"),
		event(syscall.IN_MOVED_TO, ".hidden"),
		event(syscall.IN_CREATE|syscall.IN_ISDIR, "sub"),
		event(syscall.IN_DELETE, "c.txt"),
		event(syscall.IN_MOVED_FROM, "d.txt"),
	)
	files, created, rescan, gone := parseEvents(buf)
	if !slices.Equal(files, []string{"a.md", "c.txt", "d.txt"}) || !slices.Equal(created, []string{"b.txt"}) || rescan || gone {
		t.Errorf("files %v created %v rescan %v gone %v", files, created, rescan, gone)
	}
	if _, _, rescan, _ := parseEvents(event(syscall.IN_Q_OVERFLOW, "")); !rescan {
		t.Error("overflow does not ask for a rescan")
	}
	for _, m := range []uint32{syscall.IN_DELETE_SELF, syscall.IN_MOVE_SELF, syscall.IN_IGNORED, syscall.IN_UNMOUNT} {
		if _, _, _, gone := parseEvents(event(m, "")); !gone {
			t.Errorf("mask %#x does not report the directory gone", m)
		}
	}
	// A truncated event is ignored, not read past the end.
	if files, _, _, _ := parseEvents(event(syscall.IN_CLOSE_WRITE, "long-name.txt")[:20]); files != nil {
		t.Errorf("truncated: %v", files)
	}
}

func FuzzParseEvents(f *testing.F) {
	f.Add(slices.Concat(event(syscall.IN_CLOSE_WRITE, "a.md"), event(syscall.IN_DELETE, "b")))
	f.Add(event(syscall.IN_Q_OVERFLOW, ""))
	f.Fuzz(func(t *testing.T, buf []byte) {
		files, created, _, _ := parseEvents(buf)
		for _, name := range slices.Concat(files, created) {
			if ignored(name) {
				t.Fatalf("ignored name %q returned", name)
			}
		}
	})
}
