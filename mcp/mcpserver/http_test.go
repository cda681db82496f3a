package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// serveHTTP serves the fixture over loopback HTTP.
func (f *fixture) serveHTTP(t *testing.T, opts ...HTTPOption) *httptest.Server {
	t.Helper()
	h, err := f.srv.Handler(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// connectHTTP connects a go-sdk client to url; header, if given, is added
// to every request.
func connectHTTP(t *testing.T, url string, header http.Header, copts *sdk.ClientOptions) (*sdk.ClientSession, error) {
	t.Helper()
	hc := &http.Client{Transport: &headerRoundTripper{header: header}}
	c := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, copts)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

type headerRoundTripper struct{ header http.Header }

func (rt *headerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range rt.header {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestServerHTTP(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("hello", func(ctx context.Context, _ json.RawMessage) (any, error) {
			toolkit.SessionFromContext(ctx).Logger().Info("saying hello")
			return "hello", nil
		}),
	)})
	for _, tc := range []struct {
		name string
		opts []HTTPOption
	}{
		{"stateful", nil},
		{"stateless", []HTTPOption{WithStateless()}},
		{"json", []HTTPOption{WithJSONResponse()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := f.serveHTTP(t, tc.opts...)
			notes := newNoteLog()
			cs, err := connectHTTP(t, ts.URL, nil, notes.options())
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "hello"})
			if err != nil || resultText(t, res) != "hello" {
				t.Fatalf("call: %v %+v", err, res)
			}
			if tc.name == "stateful" {
				// The log notification travels on the request's stream, ahead
				// of the result.
				<-notes.logCh
			}
		})
	}
}

func TestServerHTTPAuth(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(funcTool("hello", func(context.Context, json.RawMessage) (any, error) { return "hi", nil }))})
	verifier := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != "s3cret" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	ts := f.serveHTTP(t, WithBearerAuth(verifier, nil))

	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", resp.StatusCode)
	}
	if _, err := connectHTTP(t, ts.URL, http.Header{"Authorization": {"Bearer wrong"}}, nil); err == nil {
		t.Error("wrong token: connected")
	}
	cs, err := connectHTTP(t, ts.URL, http.Header{"Authorization": {"Bearer s3cret"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "hello"}); err != nil {
		t.Error(err)
	}
}

func TestServerHTTPRebinding(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(t *testing.T, url, host, origin, body string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	ts := f.serveHTTP(t, WithAllowedOrigins("https://app.example.com"), WithMaxBodyBytes(1024))
	self := strings.TrimPrefix(ts.URL, "http://")
	tests := []struct {
		name, host, origin string
		body               string
		want               int
	}{
		{"evil host", "evil.example.com", "", initialize, http.StatusForbidden},
		{"evil origin", "", "http://evil.example.com", initialize, http.StatusForbidden},
		{"evil host and origin", "evil.example.com", "http://evil.example.com", initialize, http.StatusForbidden},
		{"same origin", "", "http://" + self, initialize, http.StatusOK},
		{"localhost origin", "", "http://localhost:9999", initialize, http.StatusOK},
		{"allowed origin", "", "https://app.example.com", initialize, http.StatusOK},
		{"localhost host", "localhost" + self[strings.LastIndex(self, ":"):], "", initialize, http.StatusOK},
		{"no origin", "", "", initialize, http.StatusOK},
		{"body too large", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 2048) + `"}}`, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := post(t, ts.URL, tc.host, tc.origin, tc.body); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
	// Hosts can be pinned on any address.
	pinned := f.serveHTTP(t, WithAllowedHosts("mcp.example.com"), WithStateless())
	if got := post(t, pinned.URL, "", "", initialize); got != http.StatusForbidden {
		t.Errorf("pinned host: status %d, want 403", got)
	}
	if got := post(t, pinned.URL, "mcp.example.com", "", initialize); got != http.StatusOK {
		t.Errorf("pinned host, right name: status %d, want 200", got)
	}
}

func TestServerServe(t *testing.T) {
	leakCheck(t)
	tk, err := toolkit.New(toolkit.WithTool(funcTool("hello", func(context.Context, json.RawMessage) (any, error) { return "hi", nil })))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(tk, nil, WithHTTP(WithPath("/api/mcp")))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := listenLoopback(t)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln) }()
	cs, err := connectHTTP(t, "http://"+ln.Addr().String()+"/api/mcp", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "hello"}); err != nil || resultText(t, res) != "hi" {
		t.Fatalf("%v %+v", err, res)
	}
	cs.Close()
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("serve: %v", err)
	}
}

// TestServeHTTP serves the MCP handler beside a route of the application's
// own, with a client's event stream and a request still open at shutdown:
// cancelling the context ends both and ServeHTTP returns.
func TestServeHTTP(t *testing.T) {
	leakCheck(t)
	tk, err := toolkit.New()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(tk, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	entered, ended := make(chan struct{}), make(chan struct{})
	h, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
		close(ended)
	})
	ln, err := listenLoopback(t)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeHTTP(ctx, ln, mux) }()

	cs, err := connectHTTP(t, base+"/mcp", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Errorf("/healthz = %q", body)
	}
	go func() {
		if resp, err := http.Get(base + "/hang"); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("ServeHTTP did not return after its context was cancelled")
	}
	<-ended
}

// An invalid HTTP option is reported by the function it is given to,
// naming the option, instead of a handler answering 500 at request time.
func TestHandlersReportInvalidOptions(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	for name, o := range map[string]HTTPOption{
		"WithMaxBodyBytes": WithMaxBodyBytes(-1),
		"WithPath":         WithPath("mcp"),
		"WithBearerAuth":   WithBearerAuth(nil, nil),
	} {
		if h, err := f.srv.Handler(WithStateless(), o); h != nil || !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), name) {
			t.Errorf("Handler(%s): %v, %v; want ErrBadParameter naming the option", name, h, err)
		}
		if h, err := f.srv.SSEHandler(o); h != nil || !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), name) {
			t.Errorf("SSEHandler(%s): %v, %v; want ErrBadParameter naming the option", name, h, err)
		}
		if _, err := New(f.tk, nil, WithHTTP(o)); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), name) {
			t.Errorf("New(WithHTTP(%s)): %v; want ErrBadParameter naming the option", name, err)
		}
	}
	if h, err := f.srv.Handler(WithStateless(), WithMaxBodyBytes(1<<10)); h == nil || err != nil {
		t.Errorf("valid options: %v, %v", h, err)
	}
}
