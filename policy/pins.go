package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/policyctx"
)

// RulePinned is the rule named by the refusal of a tool whose definition
// changed since it was approved (see WithPins).
const RulePinned = "pinned-definition"

// Pin is what the pins know of one tool, by its key "namespace.name".
type Pin struct {
	// Key is "namespace.name".
	Key string `json:"key"`
	// Approved is the definition the tool may have: the first one seen,
	// or the last one a person approved. It is nil for a tool first seen
	// with a definition quarantined under another name.
	Approved *Definition `json:"approved,omitempty"`
	// Pending is a changed definition waiting for approval: while it is
	// set and the tool serves it, the tool is quarantined.
	Pending *Definition `json:"pending,omitempty"`
	// RenamedFrom is, for a tool first seen with a definition quarantined
	// under another key, that key.
	RenamedFrom string `json:"renamed_from,omitempty"`
}

// Quarantined reports whether a changed definition waits for approval.
func (p Pin) Quarantined() bool { return p.Pending != nil }

// Changes lists the fields in which the pending definition differs from
// the approved one (every field when none was approved), or nil when
// nothing is pending.
func (p Pin) Changes() []FieldChange {
	if p.Pending == nil {
		return nil
	}
	return changes(p.Approved, p.Pending)
}

// clone returns a deep copy of p.
func (p *Pin) clone() Pin {
	c := *p
	c.Approved = p.Approved.clone()
	c.Pending = p.Pending.clone()
	return c
}

func (d *Definition) clone() *Definition {
	if d == nil {
		return nil
	}
	c := *d
	c.Fields = make(map[string]string, len(d.Fields))
	for k, v := range d.Fields {
		c.Fields[k] = v
	}
	return &c
}

// PinEventKind says what happened to a pin.
type PinEventKind uint8

// Kinds of PinEvent.
const (
	// PinRecorded: a tool was seen for the first time; its definition is
	// now pinned.
	PinRecorded PinEventKind = iota + 1
	// PinQuarantined: a tool's definition changed (or a quarantined
	// definition came back under another name); calls are refused and
	// the tool is not listed until a person approves it.
	PinQuarantined
	// PinApproved: a person approved the pending definition.
	PinApproved
	// PinRestored: a quarantined tool went back to its approved
	// definition.
	PinRestored
)

// String names the kind.
func (k PinEventKind) String() string {
	switch k {
	case PinRecorded:
		return "recorded"
	case PinQuarantined:
		return "quarantined"
	case PinApproved:
		return "approved"
	case PinRestored:
		return "restored"
	}
	return fmt.Sprintf("PinEventKind(%d)", uint8(k))
}

// PinEvent reports a change of a pin.
type PinEvent struct {
	Kind PinEventKind
	// Key is the tool's "namespace.name".
	Key string
	// Changes lists what changed, field by field (PinQuarantined,
	// PinApproved).
	Changes []FieldChange
	// RenamedFrom is, for a definition quarantined under another key
	// that came back under Key, that key.
	RenamedFrom string
}

// PinStore keeps pins between runs. FileStore keeps them in a file.
type PinStore interface {
	// Load returns every pin kept.
	Load(ctx context.Context) ([]Pin, error)
	// Save keeps the pins given, replacing those with the same keys and
	// leaving the others as they are.
	Save(ctx context.Context, changed []Pin) error
}

// toolKey identifies a tool in the verdict cache.
type toolKey struct{ ns, name string }

// verdict is a check's result for one tool value, valid while the pins'
// generation is gen.
type verdict struct {
	tool   toolkit.Tool
	gen    uint64
	ok     bool
	reason string
}

// pins checks tool definitions against what was approved.
type pins struct {
	store       PinStore
	logger      *slog.Logger
	onEvent     func(PinEvent)
	quarantines metric.Int64Counter // nil without metrics
	tk          atomic.Pointer[toolkit.Toolkit]

	gen   atomic.Uint64 // bumped when a verdict may change without the tool changing
	cache sync.Map      // toolKey → *verdict

	mu       sync.Mutex
	byKey    map[string]*Pin
	pending  map[string]string // Content of a pending definition → its key
	dirty    map[string]bool
	scanning map[string]chan struct{} // namespaces being scanned → closed when done

	saveMu sync.Mutex // serialises saves
}

// newPins loads the pins of store.
func newPins(ctx context.Context, store PinStore, logger *slog.Logger, onEvent func(PinEvent)) (*pins, error) {
	p := &pins{store: store, logger: logger, onEvent: onEvent, dirty: map[string]bool{}, scanning: map[string]chan struct{}{}}
	list, err := store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading pins: %w", err)
	}
	p.replace(list)
	return p, nil
}

// replace installs list as the pins. p.mu is held or p is not shared.
func (p *pins) replace(list []Pin) {
	p.byKey = make(map[string]*Pin, len(list))
	p.pending = map[string]string{}
	for i := range list {
		pin := list[i].clone()
		p.byKey[pin.Key] = &pin
		if pin.Pending != nil {
			p.pending[pin.Pending.Content] = pin.Key
		}
	}
	p.gen.Add(1)
}

// pinned reports whether tools of namespace ns are pinned: every
// namespace but the builtins (the application's own code) and that of
// tools called by value.
func pinned(ns string) bool { return ns != "" && ns != toolkit.BuiltinNamespace }

// check reports whether t, of namespace ns, may be listed and called: its
// definition is the approved one (or seen for the first time). When it is
// not, reason says what changed.
func (p *pins) check(ns string, t toolkit.Tool) (ok bool, reason string) {
	if !pinned(ns) || t == nil {
		return true, ""
	}
	k := toolKey{ns, t.Name()}
	gen := p.gen.Load()
	if v, found := p.cache.Load(k); found {
		if v := v.(*verdict); v.gen == gen && sameTool(v.tool, t) {
			return v.ok, v.reason
		}
	}
	return p.slowCheck(k, t, false)
}

// sameTool reports whether a and b are the same tool value: the same
// pointer. Values of other kinds are never taken for the same.
func sameTool(a, b toolkit.Tool) bool {
	if a == nil || b == nil || reflect.TypeOf(b).Kind() != reflect.Pointer {
		return false
	}
	return a == b
}

// slowCheck digests t and compares it with its pin, recording a first
// sight or a change. A tool without a pin, in a toolkit the pins follow,
// first has its whole namespace checked (tools with pins first), or waits
// for the check under way, so that a quarantined definition that came
// back under another name in the same list is caught whichever is looked
// at first. inScan is set when scan itself checks t; it saves what
// changed at its end.
func (p *pins) slowCheck(k toolKey, t toolkit.Tool, inScan bool) (bool, string) {
	def := definitionOf(t, time.Now())
	key := k.ns + "." + k.name
	p.mu.Lock()
	for try := 0; try < 2 && !inScan && p.byKey[key] == nil && p.tk.Load() != nil; try++ {
		running := p.scanning[k.ns]
		p.mu.Unlock()
		if running != nil {
			<-running
		} else {
			p.scan(k.ns)
		}
		p.mu.Lock()
	}
	ok, reason, ev := p.apply(key, &def, inScan)
	gen := p.gen.Load()
	p.mu.Unlock()
	if reflect.TypeOf(t).Kind() == reflect.Pointer {
		p.cache.Store(k, &verdict{tool: t, gen: gen, ok: ok, reason: reason})
	}
	if ev != nil {
		p.report(*ev)
		if !inScan {
			p.persist(context.Background())
		}
	}
	return ok, reason
}

// apply compares def, the definition the tool of key serves, with its
// pin, and records what changed. It returns the verdict and the event to
// report, if any. p.mu is held.
//
// A quarantine ends only on approval or when a fresh listing (listed,
// from scan) shows the approved definition again: a tool value held
// since before the change (this process has not heard of it yet, the
// quarantine came from another process through the store) is refused,
// so no call runs a definition the pins refuse, however the change
// arrived.
func (p *pins) apply(key string, def *Definition, listed bool) (ok bool, reason string, ev *PinEvent) {
	pin := p.byKey[key]
	switch {
	case pin == nil:
		if other, found := p.pending[def.Content]; found && other != key {
			pin = &Pin{Key: key, Pending: def, RenamedFrom: other}
			p.byKey[key] = pin
			p.dirty[key] = true
			return false, reasonOf(pin), &PinEvent{Kind: PinQuarantined, Key: key, Changes: changes(nil, def), RenamedFrom: other}
		}
		p.byKey[key] = &Pin{Key: key, Approved: def}
		p.dirty[key] = true
		return true, "", &PinEvent{Kind: PinRecorded, Key: key}
	case pin.Approved != nil && pin.Approved.Digest == def.Digest:
		if pin.Pending == nil {
			return true, "", nil
		}
		if !listed {
			return false, reasonOf(pin), nil
		}
		p.dropPending(pin)
		p.dirty[key] = true
		return true, "", &PinEvent{Kind: PinRestored, Key: key}
	case pin.Pending != nil && pin.Pending.Digest == def.Digest:
		return false, reasonOf(pin), nil
	}
	p.dropPending(pin)
	pin.Pending = def
	p.pending[def.Content] = key
	p.dirty[key] = true
	return false, reasonOf(pin), &PinEvent{Kind: PinQuarantined, Key: key, Changes: changes(pin.Approved, def), RenamedFrom: pin.RenamedFrom}
}

// dropPending forgets pin's pending definition. p.mu is held.
func (p *pins) dropPending(pin *Pin) {
	if pin.Pending == nil {
		return
	}
	if p.pending[pin.Pending.Content] == pin.Key {
		delete(p.pending, pin.Pending.Content)
	}
	pin.Pending = nil
}

// reasonOf says why the tool of a quarantined pin is refused.
func reasonOf(pin *Pin) string {
	if pin.Approved == nil {
		return fmt.Sprintf("its definition is the one quarantined as %s, under a new name; approve %s to use it", pin.RenamedFrom, pin.Key)
	}
	return fmt.Sprintf("its definition changed since it was approved (%s); approve %s to use it", fieldNames(changes(pin.Approved, pin.Pending)), pin.Key)
}

// scan checks every tool of namespace ns as the toolkit lists it now:
// those with pins first, then the new ones. It saves what changed and
// forgets the verdicts of tools that are gone.
func (p *pins) scan(ns string) {
	tk := p.tk.Load()
	if tk == nil || !pinned(ns) {
		return
	}
	p.mu.Lock()
	if running := p.scanning[ns]; running != nil {
		p.mu.Unlock()
		<-running
		return
	}
	done := make(chan struct{})
	p.scanning[ns] = done
	p.mu.Unlock()
	defer func() {
		p.persist(context.Background())
		p.mu.Lock()
		delete(p.scanning, ns)
		p.mu.Unlock()
		close(done)
	}()
	resp, err := tk.List(policyctx.Unfiltered(context.Background()), toolkit.ListRequest{Type: toolkit.ListTypeTools, Namespace: ns})
	var tools []toolkit.Tool
	if err == nil {
		tools = resp.Tools
	}
	present := make(map[string]bool, len(tools))
	p.mu.Lock()
	var known, fresh []toolkit.Tool
	for _, t := range tools {
		name := t.Name()
		present[name] = true
		if p.byKey[ns+"."+name] != nil {
			known = append(known, t)
		} else {
			fresh = append(fresh, t)
		}
	}
	p.mu.Unlock()
	for _, t := range append(known, fresh...) {
		k := toolKey{ns, t.Name()}
		if v, found := p.cache.Load(k); found {
			if v := v.(*verdict); v.gen == p.gen.Load() && sameTool(v.tool, t) {
				continue
			}
		}
		p.slowCheck(k, t, true)
	}
	p.cache.Range(func(k, _ any) bool {
		if tk := k.(toolKey); tk.ns == ns && !present[tk.name] {
			p.cache.Delete(k)
		}
		return true
	})
}

// persist saves the pins that changed since the last save. A failure is
// logged and the pins are saved again next time.
func (p *pins) persist(ctx context.Context) error {
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	p.mu.Lock()
	if len(p.dirty) == 0 {
		p.mu.Unlock()
		return nil
	}
	keys := make([]string, 0, len(p.dirty))
	for k := range p.dirty {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	changed := make([]Pin, 0, len(keys))
	for _, k := range keys {
		if pin := p.byKey[k]; pin != nil {
			changed = append(changed, pin.clone())
		}
	}
	p.dirty = map[string]bool{}
	p.mu.Unlock()
	err := p.store.Save(ctx, changed)
	if err != nil {
		p.mu.Lock()
		for _, k := range keys {
			p.dirty[k] = true
		}
		p.mu.Unlock()
		p.logger.Warn("policy: saving pinned tool definitions", "pins", len(changed), "error", err)
	}
	return err
}

// report tells the event hook, the log and the metrics about ev.
func (p *pins) report(ev PinEvent) {
	ns, _, _ := strings.Cut(ev.Key, ".")
	switch ev.Kind {
	case PinQuarantined:
		attrs := []any{"tool", ev.Key}
		if ev.RenamedFrom != "" {
			attrs = append(attrs, "renamed_from", ev.RenamedFrom)
		}
		attrs = append(attrs, "changed", fieldNames(ev.Changes))
		var fields []any
		for _, c := range ev.Changes {
			fields = append(fields, slog.String(c.Field, fmt.Sprintf("%q → %q", cut(c.Before, 200), cut(c.After, 200))))
		}
		attrs = append(attrs, slog.Group("fields", fields...))
		p.logger.Warn("policy: tool definition changed; quarantined until approved", attrs...)
		if p.quarantines != nil {
			p.quarantines.Add(context.Background(), 1, metric.WithAttributes(attribute.String("toolkit.namespace", ns)))
		}
	case PinApproved:
		p.logger.Info("policy: tool definition approved", "tool", ev.Key, "changed", fieldNames(ev.Changes))
	case PinRestored:
		p.logger.Info("policy: tool is back to its approved definition", "tool", ev.Key)
	case PinRecorded:
		p.logger.Debug("policy: tool definition pinned", "tool", ev.Key)
	}
	if p.onEvent != nil {
		p.onEvent(ev)
	}
}

// errNothingPending reports an approval of a tool without a pending
// definition.
var errNothingPending = errors.New("no changed definition waits for approval")

// approve makes the pending definition of key the approved one.
func (p *pins) approve(ctx context.Context, key string) error {
	p.mu.Lock()
	pin := p.byKey[key]
	if pin == nil {
		p.mu.Unlock()
		return fmt.Errorf("%w: no pinned tool %q", toolkit.ErrNotFound, key)
	}
	if pin.Pending == nil {
		p.mu.Unlock()
		return fmt.Errorf("%w: tool %q: %w", toolkit.ErrConflict, key, errNothingPending)
	}
	ev := PinEvent{Kind: PinApproved, Key: key, Changes: changes(pin.Approved, pin.Pending), RenamedFrom: pin.RenamedFrom}
	def := pin.Pending
	p.dropPending(pin)
	pin.Approved, pin.RenamedFrom = def, ""
	p.dirty[key] = true
	p.gen.Add(1)
	p.mu.Unlock()
	p.report(ev)
	err := p.persist(ctx)
	if tk := p.tk.Load(); tk != nil {
		ns, _, _ := strings.Cut(key, ".")
		tk.NotifyPolicyChange(ns)
	}
	return err
}

// reload saves what changed, then reads every pin from the store again:
// approvals made elsewhere (another process sharing the store) take
// effect.
func (p *pins) reload(ctx context.Context) error {
	if err := p.persist(ctx); err != nil {
		return err
	}
	list, err := p.store.Load(ctx)
	if err != nil {
		return fmt.Errorf("loading pins: %w", err)
	}
	p.mu.Lock()
	list, vanished := p.keepVanished(list)
	p.replace(list)
	p.mu.Unlock()
	if len(vanished) > 0 {
		p.logger.Warn("policy: pinned tool definitions vanished from the store; kept and saved again",
			"pins", len(vanished), "tools", firstKeys(vanished, 5))
		if err := p.persist(ctx); err != nil {
			return err
		}
	}
	if tk := p.tk.Load(); tk != nil {
		tk.NotifyPolicyChange("")
	}
	return nil
}

// keepVanished returns list, as loaded from the store, with the pins p
// holds that it lacks, which are marked to be saved again, and their keys.
// Nothing removes a pin from a store: one that vanished was deleted from
// outside (a Redis that restarted without persistence, a flushed key, a
// hand-edited file), and forgetting it would pin whatever definition
// comes next as if it were the first, the very change pins are there to
// catch. p.mu is held.
func (p *pins) keepVanished(list []Pin) ([]Pin, []string) {
	loaded := make(map[string]bool, len(list))
	for i := range list {
		loaded[list[i].Key] = true
	}
	var vanished []string
	for key, pin := range p.byKey {
		if !loaded[key] {
			list = append(list, pin.clone())
			p.dirty[key] = true
			vanished = append(vanished, key)
		}
	}
	slices.Sort(vanished)
	return list, vanished
}

// firstKeys returns at most n of keys, for a log line of bounded size.
func firstKeys(keys []string, n int) []string {
	if len(keys) > n {
		return keys[:n]
	}
	return keys
}

// list returns a copy of every pin, by key.
func (p *pins) list() []Pin {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Pin, 0, len(p.byKey))
	for _, pin := range p.byKey {
		out = append(out, pin.clone())
	}
	slices.SortFunc(out, func(a, b Pin) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// bind makes the pins follow tk: every tool list change is checked at
// once, so that changes are reported and saved as they happen rather
// than when the tool is next listed or called.
func (p *pins) bind(tk *toolkit.Toolkit) {
	p.tk.Store(tk)
	tk.Subscribe(func(ev toolkit.ConnectorEvent) {
		if ev.Kind == toolkit.ConnectorEventToolListChanged {
			p.scan(ev.Namespace)
		}
	})
}
