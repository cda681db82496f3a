package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestServerRequestsRefused checks that without a caller able to answer,
// the upstream's request fails cleanly, with a JSON-RPC error code the
// server can act on (method not found: this caller cannot sample), and the
// call reports it.
func TestServerRequestsRefused(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	s.AddTool(mustTool("ask"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		_, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}})
		if err == nil {
			return nil, errors.New("sampling answered by nobody")
		}
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			return nil, fmt.Errorf("refusal without a JSON-RPC error: %v", err)
		}
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("refused with code %d: %v", werr.Code, err)}}}, nil
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://x", false, OptDialer(m.Dial), OptForwardServerRequests())
	// The caller is the toolkit's no-op session: it cannot sample.
	_, err := call(t, context.Background(), r.Connector, "ask", `{}`)
	if !errors.Is(err, toolkit.ErrToolFailed) || !strings.Contains(err.Error(), fmt.Sprintf("refused with code %d", jsonrpc.CodeMethodNotFound)) {
		t.Errorf("call: %v", err)
	}
}
