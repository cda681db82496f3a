package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// benchSessions is how many idle sessions BenchmarkIdleSession opens.
const benchSessions = 1000

// openIdleSessions opens n sessions on url as abandoned clients do:
// initialize, initialized, then nothing. Connections are not kept, so
// the heap holds only the sessions.
func openIdleSessions(b *testing.B, url string, n int) {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	post := func(id, body string) string {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		res, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			b.Fatalf("status %d", res.StatusCode)
		}
		return res.Header.Get("Mcp-Session-Id")
	}
	for range n {
		id := post("", initializeBody)
		post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
}

// memInUse returns the live heap and goroutine stacks after a collection,
// and the number of goroutines.
func memInUse() (heap, stack uint64, goroutines int) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse, runtime.NumGoroutine()
}

// BenchmarkIdleSession measures what one idle stateful HTTP session costs
// the server: live heap, goroutine stacks and goroutines, beside a plain go-sdk server
// and handler with no tools. Run it with -benchtime 1x: in a later
// iteration, what the one before left may be freed during the count.
func BenchmarkIdleSession(b *testing.B) {
	run := func(b *testing.B, handler func(b *testing.B) (http.Handler, func())) {
		var heap, stack uint64
		var goroutines int
		for b.Loop() {
			b.StopTimer()
			h, stop := handler(b)
			ts := httptest.NewServer(h)
			before, beforeStack, beforeG := memInUse()
			b.StartTimer()
			openIdleSessions(b, ts.URL, benchSessions)
			b.StopTimer()
			after, afterStack, afterG := memInUse()
			heap, stack, goroutines = after-before, afterStack-beforeStack, afterG-beforeG
			ts.Close()
			stop()
			b.StartTimer()
		}
		b.ReportMetric(float64(heap)/benchSessions, "heap-B/session")
		b.ReportMetric(float64(stack)/benchSessions, "stack-B/session")
		b.ReportMetric(float64(goroutines)/benchSessions, "goroutines/session")
	}
	b.Run("mcpserver", func(b *testing.B) {
		run(b, func(b *testing.B) (http.Handler, func()) {
			tk, err := toolkit.New()
			if err != nil {
				b.Fatal(err)
			}
			srv, err := New(tk, nil, WithHTTP(WithMaxSessions(benchSessions)))
			if err != nil {
				b.Fatal(err)
			}
			h, err := srv.Handler()
			if err != nil {
				b.Fatal(err)
			}
			return h, func() {
				srv.Close()
				for ss := range srv.SDK().Sessions() {
					ss.Wait()
				}
			}
		})
	})
	b.Run("sdk", func(b *testing.B) {
		run(b, func(b *testing.B) (http.Handler, func()) {
			s := sdk.NewServer(&sdk.Implementation{Name: "plain", Version: "1"}, nil)
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil), func() {
				for ss := range s.Sessions() {
					ss.Close()
					ss.Wait()
				}
			}
		})
	})
}

// BenchmarkConnectionLifetime measures, with the default ceilings, how long
// the server keeps a keep-alive connection idle after one request
// (idle-s, DefaultIdleTimeout) and a POST that declares 4 MB and sends 10
// bytes (slow-body-s, DefaultReadTimeout). It takes minutes: run it with
// -benchtime 1x.
func BenchmarkConnectionLifetime(b *testing.B) {
	tk, err := toolkit.New()
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(tk, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()

	// lifetime sends head on a new connection, then reads until the
	// server closes it, and returns how long that took from the last
	// byte sent.
	lifetime := func(head string, answered bool) time.Duration {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, head)
		start := time.Now()
		br := bufio.NewReader(conn)
		if answered {
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			start = time.Now()
		}
		io.Copy(io.Discard, br)
		return time.Since(start)
	}
	var idle, slow time.Duration
	for b.Loop() {
		var wg sync.WaitGroup
		wg.Go(func() { idle = lifetime("GET /elsewhere HTTP/1.1\r\nHost: "+addr+"\r\n\r\n", true) })
		wg.Go(func() {
			slow = lifetime(fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{\"jsonrpc\"", addr, 4<<20), false)
		})
		wg.Wait()
	}
	b.ReportMetric(idle.Seconds(), "idle-s")
	b.ReportMetric(slow.Seconds(), "slow-body-s")
}
