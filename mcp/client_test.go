package mcp

import (
	"context"
	"errors"
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

func TestProgressRouting(t *testing.T) {
	r, srv, _ := memoryConnector(t, testserver.Options{})
	sessions := []*testSession{newTestSession("a"), newTestSession("b")}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := toolkit.ContextWithSession(context.Background(), s)
			_, errs[i] = call(t, ctx, r.Connector, "progress", `{"tag":"`+s.id+`","steps":3,"meet":"m","parties":2,"hold":true}`)
		}()
	}
	// Both calls are in flight until released: the progress they report
	// is handled meanwhile.
	for _, s := range sessions {
		for len(s.progress()) < 3 {
			select {
			case <-s.note:
			case <-time.After(waitLimit):
				t.Fatalf("session %s got progress %q", s.id, s.progress())
			}
		}
	}
	srv.Release <- struct{}{}
	srv.Release <- struct{}{}
	wg.Wait()
	for i, s := range sessions {
		mustNotErr(t, errs[i])
		want := []string{s.id + " 1", s.id + " 2", s.id + " 3"}
		if got := s.progress(); !slices.Equal(got, want) {
			t.Errorf("session %s progress = %q, want %q", s.id, got, want)
		}
	}
}

func TestCancellationReachesServer(t *testing.T) {
	// A stateless go-sdk server runs each request in a session of its own,
	// which the cancellation notification (a request of its own) cannot
	// reach: stateless transports are left out.
	for _, tc := range transportCases() {
		if tc.name == "stateless" {
			continue
		}
		t.Run(tc.name+"/"+tc.protocol, func(t *testing.T) {
			s := newServer(t, testserver.Options{})
			url, opts := tc.setup(t, s)
			r := start(t, url, false, append(opts, OptProtocolVersion(tc.protocol))...)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := call(t, ctx, r.Connector, "block", `{"tag":"c1"}`)
				done <- err
			}()
			if tag := recvString(t, s.Started); tag != "c1" {
				t.Fatalf("started %q", tag)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v", err)
			}
			if tag := recvString(t, s.Cancelled); tag != "c1" {
				t.Errorf("cancelled %q", tag)
			}
			// The connector still works.
			out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"after"}`)
			mustNotErr(t, err)
			if read(t, out) != "after" {
				t.Error("echo after cancellation failed")
			}
		})
	}
}

func recvString(t testing.TB, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(waitLimit):
		t.Fatal("nothing received")
		return ""
	}
}

func TestLogRouting(t *testing.T) {
	connLog := newLogCapture()
	s := newServer(t, testserver.Options{})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://x", false, OptDialer(m.Dial), OptLogger(slogNew(connLog)))

	sess := newTestSession("caller")
	ctx := toolkit.ContextWithSession(context.Background(), sess)
	done := make(chan error, 1)
	go func() {
		_, err := call(t, ctx, r.Connector, "log", `{"text":"from the tool","hold":true}`)
		done <- err
	}()
	rec := sess.logs.waitFor(t, "from the tool")
	s.Release <- struct{}{}
	mustNotErr(t, <-done)
	if !strings.HasPrefix(rec, "WARN") || !strings.Contains(rec, "server=testserver") {
		t.Errorf("caller's log record = %q", rec)
	}
	for _, rec := range connLog.all() {
		if strings.Contains(rec, "from the tool") {
			t.Errorf("connector logger got %q", rec)
		}
	}
	// Outside a call, server messages go to the connector's logger.
	r.handleLog(context.Background(), &sdk.LoggingMessageRequest{Params: &sdk.LoggingMessageParams{Level: "error", Data: map[string]any{"k": 1}}})
	connLog.waitFor(t, "ERROR", `{"k":1}`, "server=testserver")
}

func TestListChanged(t *testing.T) {
	var toolEvents, promptEvents, resourceEvents atomic.Int32
	watch, waitRefresh := refreshes(t)
	r, s, _ := memoryConnector(t, testserver.Options{},
		OptOnToolListChanged(func(context.Context) { toolEvents.Add(1) }),
		OptOnPromptListChanged(func(context.Context) { promptEvents.Add(1) }),
		OptOnResourceListChanged(func(context.Context) { resourceEvents.Add(1) }),
		watch,
	)
	noop := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil }
	ctx := context.Background()
	before, _ := r.ListTools(ctx)
	echoBefore := findTool(t, r.Connector, "echo")

	// A real change.
	s.AddTool(&sdk.Tool{Name: "added", Description: "v1", InputSchema: testserver.ObjectSchema()}, noop)
	waitRefresh(sigTools)
	if toolEvents.Load() != 1 {
		t.Fatalf("%d tool events after adding a tool", toolEvents.Load())
	}
	after, _ := r.ListTools(ctx)
	if len(after) != len(before)+1 {
		t.Errorf("%d tools, want %d", len(after), len(before)+1)
	}
	if findTool(t, r.Connector, "echo") != echoBefore {
		t.Error("an unchanged tool was replaced")
	}

	// The same tool again: the server notifies, nothing changed.
	s.AddTool(&sdk.Tool{Name: "added", Description: "v1", InputSchema: testserver.ObjectSchema()}, noop)
	waitRefresh(sigTools)
	if toolEvents.Load() != 1 {
		t.Errorf("a no-op change fired a tool event")
	}

	// A changed description and a changed schema are changes.
	s.AddTool(&sdk.Tool{Name: "added", Description: "v2", InputSchema: testserver.ObjectSchema()}, noop)
	waitRefresh(sigTools)
	s.AddTool(&sdk.Tool{Name: "added", Description: "v2", InputSchema: testserver.ObjectSchema("x")}, noop)
	waitRefresh(sigTools)
	if toolEvents.Load() != 3 {
		t.Errorf("%d tool events, want 3", toolEvents.Load())
	}
	if in, _ := findTool(t, r.Connector, "added").InputSchema(); in.Properties["x"] == nil {
		t.Error("the new schema was not taken")
	}

	s.RemoveTools("added")
	waitRefresh(sigTools)
	if toolEvents.Load() != 4 || len(mustList(r.ListTools(ctx))) != len(before) {
		t.Errorf("after removal: %d events", toolEvents.Load())
	}

	s.AddPrompt(&sdk.Prompt{Name: "p2"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) { return nil, nil })
	waitRefresh(sigPrompts)
	s.AddResource(&sdk.Resource{URI: "test://new", Name: "new"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) { return nil, nil })
	waitRefresh(sigResources)
	if promptEvents.Load() != 1 || resourceEvents.Load() != 1 {
		t.Errorf("prompt, resource events = %d, %d", promptEvents.Load(), resourceEvents.Load())
	}
	if len(mustList(r.ListPrompts(ctx))) != 2 || len(mustList(r.ListResources(ctx))) != 3 {
		t.Error("new prompt or resource not listed")
	}
}

func mustList[T any](items []T, err error) []T {
	if err != nil {
		panic(err)
	}
	return items
}

func withAfterRefresh(f func(kinds uint32, err error)) Option {
	return func(o *options) error { o.hooks.afterRefresh = f; return nil }
}

// refreshes returns an option that records the connector's list refreshes
// (failing the test on a refresh error) and a function that waits for a
// refresh of one of the kinds (sigTools, sigPrompts, sigResources).
func refreshes(t *testing.T) (Option, func(kinds uint32)) {
	refreshed := make(chan uint32, 10)
	watch := withAfterRefresh(func(kinds uint32, err error) {
		if err != nil {
			t.Errorf("refresh: %v", err)
		}
		refreshed <- kinds
	})
	wait := func(kinds uint32) {
		t.Helper()
		for {
			select {
			case k := <-refreshed:
				if k&kinds != 0 {
					return
				}
			case <-time.After(waitLimit):
				t.Fatal("no refresh")
			}
		}
	}
	return watch, wait
}

func withBeforeBackoff(f func(attempt int, d time.Duration)) Option {
	return func(o *options) error { o.hooks.beforeBackoff = f; return nil }
}

// A direct Run with input that is not valid JSON fails with
// ErrBadParameter without sending anything: the connector does not scan
// the input itself (the toolkit's Call validated it), the request fails
// to encode.
func TestRunInvalidJSONNotSent(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	r := start(t, h.URL, false)
	echo := findTool(t, r.Connector, "echo")
	// The standalone event stream of the session may be opened at any
	// time: count the POSTs only.
	var posts atomic.Int64
	h.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
		if req.Method == http.MethodPost {
			posts.Add(1)
		}
		return false
	})
	for _, in := range []string{`{"text":bad}`, `{bad`, `{"text":"x"`, `{"a":1}}`} {
		_, err := echo.Run(context.Background(), []byte(in))
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), `"echo"`) {
			t.Errorf("Run(%q): %v, want ErrBadParameter naming the tool", in, err)
		}
	}
	if n := posts.Load(); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
	if r.State().Status != toolkit.StatusReady {
		t.Errorf("state %v", r.State().Status)
	}
	mustNotErr(t, r.stop(t))
}

// progressRecorder is a caller's session that records the progress values
// it is given.
type progressRecorder struct {
	*testSession
	mu     sync.Mutex
	values []float64
}

func (s *progressRecorder) Progress(p, _ float64, _ ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values = append(s.values, p)
	return nil
}

// TestProgressFloodBounded checks that a server flooding a call with
// progress, some of it going backwards, reaches the caller as a strictly
// increasing series of at most progressBurst values while the clock
// stands still.
func TestProgressFloodBounded(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	s.AddTool(mustTool("flood"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for i := 1; i <= 3*progressBurst; i++ {
			v := float64(i)
			if i%10 == 0 {
				v = float64(i - 5) // going backwards
			}
			if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: v}); err != nil {
				return nil, err
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	now := time.Now()
	r := start(t, h.URL, false, func(o *options) error { o.hooks.now = func() time.Time { return now }; return nil })
	rec := &progressRecorder{testSession: newTestSession("caller")}
	_, err := call(t, toolkit.ContextWithSession(context.Background(), rec), r.Connector, "flood", `{}`)
	mustNotErr(t, err)
	// The connector reads the notifications before the result on its own
	// transports: all were handled when the call returned.
	rec.mu.Lock()
	got := slices.Clone(rec.values)
	rec.mu.Unlock()
	if len(got) != progressBurst || got[0] != 1 {
		t.Errorf("%d progress values passed on, starting with %v; want %d from 1", len(got), got[:min(len(got), 1)], progressBurst)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("progress went from %v to %v", got[i-1], got[i])
		}
	}
	mustNotErr(t, r.stop(t))
}
