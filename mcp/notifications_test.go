package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// noteRecord records the progress a session receives, in order.
type noteRecord struct {
	mu    sync.Mutex
	notes []string
}

func (r *noteRecord) add(s string) {
	r.mu.Lock()
	r.notes = append(r.notes, s)
	r.mu.Unlock()
}

func (r *noteRecord) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.notes...)
}

// recordSession is a caller's session that records progress and logs.
type recordSession struct {
	*testSession
	rec *noteRecord
}

func (s *recordSession) Progress(p, total float64, message ...string) error {
	s.rec.add(fmt.Sprintf("progress %v/%v %s", p, total, strings.Join(message, "")))
	return nil
}

func TestNoteScanner(t *testing.T) {
	progress := func(token string, n int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%q,"progress":%d,"total":2,"message":"m%d"}}`, token, n, n)
	}
	logLine := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"l","data":"careful"}}`
	result := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"notifications/progress"}]}}`
	big := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"1","progress":9,"message":"` + strings.Repeat("x", maxNoteLine) + `"}}`
	for _, tc := range []struct {
		name   string
		sse    bool
		stream string
		want   []string
	}{
		{"ndjson", false, progress("1", 1) + "\n" + result + "\n" + progress("1", 2) + "\r\n", []string{"progress 1/2 m1", "progress 2/2 m2"}},
		{"ndjson log", false, logLine + "\n", []string{"log careful"}},
		{"ndjson partial line", false, progress("1", 1), nil},
		{"ndjson other token", false, progress("7", 1) + "\n", nil},
		{"ndjson too long", false, big + "\n" + progress("1", 2) + "\n", []string{"progress 2/2 m2"}},
		{"ndjson garbage", false, "{not json\n\"notifications/progress\"\n[1,2]\n", nil},
		{"sse", true, "event: message\nid: 1\ndata: " + progress("1", 1) + "\n\ndata: " + result + "\n\n", []string{"progress 1/2 m1"}},
		{"sse crlf", true, "data: " + progress("1", 1) + "\r\n\r\n", []string{"progress 1/2 m1"}},
		{"sse multi-line data", true, "data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"careful\"}}\n\n", []string{"log careful"}},
		{"sse unterminated event", true, "data: " + progress("1", 1) + "\n", nil},
		{"sse too long", true, "data: " + big + "\n\ndata: " + progress("1", 2) + "\n\n", []string{"progress 2/2 m2"}},
		{"sse comment", true, ": keep-alive\n\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &noteRecord{}
			sess := &recordSession{testSession: newTestSession("s"), rec: rec}
			c := scannerConnector(t)
			ctx := toolkit.ContextWithSession(context.Background(), sess)
			_, _, done := c.calls.begin(ctx, nil)
			defer done()
			s := &noteScanner{c: c, sse: tc.sse}
			// Byte by byte: message boundaries never depend on chunking.
			for i := range len(tc.stream) {
				s.feed([]byte{tc.stream[i]})
			}
			got := rec.all()
			for _, r := range sess.logs.all() {
				if strings.Contains(r, "careful") {
					got = append(got, "log careful")
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("delivered %q, want %q", got, tc.want)
			}
		})
	}
}

// scannerConnector returns a connector that is never run, to scan with.
func scannerConnector(t testing.TB) *Connector {
	c, err := New("http://127.0.0.1:1/mcp", "test", "1", OptLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func FuzzNoteScanner(f *testing.F) {
	f.Add(true, "data: {\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"1\"}}\n\n")
	f.Add(false, "{\"method\":\"notifications/message\",\"params\":{\"data\":{}}}\n")
	f.Fuzz(func(t *testing.T, sse bool, stream string) {
		sess := &recordSession{testSession: newTestSession("s"), rec: &noteRecord{}}
		c := scannerConnector(t)
		_, _, done := c.calls.begin(toolkit.ContextWithSession(context.Background(), sess), nil)
		defer done()
		s := &noteScanner{c: c, sse: sse}
		s.feed([]byte(stream))
		if len(s.line) > maxNoteLine || len(s.data) > maxNoteLine {
			t.Errorf("scanner keeps %d+%d bytes", len(s.line), len(s.data))
		}
	})
}

// TestNotificationsBeforeResult checks the ordering guarantee: progress and
// log notifications a server sends right before its result reach the
// caller before the call returns, on every transport the connector makes
// itself, many times over.
func TestNotificationsBeforeResult(t *testing.T) {
	s := newServer(t, testserver.Options{})
	urls := map[string]string{
		"stdio":     stdioURL(t, testserver.StdioServe),
		"stateful":  testserver.ServeHTTP(t, s.Server, testserver.Stateful).URL,
		"stateless": testserver.ServeHTTP(t, s.Server, testserver.Stateless).URL,
		"sse":       testserver.ServeHTTP(t, s.Server, testserver.SSE).SSEURL,
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			leakCheck(t)
			r := start(t, url, false)
			for i := range 30 {
				sess := newTestSession(fmt.Sprint("caller-", i))
				ctx := toolkit.ContextWithSession(context.Background(), sess)
				_, err := call(t, ctx, r.Connector, "progress", `{"tag":"p","steps":3}`)
				mustNotErr(t, err)
				if got := sess.progress(); len(got) != 3 || got[2] != "p 3" {
					t.Fatalf("call %d: progress before the result %q, want 3 steps", i, got)
				}
				_, err = call(t, ctx, r.Connector, "log", fmt.Sprintf(`{"text":"note %d"}`, i))
				mustNotErr(t, err)
				if !slicesContain(sess.logs.all(), fmt.Sprintf("note %d", i)) {
					t.Fatalf("call %d: the log sent before the result is missing: %q", i, sess.logs.all())
				}
			}
			mustNotErr(t, r.stop(t))
		})
	}
}

// TestConcurrentLogsReachTheirCallers checks that over streamable HTTP a
// server's log message reaches the caller whose request it belongs to,
// even with other calls in flight.
func TestConcurrentLogsReachTheirCallers(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	r := start(t, h.URL, false)
	const n = 4
	sessions := make([]*testSession, n)
	var wg sync.WaitGroup
	for i := range n {
		sessions[i] = newTestSession(fmt.Sprint("caller-", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := toolkit.ContextWithSession(context.Background(), sessions[i])
			// "meet" holds every call until all n are in flight.
			_, err := call(t, ctx, r.Connector, "progress", fmt.Sprintf(`{"tag":"t%d","steps":0,"meet":"logs","parties":%d}`, i, n))
			if err == nil {
				_, err = call(t, ctx, r.Connector, "log", fmt.Sprintf(`{"text":"from caller %d"}`, i))
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i, sess := range sessions {
		logs := sess.logs.all()
		for j := range n {
			if has := slicesContain(logs, fmt.Sprintf("from caller %d", j)); has != (i == j) {
				t.Errorf("caller %d: log of caller %d present=%v: %q", i, j, has, logs)
			}
		}
	}
}

func slicesContain(recs []string, s string) bool {
	for _, r := range recs {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}
