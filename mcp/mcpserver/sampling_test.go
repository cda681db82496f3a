package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

func TestServerSampling(t *testing.T) {
	leakCheck(t)
	greet := &renderPrompt{testPrompt: testPrompt{name: "greet"},
		render: func(_ context.Context, in json.RawMessage) (*prompt.Rendered, error) {
			var args struct{ Name string }
			_ = json.Unmarshal(in, &args)
			return &prompt.Rendered{Messages: []prompt.Message{{Role: prompt.RoleUser, Content: resource.Must("m", "greet "+args.Name)}}}, nil
		}}
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("ask", func(ctx context.Context, _ json.RawMessage) (any, error) {
			return RunPromptWithSampling(ctx, greet, resource.Must("input", json.RawMessage(`{"name":"Ada"}`)), resource.Must("note", "attached"))
		}),
		funcTool("delegated", func(ctx context.Context, _ json.RawMessage) (any, error) {
			return SamplingDelegate(nil).Call(ctx, greet)
		}),
	)})
	var got *sdk.CreateMessageParams
	opts := &sdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			got = req.Params
			return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "hello Ada"}}, nil
		},
	}
	// A client of the newest protocol is asked in rounds of input-required
	// results (inputrounds.go), one of 2025-11-25 with a request.
	if res, err := f.connect(t, opts).CallTool(context.Background(), &sdk.CallToolParams{Name: "ask"}); err != nil || res.IsError || resultText(t, res) != "hello Ada" {
		t.Errorf("newest protocol: %v %+v", err, res)
	}
	cs := f.connectVersion(t, opts, "2025-11-25")
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask"})
	if err != nil || res.IsError || resultText(t, res) != "hello Ada" {
		t.Fatalf("ask: %v %+v", err, res)
	}
	if len(got.Messages) != 2 || got.Messages[0].Content.(*sdk.TextContent).Text != "greet Ada" ||
		got.Messages[1].Content.(*sdk.TextContent).Text != "attached" || got.MaxTokens != DefaultSamplingMaxTokens {
		t.Errorf("sampling request: %+v", got)
	}
	if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "delegated"}); err != nil || resultText(t, res) != "hello Ada" {
		t.Errorf("delegated: %v %+v", err, res)
	}

	// Outside MCP there is no client to sample from.
	if _, err := RunPromptWithSampling(context.Background(), greet); !errors.Is(err, toolkit.ErrNotImplemented) {
		t.Errorf("outside MCP: %v", err)
	}
	if _, err := SamplingDelegate(nil).Call(context.Background(), greet); !errors.Is(err, toolkit.ErrNotImplemented) {
		t.Errorf("delegate outside MCP: %v", err)
	}
}

func TestServerSamplingWithoutCapability(t *testing.T) {
	leakCheck(t)
	greet := &testPrompt{name: "greet"}
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("ask", func(ctx context.Context, _ json.RawMessage) (any, error) {
			return RunPromptWithSampling(ctx, greet)
		}),
	)})
	cs := f.connect(t, nil)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask"})
	if err != nil || !res.IsError {
		t.Fatalf("want a tool error, got %v %+v", err, res)
	}
}
