package mcp

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// heapInUse returns the heap in use after a collection.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestStdioLargeMessageNotKept: once a large result has been read, a stdio
// session no longer holds a buffer of its size (the go-sdk's IOTransport
// kept its decoder's buffer at about twice the largest message: 32 MiB
// held after a 15 MiB result).
func TestStdioLargeMessageNotKept(t *testing.T) {
	leakCheck(t)
	r := start(t, stdioURL(t, testserver.StdioServe), false, OptLimits(Limits{MaxMessageBytes: 32 << 20}))
	const size = 6 << 20
	text := strings.Repeat("x", size)
	before := heapInUse()
	out, err := call(t, context.Background(), r.Connector, "echo", fmt.Sprintf(`{"text":%q}`, text))
	mustNotErr(t, err)
	if got := read(t, out); len(got) != size {
		t.Fatalf("echo returned %d bytes, want %d", len(got), size)
	}
	out, text = nil, ""
	after := heapInUse()
	if grown := int64(after) - int64(before); grown > size/2 {
		t.Errorf("the session holds %d MiB more after a %d MiB message, want well under its size", grown>>20, size>>20)
	}
	mustNotErr(t, r.stop(t))
}
