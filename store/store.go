// Package store serves a directory as the toolkit's persistent "user"
// namespace: markdown files are prompts, every other file is a resource,
// and changes on disk reach the toolkit as list-change and update events.
//
// A delegate returns a *Dir from CreateConnector for
// toolkit.UserConnectorURI:
//
//	func (d *delegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
//		if url == toolkit.UserConnectorURI {
//			return store.Open(d.dir, onEvent)
//		}
//		...
//	}
//
// The directory is read flat: subdirectories are ignored, and so are hidden
// files (".name", which is also how Put names its temporary files) and
// editor backups ("name~", "#name#"). A file that is not a valid prompt is
// logged and skipped; it never hides the others.
//
// Its skills/ subdirectory holds skills, one folder each in the Agent
// Skills layout (skills/<name>/SKILL.md and supporting files), watched too
// and served by ListSkills (see SkillsDir, OpenSkills and package skill).
//
// The store is confined to its directory. Every scan and every read goes
// through an [os.Root] opened on it, so no symbolic link, rename or swap
// can make it list or serve a file outside the directory: a link to a
// file elsewhere (or to /proc/self/environ) is refused with one log line,
// and a served file replaced by such a link after a scan is refused at the
// next read with an error wrapping [ErrOutside]. Links that stay inside
// work, relative or absolute; a linked directory is never walked. Only
// regular files are served, and opening one never waits (a named pipe is
// refused at once). The store serves only the directory Open found: when
// another is put at its path, reads and writes fail with ErrUnavailable
// and Run returns.
package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/names"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

// DefaultPollInterval is how often Run rescans the directory where the
// operating system offers no change notification (everywhere but Linux).
const DefaultPollInterval = 2 * time.Second

// PromptExt is the extension of the files read as prompts.
const PromptExt = ".md"

// Option configures Open.
type Option func(*Dir)

// WithLogger sets the logger that reports skipped files and watch errors
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(d *Dir) {
		if l != nil {
			d.logger = l
		}
	}
}

// WithPollInterval makes Run rescan the directory every interval instead of
// using operating-system notifications. It is the only mode off Linux, with
// DefaultPollInterval unless set. A rescan reads only the files whose size
// or modification time changed.
func WithPollInterval(interval time.Duration) Option {
	return func(d *Dir) { d.poll = interval }
}

// Dir is a directory served as a toolkit.Connector. It is safe for
// concurrent use.
type Dir struct {
	dir     string
	onEvent func(toolkit.ConnectorEvent)
	logger  *slog.Logger
	poll    time.Duration
	running atomic.Bool

	confined *confinement // every access to the directory goes through it

	update  sync.Mutex        // serialises batches of reloads
	pending map[string]stamp  // poll mode: changed files seen once; guarded by update
	skipped map[string]string // files skipped, with why, logged once; guarded by update

	skills     skillSet // the skills directory (skills.go)
	skillsOnly bool     // OpenSkills: the directory holds skill folders only

	mu        sync.RWMutex // guards the fields below
	entries   map[string]*entry
	prompts   []toolkit.Prompt
	resources []toolkit.Resource
}

var _ toolkit.Connector = (*Dir)(nil)

// stamp is what a scan sees of a file without reading it.
type stamp struct {
	size int64
	mod  time.Time
}

// entry is what the store knows of one file.
type entry struct {
	size   int64
	mod    time.Time
	sum    [sha256.Size]byte
	prompt *prompt.Agent // a valid prompt file
	res    *fileResource // any other file
	// neither set: a prompt file that does not parse (logged once per
	// content)
}

// Open returns the store for dir, creating the directory if needed, and
// reads its files. onEvent (which may be nil) receives the events Run and
// Put fire; it is called outside the store's locks, but must not call Put
// or Remove itself.
func Open(dir string, onEvent func(toolkit.ConnectorEvent), opts ...Option) (*Dir, error) {
	return open(dir, onEvent, false, opts)
}

// open is Open, or OpenSkills when skillsOnly is set.
func open(dir string, onEvent func(toolkit.ConnectorEvent), skillsOnly bool, opts []Option) (*Dir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: store %q: %w", errs.ErrBadParameter, dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("%w: store %q: %w", errs.ErrUnavailable, dir, err)
	}
	confined, err := confine(abs)
	if err != nil {
		return nil, fmt.Errorf("%w: store %q: %w", errs.ErrUnavailable, dir, err)
	}
	d := &Dir{
		dir:        abs,
		onEvent:    func(toolkit.ConnectorEvent) {}, // the first scan fires nothing
		skillsOnly: skillsOnly,
		logger:     slog.Default(),
		confined:   confined,
		entries:    make(map[string]*entry),
		pending:    make(map[string]stamp),
		skipped:    make(map[string]string),
	}
	for _, opt := range opts {
		opt(d)
	}
	if _, err := d.rescan(false, false); err != nil {
		return nil, err
	}
	if onEvent != nil {
		d.onEvent = onEvent
	}
	return d, nil
}

// Path returns the absolute path of the directory.
func (d *Dir) Path() string { return d.dir }

// ListTools returns nil: the user namespace never serves tools.
func (d *Dir) ListTools(context.Context) ([]toolkit.Tool, error) { return nil, nil }

// ListPrompts returns the prompts read from the *.md files, by file name.
// When two files declare the same prompt name, the first by file name
// wins and the other is logged.
func (d *Dir) ListPrompts(context.Context) ([]toolkit.Prompt, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return slices.Clone(d.prompts), nil
}

// ListResources returns the other files as resources, by file name. Their
// URIs are file:// URLs of the absolute paths; their content is read from
// disk on each Read.
func (d *Dir) ListResources(context.Context) ([]toolkit.Resource, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return slices.Clone(d.resources), nil
}

// Run watches the directory until ctx is cancelled, keeping the lists
// current and firing events for every real change: a prompt list change
// when a prompt file is added, edited (so that its prompt changes), removed
// or renamed; a resource list change when a resource appears, disappears
// or changes type; a resource update (with its URI) when a resource's
// content changes. It reports StatusReady through onEvent once watching.
//
// Run returns nil when ctx is cancelled, and an error wrapping
// ErrUnavailable when the directory goes away or cannot be watched. Only
// one Run may be active at a time.
func (d *Dir) Run(ctx context.Context) error {
	if !d.running.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: store %q: already running", errs.ErrConflict, d.dir)
	}
	defer d.running.Store(false)
	if d.poll > 0 {
		return d.runPoll(ctx, d.poll)
	}
	return d.watchAll(ctx)
}

// ready catches up with changes made since the last scan and reports the
// store ready.
func (d *Dir) ready() error {
	if _, err := d.rescan(false, false); err != nil {
		return err
	}
	d.onEvent(toolkit.StateChangeEvent(toolkit.ConnectorState{
		Name:           "store",
		Title:          d.dir,
		Status:         toolkit.StatusReady,
		ConnectedSince: time.Now(),
	}))
	return nil
}

// runPoll rescans the directory every interval.
func (d *Dir) runPoll(ctx context.Context, interval time.Duration) error {
	if err := d.ready(); err != nil {
		return err
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := d.rescan(false, true); err != nil {
				return err
			}
		}
	}
}

// changes are the effects of a batch of reloads.
type changes struct {
	prompts, resources bool
	updated            []string // URIs of resources whose content changed
}

// fire sends the events for c.
func (d *Dir) fire(c changes) {
	if c.prompts {
		d.onEvent(toolkit.PromptListChangeEvent())
	}
	if c.resources {
		d.onEvent(toolkit.ResourceListChangeEvent())
	}
	for _, uri := range c.updated {
		d.onEvent(toolkit.ResourceUpdatedEvent(uri))
	}
}

// rescan reloads every file of the directory and forgets the files that
// are gone, then fires the events. With force unset, files whose size and
// modification time are unchanged are not read again. With settle set (the
// polling mode, which cannot see a writer close its file), a changed file
// is read only once a second scan finds the same size and time, so a file
// being written is not read half done.
func (d *Dir) rescan(force, settle bool) (changes, error) {
	list, err := d.readDir()
	if err != nil {
		return changes{}, fmt.Errorf("%w: store %q: %w", errs.ErrUnavailable, d.dir, err)
	}
	seen := make(map[string]bool, len(list))
	all := make([]string, 0, len(list))
	for _, de := range list {
		seen[de.Name()] = true
		all = append(all, de.Name())
	}
	d.mu.RLock()
	for name := range d.entries {
		if !seen[name] {
			all = append(all, name) // gone: reloading forgets it
		}
	}
	d.mu.RUnlock()
	d.update.Lock()
	for name := range d.skipped {
		if !seen[name] {
			delete(d.skipped, name) // gone: log it again if it comes back
		}
	}
	d.update.Unlock()
	var c changes
	if !d.skillsOnly {
		c = d.reload(force, settle, all...)
	}
	d.reloadSkills(true)
	return c, nil
}

// readDir lists the directory.
func (d *Dir) readDir() ([]fs.DirEntry, error) {
	root, err := d.confined.root()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// reload brings the entries for the named files up to date with the disk,
// rebuilds the lists and fires the events of what changed.
func (d *Dir) reload(force, settle bool, files ...string) changes {
	d.update.Lock()
	// Without the directory (gone or replaced), every file is gone.
	root, err := d.confined.root()
	if err == nil {
		defer root.Close()
	}
	var c changes
	for _, name := range files {
		d.reloadOne(root, name, force, settle, &c)
	}
	if c.prompts || c.resources {
		d.rebuild()
	}
	d.update.Unlock()
	slices.Sort(c.updated)
	d.fire(c)
	return c
}

// ignored reports whether a file name is skipped: hidden files, temporary
// files and editor backups.
func ignored(name string) bool {
	return name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") ||
		strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#") ||
		strings.ContainsRune(name, filepath.Separator)
}

// reloadOne updates the entry of one file, read through root (nil when
// the directory is gone). d.update is held.
func (d *Dir) reloadOne(root *os.Root, name string, force, settle bool, c *changes) {
	d.mu.RLock()
	old := d.entries[name]
	d.mu.RUnlock()

	var next *entry
	if !ignored(name) && root != nil {
		next = d.load(root, name, old, force, settle)
	}
	if next == old {
		return
	}
	d.mu.Lock()
	if next == nil {
		delete(d.entries, name)
	} else {
		d.entries[name] = next
	}
	d.mu.Unlock()

	// What changed, as the toolkit sees it.
	var oldPrompt, newPrompt *prompt.Agent
	var oldRes, newRes *fileResource
	if old != nil {
		oldPrompt, oldRes = old.prompt, old.res
	}
	if next != nil {
		newPrompt, newRes = next.prompt, next.res
	}
	if oldPrompt != newPrompt {
		c.prompts = true
	}
	switch {
	case oldRes == nil && newRes == nil:
	case oldRes == nil || newRes == nil || oldRes.typ != newRes.typ:
		c.resources = true
	case old.sum != next.sum:
		c.updated = append(c.updated, newRes.uri)
	}
}

// skip logs why the file name is skipped, once until that changes.
// d.update is held.
func (d *Dir) skip(name string, err error) {
	if d.skipped[name] == err.Error() {
		return
	}
	d.skipped[name] = err.Error()
	if errors.Is(err, ErrOutside) {
		d.logRefused("store: refusing a file that leads outside the directory", name, err)
		return
	}
	d.logRefused("store: skipping file", name, err)
}

// load reads one file and returns its new entry: old itself when nothing
// changed, nil when the file is gone, not a regular file or leads outside
// the directory. d.update is held.
func (d *Dir) load(root *os.Root, name string, old *entry, force, settle bool) *entry {
	path := filepath.Join(d.dir, name)
	fi, err := d.confined.stat(root, name)
	if err != nil || !fi.Mode().IsRegular() {
		delete(d.pending, name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrOutside) {
			d.skip(name, err)
		} else {
			delete(d.skipped, name)
		}
		return nil
	}
	now := stamp{fi.Size(), fi.ModTime()}
	if old != nil && !force && old.size == now.size && old.mod.Equal(now.mod) {
		delete(d.pending, name)
		return old
	}
	if settle {
		if seen, ok := d.pending[name]; !ok || seen.size != now.size || !seen.mod.Equal(now.mod) {
			d.pending[name] = now
			return old // look again at the next scan
		}
	}
	delete(d.pending, name)
	f, err := d.confined.open(root, name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrOutside) {
			d.skip(name, err)
		}
		return nil
	}
	defer f.Close()
	delete(d.skipped, name)
	e := &entry{size: fi.Size(), mod: fi.ModTime()}

	if strings.EqualFold(filepath.Ext(name), PromptExt) {
		data, err := io.ReadAll(io.LimitReader(f, prompt.MaxFileSize+1))
		if err != nil {
			d.logger.Warn("store: skipping file", "path", path, "err", err)
			return nil
		}
		e.sum = sha256.Sum256(data)
		if old != nil && old.sum == e.sum {
			return sameContent(old, e)
		}
		p, err := prompt.Read(namedReader{bytes.NewReader(data), path})
		if err != nil {
			d.logger.Warn("store: skipping prompt file", "path", path, "err", err)
			return e
		}
		if other := d.promptNamed(p.Name(), name); other != "" {
			d.logger.Warn("store: prompt name already used by another file; the first file by name wins",
				"path", path, "prompt", p.Name(), "other", filepath.Join(d.dir, other))
		}
		e.prompt = p
		return e
	}

	h := sha256.New()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		d.logger.Warn("store: skipping file", "path", path, "err", err)
		return nil
	}
	head = head[:n]
	h.Write(head)
	if _, err := io.Copy(h, f); err != nil {
		d.logger.Warn("store: skipping file", "path", path, "err", err)
		return nil
	}
	h.Sum(e.sum[:0])
	if old != nil && old.sum == e.sum {
		return sameContent(old, e)
	}
	e.res = newFileResource(d, name, head)
	if old != nil && old.res != nil && old.res.typ == e.res.typ {
		e.res = old.res // same resource, new content
	}
	return e
}

// sameContent returns old with the file's new size and time, so the next
// scan does not read it again; the content, and so the items, are the same.
func sameContent(old, e *entry) *entry {
	n := *old
	n.size, n.mod = e.size, e.mod
	return &n
}

// promptNamed returns the file, other than file, whose prompt is called
// name, or "".
func (d *Dir) promptNamed(name, file string) string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for f, e := range d.entries {
		if f != file && e.prompt != nil && e.prompt.Name() == name {
			return f
		}
	}
	return ""
}

// rebuild recomputes the sorted lists from the entries.
func (d *Dir) rebuild() {
	d.mu.Lock()
	defer d.mu.Unlock()
	files := make([]string, 0, len(d.entries))
	for f := range d.entries {
		files = append(files, f)
	}
	slices.Sort(files)
	d.prompts, d.resources = nil, nil
	taken := make(map[string]bool)
	for _, f := range files {
		e := d.entries[f]
		switch {
		case e.prompt != nil && !taken[e.prompt.Name()]:
			taken[e.prompt.Name()] = true
			d.prompts = append(d.prompts, e.prompt)
		case e.res != nil:
			d.resources = append(d.resources, e.res)
		}
	}
}

// namedReader gives prompt.Read a file name.
type namedReader struct {
	*bytes.Reader
	name string
}

func (r namedReader) Name() string { return r.name }

// open opens the file name of the directory for reading.
func (d *Dir) open(name string) (*os.File, error) {
	root, err := d.confined.root()
	if err != nil {
		return nil, err
	}
	defer root.Close() // the file stays open
	return d.confined.open(root, name)
}

// fileResource is a file of the store served as a resource.
type fileResource struct {
	uri, name, typ string
	d              *Dir
	file           string // its name in the directory
}

func newFileResource(d *Dir, base string, head []byte) *fileResource {
	// The type is what package resource gives the same content (sniffed,
	// then the extension), so store files and resource.Read agree.
	typ := "application/octet-stream"
	if r, err := resource.Read(bytes.NewReader(head), resource.WithFileName(base)); err == nil {
		typ = r.Type()
	}
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	if stem == "" {
		stem = base
	}
	p := filepath.ToSlash(filepath.Join(d.dir, base))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a drive letter: file:///C:/dir/file
	}
	return &fileResource{
		uri:  (&url.URL{Scheme: "file", Path: p}).String(),
		name: names.Sanitize(stem),
		typ:  typ,
		d:    d,
		file: base,
	}
}

// URI returns the file:// URL of the file.
func (r *fileResource) URI() string { return r.uri }

// Name returns the file's base name without extension, as an identifier.
func (r *fileResource) Name() string { return r.name }

// Description returns "".
func (r *fileResource) Description() string { return "" }

// Type returns the MIME type of the content, as package resource
// detects it (sniffed, then from the extension).
func (r *fileResource) Type() string { return r.typ }

// Read returns the file's current content; text in another encoding
// (Latin-1, UTF-16) is converted to UTF-8, as resource.Read does. The file
// is opened inside the directory at each read: when it has become a link
// leading outside, the error wraps [ErrOutside] (and so ErrNotFound), and
// the refusal is logged.
func (r *fileResource) Read(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := r.d.open(r.file)
	if errors.Is(err, ErrOutside) {
		r.d.logRefused("store: refusing to read a file that leads outside the directory", r.file, err)
		return nil, fmt.Errorf("resource %q: %w", r.uri, err)
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errs.ErrNotFound) {
		return nil, fmt.Errorf("%w: resource %q: %w", errs.ErrNotFound, r.uri, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: resource %q: %w", errs.ErrUnavailable, r.uri, err)
	}
	defer f.Close()
	res, err := resource.Read(f, resource.WithFileName(r.file))
	if err != nil {
		return nil, fmt.Errorf("%w: resource %q: %w", errs.ErrUnavailable, r.uri, err)
	}
	return res.Read(ctx)
}
