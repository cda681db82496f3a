package mcp

import (
	"context"
	"fmt"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/benchpair"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// benchToolkit returns a running toolkit whose "remote" namespace is the
// server reached with opts and url.
func benchToolkit(b testing.TB, url string, opts ...Option) *toolkit.Toolkit {
	b.Helper()
	events := &eventLog{notify: make(chan struct{}, 1)}
	d, err := NewDelegate("bench", "1", append([]Option{OptLogger(quietLogger())}, opts...)...)
	mustNotErr(b, err)
	d.Events = events.add
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(b, err)
	mustNotErr(b, tk.AddConnectorNS("remote", url))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	events.wait(b, toolkit.ConnectorEventToolListChanged, "remote")
	return tk
}

// benchCalls compares, on the same server, a toolkit Call of the remote
// echo tool, a direct Run of the connector's tool, and a raw SDK CallTool:
// each alone, and all three in turn in one loop (paired), which reports
// each one's median and its ratio to the raw SDK's, the figure that holds
// on a loaded machine; and a toolkit Call paired with a Run of the same
// tool (layer), the toolkit's own share.
func benchCalls(b *testing.B, url string, opts []Option, rawTransport func() sdk.Transport) {
	b.Run("toolkit", func(b *testing.B) { benchLoop(b, toolkitEcho(b, url, opts)) })
	b.Run("connector", func(b *testing.B) { benchLoop(b, connectorEcho(b, url, opts)) })
	b.Run("sdk", func(b *testing.B) { benchLoop(b, sdkEcho(b, rawTransport())) })
	b.Run("paired", func(b *testing.B) {
		benchpair.Run(b,
			benchpair.Variant{Name: "sdk", Run: sdkEcho(b, rawTransport())},
			benchpair.Variant{Name: "toolkit", Run: toolkitEcho(b, url, opts)},
			benchpair.Variant{Name: "connector", Run: connectorEcho(b, url, opts)})
	})
	// The toolkit's own cost: a toolkit Call and a Run of the same tool
	// of the same connector, over the same connection (two connections
	// to one server may differ by a few percent for the whole run).
	b.Run("layer", func(b *testing.B) {
		tk, echo := toolkitTool(b, url, opts)
		in := jsonInput(`{"text":"x"}`)
		benchpair.Run(b,
			benchpair.Variant{Name: "connector", Run: func() error {
				_, err := echo.Run(context.Background(), []byte(`{"text":"x"}`))
				return err
			}},
			benchpair.Variant{Name: "toolkit", Run: func() error {
				_, err := tk.Call(context.Background(), echo, in)
				return err
			}})
	})
}

// benchLoop times f.
func benchLoop(b *testing.B, f func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
}

// toolkitEcho returns a toolkit Call of the echo tool of the server at url.
func toolkitEcho(b *testing.B, url string, opts []Option) func() error {
	ctx := context.Background()
	tk, echo := toolkitTool(b, url, opts)
	in := jsonInput(`{"text":"x"}`)
	return func() error {
		_, err := tk.Call(ctx, echo, in)
		return err
	}
}

// toolkitTool returns a running toolkit (see benchToolkit) and its
// remote echo tool.
func toolkitTool(b *testing.B, url string, opts []Option) (*toolkit.Toolkit, toolkit.Tool) {
	tk := benchToolkit(b, url, opts...)
	echo, err := tk.Lookup(context.Background(), "remote.echo")
	mustNotErr(b, err)
	return tk, echo.(toolkit.Tool)
}

// connectorEcho returns a direct Run of the connector's echo tool.
func connectorEcho(b testing.TB, url string, opts []Option) func() error {
	r := start(b, url, false, opts...)
	echo := findTool(b, r.Connector, "echo")
	return func() error {
		_, err := echo.Run(context.Background(), []byte(`{"text":"x"}`))
		return err
	}
}

// sdkEcho returns a raw SDK CallTool of echo over t.
func sdkEcho(b testing.TB, t sdk.Transport) func() error {
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "raw", Version: "1"}, nil)
	cs, err := c.Connect(ctx, t, &sdk.ClientSessionOptions{ProtocolVersion: DefaultProtocolVersion})
	mustNotErr(b, err)
	b.Cleanup(func() { cs.Close() })
	params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}
	return func() error {
		_, err := cs.CallTool(ctx, params)
		return err
	}
}

func BenchmarkCallMemory(b *testing.B) {
	s := newServer(b, testserver.Options{})
	m := testserver.NewMemory(s.Server)
	b.Cleanup(m.Close)
	benchCalls(b, "memory://bench", []Option{OptDialer(m.Dial)}, func() sdk.Transport {
		t, err := m.Dial(context.Background())
		mustNotErr(b, err)
		return t
	})
}

func BenchmarkCallHTTP(b *testing.B) {
	s := newServer(b, testserver.Options{})
	h := testserver.ServeHTTP(b, s.Server, testserver.Stateful)
	benchCalls(b, h.URL, nil, func() sdk.Transport {
		return &sdk.StreamableClientTransport{Endpoint: h.URL}
	})
}

// BenchmarkReconnect measures the time from a server restart to the
// connector being ready again (reported as ms/reconnect).
func BenchmarkReconnect(b *testing.B) {
	for _, mode := range []testserver.Mode{testserver.Stateful, testserver.Stateless} {
		b.Run(mode.String(), func(b *testing.B) {
			s := newServer(b, testserver.Options{})
			h := testserver.ServeHTTP(b, s.Server, mode)
			r := start(b, h.URL, false, OptReconnect(Reconnect{StableAfter: time.Millisecond}), OptReconnect(Reconnect{BackoffMin: time.Millisecond, BackoffMax: 50 * time.Millisecond}))
			ctx := context.Background()
			var total time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				h.Kill()
				mustNotErr(b, h.Start())
				if mode == testserver.Stateless {
					// Nothing tells a stateless client the server went
					// away: the first request finds out, and echo, being
					// read-only, is sent again.
					_, err := call(b, ctx, r.Connector, "echo", `{"text":"x"}`)
					mustNotErr(b, err)
				} else {
					r.states.wait(b, toolkit.StatusReady, i+2)
				}
				total += time.Since(t0)
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/reconnect")
		})
	}
}

// BenchmarkReconnectAfterOutage measures, with the default backoff, the
// time from a server coming back after an outage long enough for the
// backoff to have grown (three failed attempts, about two seconds) to a
// call on it succeeding (reported as ms/call-after-outage). The goal is
// under one second: a waiting call brings the next attempt forward.
func BenchmarkReconnectAfterOutage(b *testing.B) {
	failures := make(chan struct{}, 64)
	// Each outage starts from a stable connection, as in production, so
	// the backoff does not carry over from the previous iteration.
	r, _, m := memoryConnector(b, testserver.Options{},
		OptReconnect(Reconnect{StableAfter: time.Nanosecond}),
		OptReconnect(Reconnect{Wait: waitLimit}),
		withBeforeBackoff(func(int, time.Duration) { failures <- struct{}{} }))
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		m.Kill()
		for range 3 {
			<-failures
		}
		m.Start()
		b.StartTimer()
		t0 := time.Now()
		_, err := call(b, ctx, r.Connector, "echo", `{"text":"x"}`)
		mustNotErr(b, err)
		total += time.Since(t0)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/call-after-outage")
}

// BenchmarkReadyAfterCrash measures, with the default backoff, the time
// from a server that was up for less than Reconnect.StableAfter crashing and
// being back at once (its sessions dropped, new connections accepted) to
// the connector being ready again, with no call waiting for it (reported
// as ms/ready). The first attempt after a loss is immediate, so this is a
// few milliseconds rather than a backoff. (Only one loss a second is
// retried at once; the limit is lifted here so that crashes may follow
// each other.)
func BenchmarkReadyAfterCrash(b *testing.B) {
	r, _, m := memoryConnector(b, testserver.Options{},
		func(o *options) error { o.hooks.kickFloor = time.Nanosecond; return nil })
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		m.Drop()
		r.states.wait(b, toolkit.StatusReady, i+2)
		total += time.Since(t0)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/ready")
}

// BenchmarkStopWithCallsInFlight measures stopping a connector to a
// stateful HTTP server while three calls hang there (reported as
// ms/stop), and counts the sessions the server still has afterwards
// (left-sessions, summed over the iterations).
func BenchmarkStopWithCallsInFlight(b *testing.B) {
	s := newServer(b, testserver.Options{})
	h := testserver.ServeHTTP(b, s.Server, testserver.Stateful)
	var total time.Duration
	left := 0
	for b.Loop() {
		b.StopTimer()
		r := start(b, h.URL, false)
		block := findTool(b, r.Connector, "block")
		for i := range 3 {
			go block.Run(context.Background(), fmt.Appendf(nil, `{"tag":"%d"}`, i))
		}
		for range 3 {
			recvString(b, s.Started)
		}
		b.StartTimer()
		t0 := time.Now()
		r.stop(b)
		total += time.Since(t0)
		b.StopTimer()
		for range s.Server.Sessions() {
			left++
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/stop")
	b.ReportMetric(float64(left), "left-sessions")
}
