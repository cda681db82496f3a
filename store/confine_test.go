package store_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/store"
)

// outside returns a directory beside the store's with a secret file and a
// valid prompt file in it.
func outside(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("outside-secret-content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.md"), []byte(promptFile("A prompt from outside", "outside-secret-content")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (h *harness) symlink(target, name string) {
	h.t.Helper()
	if err := os.Symlink(target, h.path(name)); err != nil {
		h.t.Fatal(err)
	}
}

// served returns the names of everything the store lists.
func (h *harness) served() []string {
	var out []string
	for _, p := range h.promptNames() {
		out = append(out, "prompt:"+p)
	}
	for _, uri := range h.resourceURIs() {
		out = append(out, filepath.Base(uri))
	}
	return out
}

// refusals counts the log lines about files refused for leading outside.
func (h *harness) refusals(name string) int {
	n := 0
	for line := range strings.Lines(h.log.String()) {
		if strings.Contains(line, "leads outside") && strings.Contains(line, filepath.Join(h.dir, name)) {
			n++
		}
	}
	return n
}

func TestOutsideLinksRefused(t *testing.T) {
	out := outside(t)
	h := &harness{t: t, dir: t.TempDir(), events: make(chan toolkit.ConnectorEvent, 64), log: new(syncBuffer)}
	h.write("ok.txt", "inside")
	h.symlink(filepath.Join(out, "secret.txt"), "abs.txt")                      // absolute, outside
	h.symlink(filepath.Join(out, "secret.md"), "abs.md")                        // a prompt, outside
	h.symlink(filepath.Join("..", filepath.Base(out), "secret.txt"), "rel.txt") // relative, outside
	h.symlink("..", "up")                                                       // the parent directory
	h.symlink("hop.txt", "chain.txt")                                           // a chain that ends outside
	h.symlink(filepath.Join(out, "secret.txt"), "hop.txt")
	h.open()

	if got := h.served(); !slices.Equal(got, []string{"ok.txt"}) {
		t.Errorf("served %v, want only ok.txt", got)
	}
	for _, name := range []string{"abs.txt", "abs.md", "rel.txt", "up", "chain.txt", "hop.txt"} {
		if n := h.refusals(name); n != 1 {
			t.Errorf("%s: %d log lines about its refusal, want 1\n%s", name, n, h.log.String())
		}
	}
	if strings.Contains(h.log.String(), "outside-secret-content") {
		t.Errorf("the log shows the content of a refused file:\n%s", h.log.String())
	}
}

func TestProcEnvironRefused(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc/self/environ here")
	}
	const secret = "environ-secret-value-4711"
	t.Setenv("STORE_TEST_SECRET", secret)
	h := &harness{t: t, dir: t.TempDir(), events: make(chan toolkit.ConnectorEvent, 64), log: new(syncBuffer)}
	h.symlink("/proc/self/environ", "env.txt")
	h.symlink("/proc/self/environ", "env.md")
	h.open()
	if got := h.served(); len(got) != 0 {
		t.Errorf("served %v, want nothing", got)
	}
	if h.refusals("env.txt") != 1 || h.refusals("env.md") != 1 {
		t.Errorf("refusals not logged once each:\n%s", h.log.String())
	}
	if strings.Contains(h.log.String(), secret) {
		t.Errorf("the log shows the environment:\n%s", h.log.String())
	}
}

func TestSwapAfterScanRefused(t *testing.T) {
	out := outside(t)
	for _, how := range []string{"rename", "replace"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t)
			if err := h.d.Put("a.txt", []byte("inside")); err != nil {
				t.Fatal(err)
			}
			rs, _ := h.d.ListResources(context.Background())
			if len(rs) != 1 {
				t.Fatalf("resources = %v", h.resourceURIs())
			}
			// Swap the served file for a link outside, with no scan since.
			switch how {
			case "rename": // atomically, as a rename over it
				h.symlink(filepath.Join(out, "secret.txt"), ".swap")
				if err := os.Rename(h.path(".swap"), h.path("a.txt")); err != nil {
					t.Fatal(err)
				}
			case "replace":
				if err := os.Remove(h.path("a.txt")); err != nil {
					t.Fatal(err)
				}
				h.symlink(filepath.Join(out, "secret.txt"), "a.txt")
			}
			data, err := rs[0].Read(context.Background())
			if !errors.Is(err, store.ErrOutside) || !errors.Is(err, toolkit.ErrNotFound) {
				t.Fatalf("Read after the swap = %q, %v; want an error wrapping ErrOutside and ErrNotFound", data, err)
			}
			if !strings.Contains(err.Error(), h.uri("a.txt")) || !strings.Contains(err.Error(), "outside the store directory") {
				t.Errorf("the error does not say which file and why: %v", err)
			}
			if data != nil || strings.Contains(err.Error(), "outside-secret-content") {
				t.Errorf("the content leaked: %q, %v", data, err)
			}
			if h.refusals("a.txt") != 1 {
				t.Errorf("refusal not logged once:\n%s", h.log.String())
			}
		})
	}
}

func TestInsideLinksServed(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), events: make(chan toolkit.ConnectorEvent, 64), log: new(syncBuffer)}
	h.write("real.txt", "real content")
	h.write("real.md", promptFile("The real prompt file", "x"))
	if err := os.Mkdir(h.path("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("sub/inner.txt", "inner content")
	h.symlink("c2.txt", "c1.txt") // relative → relative → absolute inside
	h.symlink("c3.txt", "c2.txt")
	h.symlink(h.path("real.txt"), "c3.txt")
	h.symlink(filepath.Join("sub", "inner.txt"), "in-sub.txt") // into a subdirectory
	h.symlink("sub", "linked-dir")                             // a directory link that stays inside
	h.symlink(filepath.Join("linked-dir", "inner.txt"), "via-dir.txt")
	h.symlink(filepath.Join("sub", "..", "real.txt"), "dotdot.txt")
	h.symlink(h.path("real.md"), "alias.md") // a prompt through an absolute link
	h.open()

	want := []string{"c1.txt", "c2.txt", "c3.txt", "dotdot.txt", "in-sub.txt", "real.txt", "via-dir.txt"}
	var got []string
	rs, _ := h.d.ListResources(context.Background())
	for _, r := range rs {
		got = append(got, filepath.Base(r.URI()))
		data, err := r.Read(context.Background())
		wantData := "real content"
		if strings.Contains(r.URI(), "sub") || strings.Contains(r.URI(), "via-dir") {
			wantData = "inner content"
		}
		if err != nil || string(data) != wantData {
			t.Errorf("Read %s = %q, %v; want %q", r.URI(), data, err, wantData)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("resources %v, want %v", got, want)
	}
	// A prompt is named after its file, the link's.
	if got := h.promptNames(); !slices.Equal(got, []string{"alias", "real"}) {
		t.Errorf("prompts %v", got)
	}
	if strings.Contains(h.log.String(), "leads outside") {
		t.Errorf("an inside link was refused:\n%s", h.log.String())
	}
}

func TestOutsideDirectoryLinkNotWalked(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []store.Option
	}{{"notify", nil}, {"poll", []store.Option{store.WithPollInterval(5 * time.Millisecond)}}} {
		t.Run(mode.name, func(t *testing.T) {
			out := outside(t)
			h := newHarness(t, mode.opts...)
			h.atomic = true
			h.write(syncFile, "start")
			h.symlink(out, "before")
			h.open(mode.opts...)
			h.run()
			// Planted while the store runs.
			h.symlink(out, "after")
			h.symlink(filepath.Join("after", "secret.txt"), "through.txt")
			h.symlink(filepath.Join("after", "secret.md"), "through.md")
			h.settle()
			if got := h.served(); !slices.Equal(got, []string{syncFile}) {
				t.Errorf("served %v, want only %s", got, syncFile)
			}
			for _, name := range []string{"before", "after", "through.txt", "through.md"} {
				if n := h.refusals(name); n != 1 {
					t.Errorf("%s: %d log lines about its refusal, want 1\n%s", name, n, h.log.String())
				}
			}
			// More scans do not log the same refusals again.
			h.settle()
			h.settle()
			if n := h.refusals("through.txt"); n != 1 {
				t.Errorf("after more scans: %d log lines about through.txt, want 1", n)
			}
		})
	}
}

func TestRefusalLogBounded(t *testing.T) {
	out := outside(t)
	h := &harness{t: t, dir: t.TempDir(), events: make(chan toolkit.ConnectorEvent, 64), log: new(syncBuffer)}
	const planted = 500
	for i := range planted {
		h.symlink(filepath.Join(out, "secret.txt"), "leak-"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26))+".txt")
	}
	h.open()
	if got := h.served(); len(got) != 0 {
		t.Errorf("served %d files", len(got))
	}
	// A burst of lines, then about one a second: far fewer than the files.
	if n := strings.Count(h.log.String(), "leads outside"); n < 1 || n > 20 {
		t.Errorf("%d log lines for %d refused files, want between 1 and 20", n, planted)
	}
}

func TestReplacedDirectory(t *testing.T) {
	h := newHarness(t)
	if err := h.d.Put("a.txt", []byte("inside")); err != nil {
		t.Fatal(err)
	}
	rs, _ := h.d.ListResources(context.Background())
	// The store's path now leads to another directory holding a file of
	// the same name: the store does not serve it.
	out := outside(t)
	if err := os.WriteFile(filepath.Join(out, "a.txt"), []byte("outside-secret-content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(h.dir, h.dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, h.dir); err != nil {
		t.Fatal(err)
	}
	data, err := rs[0].Read(context.Background())
	if err == nil || strings.Contains(string(data), "outside-secret-content") {
		t.Errorf("Read through a replaced directory = %q, %v", data, err)
	}
	if err := h.d.Put("b.txt", nil); err == nil {
		t.Error("Put wrote into a replaced directory")
	}
	if _, err := os.Stat(filepath.Join(out, "b.txt")); err == nil {
		t.Error("Put wrote into the other directory")
	}
}

func TestPutOverOutsideLink(t *testing.T) {
	out := outside(t)
	h := newHarness(t)
	h.symlink(filepath.Join(out, "secret.txt"), "a.txt")
	if err := h.d.Put("a.txt", []byte("new")); err != nil {
		t.Fatal(err)
	}
	// Put replaces the link; the file it pointed to is untouched.
	if data, _ := os.ReadFile(filepath.Join(out, "secret.txt")); string(data) != "outside-secret-content" {
		t.Errorf("the outside file became %q", data)
	}
	rs, _ := h.d.ListResources(context.Background())
	if len(rs) != 1 {
		t.Fatalf("resources = %v", h.resourceURIs())
	}
	if data, err := rs[0].Read(context.Background()); err != nil || string(data) != "new" {
		t.Errorf("Read = %q, %v", data, err)
	}
}

// FuzzLinkTarget plants a link with any target and checks that the store
// serves through it only what is inside its directory.
func FuzzLinkTarget(f *testing.F) {
	for _, seed := range []string{
		"real.txt", "./real.txt", "sub/../real.txt", "{dir}/real.txt", "{dir}//real.txt", "{dir}/sub/../real.txt",
		"{out}/secret.txt", "../{outbase}/secret.txt", "{dir}/../{outbase}/secret.txt", "/proc/self/environ",
		"..", ".", "/", "", "link.txt", "{dir}/link.txt", "sub/../../x", "{dir}", "{dir}/", "sub", "sub/inner.txt",
	} {
		f.Add(seed)
	}
	out := f.TempDir()
	if err := os.WriteFile(filepath.Join(out, "secret.txt"), []byte("outside-secret-content"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, target string) {
		dir := t.TempDir()
		target = strings.NewReplacer("{dir}", dir, "{out}", out, "{outbase}", filepath.Base(out)).Replace(target)
		if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sub", "inner.txt"), []byte("inside"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "real.txt"), []byte("inside"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, "link.txt")); err != nil {
			t.Skip(err) // not a target the system takes
		}
		d, err := store.Open(dir, nil, store.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := d.ListResources(context.Background())
		for _, r := range rs {
			data, err := r.Read(context.Background())
			if err == nil && string(data) != "inside" {
				t.Fatalf("link to %q: %s served %q", target, r.URI(), data)
			}
		}
	})
}
