package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

func TestJSONLines(t *testing.T) {
	long := `{"a":"` + strings.Repeat("x", 100<<10) + `"}`
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`console.log says hi`,
		``,
		`{ a: 1 }`,
		`[{"jsonrpc":"2.0","method":"x"}]`,
		`  {"b":2}  ` + "\r",
		long,
		strings.Repeat("z", 300<<10),
		`{"last":true}`,
	}, "\n")
	logs := newLogCapture()
	f := newJSONLines(strings.NewReader(in), 200<<10, slogNew(logs))
	out, err := io.ReadAll(f)
	mustNotErr(t, err)
	want := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		``,
		`[{"jsonrpc":"2.0","method":"x"}]`,
		`  {"b":2}  ` + "\r",
		long,
		strings.Repeat("z", 300<<10), // over max: passed on for the SDK to refuse
		`{"last":true}`,
	}, "\n")
	if string(out) != want {
		t.Errorf("filtered output differs (%d bytes, want %d)", len(out), len(want))
	}
	if n := len(logs.all()); n != 2 {
		t.Errorf("%d log records, want 2: %q", n, logs.all())
	}
	logs.waitFor(t, "not JSON", "console.log says hi")
	logs.waitFor(t, "not JSON", "{ a: 1 }")
}

// A stdio server that prints lines that are not JSON on its stdout (here
// before every message) keeps its session: the lines are skipped, with a
// rate-limited log.
func TestStdioGarbageOnStdout(t *testing.T) {
	requireUnix(t)
	leakCheck(t)
	exe, err := os.Executable()
	mustNotErr(t, err)
	logs := newLogCapture()
	url := (&StdioCommand{Path: exe, Env: []string{testserver.HostileEnv + "=" + testserver.HostileGarbage}}).String()
	t0 := time.Now()
	r := start(t, url, false, OptLogger(slogNew(logs)), OptReconnect(Reconnect{Wait: -1}))
	for i := range 200 {
		out, err := call(t, context.Background(), r.Connector, "echo", fmt.Sprintf(`{"text":"%d"}`, i))
		mustNotErr(t, err)
		if got := read(t, out); got != fmt.Sprint(i) {
			t.Fatalf("echo %d = %q", i, got)
		}
	}
	if n := r.states.count(toolkit.StatusReady); n != 1 {
		t.Errorf("%d ready states: the session was lost", n)
	}
	elapsed := time.Since(t0)
	mustNotErr(t, r.stop(t)) // the last record says how many were not logged
	skipped := 0
	for _, rec := range logs.all() {
		if strings.Contains(rec, "not JSON") {
			skipped++
			if !strings.Contains(rec, testserver.GarbageLine) {
				t.Errorf("record %q", rec)
			}
		}
	}
	// About 400 lines were skipped; the records are bounded by the rate.
	if limit := logBurst + int(logRate*elapsed.Seconds()) + 1; skipped == 0 || skipped > limit {
		t.Errorf("%d records of skipped lines, want 1 to %d", skipped, limit)
	}
	// Every garbage line is accounted for: one before each message the
	// server sent (the handshake, the listings and 200 answers at least).
	if n := skipped + dropCount(logs.all()); n < 200 {
		t.Errorf("%d garbage lines accounted for", n)
	}
}

// BenchmarkJSONLines measures the stdout filter on 1 MiB messages
// (reported as MB/s).
func BenchmarkJSONLines(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}}` + "\n")
	logger := quietLogger()
	b.SetBytes(int64(len(msg)))
	buf := make([]byte, 32<<10)
	for b.Loop() {
		f := newJSONLines(bytes.NewReader(msg), 16<<20, logger)
		for {
			if _, err := f.Read(buf); err != nil {
				break
			}
		}
	}
}
