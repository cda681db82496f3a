package mcp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// toolNames returns the names of the connector's tools.
func toolNames(t *testing.T, c *Connector) []string {
	t.Helper()
	tools, err := c.ListTools(context.Background())
	mustNotErr(t, err)
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Name())
	}
	return out
}

// connKey carries the connection of a request of listenServer.
type connKey struct{}

// A server of 2026-07-28 sends list changes and resource updates on
// subscriptions/listen streams, which the go-sdk's client does not open
// again when the server ends them: the connector connects again, so a
// server that ended them (restarted behind a load balancer, say) is
// heard from again, its items listed anew and the subscriptions renewed.
// A stream that ends cleanly drops the session at once; one that breaks
// makes the connector ping the server first, and connect again once it
// answers.
func TestListenStreamRenewed(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(map[bool]string{false: "ended", true: "broken"}[broken], func(t *testing.T) { listenStreamRenewed(t, broken) })
	}
}

func listenStreamRenewed(t *testing.T, broken bool) {
	leakCheck(t)
	s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	}})
	// The server ends its listen streams on cut(), as one restarting
	// behind a load balancer would: it stays reachable. Broken, it closes
	// their connections too.
	var mu sync.Mutex
	var open []func()
	listens := 0
	mcpH := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.Server }, &sdk.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			ctx, cancel := context.WithCancel(r.Context())
			conn := r.Context().Value(connKey{}).(net.Conn)
			mu.Lock()
			listens++
			open = append(open, func() {
				if broken {
					conn.Close()
				}
				cancel()
			})
			mu.Unlock()
			r = r.WithContext(ctx)
		}
		mcpH.ServeHTTP(w, r)
	}))
	ts.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }
	ts.Start()
	t.Cleanup(ts.Close)
	cut := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range open {
			f()
		}
		open = nil
	}
	changed, updated := make(chan struct{}, 8), make(chan string, 8)
	r := start(t, ts.URL, false,
		OptOnToolListChanged(func(context.Context) { changed <- struct{}{} }),
		OptOnResourceUpdated(func(_ context.Context, uri string) { updated <- uri }))
	if got := r.State().ProtocolVersion; got != StatelessProtocolVersion {
		t.Fatalf("protocol %s", got)
	}
	mustNotErr(t, r.SubscribeResource(context.Background(), testserver.TextURI))

	cut()
	r.states.wait(t, toolkit.StatusReady, 2) // connected again

	s.AddTool(mustTool("late"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	})
	deadline := time.After(waitLimit)
	for !slices.Contains(toolNames(t, r.Connector), "late") {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the tool added after the restart never arrived")
		}
	}
	mustNotErr(t, s.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: testserver.TextURI}))
	select {
	case got := <-updated:
		if got != testserver.TextURI {
			t.Errorf("update of %q", got)
		}
	case <-time.After(waitLimit):
		t.Fatal("no resource update after the restart")
	}
	mu.Lock()
	defer mu.Unlock()
	if listens < 4 {
		t.Errorf("%d subscriptions/listen requests, want 2 before and 2 after the restart", listens)
	}
}

// flushCut is a ResponseWriter that cancels its request once something
// was flushed: the server ends the stream right after its first event.
type flushCut struct {
	http.ResponseWriter
	cancel context.CancelFunc
}

func (f *flushCut) Flush() {
	f.ResponseWriter.(http.Flusher).Flush()
	f.cancel()
}

// A server that ends every listen stream at once does not make the
// connector reconnect in a busy loop: the losses back off, within
// OptReconnect's bounds.
func TestListenStreamEndsBackOff(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	mcpH := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.Server }, &sdk.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			mcpH.ServeHTTP(&flushCut{w, cancel}, r.WithContext(ctx))
			return
		}
		mcpH.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	type wait struct {
		attempt int
		d       time.Duration
	}
	waits := make(chan wait, 64)
	r := start(t, ts.URL, false, OptReconnect(Reconnect{BackoffMin: 10 * time.Millisecond, BackoffMax: 40 * time.Millisecond}), OptReconnect(Reconnect{StableAfter: time.Hour}),
		withBeforeBackoff(func(attempt int, d time.Duration) {
			select {
			case waits <- wait{attempt, d}:
			default:
			}
		}))
	var got []wait
	for len(got) < 5 {
		select {
		case w := <-waits:
			got = append(got, w)
		case <-time.After(waitLimit):
			t.Fatalf("backoffs %v", got)
		}
	}
	mustNotErr(t, r.stop(t))
	last := got[len(got)-1]
	if last.attempt < 3 || last.d <= 0 || last.d > 40*time.Millisecond {
		t.Errorf("backoffs %v: want growing attempts, delays within 40ms", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].attempt < got[i-1].attempt {
			t.Errorf("backoffs %v: the attempts do not grow", got)
		}
	}
}
