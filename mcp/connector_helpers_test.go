package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// waitLimit bounds every wait of these tests: reaching it is a failure
// (something hangs), not a timing assertion.
const waitLimit = 20 * time.Second

// states records the states a connector reports.
type states struct {
	mu     sync.Mutex
	all    []toolkit.ConnectorState
	notify chan struct{}
}

func newStates() *states { return &states{notify: make(chan struct{}, 1)} }

func (s *states) record(_ context.Context, st *toolkit.ConnectorState) {
	s.mu.Lock()
	s.all = append(s.all, *st)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// snapshot returns the states reported so far.
func (s *states) snapshot() []toolkit.ConnectorState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.all)
}

// statuses returns the statuses reported so far, space separated.
func (s *states) statuses() string {
	var b []string
	for _, st := range s.snapshot() {
		b = append(b, st.Status.String())
	}
	return strings.Join(b, " ")
}

// count returns how many states with status were reported.
func (s *states) count(status toolkit.ConnectorStatus) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.all {
		if st.Status == status {
			n++
		}
	}
	return n
}

func (s *states) last() toolkit.ConnectorState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.all) == 0 {
		return toolkit.ConnectorState{}
	}
	return s.all[len(s.all)-1]
}

// wait waits until n states with status were reported.
func (s *states) wait(t testing.TB, status toolkit.ConnectorStatus, n int) toolkit.ConnectorState {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		s.mu.Lock()
		seen := 0
		var hit toolkit.ConnectorState
		for _, st := range s.all {
			if st.Status == status {
				seen++
				hit = st
			}
		}
		s.mu.Unlock()
		if seen >= n {
			return hit
		}
		select {
		case <-s.notify:
		case <-deadline:
			t.Fatalf("no %d %v state(s); last state %+v", n, status, s.last())
		}
	}
}

// running is a connector whose Run runs in the background.
type running struct {
	*Connector
	states *states
	cancel context.CancelFunc
	done   chan error
}

// start creates a connector and runs it until the test ends; it waits for
// the first ready state unless noWait.
func start(t testing.TB, url string, noWait bool, opts ...Option) *running {
	t.Helper()
	st := newStates()
	opts = append([]Option{OptLogger(quietLogger())}, opts...)
	opts = append(opts, OptOnStateChange(st.record))
	c, err := New(url, "test-client", "0.1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Connector: c, states: st, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	if !noWait {
		st.wait(t, toolkit.StatusReady, 1)
	}
	return r
}

// stop cancels Run and waits for it; it returns Run's error.
func (r *running) stop(t testing.TB) error {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(waitLimit):
		t.Fatal("Run did not return after cancellation")
		return nil
	}
}

func quietLogger() *slog.Logger {
	if os.Getenv("MCP_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// logCapture is a slog handler that keeps records.
type logCapture struct {
	mu      sync.Mutex
	records []string
	notify  chan struct{}
}

func newLogCapture() *logCapture { return &logCapture{notify: make(chan struct{}, 1)} }

func (h *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCapture) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logCapture) WithGroup(string) slog.Handler            { return h }
func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	h.mu.Lock()
	h.records = append(h.records, b.String())
	h.mu.Unlock()
	select {
	case h.notify <- struct{}{}:
	default:
	}
	return nil
}

func (h *logCapture) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.records...)
}

// waitFor waits for a record containing every part.
func (h *logCapture) waitFor(t testing.TB, parts ...string) string {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		for _, r := range h.all() {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(r, p)
			}
			if ok {
				return r
			}
		}
		select {
		case <-h.notify:
		case <-deadline:
			t.Fatalf("no log record with %q; have %q", parts, h.all())
			return ""
		}
	}
}

// testSession is a toolkit.Session that records progress and logs.
type testSession struct {
	id   string
	logs *logCapture
	mu   sync.Mutex
	msgs []string
	note chan struct{}
}

func newTestSession(id string) *testSession {
	return &testSession{id: id, logs: newLogCapture(), note: make(chan struct{}, 100)}
}

func (s *testSession) ID() string                            { return s.id }
func (s *testSession) ClientInfo() *sdk.Implementation       { return nil }
func (s *testSession) Capabilities() *sdk.ClientCapabilities { return nil }
func (s *testSession) Meta() map[string]any                  { return nil }
func (s *testSession) Logger() *slog.Logger                  { return slog.New(s.logs) }
func (s *testSession) Progress(p, total float64, message ...string) error {
	if err := toolkit.CheckProgressMessage(message); err != nil {
		return err
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, strings.Join(message, ""))
	s.mu.Unlock()
	s.note <- struct{}{}
	return nil
}

func (s *testSession) progress() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.msgs...)
}

// findTool returns the connector's tool called name.
func findTool(t testing.TB, c *Connector, name string) toolkit.Tool {
	t.Helper()
	tools, _ := c.ListTools(context.Background())
	for _, tl := range tools {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// call runs a tool and returns its output as a resource.
func call(t testing.TB, ctx context.Context, c *Connector, name, input string) (toolkit.Resource, error) {
	t.Helper()
	out, err := findTool(t, c, name).Run(ctx, []byte(input))
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, nil
	}
	r, ok := out.(toolkit.Resource)
	if !ok {
		t.Fatalf("tool %q returned %T, want a resource", name, out)
	}
	return r, nil
}

// read returns the content of r.
func read(t testing.TB, r toolkit.Resource) string {
	t.Helper()
	b, err := r.Read(context.Background())
	if err != nil {
		t.Fatalf("reading %s: %v", r.URI(), err)
	}
	return string(b)
}

func mustNotErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var errAny = errors.New("any error")

func slogNew(h slog.Handler) *slog.Logger { return slog.New(h) }

// newServer returns a test server closed when the test ends.
func newServer(t testing.TB, o testserver.Options) *testserver.Server {
	s := testserver.New(o)
	t.Cleanup(s.Close)
	return s
}

// mustTool returns a tool definition with an empty object schema.
func mustTool(name string) *sdk.Tool {
	return &sdk.Tool{Name: name, InputSchema: testserver.ObjectSchema()}
}

// leakCheck fails the test if goroutines started after it outlive the
// test; call it first so that its check runs after every other cleanup.
func leakCheck(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore, runtimeCleanups) })
}

// runtimeCleanups ignores the goroutines the runtime starts, when it has
// many, to run cleanups (runtime.AddCleanup: the unique package's, after
// a listing of many tools): they are not the tests'.
var runtimeCleanups = goleak.IgnoreTopFunction("runtime.runCleanups")

// mustDelegate returns NewDelegate(name, version, opts...), failing the
// test on an error.
func mustDelegate(t testing.TB, name, version string, opts ...Option) *Delegate {
	t.Helper()
	d, err := NewDelegate(name, version, opts...)
	mustNotErr(t, err)
	return d
}
