package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

func TestSSEHandler(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("hello", func(ctx context.Context, _ json.RawMessage) (any, error) {
			toolkit.SessionFromContext(ctx).Logger().Info("saying hello")
			return "hello", nil
		}),
	)})
	h, err := f.srv.Handler()
	mustNotErr(t, err)
	sse, err := f.srv.SSEHandler()
	mustNotErr(t, err)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/sse", sse)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)

	notes := newNoteLog()
	c := sdk.NewClient(&sdk.Implementation{Name: "sse-client", Version: "1"}, notes.options())
	cs, err := c.Connect(context.Background(), &sdk.SSEClientTransport{Endpoint: ts.URL + "/sse"}, nil)
	mustNotErr(t, err)
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v == "" {
		t.Error("no protocol version")
	}
	ctx := context.Background()
	mustNotErr(t, cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}))
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "hello"})
	if err != nil || resultText(t, res) != "hello" {
		t.Fatalf("call: %v %+v", err, res)
	}
	recv(t, notes.logCh, "the tool's log message")

	// The Host and Origin checks apply.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	mustNotErr(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign origin: status %d, want 403", resp.StatusCode)
	}
}

func TestServeListenerSSE(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("hello", func(context.Context, json.RawMessage) (any, error) { return "hello", nil }),
	)}, WithHTTP(WithSSEPath("/sse")))
	ln, err := listenLoopback(t)
	mustNotErr(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.srv.ServeListener(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + ln.Addr().String()
	for _, tr := range []sdk.Transport{
		&sdk.SSEClientTransport{Endpoint: base + "/sse"},
		&sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1},
	} {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, tr, nil)
		mustNotErr(t, err)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "hello"})
		if err != nil || resultText(t, res) != "hello" {
			t.Errorf("%T: %v %+v", tr, err, res)
		}
		cs.Close()
	}
}

func TestSSEPathOption(t *testing.T) {
	tk, err := toolkit.New()
	mustNotErr(t, err)
	if _, err := New(tk, nil, WithHTTP(WithSSEPath("sse"))); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "WithSSEPath") {
		t.Errorf("WithSSEPath(\"sse\"): %v", err)
	}
	srv, err := New(tk, nil)
	mustNotErr(t, err)
	defer srv.Close()
	ln, err := listenLoopback(t)
	mustNotErr(t, err)
	if err := srv.ServeListener(context.Background(), ln, WithSSEPath("/mcp")); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("SSE at the streamable path: %v", err)
	}
}

func TestSSEHangUpCancelsCalls(t *testing.T) {
	leakCheck(t)
	b := newBlocker(t)
	defer b.free()
	f := newFixture(t, []toolkit.Option{b.option()})
	sse, err := f.srv.SSEHandler()
	mustNotErr(t, err)
	ts := httptest.NewServer(sse)
	t.Cleanup(ts.Close)
	// The client's connections, to cut them as a vanishing client would.
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
		return c, err
	}}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "sse-client", Version: "1"}, nil).
		Connect(context.Background(), &sdk.SSEClientTransport{Endpoint: ts.URL, HTTPClient: hc}, nil)
	mustNotErr(t, err)
	defer cs.Close()
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "block"})
		called <- err
	}()
	recv(t, b.started, "the tool to start")
	mu.Lock()
	for _, c := range conns {
		c.Close() // the GET stream ends
	}
	mu.Unlock()
	if cause := recv(t, b.canceled, "the tool's context to end"); !errors.Is(cause, errClientGone) {
		t.Errorf("cancellation cause = %v, want %v", cause, errClientGone)
	}
	recv(t, called, "the call to end")
}
