package mcp

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeClient is a bridge.Client that offers nothing.
type fakeClient struct{ done chan struct{} }

func (f *fakeClient) CreateMessage(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	return nil, errAny
}
func (f *fakeClient) Elicit(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return nil, errAny
}
func (f *fakeClient) ListRoots(context.Context, *sdk.ListRootsParams) (*sdk.ListRootsResult, error) {
	return nil, errAny
}
func (f *fakeClient) Capabilities() *sdk.ClientCapabilities { return nil }
func (f *fakeClient) Done() <-chan struct{}                 { return f.done }
func (f *fakeClient) OnRootsChanged(func()) func()          { return func() {} }

// TestPerClientRefusalsLogOnce: a flood of client sessions that get no
// upstream session (here: the connector does not run) makes one log line,
// not one each.
func TestPerClientRefusalsLogOnce(t *testing.T) {
	logs := newLogCapture()
	c, err := New("http://127.0.0.1:1/mcp", "c", "1", OptPerClient(ClientSessionLimits{Max: 1}), OptLogger(slogNew(logs)))
	mustNotErr(t, err)
	for range 100 {
		c.ClientStarted(context.Background(), &fakeClient{done: make(chan struct{})})
	}
	n := 0
	for _, r := range logs.all() {
		if strings.Contains(r, "no upstream session for a client") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d log lines for 100 refused clients, want 1: %q", n, logs.all())
	}
}
