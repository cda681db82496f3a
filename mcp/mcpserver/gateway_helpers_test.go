package mcpserver

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
)

// testGateway is a gateway as the tests build it: a toolkit whose one
// connector, in namespace "up", reaches an upstream, served over HTTP.
type testGateway struct {
	tk  *toolkit.Toolkit
	srv *Server
	url string // of the served endpoint
}

// startGateway starts a testGateway for the upstream at upstream (a URL,
// or memory:// with mcp.OptDialer in conn), with the connector's options
// conn, the server's opts and its HTTP handler's hopts, and waits until
// the upstream's tools are listed. Everything stops when the test ends.
func startGateway(t testing.TB, upstream string, conn []mcp.Option, opts []Option, hopts []HTTPOption) *testGateway {
	t.Helper()
	d := mustDelegate(t, append([]mcp.Option{mcp.OptLogger(quietLogger())}, conn...)...)
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	srv, err := New(tk, nil, opts...)
	mustNotErr(t, err)
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		mustNotErr(t, <-runDone)
	})
	mustNotErr(t, tk.AddConnectorNS("up", upstream))
	wctx, wcancel := context.WithTimeout(ctx, waitLimit)
	defer wcancel()
	_, err = tk.WaitConnectors(wctx)
	mustNotErr(t, err)
	tk.WaitEvents()
	h, err := srv.Handler(hopts...)
	mustNotErr(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &testGateway{tk: tk, srv: srv, url: ts.URL}
}
