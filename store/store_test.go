package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/store"
)

func TestOpenLists(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), events: make(chan toolkit.ConnectorEvent, 64), log: new(syncBuffer)}
	h.write("greet.md", promptFile("Greet someone nicely", "Hello {{ .name }}"))
	h.write("broken.md", "---\ntitle: Broken prompt file\nbogus: 1\n---\nx")
	h.write("notes.txt", "some notes")
	h.write("image-1.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	h.write("noext", "{\"a\":1}")
	h.write("latin1.txt", "caf\xe9 cr\xe8me") // Latin-1, converted like resource.Read does
	h.write(".hidden", "x")
	h.write("backup.txt~", "x")
	if err := os.Mkdir(h.path("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("sub/inner.txt", "x")
	if err := os.Symlink(h.path("notes.txt"), h.path("link.txt")); err != nil {
		t.Fatal(err)
	}
	h.open()

	if tools, err := h.d.ListTools(context.Background()); tools != nil || err != nil {
		t.Errorf("ListTools = %v, %v", tools, err)
	}
	if got := h.promptNames(); !slices.Equal(got, []string{"greet"}) {
		t.Errorf("prompts = %v", got)
	}
	rs, _ := h.d.ListResources(context.Background())
	type row struct{ uri, name, typ string }
	var got []row
	for _, r := range rs {
		got = append(got, row{r.URI(), r.Name(), r.Type()})
	}
	want := []row{
		{h.uri("image-1.png"), "image_1", "image/png"},
		{h.uri("latin1.txt"), "latin1", "text/plain; charset=utf-8"},
		{h.uri("link.txt"), "link", "text/plain; charset=utf-8"},
		{h.uri("noext"), "noext", "text/plain; charset=utf-8"},
		{h.uri("notes.txt"), "notes", "text/plain; charset=utf-8"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("resources:\n got  %v\n want %v", got, want)
	}
	data, err := rs[4].Read(context.Background())
	if err != nil || string(data) != "some notes" {
		t.Errorf("Read = %q, %v", data, err)
	}
	if data, err := rs[1].Read(context.Background()); err != nil || string(data) != "café crème" {
		t.Errorf("Read of a Latin-1 file = %q, %v", data, err)
	}
	if log := h.log.String(); !strings.Contains(log, "broken.md") || !strings.Contains(log, "bogus") {
		t.Errorf("bad prompt not logged with its reason: %s", log)
	}
	if len(h.events) != 0 {
		t.Errorf("Open fired %d events", len(h.events))
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(file, nil); !errors.Is(err, errs.ErrUnavailable) {
		t.Errorf("Open(file) err = %v", err)
	}
	d, err := store.Open(filepath.Join(t.TempDir(), "new", "dir"), nil)
	if err != nil {
		t.Fatalf("Open does not create the directory: %v", err)
	}
	if fi, err := os.Stat(d.Path()); err != nil || !fi.IsDir() {
		t.Errorf("directory not created: %v", err)
	}
}

// testWatching runs the change scenarios against a running store.
func testWatching(t *testing.T, atomic bool, opts ...store.Option) {
	h := newHarness(t, opts...)
	h.atomic = atomic
	h.write("keep.txt", "keep")
	h.write(syncFile, "start")
	h.open(opts...)
	h.run()

	// A new prompt.
	h.write("greet.md", promptFile("Greet someone nicely", "Hello {{ .name }}"))
	h.expect(toolkit.ConnectorEventPromptListChanged, "")
	if !h.hasPrompt("greet") {
		t.Fatalf("prompts = %v", h.promptNames())
	}

	// An edit that changes the prompt.
	h.write("greet.md", promptFile("Greet someone warmly", "Hello {{ .name }}!"))
	h.expect(toolkit.ConnectorEventPromptListChanged, "")
	ps, _ := h.d.ListPrompts(context.Background())
	if ps[0].Title() != "Greet someone warmly" {
		t.Errorf("title after edit = %q", ps[0].Title())
	}

	// A new resource, then an edit of it.
	h.write("a.txt", "one")
	h.expect(toolkit.ConnectorEventResourceListChanged, "")
	h.write("a.txt", "two, longer")
	h.expect(toolkit.ConnectorEventResourceUpdated, h.uri("a.txt"))

	// Rewriting the same content is no change: the next event is the
	// next real change.
	h.write("a.txt", "two, longer")
	h.write("greet.md", promptFile("Greet someone warmly", "Hello {{ .name }}!"))
	h.write("b.txt", "b")
	h.expect(toolkit.ConnectorEventResourceListChanged, "")
	if !h.hasResource("b.txt") {
		t.Errorf("resources = %v", h.resourceURIs())
	}

	// A bad new prompt is logged and changes nothing.
	h.write("bad.md", "---\ntitle: Short\n---\nx")
	h.write("c.txt", "c")
	h.expect(toolkit.ConnectorEventResourceListChanged, "")
	if got := h.promptNames(); !slices.Equal(got, []string{"greet"}) {
		t.Errorf("prompts = %v", got)
	}
	if !strings.Contains(h.log.String(), "bad.md") {
		t.Errorf("bad file not logged: %s", h.log.String())
	}

	// Fixing it adds it.
	h.write("bad.md", promptFile("Now a proper title", "x"))
	h.expect(toolkit.ConnectorEventPromptListChanged, "")
	if got := h.promptNames(); !slices.Equal(got, []string{"bad", "greet"}) {
		t.Errorf("prompts = %v", got)
	}

	// Breaking a good prompt removes it.
	h.write("greet.md", "---\ntitle: [unclosed\n---\nx")
	h.expect(toolkit.ConnectorEventPromptListChanged, "")
	if got := h.promptNames(); !slices.Equal(got, []string{"bad"}) {
		t.Errorf("prompts = %v", got)
	}

	// Rename a resource.
	if err := os.Rename(h.path("a.txt"), h.path("renamed.txt")); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if h.hasResource("a.txt") || !h.hasResource("renamed.txt") {
		t.Errorf("after rename: %v", h.resourceURIs())
	}

	// Rename a prompt file: the name follows the file.
	if err := os.Rename(h.path("bad.md"), h.path("good.md")); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if got := h.promptNames(); !slices.Equal(got, []string{"good"}) {
		t.Errorf("after rename: prompts = %v", got)
	}

	// Delete a resource and a prompt.
	if err := os.Remove(h.path("b.txt")); err != nil {
		t.Fatal(err)
	}
	h.expect(toolkit.ConnectorEventResourceListChanged, "")
	if err := os.Remove(h.path("good.md")); err != nil {
		t.Fatal(err)
	}
	h.expect(toolkit.ConnectorEventPromptListChanged, "")
	if len(h.promptNames()) != 0 || h.hasResource("b.txt") || !h.hasResource("keep.txt") {
		t.Errorf("after deletes: prompts %v resources %v", h.promptNames(), h.resourceURIs())
	}

	// Hidden files and subdirectories never show.
	h.write(".tmp-x", "x")
	if err := os.Mkdir(h.path("dir.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("d.txt", "d")
	h.expect(toolkit.ConnectorEventResourceListChanged, "")
	want := []string{h.uri("c.txt"), h.uri("d.txt"), h.uri("keep.txt"), h.uri("renamed.txt"), h.uri(syncFile)}
	if got := h.resourceURIs(); !slices.Equal(got, want) {
		t.Errorf("resources = %v\nwant %v", got, want)
	}
}

func TestWatchNotify(t *testing.T) { testWatching(t, false) }

func TestWatchNotifyAtomicWrites(t *testing.T) { testWatching(t, true) }

func TestWatchPoll(t *testing.T) { testWatching(t, true, store.WithPollInterval(5*time.Millisecond)) }

func TestConcurrentWriters(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []store.Option
	}{{"notify", nil}, {"poll", []store.Option{store.WithPollInterval(5 * time.Millisecond)}}} {
		t.Run(mode.name, func(t *testing.T) {
			h := newHarness(t, mode.opts...)
			h.run()
			const writers, rounds = 8, 20
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for r := range rounds {
						name := fmt.Sprintf("w%d.txt", w)
						final := fmt.Sprintf("writer %d round %d", w, r)
						if w%2 == 0 {
							if err := h.d.Put(name, []byte(final)); err != nil {
								t.Error(err)
							}
						} else if err := os.WriteFile(h.path(name), []byte(final), 0o644); err != nil {
							t.Error(err)
						}
						// Everyone also rewrites one shared prompt file.
						body := promptFile("Shared prompt by writer", fmt.Sprintf("w%d r%d %s", w, r, strings.Repeat("x", 500)))
						if w%2 == 0 {
							if err := h.d.Put("shared.md", []byte(body)); err != nil {
								t.Error(err)
							}
						} else if err := os.WriteFile(h.path("shared.md"), []byte(body), 0o644); err != nil {
							t.Error(err)
						}
					}
				})
			}
			wg.Wait()
			// Settle: once a marker written after everything else is seen,
			// every earlier close-write has been handled too.
			h.write("zz_marker.txt", "done")
			h.waitUntil(func() bool { return h.hasResource("zz_marker.txt") })
			if got := len(h.resourceURIs()); got != writers+1 {
				t.Errorf("%d resources, want %d: %v", got, writers+1, h.resourceURIs())
			}
			rs, _ := h.d.ListResources(context.Background())
			for _, r := range rs[:writers] {
				data, err := r.Read(context.Background())
				if err != nil || !strings.HasSuffix(string(data), fmt.Sprintf("round %d", rounds-1)) {
					t.Errorf("%s: %q, %v", r.URI(), data, err)
				}
			}
			// The shared prompt ends up listed with whole content: writes by
			// os.WriteFile may be seen half done, but the last close-write is
			// seen after the last write.
			h.waitUntil(func() bool { return h.hasPrompt("shared") })
			want, _ := os.ReadFile(h.path("shared.md"))
			ps, _ := h.d.ListPrompts(context.Background())
			if !strings.Contains(string(want), ps[0].(interface{ Template() string }).Template()) {
				t.Errorf("listed prompt does not match the file")
			}
		})
	}
}

func TestRunTwice(t *testing.T) {
	h := newHarness(t)
	h.run()
	err := h.d.Run(context.Background())
	if !errors.Is(err, errs.ErrConflict) {
		t.Errorf("second Run: err = %v, want ErrConflict", err)
	}
	// After a stop, Run may start again.
	h.stop()
	h.run()
}

func TestRunDirectoryRemoved(t *testing.T) {
	h := newHarness(t)
	h.run()
	if err := os.RemoveAll(h.dir); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-h.done:
		if !errors.Is(err, errs.ErrUnavailable) {
			t.Errorf("err = %v, want ErrUnavailable", err)
		}
		h.cancel()
		h.cancel = nil
	case <-time.After(failAfter):
		t.Fatal("Run did not return when its directory was removed")
	}
}

func TestRunCancelledBeforeStart(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.d.Run(ctx); err != nil {
		t.Errorf("Run = %v", err)
	}
}

func TestPutRemove(t *testing.T) {
	h := newHarness(t)

	// A broken prompt is refused and nothing is written.
	err := h.d.Put("p.md", []byte("---\nnope: 1\n---\n"))
	if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Put(bad prompt) err = %v", err)
	}
	if _, err := os.Stat(h.path("p.md")); !os.IsNotExist(err) {
		t.Errorf("bad prompt written: %v", err)
	}

	// Put updates the lists and fires before it returns.
	if err := h.d.Put("p.md", []byte(promptFile("A proper prompt title", "x"))); err != nil {
		t.Fatal(err)
	}
	h.expect(toolkit.ConnectorEventPromptListChanged, "")
	if !h.hasPrompt("p") {
		t.Errorf("prompts = %v", h.promptNames())
	}
	if err := h.d.Put("r.json", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	h.expect(toolkit.ConnectorEventResourceListChanged, "")
	if err := h.d.Put("r.json", []byte(`{"a":2}`)); err != nil {
		t.Fatal(err)
	}
	h.expect(toolkit.ConnectorEventResourceUpdated, h.uri("r.json"))
	rs, _ := h.d.ListResources(context.Background())
	if len(rs) != 1 || rs[0].Type() != "application/json" {
		t.Errorf("resources = %v", rs)
	}
	entries, _ := os.ReadDir(h.dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}

	if err := h.d.Remove("r.json"); err != nil {
		t.Fatal(err)
	}
	h.expect(toolkit.ConnectorEventResourceListChanged, "")
	if _, err := rs[0].Read(context.Background()); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("Read of a removed file: err = %v, want ErrNotFound", err)
	}
	if err := h.d.Remove("r.json"); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("Remove missing: err = %v", err)
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", ".hidden", "x~", "#x#"} {
		if err := h.d.Put(bad, nil); !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("Put(%q) err = %v", bad, err)
		}
		if err := h.d.Remove(bad); !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("Remove(%q) err = %v", bad, err)
		}
	}
}

func TestDuplicatePromptNames(t *testing.T) {
	h := newHarness(t)
	h.write("a.md", "---\nname: same\ntitle: First file wins here\n---\nx")
	h.write("b.md", "---\nname: same\ntitle: Second file loses\n---\nx")
	h.open()
	ps, _ := h.d.ListPrompts(context.Background())
	if len(ps) != 1 || ps[0].Title() != "First file wins here" {
		t.Errorf("prompts = %v", ps)
	}
	if !strings.Contains(h.log.String(), "already used") {
		t.Errorf("duplicate not logged: %s", h.log.String())
	}
}

func TestResourceReadCancelled(t *testing.T) {
	h := newHarness(t)
	if err := h.d.Put("x.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	rs, _ := h.d.ListResources(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rs[0].Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if rs[0].Description() != "" {
		t.Errorf("description = %q", rs[0].Description())
	}
}
