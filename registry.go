package toolkit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/llmkit/toolkit/internal/names"
)

// conn is one registered connector.
type conn struct {
	url  string
	ns   string
	user bool

	refreshMu sync.Mutex // serialises refreshes of this connector

	// Guarded by Toolkit.mu.
	c       Connector // nil while the delegate is creating it
	src     *source
	state   ConnectorState
	removed bool
	cancel  context.CancelFunc
	done    chan struct{} // closed when its supervisor ends; nil if never started
	track   stateTrack    // see state.go
}

// listTimeout bounds one List call on a connector. Connectors answer from
// memory, so it only guards against a broken one.
const listTimeout = 30 * time.Second

// stopTimeout bounds how long RemoveConnector and Run wait for a connector's
// Run to return after its context is cancelled.
const stopTimeout = 10 * time.Second

// AddConnector registers a connector for url under a namespace inferred
// from the URL: the last meaningful path segment or the host name (for
// example "https://mcp.github.com/mcp" gives "github" and
// "stdio:///usr/bin/weather-server" gives "weather-server"), made a valid
// namespace. A namespace already taken is refused with ErrConflict; use
// AddConnectorNS to choose another. Safe before or while Run is active.
func (tk *Toolkit) AddConnector(url string) error {
	ns, err := InferNamespace(url)
	if err != nil {
		return err
	}
	return tk.AddConnectorNS(ns, url)
}

// AddConnectorNS registers a connector for url under namespace ns. The
// delegate's CreateConnector makes the connector (it may be slow: other
// toolkit operations go on meanwhile); if Run is active the connector
// starts at once. A namespace or URL already registered is refused with
// ErrConflict, an invalid or reserved namespace with ErrBadParameter.
func (tk *Toolkit) AddConnectorNS(ns, url string) error {
	if err := names.CheckNamespace(ns); err != nil {
		return err
	}
	if url == "" {
		return fmt.Errorf("%w: connector %q: empty URL", ErrBadParameter, ns)
	}
	if url == UserConnectorURI {
		return fmt.Errorf("%w: %q is the user connector; the delegate provides it", ErrBadParameter, url)
	}
	if tk.delegate == nil {
		return fmt.Errorf("%w: connector %q: %w", ErrBadParameter, url, errNoDelegate)
	}
	cn := &conn{url: url, ns: ns}
	cn.state = ConnectorState{URL: url, Namespace: ns, Status: StatusStopped}

	tk.mu.Lock()
	if tk.closed {
		tk.mu.Unlock()
		return fmt.Errorf("%w: connector %q: the toolkit has stopped", ErrClosed, url)
	}
	for _, other := range tk.conns {
		if other.ns == ns {
			tk.mu.Unlock()
			return fmt.Errorf("%w: namespace %q is taken by connector %q", ErrConflict, ns, other.url)
		}
		if other.url == url {
			tk.mu.Unlock()
			return fmt.Errorf("%w: connector %q is already registered as namespace %q", ErrConflict, url, other.ns)
		}
	}
	tk.conns = append(tk.conns, cn) // reserves ns and url while creating
	tk.mu.Unlock()

	c, err := tk.delegate.CreateConnector(url, func(ev ConnectorEvent) { tk.onEvent(cn, ev) })
	if err == nil && isNil(c) {
		err = fmt.Errorf("%w: the delegate returned no connector", ErrNotImplemented)
	}

	tk.mu.Lock()
	if err != nil || cn.removed || tk.closed {
		removedMeanwhile := cn.removed
		tk.dropConn(cn)
		tk.mu.Unlock()
		if err != nil {
			return fmt.Errorf("connector %q: %w", url, err)
		}
		if removedMeanwhile {
			return fmt.Errorf("%w: connector %q was removed while it was being created", ErrConflict, url)
		}
		return fmt.Errorf("%w: connector %q: the toolkit has stopped", ErrClosed, url)
	}
	cn.c = c
	if tk.run != nil {
		tk.startConn(cn)
	}
	tk.mu.Unlock()

	tk.refresh(cn, allKinds...)
	return nil
}

// RemoveConnector stops and removes the connector registered for url. Its
// items disappear from List and Lookup at once and the matching list-change
// events are fired. It waits (a bounded time) for the connector's Run to
// return. It wraps ErrNotFound for an unknown URL.
func (tk *Toolkit) RemoveConnector(url string) error {
	tk.mu.Lock()
	var cn *conn
	for _, c := range tk.conns {
		if c.url == url {
			cn = c
			break
		}
	}
	if cn == nil {
		tk.mu.Unlock()
		if url == UserConnectorURI {
			return fmt.Errorf("%w: the user connector cannot be removed", ErrBadParameter)
		}
		return fmt.Errorf("%w: no connector %q", ErrNotFound, url)
	}
	if cn.c != nil {
		st := cn.state
		st.Status, st.ConnectedSince = StatusStopped, time.Time{}
		tk.setState(cn, st)
	}
	tk.dropConn(cn)
	var events []ConnectorEvent
	if cn.src != nil {
		for k := range NumKinds {
			if len(cn.src.items[k]) > 0 {
				events = appendListChanged(events, k, cn.c, cn.ns)
			}
		}
	}
	if _, ok := cn.c.(SkillLister); ok {
		events = append(events, ConnectorEvent{Kind: ConnectorEventSkillListChanged, Connector: cn.c, Namespace: cn.ns})
	}
	tk.publish()
	tk.queue(events...)
	cancel, done := cn.cancel, cn.done
	tk.mu.Unlock()

	if cancel != nil {
		cancel()
		tk.awaitStop(cn, done)
	}
	return nil
}

// dropConn unregisters cn. tk.mu must be held.
func (tk *Toolkit) dropConn(cn *conn) {
	cn.removed = true
	if i := slices.Index(tk.conns, cn); i >= 0 {
		// A new array: re-slicing the old one would keep cn (and through
		// it the connector and all its items) reachable in the unused
		// tail when it was the last one.
		next := make([]*conn, 0, len(tk.conns)-1)
		next = append(next, tk.conns[:i]...)
		tk.conns = append(next, tk.conns[i+1:]...)
	}
	tk.signal()
}

// Connectors returns the state of every connector in registration order,
// the user connector last. The user connector is listed when the delegate
// made one, or failed to with an error other than ErrNotImplemented (then
// as StatusFailed, with the error as LastError).
func (tk *Toolkit) Connectors() []ConnectorState {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	out := make([]ConnectorState, 0, len(tk.conns)+1)
	for _, c := range tk.conns {
		out = append(out, c.state)
	}
	if tk.user != nil {
		out = append(out, tk.user.state)
	}
	return out
}

// openUser asks the delegate for the user connector. ErrNotImplemented or
// a nil connector mean that there is none; any other error is logged and
// recorded as the user connector's failed state, and leaves the toolkit
// without a user namespace.
func (tk *Toolkit) openUser() {
	cn := &conn{url: UserConnectorURI, ns: UserNamespace, user: true}
	cn.state = ConnectorState{URL: UserConnectorURI, Namespace: UserNamespace, Status: StatusStopped}
	c, err := tk.delegate.CreateConnector(UserConnectorURI, func(ev ConnectorEvent) { tk.onEvent(cn, ev) })
	if errors.Is(err, ErrNotImplemented) || (err == nil && isNil(c)) {
		return
	}
	tk.mu.Lock()
	tk.user = cn
	if err != nil {
		tk.logger.Info("toolkit: no user namespace: the delegate could not create the user connector", "err", err)
		tk.setState(cn, ConnectorState{Status: StatusFailed, LastError: err.Error()})
		tk.mu.Unlock()
		return
	}
	cn.c = c
	tk.mu.Unlock()
	tk.refresh(cn, KindPrompt, KindResource, KindTemplate)
}

// onEvent receives the events of one connector. A state other than ready
// is recorded (and announced) at once; a ready state only once the lists
// it makes current have been re-read and published, so that whoever sees
// "ready" finds the items in List and Lookup. A ready state overtaken
// meanwhile by a newer state is dropped.
func (tk *Toolkit) onEvent(cn *conn, ev ConnectorEvent) {
	tk.mu.Lock()
	if cn.removed {
		tk.mu.Unlock()
		return
	}
	ev.Connector, ev.Namespace = cn.c, cn.ns
	if ev.Kind == ConnectorEventStateChange {
		if ev.State.Status != StatusReady {
			tk.setState(cn, ev.State)
			tk.mu.Unlock()
			return
		}
		gen := cn.track.arrive()
		tk.mu.Unlock()
		tk.refresh(cn, allKinds...)
		tk.mu.Lock()
		if !cn.removed && cn.track.gen == gen {
			tk.setState(cn, ev.State)
		}
		tk.mu.Unlock()
		return
	}
	if ev.Kind == ConnectorEventResourceUpdated || ev.Kind == ConnectorEventSkillListChanged {
		tk.queue(ev)
		tk.mu.Unlock()
		return
	}
	tk.mu.Unlock()
	// One refresh for every kind the event covers (resources and
	// templates share theirs), so that one event goes out.
	if kinds := ev.Kind.Kinds(); len(kinds) > 0 {
		tk.refresh(cn, kinds...)
	}
}

// refresh re-reads some lists of a connector, publishes a new snapshot and
// queues a list-change event for each list that really changed.
func (tk *Toolkit) refresh(cn *conn, kinds ...Kind) {
	cn.refreshMu.Lock()
	defer cn.refreshMu.Unlock()
	tk.mu.Lock()
	c := cn.c
	tk.mu.Unlock()
	if c == nil {
		return
	}
	var lists [NumKinds][]*entry
	var got [NumKinds]bool
	for _, k := range kinds {
		if k == KindTool && cn.user {
			continue // the user namespace never serves tools
		}
		list, err := tk.listConn(cn, c, k)
		if err != nil {
			tk.logger.Warn("toolkit: listing connector items failed", "namespace", cn.ns, "url", RedactURL(cn.url), "kind", string(kindTypes[k]), "err", err)
			continue
		}
		lists[k], got[k] = list, true
	}

	tk.mu.Lock()
	defer tk.mu.Unlock()
	if cn.removed {
		return
	}
	var items [NumKinds][]*entry
	if cn.src != nil {
		items = cn.src.items
	}
	var events []ConnectorEvent
	for k := range NumKinds {
		if !got[k] {
			continue
		}
		var one [NumKinds][]*entry
		one[k] = lists[k]
		fresh := newSource(cn.ns, one).items[k]
		if !sameItems(items[k], fresh) {
			events = appendListChanged(events, k, c, cn.ns)
		}
		items[k] = fresh
	}
	if len(events) == 0 && cn.src != nil {
		return
	}
	cn.src = newSource(cn.ns, items)
	tk.publish()
	tk.queue(events...)
}

// listConn lists one kind of a connector's items and turns them into
// entries. Items that cannot be served (nil, bad names, bad URIs,
// duplicates) are skipped with a warning that names them.
func (tk *Toolkit) listConn(cn *conn, c Connector, k Kind) ([]*entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	return kindListers[k].connEntries(ctx, c, cn.ns, func(err error) {
		tk.logger.Warn("toolkit: skipping connector item", "namespace", cn.ns, "url", RedactURL(cn.url), "err", err)
	})
}

// connEntry checks one item of kind ops.kind served by a connector and
// makes its entry for namespace ns.
func connEntry[T any](ops *kindOps[T], ns string, v T) (*entry, error) {
	if isNil(v) {
		return nil, fmt.Errorf("%w: nil %s", ErrBadParameter, ops.kind)
	}
	e, err := ops.entry(ns, v)
	if err == nil && ops.remote != nil {
		err = ops.remote(e)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}
