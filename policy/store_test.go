//go:build unix

package policy

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
)

// TestFileStoreRefusesSymlinks plants symbolic links where the pins file
// and its lock go, before and after the store is in use: none is
// followed, so a link can neither feed the engine approvals kept
// elsewhere nor have a save write, or create, a file elsewhere.
func TestFileStoreRefusesSymlinks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "pins.json")
	def := definitionOf(newFake("x", "approved elsewhere"), timeNow())

	// A pins file of the attacker's, which approves a definition.
	evil := filepath.Join(dir, "evil.json")
	evilData, _ := json.Marshal(pinFile{Version: pinFileVersion, Pins: []Pin{{Key: "srv.x", Approved: &def}}})
	mustWrite(t, evil, evilData)
	mustSymlink(t, evil, file)
	s := NewFileStore(file)
	if pins, err := s.Load(ctx); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "symbolic link") || pins != nil {
		t.Fatalf("Load through a link: %v %v", pins, err)
	}
	if _, err := New(ctx, Config{}, WithPins(s)); err == nil {
		t.Fatal("an engine loaded its pins through a link")
	}
	if err := s.Save(ctx, []Pin{{Key: "srv.y", Approved: &def}}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Save through a link: %v", err)
	}
	if got, _ := os.ReadFile(evil); string(got) != string(evilData) {
		t.Errorf("the link's target was written: %s", got)
	}

	// The file is swapped for a link while the store is in use.
	os.Remove(file)
	mustNotFail(t, s.Save(ctx, []Pin{{Key: "srv.y", Approved: &def}}))
	victim := filepath.Join(dir, "victim")
	mustWrite(t, victim, []byte("precious"))
	os.Remove(file)
	mustSymlink(t, victim, file)
	if err := s.Save(ctx, []Pin{{Key: "srv.z", Approved: &def}}); err == nil {
		t.Fatal("Save wrote through a swapped link")
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious" {
		t.Errorf("the victim was written: %q", got)
	}
	if target, err := os.Readlink(file); err != nil || target != victim {
		t.Errorf("the link was replaced: %q %v", target, err)
	}

	// A link where the lock goes, to a file that does not exist: the
	// lock is not taken through it, and nothing is created.
	os.Remove(file)
	lockVictim := filepath.Join(dir, "created-by-the-lock")
	os.Remove(file + ".lock")
	mustSymlink(t, lockVictim, file+".lock")
	if err := s.Save(ctx, []Pin{{Key: "srv.y", Approved: &def}}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Save with a linked lock: %v", err)
	}
	if _, err := s.Load(ctx); err == nil {
		t.Fatal("Load with a linked lock")
	}
	if _, err := os.Lstat(lockVictim); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock's link created its target: %v", err)
	}
}

// TestFileStoreRefusesAFIFO: a FIFO in place of the pins file is refused
// at once; opening it for reading would otherwise wait for a writer.
func TestFileStoreRefusesAFIFO(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pins.json")
	if err := syscall.Mkfifo(file, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := NewFileStore(file).Load(context.Background()); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load of a FIFO: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Load of a FIFO hangs")
	}
}

// TestFileStoreNoticesOtherWriters: the watch reports what another store
// (another process) did to the file — a save, a removal, a bad file —
// once each, and never the store's own saves and reads.
func TestFileStoreNoticesOtherWriters(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "pins.json")
	mine, other := NewFileStore(file), NewFileStore(file)
	def := definitionOf(newFake("x", "y"), timeNow())
	var w watchState
	step := func(what string, want bool) {
		t.Helper()
		if got := mine.poll(&w); got != want {
			t.Fatalf("%s: poll = %v, want %v", what, got, want)
		}
	}
	step("no file", false)
	mustNotFail(t, mine.Save(ctx, []Pin{{Key: "s.one", Approved: &def}}))
	step("its own save", false)
	mustNotFail(t, other.Save(ctx, []Pin{{Key: "s.two", Approved: &def}}))
	step("another's save", true)
	step("the same save again", false)
	if pins, err := mine.Load(ctx); err != nil || len(pins) != 2 {
		t.Fatalf("%v %v", pins, err)
	}
	step("after reading it", false)
	mustNotFail(t, mine.Save(ctx, []Pin{{Key: "s.three", Approved: &def}}))
	step("its own save after a merge", false)

	// In-place edits count too, and a bad file is reported once.
	mustWrite(t, file, []byte("{not json"))
	step("a bad file", true)
	if _, err := mine.Load(ctx); err == nil {
		t.Fatal("a bad file loaded")
	}
	step("the bad file again", false)
	os.Remove(file)
	step("a removal", true)
	if pins, err := mine.Load(ctx); err != nil || pins != nil {
		t.Fatalf("%v %v", pins, err)
	}
	step("after reading no file", false)
}

// TestFileStoreWatch runs the watch: another store's approval reaches the
// callback, and cancelling ends it.
func TestFileStoreWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	file := filepath.Join(t.TempDir(), "pins.json")
	mine := NewFileStore(file)
	if err := mine.Watch(ctx, 0, func() {}); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("interval 0: %v", err)
	}
	changed := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- mine.Watch(ctx, time.Millisecond, func() {
			mine.Load(ctx)
			changed <- struct{}{}
		})
	}()
	def := definitionOf(newFake("x", "y"), timeNow())
	mustNotFail(t, NewFileStore(file).Save(ctx, []Pin{{Key: "s.one", Approved: &def}}))
	select {
	case <-changed:
	case <-time.After(waitLimit):
		t.Fatal("the change was not noticed")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Watch returned %v", err)
	}
}

func mustWrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustNotFail(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitLimit bounds how long a test waits for something that should
// happen at once.
const waitLimit = 10 * time.Second

// TestFileStoreDirectorySwapped: the pins file's directory is reached
// through a symbolic link (a mounted configuration directory); once the
// store has used it, the link swapped to another directory, holding
// approvals of an attacker's, is refused by Load and Save alike, and
// nothing is read or written there.
func TestFileStoreDirectorySwapped(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	real, evilDir := filepath.Join(base, "real"), filepath.Join(base, "evil")
	for _, d := range []string{real, evilDir} {
		mustNotFail(t, os.Mkdir(d, 0o700))
	}
	link := filepath.Join(base, "config")
	mustSymlink(t, real, link)
	s := NewFileStore(filepath.Join(link, "pins.json"))
	def := definitionOf(newFake("x", "approved"), timeNow())
	mustNotFail(t, s.Save(ctx, []Pin{{Key: "srv.x", Approved: &def}}))
	if pins, err := s.Load(ctx); err != nil || len(pins) != 1 {
		t.Fatalf("Load: %v %v", pins, err)
	}

	evilDef := definitionOf(newFake("y", "approved elsewhere"), timeNow())
	evilData, _ := json.Marshal(pinFile{Version: pinFileVersion, Pins: []Pin{{Key: "srv.y", Approved: &evilDef}}})
	mustWrite(t, filepath.Join(evilDir, "pins.json"), evilData)
	mustNotFail(t, os.Remove(link))
	mustSymlink(t, evilDir, link)
	if pins, err := s.Load(ctx); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "another directory") || pins != nil {
		t.Fatalf("Load through the swapped directory: %v %v", pins, err)
	}
	if err := s.Save(ctx, []Pin{{Key: "srv.z", Approved: &def}}); err == nil {
		t.Fatal("Save wrote through the swapped directory")
	}
	if got, _ := os.ReadFile(filepath.Join(evilDir, "pins.json")); string(got) != string(evilData) {
		t.Errorf("the other directory's file was written: %s", got)
	}
	if entries, _ := os.ReadDir(evilDir); len(entries) != 1 {
		t.Errorf("the other directory holds %d files, want its one", len(entries))
	}
}
