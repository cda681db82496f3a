package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressReport is one call of a WithProgressFunc function.
type progressReport struct {
	progress, total float64
	message         string
}

// progressRecorder records the reports it receives.
type progressRecorder struct {
	mu      sync.Mutex
	reports []progressReport
}

func (r *progressRecorder) fn(progress, total float64, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, progressReport{progress, total, message})
}

func (r *progressRecorder) got() []progressReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]progressReport(nil), r.reports...)
}

// sessionTool is a builtin tool that reports progress and logs through its
// session, and returns the session's ID.
func sessionTool(name string) *testTool {
	return &testTool{name: name, run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		s := SessionFromContext(ctx)
		if err := s.Progress(1, 2, "half"); err != nil {
			return nil, err
		}
		if err := s.Progress(2, 0); err != nil {
			return nil, err
		}
		if err := s.Progress(3, 0, "a", "b"); !errors.Is(err, ErrBadParameter) {
			return nil, errors.New("two progress messages were accepted")
		}
		s.Logger().Info("from tool " + name)
		return s.ID(), nil
	}}
}

func callID(t *testing.T, ctx context.Context, tk *Toolkit, name string) string {
	t.Helper()
	res, err := tk.Call(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := res.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWithProgressFuncAndLogger checks that progress a builtin tool reports
// reaches the WithProgressFunc function and that its log records reach the
// WithSessionLogger logger, without a session in ctx.
func TestWithProgressFuncAndLogger(t *testing.T) {
	var tkLog, callLog syncBuffer
	tk := mustNew(t, WithLogger(slog.New(slog.NewTextHandler(&tkLog, nil))), WithTool(sessionTool("t")))
	var rec progressRecorder
	ctx := WithProgressFunc(context.Background(), rec.fn)
	ctx = WithSessionLogger(ctx, slog.New(slog.NewTextHandler(&callLog, nil)))

	id := callID(t, ctx, tk, "t")
	want := []progressReport{{1, 2, "half"}, {2, 0, ""}}
	if got := rec.got(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("progress reports %v, want %v", got, want)
	}
	if !callLog.contains("from tool t") || tkLog.contains("from tool") {
		t.Fatalf("the tool's log went to the toolkit's logger (%q), not the call's (%q)", tkLog.buf, callLog.buf)
	}
	// A session with an ID is one that takes progress: an MCP connector
	// asks a remote server for progress only for such a session.
	s := SessionFromContext(ctx)
	if id == "" || s.ID() != id {
		t.Fatalf("the session has ID %q in the call and %q outside, want one non-empty ID", id, s.ID())
	}
	if s.ClientInfo() != nil || s.Capabilities() != nil || s.Meta() != nil {
		t.Fatal("a session without a client reports client data")
	}
	if other := SessionFromContext(WithProgressFunc(context.Background(), rec.fn)).ID(); other == id {
		t.Fatalf("two sessions share the ID %q", id)
	}
}

// TestWithProgressFuncKeepsSession checks that WithProgressFunc and
// WithSessionLogger override only progress and logging of the session in
// ctx, in any order, and that nil gives them back.
func TestWithProgressFuncKeepsSession(t *testing.T) {
	var tkLog, callLog syncBuffer
	tk := mustNew(t, WithLogger(slog.New(slog.NewTextHandler(&tkLog, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		WithTool(sessionTool("t"), &testTool{name: "meta", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
			return SessionFromContext(ctx).Meta()["user"], nil
		}}))
	var rec progressRecorder
	base := WithSession(context.Background(), "s1", MetaValue{"user", "ada"})
	ctx := WithProgressFunc(base, rec.fn)

	// The WithSession session keeps its ID and metadata and, without
	// WithSessionLogger, logs through the toolkit's logger.
	if id := callID(t, ctx, tk, "t"); id != "s1" {
		t.Fatalf("ID = %q, want s1", id)
	}
	if user := callID(t, ctx, tk, "meta"); user != "ada" {
		t.Fatalf("Meta()[user] = %q", user)
	}
	if len(rec.got()) != 2 || !tkLog.contains("from tool t") {
		t.Fatalf("progress %v; toolkit log %q", rec.got(), tkLog.buf)
	}

	// Composed the other way round, with a logger of the call's.
	rec = progressRecorder{}
	ctx = WithProgressFunc(WithSessionLogger(base, slog.New(slog.NewTextHandler(&callLog, nil))), rec.fn)
	if id := callID(t, ctx, tk, "t"); id != "s1" || len(rec.got()) != 2 || !callLog.contains("from tool t") {
		t.Fatalf("ID %q, progress %v, call log %q", id, rec.got(), callLog.buf)
	}

	// nil gives progress back to the WithSession session, which logs it
	// through the toolkit's logger.
	rec = progressRecorder{}
	callID(t, WithProgressFunc(ctx, nil), tk, "t")
	if len(rec.got()) != 0 || !tkLog.contains("level=DEBUG msg=progress session=s1") {
		t.Fatalf("after WithProgressFunc(nil): progress %v, toolkit log %q", rec.got(), tkLog.buf)
	}

	// A session set later replaces the whole session.
	rec = progressRecorder{}
	if id := callID(t, WithSession(ctx, "s2"), tk, "t"); id != "s2" || len(rec.got()) != 0 {
		t.Fatalf("a later WithSession: ID %q, progress %v", id, rec.got())
	}
}

// clientSession is a session of an MCP client, with a method beyond
// Session.
type clientSession struct {
	localSession
	progressed int
}

func (s *clientSession) ClientInfo() *mcp.Implementation { return &mcp.Implementation{Name: "client"} }
func (s *clientSession) Extra() string                   { return "extra" }
func (s *clientSession) Progress(float64, float64, ...string) error {
	s.progressed++
	return nil
}

// TestWithProgressFuncOverClientSession checks that over a session of
// another kind, the client information stays, its other methods are
// reached through Unwrap, and only progress is overridden.
func TestWithProgressFuncOverClientSession(t *testing.T) {
	cs := &clientSession{localSession: localSession{logger: discardLogger()}}
	var rec progressRecorder
	ctx := WithProgressFunc(ContextWithSession(context.Background(), cs), rec.fn)
	tk := mustNew(t, WithTool(sessionTool("t")))
	callID(t, ctx, tk, "t")
	s := SessionFromContext(ctx)
	if s.ClientInfo() == nil || s.ClientInfo().Name != "client" || s.ID() == "" || s.Logger() != cs.logger {
		t.Fatalf("session %+v lost the client session's data", s)
	}
	if u, ok := s.(interface{ Unwrap() Session }); !ok || u.Unwrap() != Session(cs) || u.Unwrap().(*clientSession).Extra() != "extra" {
		t.Fatal("the client session is not reachable through Unwrap")
	}
	if len(rec.got()) != 2 || cs.progressed != 0 {
		t.Fatalf("progress went to fn %v times and to the client session %d times", len(rec.got()), cs.progressed)
	}
}

// TestWithProgressFuncReachesRemoteProgress stands for a remote tool: like
// the MCP connector, its Run asks for progress only when the caller's
// session has an ID or a client, and reports the server's progress from
// another goroutine, after nested calls.
func TestWithProgressFuncReachesRemoteProgress(t *testing.T) {
	remote := &testTool{name: "remote", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		sess := SessionFromContext(ctx)
		if sess.ID() == "" && sess.ClientInfo() == nil {
			return "no progress token", nil
		}
		done := make(chan error)
		go func() { done <- sess.Progress(5, 10, "from the server") }()
		return "token", <-done
	}}
	d := newDelegate()
	d.prepare = func(url string, c *fakeConn) error {
		if url != UserConnectorURI {
			c.tools = []Tool{remote}
		}
		return nil
	}
	tk := mustNew(t, WithDelegate(d), WithTool(&testTool{name: "outer", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		return SessionFromContext(ctx).ID(), nil
	}}))
	if err := tk.AddConnectorNS("srv", "test://srv"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tk.WaitEvents)
	if got := callID(t, context.Background(), tk, "srv.remote"); got != "no progress token" {
		t.Fatalf("without WithProgressFunc: %q", got)
	}
	var rec progressRecorder
	ctx := WithProgressFunc(context.Background(), rec.fn)
	if got := callID(t, ctx, tk, "srv.remote"); got != "token" {
		t.Fatalf("with WithProgressFunc: %q", got)
	}
	if got := rec.got(); len(got) != 1 || got[0] != (progressReport{5, 10, "from the server"}) {
		t.Fatalf("progress reports %v", got)
	}
}
