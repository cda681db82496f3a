package toolkit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// unreadyToolkit runs a toolkit with connectors "down" (reconnecting, its
// last error "dial tcp: connection refused"), "slow" (never reports) and
// "up" (ready, with a tool "a").
func unreadyToolkit(t testing.TB) *Toolkit {
	t.Helper()
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d), WithLogger(discardLogger()))
	t.Cleanup(running(t, tk))
	for _, ns := range []string{"down", "slow", "up"} {
		if err := tk.AddConnectorNS(ns, "http://"+ns+"/mcp"); err != nil {
			t.Fatal(err)
		}
		<-d.conn("http://" + ns + "/mcp").started
	}
	d.conn("http://down/mcp").onEvent(StateChangeEvent(ConnectorState{Status: StatusReconnecting, LastError: "dial tcp: connection refused"}))
	up := d.conn("http://up/mcp")
	up.setTools(newTool("a"))
	up.onEvent(StateChangeEvent(ConnectorState{Status: StatusReady}))
	if _, err := tk.WaitConnectors(t.Context(), "up"); err != nil {
		t.Fatal(err)
	}
	return tk
}

// A WaitConnectors that runs out of time names each connector not ready,
// with its state and last error, and still wraps the context's error.
func TestWaitConnectorsTimeoutSaysWhy(t *testing.T) {
	tk := unreadyToolkit(t)
	ctx, cancel := context.WithDeadline(t.Context(), time.Now())
	defer cancel()
	_, err := tk.WaitConnectors(ctx, "down", "slow", "up")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitConnectors: %v, want it to wrap context.DeadlineExceeded", err)
	}
	for _, want := range []string{
		`connector "down" is not ready (reconnecting; last error: dial tcp: connection refused)`,
		`connector "slow" is not ready (connecting)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("WaitConnectors: %v\nwant it to say %s", err, want)
		}
	}
	if strings.Contains(err.Error(), `"up"`) {
		t.Errorf("WaitConnectors names a ready connector: %v", err)
	}
}

// A call or lookup of a namespace whose connector is not ready says so,
// with the connector's state and last error and what to do; a namespace
// whose connector is ready, and a builtin, say only that nothing matched.
func TestMissInUnreadyNamespaceSaysWhy(t *testing.T) {
	tk := unreadyToolkit(t)
	ctx := t.Context()
	_, callErr := tk.Call(ctx, "down.x")
	_, lookupErr := tk.Lookup(ctx, "down.x")
	_, typeErr := tk.LookupType(ctx, ListTypeTools, "down.x")
	_, uriErr := tk.LookupItem(ctx, "test://r#down")
	for what, err := range map[string]error{"Call": callErr, "Lookup": lookupErr, "LookupType": typeErr, "LookupItem of a URI": uriErr} {
		if !errors.Is(err, ErrNotFound) || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %v, want ErrNotFound and ErrUnavailable", what, err)
			continue
		}
		for _, want := range []string{`connector "down" is not ready (reconnecting; last error: dial tcp: connection refused)`, "wait for it with WaitConnectors"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v\nwant it to say %s", what, err, want)
			}
		}
	}
	if _, err := tk.Call(ctx, "slow.x"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `connector "slow" is not ready (connecting)`) {
		t.Errorf("Call of a connecting namespace: %v", err)
	}
	// A bare name names the connectors that may still bring it.
	if _, err := tk.Call(ctx, "x"); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrUnavailable) ||
		!strings.Contains(err.Error(), `connectors not ready, whose items are not listed yet: "down" (reconnecting), "slow" (connecting)`) {
		t.Errorf("Call of a bare name: %v", err)
	}
	for _, key := range []string{"up.x", "builtin.x"} {
		if _, err := tk.Call(ctx, key); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), "not ready") {
			t.Errorf("Call(%q): %v, want a plain ErrNotFound", key, err)
		}
	}
	if _, err := tk.Call(ctx, "up.a"); err != nil {
		t.Errorf("Call of a ready connector's tool: %v", err)
	}
}

// Whatever the key, a call is the tool's result or fails with ErrNotFound
// or ErrBadParameter, and only a
// key of the namespace of a connector not ready also wraps ErrUnavailable.
func FuzzMissInUnreadyNamespace(f *testing.F) {
	for _, s := range []string{"down.x", "slow.x", "up.x", "up.a", "a", "x", "test://r#down", "test://r#up", "a:b#down.x", "down.", ".down", "down#x", "#down", "\xff.x"} {
		f.Add(s)
	}
	tk := unreadyToolkit(f)
	f.Fuzz(func(t *testing.T, key string) {
		_, err := tk.Call(t.Context(), key)
		if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrBadParameter) {
			t.Fatalf("Call(%q): %v", key, err)
		}
		if ns := keyNamespace(key); errors.Is(err, ErrUnavailable) && ns != "down" && ns != "slow" {
			t.Fatalf("Call(%q): %v: unavailable, but the key's namespace %q is not a connector that is not ready", key, err, ns)
		}
	})
}
