package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// A listing's memory is measured against the bytes of the tools/list
// answers that brought it, for listings shaped to cost the most per byte.

// listingShape makes the JSON of tool i of a listing.
type listingShape struct {
	name  string
	tools int // how many the test lists
	tool  func(i int) string
}

var listingShapes = []listingShape{
	// About 215 bytes a tool: a name, a description and a small schema of
	// its own, as a large real server lists them.
	{"plain", 5000, func(i int) string {
		return fmt.Sprintf(`{"name":"tool_%d","description":"Tool number %d of a large server.","inputSchema":{"type":"object","properties":{"a%d":{"type":"integer","description":"first"},"b":{"type":"string"}},"required":["a%d"]}}`, i, i, i, i)
	}},
	// The smallest tools a server can list, 50 bytes: what the connector
	// keeps for every tool, whatever its size, dominates.
	{"tiny", 10000, func(i int) string {
		return fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"}}`, i)
	}},
	// Schemas of many empty subschemas, 7 bytes each on the wire and a
	// jsonschema.Schema of several hundred bytes each once decoded; each
	// tool's schema is its own (one property is named after the tool).
	{"fanout", 1000, func(i int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"name":"f%d","inputSchema":{"type":"object","properties":{"p%d":{}`, i, i)
		for j := range 40 {
			fmt.Fprintf(&b, `,"%c%d":{}`, 'a'+j%26, j/26)
		}
		b.WriteString(`}}}`)
		return b.String()
	}},
}

// listingServer serves total tools of shape, perPage a page, and counts
// the bytes of its tools/list answers.
func listingServer(tb testing.TB, shape listingShape, total, perPage int) (*testserver.Raw, *atomic.Int64) {
	wire := &atomic.Int64{}
	raw := &testserver.Raw{Handle: func(req testserver.RawRequest) [][]byte {
		switch req.Method {
		case "initialize":
			return [][]byte{testserver.Initialize(req, "listing")}
		case "tools/list":
			var p struct {
				Cursor string `json:"cursor"`
			}
			_ = json.Unmarshal(req.Params, &p)
			first, _ := strconv.Atoi(p.Cursor)
			end := min(first+perPage, total)
			var b strings.Builder
			b.WriteString(`{"tools":[`)
			for i := first; i < end; i++ {
				if i > first {
					b.WriteByte(',')
				}
				b.WriteString(shape.tool(i))
			}
			b.WriteString(`]`)
			if end < total {
				fmt.Fprintf(&b, `,"nextCursor":"%d"`, end)
			}
			b.WriteString(`}`)
			line := testserver.RawResult(req, b.String())
			wire.Add(int64(len(line)))
			return [][]byte{line}
		case "prompts/list", "resources/list", "resources/templates/list":
			return [][]byte{testserver.Result(req, map[string]any{})}
		}
		if len(req.ID) > 0 {
			return [][]byte{testserver.MethodNotFound(req)}
		}
		return nil
	}}
	tb.Cleanup(raw.Close)
	return raw, wire
}

// liveHeap returns the bytes of live heap objects after a full
// collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// connectorListing runs a connector on raw until it is ready and returns
// its tools and the growth of the live heap meanwhile.
func connectorListing(tb testing.TB, raw *testserver.Raw, opts ...Option) ([]toolkit.Tool, uint64) {
	tb.Helper()
	before := liveHeap()
	opts = append([]Option{OptDialer(raw.Dial), OptTimeouts(Timeouts{Connect: 10 * time.Minute})}, opts...)
	r := start(tb, "memory://listing", true, opts...)
	for r.states.count(toolkit.StatusReady) == 0 {
		<-r.states.notify
	}
	tools, err := r.ListTools(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return tools, liveHeap() - before
}

// maxListingRatio is how many times the bytes it received a connector's
// listing may hold.
const maxListingRatio = 10

// A connector's listing holds at most maxListingRatio times the bytes of
// the tools/list answers that brought it, whatever their shape (it was 16
// times for plain tools, and a hundred for schemas of empty subschemas,
// while the connector held each tool's schema decoded).
func TestListingMemoryProportionalToWire(t *testing.T) {
	leakCheck(t)
	for _, shape := range listingShapes {
		t.Run(shape.name, func(t *testing.T) {
			raw, wire := listingServer(t, shape, shape.tools, 1000)
			tools, heap := connectorListing(t, raw)
			if len(tools) != shape.tools {
				t.Fatalf("%d tools listed, want %d", len(tools), shape.tools)
			}
			ratio := float64(heap) / float64(wire.Load())
			t.Logf("%d tools: %d bytes received, %d held (%.0f a tool): %.1f times", shape.tools, wire.Load(), heap, float64(heap)/float64(shape.tools), ratio)
			if ratio > maxListingRatio {
				t.Errorf("the listing holds %.1f times the %d bytes received (%d bytes), want at most %d", ratio, wire.Load(), heap, maxListingRatio)
			}
			runtime.KeepAlive(tools)
		})
	}
}

// BenchmarkListingMemory measures the live heap a connector's tool
// listing holds, per tool and per byte received, beside the baseline of a
// raw go-sdk client holding the results of ListTools for the same pages:
//
//	go test -run '^$' -bench ListingMemory -benchtime 1x ./mcp/
func BenchmarkListingMemory(b *testing.B) {
	const total = 20_000
	for _, shape := range listingShapes {
		b.Run("connector/"+shape.name, func(b *testing.B) {
			var heap uint64
			var wire int64
			for b.Loop() {
				b.StopTimer()
				raw, w := listingServer(b, shape, total, 1000)
				b.StartTimer()
				tools, h := connectorListing(b, raw)
				b.StopTimer()
				if len(tools) != total {
					b.Fatalf("%d tools", len(tools))
				}
				heap, wire = h, w.Load()
				runtime.KeepAlive(tools)
				b.StartTimer()
			}
			reportListing(b, heap, wire, total)
		})
		b.Run("sdk/"+shape.name, func(b *testing.B) {
			var heap uint64
			var wire int64
			for b.Loop() {
				b.StopTimer()
				raw, w := listingServer(b, shape, total, 1000)
				before := liveHeap()
				b.StartTimer()
				tools := sdkListing(b, raw)
				b.StopTimer()
				heap, wire = liveHeap()-before, w.Load()
				if len(tools) != total {
					b.Fatalf("%d tools", len(tools))
				}
				runtime.KeepAlive(tools)
				b.StartTimer()
			}
			reportListing(b, heap, wire, total)
		})
	}
}

// sdkListing walks every page of raw's tools/list with a go-sdk client
// and returns the tools, as the SDK decodes them.
func sdkListing(b *testing.B, raw *testserver.Raw) []*sdk.Tool {
	tr, _ := raw.Dial(context.Background())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: StatefulProtocolVersion})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	var tools []*sdk.Tool
	for t, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			b.Fatal(err)
		}
		tools = append(tools, t)
	}
	return tools
}

func reportListing(b *testing.B, heap uint64, wire int64, tools int) {
	b.ReportMetric(float64(heap)/float64(tools), "heap-B/tool")
	b.ReportMetric(float64(wire)/float64(tools), "wire-B/tool")
	b.ReportMetric(float64(heap)/float64(wire), "heap/wire")
}

// BenchmarkListingOnePage measures what one tools/list page of 50,000
// tools (about 11 MB) costs the connector while it decodes it: the bytes
// allocated (runtime.MemStats.TotalAlloc) and the memory the runtime
// obtained from the system (Sys, which never shrinks: the process's
// peak), each per byte received:
//
//	go test -run '^$' -bench ListingOnePage -benchtime 1x ./mcp/
func BenchmarkListingOnePage(b *testing.B) {
	const total = 50_000
	for b.Loop() {
		b.StopTimer()
		raw, wire := listingServer(b, listingShapes[0], total, total)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		tools, _ := connectorListing(b, raw)
		b.StopTimer()
		runtime.ReadMemStats(&after)
		if len(tools) != total {
			b.Fatalf("%d tools", len(tools))
		}
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(wire.Load()), "alloc/wire")
		b.ReportMetric(float64(after.Sys)/float64(wire.Load()), "sys/wire")
		b.ReportMetric(float64(wire.Load()), "wire-B")
		runtime.KeepAlive(tools)
		b.StartTimer()
	}
}

// onePageServer serves the tools of shape as one tools/list page, whose
// answer it makes before the client asks (the connector's memory is
// measured, not the server's), and returns the answer's length.
func onePageServer(tb testing.TB, shape listingShape, total int) (*testserver.Raw, int) {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","result":{"tools":[`)
	for i := range total {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(shape.tool(i))
	}
	b.WriteString(`]},"id":`)
	// The answer with its ID appended in place, without a copy.
	line := make([]byte, 0, b.Len()+32)
	line = append(line, b.String()...)
	raw := &testserver.Raw{Handle: func(req testserver.RawRequest) [][]byte {
		switch req.Method {
		case "initialize":
			return [][]byte{testserver.Initialize(req, "listing")}
		case "tools/list":
			answer := append(line[:len(line):cap(line)], req.ID...)
			return [][]byte{append(answer, '}')}
		case "prompts/list", "resources/list", "resources/templates/list":
			return [][]byte{testserver.Result(req, map[string]any{})}
		}
		if len(req.ID) > 0 {
			return [][]byte{testserver.MethodNotFound(req)}
		}
		return nil
	}}
	tb.Cleanup(raw.Close)
	return raw, len(line) + 8
}

// lineDial dials raw through the connector's own line connection (the one
// of its stdio servers), where raw.Dial gives the go-sdk's IOTransport.
func lineDial(raw *testserver.Raw) func(context.Context) (sdk.Transport, error) {
	return func(ctx context.Context) (sdk.Transport, error) {
		tr, err := raw.Dial(ctx)
		if err != nil {
			return nil, err
		}
		return lineTransport{tr.(*sdk.IOTransport).Reader.(net.Conn)}, nil
	}
}

// lineTransport connects through a lineConn over c.
type lineTransport struct{ c net.Conn }

func (t lineTransport) Connect(context.Context) (sdk.Connection, error) {
	lines := newJSONLines(t.c, DefaultMaxMessageBytes, slog.New(slog.DiscardHandler))
	return newLineConn(lines, nil, DefaultMaxMessageBytes, t.c, t.c), nil
}

// heapPeak samples the bytes of heap objects (live, and dead ones not yet
// freed) until stop is closed, and sends the largest sample.
func heapPeak(stop <-chan struct{}, peak chan<- uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	t := time.NewTicker(200 * time.Microsecond)
	defer t.Stop()
	var most uint64
	for {
		metrics.Read(s)
		most = max(most, s[0].Value.Uint64())
		select {
		case <-stop:
			peak <- most
			return
		case <-t.C:
		}
	}
}

// The heap a connector uses while it lists one page of 50,000 tools
// (about 11 MB) stays under maxListingRatio times the page's bytes, with
// the collector at its default pace. It peaked at about 20 times while
// the go-sdk decoded the page whole and checked each tool with a decoder
// of its own. The peak is sampled (every 200µs): a sample may miss it,
// never overstate it.
func TestListingOnePagePeakHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("lists 50,000 tools")
	}
	leakCheck(t)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const total = 50_000
	raw, wire := onePageServer(t, listingShapes[0], total)
	base := liveHeap()
	stop, peak := make(chan struct{}), make(chan uint64)
	go heapPeak(stop, peak)
	tools, _ := connectorListing(t, raw, OptDialer(lineDial(raw)))
	close(stop)
	most := <-peak
	if len(tools) != total {
		t.Fatalf("%d tools listed, want %d", len(tools), total)
	}
	used := most - min(most, base)
	ratio := float64(used) / float64(wire)
	t.Logf("%d bytes received, heap peaked %d bytes over the %d before: %.1f times", wire, used, base, ratio)
	if ratio > maxListingRatio {
		t.Errorf("the heap peaked at %.1f times the %d bytes received (%d bytes), want at most %d", ratio, wire, used, maxListingRatio)
	}
	runtime.KeepAlive(tools)
}
