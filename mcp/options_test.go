package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// Timeouts.Call bounds every request made for a caller: a tool call, a
// prompt render and a resource read that never end fail with a deadline
// error naming the item and the server, the server sees the cancellation,
// and the session is not thought lost.
func TestCallTimeout(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	waitCtx := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	s.AddPrompt(&sdk.Prompt{Name: "slow_prompt"}, func(ctx context.Context, _ *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return nil, waitCtx(ctx)
	})
	s.AddResource(&sdk.Resource{URI: "test://slow", Name: "slow"}, func(ctx context.Context, _ *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return nil, waitCtx(ctx)
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://timeout", false, OptDialer(m.Dial), OptTimeouts(Timeouts{Call: 300 * time.Millisecond}))
	ctx := context.Background()

	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), "testserver") {
			t.Errorf("%s: %v, want a deadline error naming it and the server", what, err)
		}
	}
	_, err := call(t, ctx, r.Connector, "block", `{"tag":"t"}`)
	check(`tool "block"`, err)
	if tag := recvString(t, s.Cancelled); tag != "t" {
		t.Errorf("cancelled %q", tag)
	}
	var slowPrompt *remotePrompt
	for _, p := range mustList(r.ListPrompts(ctx)) {
		if p.Name() == "slow_prompt" {
			slowPrompt = p.(*remotePrompt)
		}
	}
	if slowPrompt == nil {
		t.Fatal("no slow_prompt")
	}
	_, err = slowPrompt.Render(ctx, nil)
	check(`prompt "slow_prompt"`, err)
	var slowRes toolkit.Resource
	for _, x := range mustList(r.ListResources(ctx)) {
		if x.URI() == "test://slow" {
			slowRes = x
		}
	}
	if slowRes == nil {
		t.Fatal("no test://slow")
	}
	_, err = slowRes.Read(ctx)
	check(`resource "test://slow"`, err)

	// A caller's shorter deadline still wins.
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := call(t, short, r.Connector, "block", `{"tag":"u"}`); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller's deadline: %v", err)
	}

	// Timeouts are the caller's business: the session stays up.
	out, err := call(t, ctx, r.Connector, "echo", `{"text":"still here"}`)
	mustNotErr(t, err)
	if read(t, out) != "still here" {
		t.Error("echo after timeouts failed")
	}
	if n := r.states.count(toolkit.StatusReady); n != 1 || r.states.count(toolkit.StatusReconnecting) != 0 {
		t.Errorf("timeouts caused a reconnection: %d ready states", n)
	}
	mustNotErr(t, r.stop(t))
}

// entries is a list that goroutines append to.
type entries[T any] struct {
	mu   sync.Mutex
	list []T
}

func (l *entries[T]) add(e T) {
	l.mu.Lock()
	l.list = append(l.list, e)
	l.mu.Unlock()
}

func (l *entries[T]) all() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.list)
}

func (l *entries[T]) reset() {
	l.mu.Lock()
	l.list = nil
	l.mu.Unlock()
}

// requestLog records what an HTTP test server receives.
type requestLog struct{ entries[recorded] }

type recorded struct {
	method, query string
	header        http.Header
}

func (l *requestLog) record(_ http.ResponseWriter, r *http.Request) bool {
	l.add(recorded{r.Method, r.URL.RawQuery, r.Header.Clone()})
	return false
}

// countingTransport is an http.RoundTripper that marks and counts the
// requests it carries.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	r = r.Clone(r.Context())
	r.Header.Set("X-Client", "custom")
	return c.base.RoundTrip(r)
}

// OptHeader adds its headers to every HTTP request, repeated keys
// included, and OptHTTPClient's client carries every request, for each
// HTTP transport.
func TestHeadersAndHTTPClient(t *testing.T) {
	for _, mode := range []testserver.Mode{testserver.Stateful, testserver.Stateless, testserver.SSE} {
		t.Run(mode.String(), func(t *testing.T) {
			leakCheck(t)
			s := newServer(t, testserver.Options{})
			h := testserver.ServeHTTP(t, s.Server, mode)
			log := &requestLog{}
			h.Intercept(log.record)
			base := http.DefaultTransport.(*http.Transport).Clone()
			defer base.CloseIdleConnections()
			ct := &countingTransport{base: base}
			url := h.URL
			if mode == testserver.SSE {
				url = h.SSEURL
			}
			r := start(t, url, false,
				OptHeader("Authorization", "Bearer t0k3n"), OptHeader("X-Multi", "a"), OptHeader("X-Multi", "b"),
				OptHTTPClient(&http.Client{Transport: ct}))
			out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"hi"}`)
			mustNotErr(t, err)
			read(t, out)
			mustNotErr(t, r.stop(t))

			reqs := log.all()
			if len(reqs) < 3 {
				t.Fatalf("only %d requests", len(reqs))
			}
			methods := map[string]bool{}
			for i, rq := range reqs {
				methods[rq.method] = true
				if got := rq.header.Get("Authorization"); got != "Bearer t0k3n" {
					t.Errorf("request %d (%s): Authorization %q", i, rq.method, got)
				}
				if got := rq.header.Values("X-Multi"); !slices.Equal(got, []string{"a", "b"}) {
					t.Errorf("request %d (%s): X-Multi %q", i, rq.method, got)
				}
				if got := rq.header.Get("X-Client"); got != "custom" {
					t.Errorf("request %d (%s) did not go through the given HTTP client", i, rq.method)
				}
			}
			if !methods[http.MethodPost] || (mode != testserver.Stateless && !methods[http.MethodGet]) {
				t.Errorf("methods seen: %v", methods)
			}
			if int(ct.n.Load()) < len(reqs) {
				t.Errorf("the HTTP client carried %d of %d requests", ct.n.Load(), len(reqs))
			}
		})
	}
}

// Streamable HTTP falls back to the SSE transport only when the first POST
// is answered 400, 404 or 405 (the server does not speak streamable HTTP),
// never on 401, 403 or a server error: those are answers of a streamable
// server and are reported.
func TestSSEFallbackOnlyOnRefusal(t *testing.T) {
	for _, tc := range []struct {
		code     int
		fallback bool
	}{
		{http.StatusUnauthorized, false},
		{http.StatusForbidden, false},
		{http.StatusInternalServerError, false},
		{http.StatusServiceUnavailable, false},
		{http.StatusNotFound, true},
		{http.StatusMethodNotAllowed, true},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			leakCheck(t)
			s := newServer(t, testserver.Options{})
			// An SSE server at /mcp: it would work if the connector fell
			// back to it.
			h := testserver.ServeHTTP(t, s.Server, testserver.SSE)
			var gets atomic.Int64
			h.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method == http.MethodGet {
					gets.Add(1)
				}
				if r.Method == http.MethodPost && r.URL.Query().Get("sessionid") == "" {
					http.Error(w, http.StatusText(tc.code), tc.code)
					return true
				}
				return false
			})
			r := start(t, h.URL, true, fastBackoff, OptReconnect(Reconnect{MaxAttempts: 2}))
			if tc.fallback {
				r.states.wait(t, toolkit.StatusReady, 1)
				if gets.Load() == 0 {
					t.Error("ready without the SSE stream")
				}
				out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"sse"}`)
				mustNotErr(t, err)
				read(t, out)
				mustNotErr(t, r.stop(t))
				return
			}
			var err error
			select {
			case err = <-r.done:
				close(r.done)
			case <-time.After(waitLimit):
				t.Fatal("Run did not give up")
			}
			if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), http.StatusText(tc.code)) {
				t.Errorf("Run: %v", err)
			}
			if n := gets.Load(); n != 0 {
				t.Errorf("fell back to SSE (%d GET requests) on %d", n, tc.code)
			}
			if st := r.states.last(); st.Status != toolkit.StatusFailed || !strings.Contains(st.LastError, http.StatusText(tc.code)) {
				t.Errorf("final state %+v, want the status %q in the error", st, http.StatusText(tc.code))
			}
		})
	}
}

// After the SSE fallback worked once, a reconnection tries the SSE
// transport first instead of probing streamable HTTP again.
func TestSSETriedFirstAfterFallback(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	h := testserver.ServeHTTP(t, s.Server, testserver.SSE)
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	// The connector's own requests, failed ones included: a reconnection
	// may try the SSE GET while the server is still down and, finding it
	// refused, probe streamable HTTP just as the server comes back.
	tries := &attemptLog{base: base}
	r := start(t, h.URL, false, fastBackoff, OptHTTPClient(&http.Client{Transport: tries}))
	first := tries.all()
	if len(first) == 0 || first[0].method != http.MethodPost || first[0].query != "" {
		t.Fatalf("first connection did not probe streamable HTTP first: %+v", first)
	}
	old := map[string]bool{}
	for _, rq := range first {
		if rq.query != "" {
			old[rq.query] = true
		}
	}
	tries.reset()
	h.Kill()
	mustNotErr(t, h.Start())
	r.states.wait(t, toolkit.StatusReady, 2)
	// Requests of the old session may still go out after the kill (a
	// cancellation posted as it closes): the reconnection is what goes
	// out for no old session.
	again := slices.DeleteFunc(tries.all(), func(rq attempt) bool { return old[rq.query] })
	if len(again) == 0 || again[0].method != http.MethodGet {
		t.Fatalf("reconnection began with %+v, want the SSE GET", again)
	}
	// Streamable HTTP is probed (one POST per protocol generation) only
	// after the SSE GET just failed.
	probe := func(rq attempt) bool { return rq.method == http.MethodPost && rq.query == "" }
	for i := 0; i < len(again); i++ {
		if !probe(again[i]) {
			continue
		}
		if i == 0 || again[i-1].method != http.MethodGet || !again[i-1].failed {
			t.Errorf("reconnection probed streamable HTTP without trying SSE first: %+v", again)
			break
		}
		for i+1 < len(again) && probe(again[i+1]) {
			i++
		}
	}
	if last := again[len(again)-1]; last.query == "" || last.failed {
		t.Errorf("reconnection did not end in an SSE session: %+v", again)
	}
	out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"again"}`)
	mustNotErr(t, err)
	if read(t, out) != "again" {
		t.Error("echo after reconnecting over SSE failed")
	}
}

// attemptLog is an http.RoundTripper that records every request it
// carries and whether it failed (no response or a status of 400 or more).
type attemptLog struct {
	base http.RoundTripper
	entries[attempt]
}

type attempt struct {
	method, query string
	failed        bool
}

func (l *attemptLog) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(r)
	l.add(attempt{r.Method, r.URL.RawQuery, err != nil || resp.StatusCode >= 400})
	return resp, err
}

// OptLogLevel is the level asked of the server with logging/setLevel ("":
// none is asked), and the server's messages below it never reach the
// caller.
func TestLogLevel(t *testing.T) {
	for _, tc := range []struct {
		opts     []Option
		level    string // asked of the server; "" for none
		protocol string
	}{
		{nil, DefaultLogLevel, StatefulProtocolVersion},
		{[]Option{OptLogLevel("error")}, "error", StatefulProtocolVersion},
		{[]Option{OptLogLevel("")}, "", StatefulProtocolVersion},
		// The stateless protocol has no logging/setLevel: each request
		// carries the level in its _meta.
		{nil, DefaultLogLevel, StatelessProtocolVersion},
		{[]Option{OptLogLevel("error")}, "error", StatelessProtocolVersion},
	} {
		stateless := tc.protocol == StatelessProtocolVersion
		tc.opts = append(tc.opts, OptProtocolVersion(tc.protocol))
		t.Run(fmt.Sprintf("level=%s/stateless=%v", tc.level, stateless), func(t *testing.T) {
			leakCheck(t)
			s := newServer(t, testserver.Options{})
			var mu sync.Mutex
			var asked, carried []string
			s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
				return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
					if p, ok := req.GetParams().(*sdk.SetLoggingLevelParams); ok && method == "logging/setLevel" {
						mu.Lock()
						asked = append(asked, string(p.Level))
						mu.Unlock()
					}
					if method == "tools/call" {
						l, _ := req.GetParams().GetMeta()[sdk.MetaKeyLogLevel].(string)
						mu.Lock()
						carried = append(carried, l)
						mu.Unlock()
					}
					return next(ctx, method, req)
				}
			})
			s.AddTool(mustTool("log2"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				for _, l := range []sdk.LoggingLevel{"warning", "error"} {
					if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: l, Data: "at " + string(l)}); err != nil {
						return nil, err
					}
				}
				select {
				case <-s.Release:
				case <-ctx.Done():
				}
				return &sdk.CallToolResult{Content: []sdk.Content{}}, nil
			})
			m := testserver.NewMemory(s.Server)
			t.Cleanup(m.Close)
			r := start(t, "memory://log", false, append(tc.opts, OptDialer(m.Dial))...)
			mu.Lock()
			got := slices.Clone(asked)
			mu.Unlock()
			want := []string{tc.level}
			if tc.level == "" || stateless {
				want = nil
			}
			if !slices.Equal(got, want) {
				t.Errorf("levels asked = %q, want %q", got, want)
			}
			if tc.level == "" {
				return // the server sends nothing until asked
			}
			sess := newTestSession("caller")
			ctx := toolkit.ContextWithSession(context.Background(), sess)
			done := make(chan error, 1)
			go func() {
				_, err := findTool(t, r.Connector, "log2").Run(ctx, nil)
				done <- err
			}()
			sess.logs.waitFor(t, "ERROR at error")
			if tc.level == DefaultLogLevel {
				sess.logs.waitFor(t, "WARN at warning")
			} else {
				for _, rec := range sess.logs.all() {
					if strings.Contains(rec, "at warning") {
						t.Errorf("a warning reached the caller at level %q: %q", tc.level, rec)
					}
				}
			}
			s.Release <- struct{}{}
			mustNotErr(t, <-done)
			mu.Lock()
			defer mu.Unlock()
			want = []string{""}
			if stateless {
				want = []string{tc.level}
			}
			if !slices.Equal(carried, want) {
				t.Errorf("levels in the call's _meta = %q, want %q", carried, want)
			}
		})
	}
}

// OptSubscribeResources subscribes to every listed resource (again after
// a list change), and OptOnResourceUpdated reports the server's updates,
// with either protocol version.
func TestResourceSubscriptions(t *testing.T) {
	for _, tc := range []struct {
		protocol  string
		subscribe bool
	}{{StatefulProtocolVersion, true}, {StatelessProtocolVersion, true}, {StatefulProtocolVersion, false}} {
		protocol, subscribe := tc.protocol, tc.subscribe
		t.Run(fmt.Sprintf("%s/subscribe=%v", protocol, subscribe), func(t *testing.T) {
			leakCheck(t)
			// The go-sdk records a subscription after its SubscribeHandler
			// returns, and logs "resource subscribed" once it has: a
			// subscription counts from that record on, so that an update
			// sent after it reaches the subscriber.
			subs := make(chan string, 10)
			s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{
				SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
				UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
				Logger:             slog.New(subscribedHandler(subs)),
			}})
			m := testserver.NewMemory(s.Server)
			t.Cleanup(m.Close)
			updates := make(chan string, 10)
			refreshed := make(chan uint32, 10)
			opts := []Option{OptDialer(m.Dial), OptProtocolVersion(protocol),
				OptOnResourceUpdated(func(_ context.Context, uri string) { updates <- uri }),
				withAfterRefresh(func(kinds uint32, _ error) { refreshed <- kinds })}
			if subscribe {
				opts = append(opts, OptSubscribeResources())
			}
			r := start(t, "memory://subs", false, opts...)
			if !subscribe {
				// Nothing subscribed: the server has nobody to tell.
				mustNotErr(t, s.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: testserver.TextURI}))
				out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"sync"}`)
				mustNotErr(t, err)
				read(t, out)
				if len(subs) != 0 || len(updates) != 0 {
					t.Errorf("%d subscriptions, %d updates without OptSubscribeResources", len(subs), len(updates))
				}
				return
			}
			got := []string{recvString(t, subs), recvString(t, subs)}
			slices.Sort(got)
			if want := []string{testserver.BlobURI, testserver.TextURI}; !slices.Equal(got, want) {
				t.Errorf("subscribed to %q, want %q", got, want)
			}
			mustNotErr(t, s.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: testserver.TextURI}))
			if uri := recvString(t, updates); uri != testserver.TextURI {
				t.Errorf("update of %q", uri)
			}
			// A new resource is subscribed to once listed.
			s.AddResource(&sdk.Resource{URI: "test://new", Name: "new"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return nil, nil
			})
			seen := map[string]bool{}
			for !seen["test://new"] {
				seen[recvString(t, subs)] = true
			}
			mustNotErr(t, s.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: "test://new"}))
			if uri := recvString(t, updates); uri != "test://new" {
				t.Errorf("update of %q", uri)
			}
		})
	}
}

// TestInvalidOptions: an option given an invalid value makes New fail with
// an error that wraps toolkit.ErrBadParameter and names the option.
func TestInvalidOptions(t *testing.T) {
	for name, o := range map[string]Option{
		"OptTimeouts: Connect":       OptTimeouts(Timeouts{Connect: -time.Second}),
		"OptTimeouts: Call":          OptTimeouts(Timeouts{Call: -time.Second}),
		"OptReconnect: BackoffMax":   OptReconnect(Reconnect{BackoffMin: time.Second, BackoffMax: time.Millisecond}),
		"OptReconnect: StableAfter":  OptReconnect(Reconnect{StableAfter: -time.Second}),
		"OptReconnect: MaxAttempts":  OptReconnect(Reconnect{MaxAttempts: -1}),
		"OptTimeouts: Terminate":     OptTimeouts(Timeouts{Terminate: -time.Second}),
		"OptLimits: MaxMessageBytes": OptLimits(Limits{MaxMessageBytes: -1}),
	} {
		_, err := New("http://127.0.0.1:1/mcp", "t", "1", o)
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: New = %v, want ErrBadParameter naming the option", name, err)
		}
	}
}

// subscribedHandler is a slog handler that sends the URI of every
// "resource subscribed" record of a go-sdk server to subs.
type subscribedHandler chan<- string

func (h subscribedHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h subscribedHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h subscribedHandler) WithGroup(string) slog.Handler            { return h }
func (h subscribedHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "resource subscribed" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "uri" {
			h <- a.Value.String()
			return false
		}
		return true
	})
	return nil
}
