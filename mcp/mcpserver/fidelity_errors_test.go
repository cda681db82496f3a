package mcpserver

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestGatewayProtocolErrors checks that a JSON-RPC error an upstream server
// answers with reaches the client through the gateway with its code,
// message and data.
func TestGatewayProtocolErrors(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	refusal := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "name must be lower case", Data: []byte(`{"argument":"name"}`)}
	s.AddPrompt(&sdk.Prompt{Name: "strict", Arguments: []*sdk.PromptArgument{{Name: "name"}}},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) { return nil, refusal })
	s.AddTool(mustTool("strict_tool"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32042, Message: "go to the URL first"}
	})
	s.AddResource(&sdk.Resource{URI: "test://locked", Name: "locked"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return nil, &jsonrpc.Error{Code: -32010, Message: "locked"}
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	gw, ctx := newGateway(t, m, nil, nil)

	check := func(what string, err error, code int64, msg string) {
		t.Helper()
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != code || we.Message != msg {
			t.Errorf("%s: %v, want code %d and message %q", what, err, code, msg)
		}
	}
	_, err := gw.GetPrompt(ctx, &sdk.GetPromptParams{Name: "strict", Arguments: map[string]string{"name": "Ada"}})
	check("prompts/get", err, jsonrpc.CodeInvalidParams, "name must be lower case")
	var we *jsonrpc.Error
	if errors.As(err, &we) && string(we.Data) != `{"argument":"name"}` {
		t.Errorf("prompts/get: data %s", we.Data)
	}
	_, err = gw.CallTool(ctx, &sdk.CallToolParams{Name: "strict_tool"})
	check("tools/call", err, -32042, "go to the URL first")
	_, err = gw.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://locked"})
	check("resources/read", err, -32010, "locked")
}

// TestGatewayLogFidelity checks that an upstream server's log
// notifications reach the client with their level, logger and data
// unchanged.
func TestGatewayLogFidelity(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	data := map[string]any{"disk": "full", "free": []any{0.0, 1.5}, "nested": map[string]any{"ok": false}}
	levels := []sdk.LoggingLevel{"emergency", "alert", "critical", "notice"}
	seen := make(chan struct{})
	s.AddTool(mustTool("alarm"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for _, level := range levels {
			if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: level, Logger: "disk", Data: data}); err != nil {
				return nil, err
			}
		}
		// The result waits until the client has seen the logs: they are
		// passed on while the call runs.
		select {
		case <-seen:
		case <-ctx.Done():
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	logs := make(chan *sdk.LoggingMessageParams, 8)
	gw, ctx := newGateway(t, m, &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) { logs <- req.Params },
	}, nil)
	done := make(chan error, 1)
	go func() {
		params := &sdk.CallToolParams{Name: "alarm", Meta: sdk.Meta{sdk.MetaKeyLogLevel: "debug"}}
		_, err := gw.CallTool(ctx, params)
		done <- err
	}()
	defer func() {
		close(seen)
		mustNotErr(t, <-done)
	}()
	got := map[sdk.LoggingLevel]bool{}
	for range levels {
		select {
		case l := <-logs:
			got[l.Level] = true
			if l.Logger != "disk" || !reflect.DeepEqual(l.Data, data) {
				t.Errorf("log %+v, want logger disk and data %v", l, data)
			}
		case <-time.After(waitLimit):
			t.Fatalf("logs that reached the client: %v, want %v", got, levels)
		}
	}
	for _, level := range levels {
		if !got[level] {
			t.Errorf("no %s log; got %v", level, got)
		}
	}
}
