package mcp

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

func TestLogLimiter(t *testing.T) {
	now := time.Unix(0, 0)
	l := newLogLimiter()
	l.now = func() time.Time { return now }
	for i := range logBurst {
		if ok, d := l.take(); !ok || d != 0 {
			t.Fatalf("line %d of the burst: %v, %d", i, ok, d)
		}
	}
	for range 7 {
		if ok, _ := l.take(); ok {
			t.Fatal("a line over the burst was allowed")
		}
	}
	now = now.Add(time.Second / logRate)
	if ok, d := l.take(); !ok || d != 7 {
		t.Errorf("after a refill: %v, dropped %d, want true, 7", ok, d)
	}
	if ok, _ := l.take(); ok {
		t.Error("two lines allowed for one refill")
	}
	if n := l.flush(); n != 1 {
		t.Errorf("flush = %d, want 1", n)
	}
	if n := l.flush(); n != 0 {
		t.Errorf("second flush = %d", n)
	}
	// The bucket never holds more than the burst.
	now = now.Add(time.Hour)
	n := 0
	for {
		if ok, _ := l.take(); !ok {
			break
		}
		n++
	}
	if n != logBurst {
		t.Errorf("%d lines after an hour, want %d", n, logBurst)
	}
}

func TestTruncateLine(t *testing.T) {
	if s := truncateLine("short"); s != "short" {
		t.Error(s)
	}
	long := strings.Repeat("é", maxLogLine) // two bytes a rune
	s := truncateLine(long)
	if len(s) > maxLogLine+len("…") || !strings.HasSuffix(s, "…") || !strings.HasPrefix(long, strings.TrimSuffix(s, "…")) {
		t.Errorf("truncated to %d bytes", len(s))
	}
}

// bucketBound is the most lines sources limiters of logBurst and logRate
// let through in elapsed: what a token bucket guarantees whatever the
// machine's speed (a slow run lets more through, never a wrong count).
func bucketBound(elapsed time.Duration, sources int) int {
	return sources * (logBurst + int(logRate*elapsed.Seconds()) + 1)
}

// dropCount sums the "dropped=N" counts of records.
func dropCount(records []string) int {
	n := 0
	for _, r := range records {
		if _, after, ok := strings.Cut(r, " dropped="); ok {
			v, _ := strconv.Atoi(strings.Fields(after)[0])
			n += v
		}
	}
	return n
}

// A stdio server flooding its stderr costs a bounded number of log
// records, each bounded, and the records account for every line: those
// logged plus those reported dropped.
func TestStderrFloodBounded(t *testing.T) {
	requireUnix(t)
	leakCheck(t)
	logs := newLogCapture()
	exe, err := os.Executable()
	mustNotErr(t, err)
	url := (&StdioCommand{Path: exe, Env: []string{testserver.HostileEnv + "=" + testserver.HostileStderrFlood}}).String()
	began := time.Now()
	r := start(t, url, false, OptLogger(slogNew(logs)))
	mustNotErr(t, r.stop(t)) // the stderr reader has returned
	most := bucketBound(time.Since(began), 1)
	var lines []string
	for _, rec := range logs.all() {
		if strings.Contains(rec, "stderr") {
			lines = append(lines, rec)
		}
	}
	logged := 0
	for _, rec := range lines {
		if strings.Contains(rec, " line=") {
			logged++
		}
		if len(rec) > maxLogLine+200 {
			t.Errorf("a record of %d bytes", len(rec))
		}
	}
	const total = testserver.StderrFloodLines + 2
	t.Logf("%d stderr lines: %d logged, %d reported dropped", total, logged, dropCount(lines))
	if logged+dropCount(lines) != total {
		t.Errorf("%d lines logged and %d reported dropped, want %d in all", logged, dropCount(lines), total)
	}
	if logged > most {
		t.Errorf("%d of %d stderr lines logged, more than the limit lets through (%d): not rate-limited", logged, total, most)
	}
}

// A server flooding log notifications costs a bounded number of log
// records, each cut to maxLogLine, and the records account for every
// message.
func TestLogNotificationFloodBounded(t *testing.T) {
	leakCheck(t)
	const n, size = 1000, 6 << 10
	s := newServer(t, testserver.Options{})
	s.AddTool(mustTool("flood"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		data := strings.Repeat("x", size)
		for range n {
			if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Data: data}); err != nil {
				return nil, err
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	connLogs := newLogCapture()
	began := time.Now()
	r := start(t, h.URL, false, OptLogger(slogNew(connLogs)))
	sess := newTestSession("caller")
	ctx := toolkit.ContextWithSession(context.Background(), sess)
	out, err := call(t, ctx, r.Connector, "flood", `{}`)
	mustNotErr(t, err)
	read(t, out)
	mustNotErr(t, r.stop(t))                  // reports what was dropped
	most := bucketBound(time.Since(began), 2) // the session's records and the connector's
	var records []string
	for _, rec := range append(sess.logs.all(), connLogs.all()...) {
		if strings.Contains(rec, "xxxx") || strings.Contains(rec, "log messages not logged") {
			records = append(records, rec)
		}
	}
	logged := 0
	for _, rec := range records {
		if strings.Contains(rec, "xxxx") {
			logged++
			if len(rec) > maxLogLine+200 {
				t.Errorf("a record of %d bytes", len(rec))
			}
		}
	}
	t.Logf("%d log messages of %d bytes: %d logged, %d reported dropped", n, size, logged, dropCount(records))
	if logged+dropCount(records) != n {
		t.Errorf("%d messages logged and %d reported dropped, want %d in all", logged, dropCount(records), n)
	}
	if logged > most {
		t.Errorf("%d of %d messages logged, more than the limit lets through (%d): not rate-limited", logged, n, most)
	}
}
