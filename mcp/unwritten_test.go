package mcp

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// breakOnCall is the client end of an in-memory connection that breaks
// when the first tools/call is written on it: the write fails and nothing
// of it reaches the server, as when a session is dropped under a call.
type breakOnCall struct {
	net.Conn
	broke *atomic.Bool
}

func (c *breakOnCall) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"tools/call"`)) && c.broke.CompareAndSwap(false, true) {
		c.Conn.Close()
		return 0, io.ErrClosedPipe
	}
	return c.Conn.Write(p)
}

// TestUnwrittenCallGoesOnNextSession: a call that may have side effects is
// never sent twice, but one whose write failed on a broken connection
// never reached the server: it goes on the next session, and the tool runs
// once.
func TestUnwrittenCallGoesOnNextSession(t *testing.T) {
	leakCheck(t)
	var runs atomic.Int32
	s := sdk.NewServer(&sdk.Implementation{Name: "counter", Version: "1"}, nil)
	s.AddTool(mustTool("bump"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		runs.Add(1)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "bumped"}}}, nil
	})
	m := testserver.NewMemory(s)
	t.Cleanup(m.Close)
	var broke atomic.Bool
	dial := func(ctx context.Context) (sdk.Transport, error) {
		tr, err := m.Dial(ctx)
		if err != nil {
			return nil, err
		}
		iot := tr.(*sdk.IOTransport)
		bc := &breakOnCall{Conn: iot.Writer.(net.Conn), broke: &broke}
		return &sdk.IOTransport{Reader: iot.Reader, Writer: bc}, nil
	}
	r := start(t, "memory://counter", false, OptDialer(dial), fastBackoff)
	out, err := call(t, context.Background(), r.Connector, "bump", `{}`)
	if err != nil {
		t.Fatalf("a call whose write failed on a broken connection: %v", err)
	}
	if got := read(t, out); got != "bumped" || !broke.Load() {
		t.Errorf("answer %q, connection broken under the call: %v", got, broke.Load())
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want 1", n)
	}
}
