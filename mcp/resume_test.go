package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// TestStreamResumedMidCall checks that a server closing a request's event
// stream before it answers (SEP-1699) costs nothing: the connector resumes
// the stream, receives the answer and keeps its session.
func TestStreamResumedMidCall(t *testing.T) {
	leakCheck(t)
	resumed := make(chan struct{}, 1)
	s := sdk.NewServer(&sdk.Implementation{Name: "resuming", Version: "1"}, nil)
	s.AddTool(mustTool("closes_stream"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if req.Extra == nil || req.Extra.CloseSSEStream == nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no stream to close"}}}, nil
		}
		req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: time.Millisecond})
		// Answer once the client has come back for the rest of the stream:
		// only the resumed stream can deliver the answer.
		select {
		case <-resumed:
		case <-time.After(waitLimit):
			return nil, errors.New("the client never resumed the stream")
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "after the break"}}}, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{
		EventStore: sdk.NewMemoryEventStore(nil),
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			select {
			case resumed <- struct{}{}:
			default:
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	r := start(t, srv.URL, false)
	for i := range 2 {
		out, err := call(t, context.Background(), r.Connector, "closes_stream", `{}`)
		mustNotErr(t, err)
		if got := read(t, out); got != "after the break" {
			t.Fatalf("call %d: %q", i, got)
		}
	}
	if n := r.states.count(toolkit.StatusReady); n != 1 || r.link.dials.Load() != 1 {
		t.Errorf("the session was replaced: %d ready states, %d dials", n, r.link.dials.Load())
	}
}
