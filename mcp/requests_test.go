package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestServerRequestsRefused checks that without a caller able to answer,
// the upstream's request fails cleanly and the call reports it.
func TestServerRequestsRefused(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	s.AddTool(mustTool("ask"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		_, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}})
		if err == nil {
			return nil, errors.New("sampling answered by nobody")
		}
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "refused: " + err.Error()}}}, nil
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://x", false, OptDialer(m.Dial), OptForwardServerRequests())
	// The caller is the toolkit's no-op session: it cannot sample.
	_, err := call(t, context.Background(), r.Connector, "ask", `{}`)
	if !errors.Is(err, toolkit.ErrToolFailed) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("call: %v", err)
	}
}
