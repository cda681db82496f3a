package toolkit

import (
	"context"
	"fmt"
	"strings"
)

// stateTrack is what the toolkit keeps about a connector's state changes
// beyond the state itself. Guarded by Toolkit.mu.
type stateTrack struct {
	// gen counts the states that reached the connector, applied or not:
	// a ready state waiting for its refresh is applied only if no other
	// state came meanwhile.
	gen uint64
	// last is the latest state applied that ends a wait (ready, failed):
	// a failure stays one for WaitConnectors while the toolkit restarts the
	// connector, until it is ready again.
	last ConnectorState
}

// arrive counts a state that reached the connector and returns its number.
func (t *stateTrack) arrive() uint64 {
	t.gen++
	return t.gen
}

// settles reports whether a connector in state st is done connecting, one
// way or the other.
func settles(st ConnectorState) bool {
	return st.Status == StatusReady || st.Status == StatusFailed
}

// setState records a connector's new state, announces it to the
// subscribers and wakes the waiters of WaitConnectors. A state equal to the
// current one changes nothing. tk.mu must be held.
func (tk *Toolkit) setState(cn *conn, st ConnectorState) {
	cn.track.arrive()
	st.URL, st.Namespace = cn.url, cn.ns
	if st == cn.state {
		return
	}
	// A connection lost; not a first attempt that failed.
	if tk.metrics != nil && st.Status == StatusReconnecting && cn.state.Status != StatusReconnecting && cn.state.Status != StatusConnecting {
		tk.metrics.reconnected(cn.ns)
	}
	cn.state = st
	if settles(st) {
		cn.track.last = st
	}
	if !cn.removed {
		tk.queue(ConnectorEvent{Kind: ConnectorEventStateChange, Connector: cn.c, Namespace: cn.ns, State: st})
	}
	tk.signal()
}

// WaitConnectors blocks until each connector named by its namespace (every
// registered connector, the user connector included, when none is named)
// is ready — connected, with its items published to List and Lookup — or
// has failed (reported StatusFailed) since it was last ready, and returns
// their states in the order asked for (registration order, user last, when
// none is named). A failed connector is restarted by Run with backoff;
// until it is ready again WaitConnectors returns its failed state at once.
//
// Connectors start only while Run is active, so WaitConnectors is called
// alongside Run (typically after AddConnector). A connector that never
// reports StatusReady or StatusFailed through its onEvent keeps it waiting
// until ctx ends: a server that refuses every attempt is retried, and is
// StatusReconnecting meanwhile. When ctx ends first, WaitConnectors returns
// the current states with an error that wraps ctx.Err() and names each
// connector still waited for with its status and last error
// (`waiting for connectors: connector "docs" is not ready (reconnecting;
// last error: ...): context deadline exceeded`). An unknown namespace
// wraps ErrNotFound (and nothing is waited for), and so does a connector
// removed during the wait; a toolkit whose Run has stopped wraps
// ErrClosed.
//
// It never polls: it sleeps until a connector's state changes.
func (tk *Toolkit) WaitConnectors(ctx context.Context, namespaces ...string) ([]ConnectorState, error) {
	tk.mu.Lock()
	var conns []*conn
	if len(namespaces) == 0 {
		conns = append(conns, tk.conns...)
		if tk.user != nil {
			conns = append(conns, tk.user)
		}
	}
	for _, ns := range namespaces {
		cn := tk.connNS(ns)
		if cn == nil {
			tk.mu.Unlock()
			return nil, fmt.Errorf("%w: no connector with namespace %q", ErrNotFound, ns)
		}
		conns = append(conns, cn)
	}
	for {
		states := make([]ConnectorState, len(conns))
		var pending, removed []string
		for i, cn := range conns {
			states[i] = cn.state
			switch {
			case cn.removed:
				removed = append(removed, cn.ns)
			case settles(cn.state):
			case cn.track.last.Status == StatusFailed:
				states[i] = cn.track.last
			default:
				pending = append(pending, notReady(cn.state))
			}
		}
		closed, changed := tk.closed, tk.changed
		tk.mu.Unlock()
		switch {
		case len(removed) > 0:
			return states, fmt.Errorf("%w: connectors removed while waited for: %s", ErrNotFound, strings.Join(removed, ", "))
		case len(pending) == 0:
			return states, nil
		case closed:
			return states, fmt.Errorf("%w: the toolkit has stopped; %s", ErrClosed, strings.Join(pending, "; "))
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return states, fmt.Errorf("waiting for connectors: %s: %w", strings.Join(pending, "; "), ctx.Err())
		}
		tk.mu.Lock()
	}
}

// maxErrorText bounds the text of a connector's last error quoted in the
// errors of the toolkit.
const maxErrorText = 512

// notReady describes a connector that is not ready, with its last error:
// `connector "docs" is not ready (reconnecting; last error: ...)`.
func notReady(st ConnectorState) string {
	s := fmt.Sprintf("connector %q is not ready (%s", st.Namespace, st.Status)
	if st.LastError == "" {
		return s + ")"
	}
	e := st.LastError
	if len(e) > maxErrorText {
		e = strings.ToValidUTF8(e[:maxErrorText], "") + "..."
	}
	return s + "; last error: " + e + ")"
}

// connNS returns the connector serving namespace ns, or nil. tk.mu must be
// held.
func (tk *Toolkit) connNS(ns string) *conn {
	for _, cn := range tk.conns {
		if cn.ns == ns {
			return cn
		}
	}
	if tk.user != nil && tk.user.ns == ns {
		return tk.user
	}
	return nil
}
