package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// closedURL returns an HTTP URL, with a secret in its query, on which
// nothing listens.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/mcp?key=s3cret-in-url"
}

// checkNamed fails the test unless every record names the connector ns and
// none holds secret.
func checkNamed(t *testing.T, logs *logCapture, ns, secret string) {
	t.Helper()
	recs := logs.all()
	if len(recs) == 0 {
		t.Fatal("no log records")
	}
	for _, r := range recs {
		if !strings.Contains(r, "connector="+ns) {
			t.Errorf("record does not name the connector %q: %s", ns, r)
		}
		if strings.Contains(r, secret) {
			t.Errorf("record holds the URL's secret: %s", r)
		}
	}
}

// TestConnectorNamedByNamespace checks that the logs and errors of a
// connector run by a toolkit name it by its namespace: a connector that
// cannot connect, and a call that fails.
func TestConnectorNamedByNamespace(t *testing.T) {
	leakCheck(t)
	logs := newLogCapture()
	up := sdk.NewServer(&sdk.Implementation{Name: "upstream-name", Version: "1"}, nil)
	up.AddTool(mustTool("boom"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, errors.New("it went wrong")
	})
	m := testserver.NewMemory(up)
	t.Cleanup(m.Close)
	down := closedURL(t)
	d := mustDelegate(t, "test", "1", OptLogger(slog.New(logs)), OptReconnect(Reconnect{BackoffMin: time.Millisecond, BackoffMax: 10 * time.Millisecond}))
	tk, err := toolkit.New(toolkit.WithDelegate(&dialDelegate{Delegate: d, dial: map[string]Option{"memory://up": OptDialer(m.Dial)}}))
	mustNotErr(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	defer func() {
		cancel()
		mustNotErr(t, <-runDone)
	}()
	mustNotErr(t, tk.AddConnectorNS("downstairs", down))
	mustNotErr(t, tk.AddConnectorNS("upstairs", "memory://up"))
	logs.waitFor(t, "connection attempt failed", "connector=downstairs")
	if _, err := tk.WaitConnectors(ctx, "upstairs"); err != nil {
		t.Fatal(err)
	}
	_, err = tk.Call(ctx, "upstairs.boom", nil)
	if err == nil || !strings.Contains(err.Error(), "upstairs") || strings.Contains(err.Error(), "upstream-name") {
		t.Errorf("call error %v does not name the connector by its namespace", err)
	}
	for _, st := range tk.Connectors() {
		if strings.Contains(st.LastError, "s3cret") {
			t.Errorf("state %+v holds the secret", st)
		}
	}
	var sawUp bool
	for _, r := range logs.all() {
		if !strings.Contains(r, "connector=upstairs") && !strings.Contains(r, "connector=downstairs") {
			t.Errorf("record does not name its connector by namespace: %s", r)
		}
		if strings.Contains(r, "s3cret") {
			t.Errorf("record holds the URL's secret: %s", r)
		}
		sawUp = sawUp || strings.Contains(r, "connector=upstairs")
	}
	if !sawUp {
		t.Errorf("no record names the connector upstairs: %q", logs.all())
	}
}

// dialDelegate is a Delegate that gives some URLs a dialer.
type dialDelegate struct {
	*Delegate
	dial map[string]Option
}

func (d *dialDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	dd := *d.Delegate
	if o, ok := d.dial[url]; ok {
		dd.Options = append(append([]Option(nil), dd.Options...), o)
	}
	return dd.CreateConnector(url, onEvent)
}

// TestOptNamespace checks that a connector run apart from a toolkit names
// itself as OptNamespace says, in its errors and in the stderr lines of a
// stdio server.
func TestOptNamespace(t *testing.T) {
	if _, err := New("http://x/mcp", "c", "1", OptNamespace("bad.name")); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("OptNamespace(bad.name): %v", err)
	}
	logs := newLogCapture()
	r := start(t, closedURL(t), true, OptNamespace("nowhere"), OptLogger(slog.New(logs)), OptReconnect(Reconnect{MaxAttempts: 1}))
	r.states.wait(t, toolkit.StatusFailed, 1)
	err := r.stop(t)
	if err == nil || !strings.Contains(err.Error(), "nowhere") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Run: %v", err)
	}
	checkNamed(t, logs, "nowhere", "s3cret-in-url")

	requireUnix(t)
	logs = newLogCapture()
	r = start(t, stdioURL(t, testserver.StdioServe), false, OptNamespace("kid"), OptLogger(slog.New(logs)))
	logs.waitFor(t, "server stderr", "connector=kid")
	mustNotErr(t, r.stop(t))
	checkNamed(t, logs, "kid", testserver.StdioEnv)
}
