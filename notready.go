package toolkit

import (
	"errors"
	"fmt"
	"strings"
)

// maxNotReady bounds the connectors named by the error of a bare key that
// matches nothing.
const maxNotReady = 3

// explainMiss returns err, the error of a Lookup or Call of key, with what
// a caller needs to know when the miss may come from a connector that is
// not ready: its items are not listed yet. A qualified key ("ns.name",
// "uri#ns") whose namespace's connector is not ready gets an error that
// also wraps ErrUnavailable and gives the connector's state, its last
// error and what to do; a bare key gets the names of the connectors not
// ready. Other errors are returned as they are. It runs on misses only:
// hits never take tk.mu.
func (tk *Toolkit) explainMiss(key string, err error) error {
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	ns := keyNamespace(key)
	tk.mu.Lock()
	var (
		st      ConnectorState
		unready bool
		names   []string
		more    int
	)
	if ns != "" {
		if cn := tk.connNS(ns); cn != nil && !cn.removed && cn.c != nil && cn.state.Status != StatusReady {
			st, unready = cn.state, true
		}
	} else {
		for _, cn := range append(tk.conns[:len(tk.conns):len(tk.conns)], tk.user) {
			if cn == nil || cn.removed || cn.c == nil || cn.state.Status == StatusReady {
				continue
			}
			if len(names) == maxNotReady {
				more++
				continue
			}
			names = append(names, fmt.Sprintf("%q (%s)", cn.ns, cn.state.Status))
		}
	}
	tk.mu.Unlock()
	switch {
	case unready:
		return fmt.Errorf("%w: %s; its items are %w until it is ready: %s", err, notReady(st), ErrUnavailable, whatToDo(st))
	case len(names) > 0:
		list := strings.Join(names, ", ")
		if more > 0 {
			list += fmt.Sprintf(" and %d more", more)
		}
		return fmt.Errorf("%w (connectors not ready, whose items are not listed yet: %s)", err, list)
	}
	return err
}

// whatToDo says what to do about a connector that is not ready.
func whatToDo(st ConnectorState) string {
	switch {
	case st.Status == StatusStopped:
		return "connectors run only while Run is active"
	case st.LastError != "":
		return "wait for it with WaitConnectors, or fix what its last error says"
	}
	return "wait for it with WaitConnectors"
}

// keyNamespace returns the namespace a Lookup key names ("ns.name",
// "uri#ns"), or "" for a bare name or URI. The namespace may not exist.
func keyNamespace(key string) string {
	if i := strings.IndexByte(key, ':'); i >= 0 {
		if j := strings.LastIndexByte(key, '#'); j > i {
			return key[j+1:]
		}
		return ""
	}
	if i := strings.IndexByte(key, '.'); i > 0 {
		return key[:i]
	}
	return ""
}
