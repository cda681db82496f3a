package toolkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/resource"
)

// myDelegate is the example delegate of the package's reference
// documentation (section "Delegates"), with its package prefixes adjusted
// (tk., llm. and schema. are all package toolkit here) and its OnEvent
// receiver named, which the reference uses but does not declare. Like the
// reference, it hands every URL to mcp.New, "connector:user" included.
type myDelegate struct {
	toolkit *toolkit.Toolkit
}

func (d myDelegate) OnEvent(evt toolkit.ConnectorEvent) {
	switch evt.Kind {
	case toolkit.ConnectorEventToolListChanged:
		resp, _ := d.toolkit.List(context.Background(), toolkit.ListRequest{Type: toolkit.ListTypeTools})
		log.Printf("tools updated: %d", len(resp.Tools))
	case toolkit.ConnectorEventResourceUpdated:
		log.Printf("resource updated: %s", evt.URI)
	}
}

func (myDelegate) Call(ctx context.Context, p toolkit.Prompt, res ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, toolkit.ErrNotImplemented
}

// CreateConnector fires ConnectorEventStateChange with server info after
// the initial handshake, then forwards list-change notifications.
func (myDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	return mcp.New(url, "my-app", "1.0.0",
		mcp.OptOnStateChange(func(ctx context.Context, state *toolkit.ConnectorState) {
			onEvent(toolkit.StateChangeEvent(*state))
		}),
		mcp.OptOnToolListChanged(func(context.Context) {
			onEvent(toolkit.ToolListChangeEvent())
		}),
		mcp.OptOnPromptListChanged(func(context.Context) {
			onEvent(toolkit.PromptListChangeEvent())
		}),
		mcp.OptOnResourceListChanged(func(context.Context) {
			onEvent(toolkit.ResourceListChangeEvent())
		}),
	)
}

type echoIn struct {
	Text string `json:"text"`
}

// The reference's delegate works as written: New succeeds without a user
// namespace, and a remote server added with AddConnector is ready, looked
// up and called once WaitConnectors returns.
func TestReferenceDelegate(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "weather-server", Version: "0.1.0"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "echo", Description: "Echoes its input."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/weather/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	hs := httptest.NewServer(mux)
	defer hs.Close()

	d := &myDelegate{}
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	if err != nil {
		t.Fatalf("New with the reference delegate: %v", err)
	}
	d.toolkit = tk
	st := tk.Connectors()
	if len(st) != 1 || st[0].Namespace != toolkit.UserNamespace || st[0].Status != toolkit.StatusFailed || !strings.Contains(st[0].LastError, "want an http, https or stdio URL") {
		t.Fatalf("Connectors() = %+v", st)
	}

	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-runDone; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	if err := tk.AddConnector(hs.URL + "/weather/mcp"); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	states, err := tk.WaitConnectors(wctx, "weather")
	if err != nil || states[0].Status != toolkit.StatusReady || states[0].Name != "weather-server" {
		t.Fatalf("WaitConnectors = %+v, %v", states, err)
	}

	v, err := tk.Lookup(ctx, "weather.echo")
	if err != nil {
		t.Fatal(err)
	}
	tool, ok := v.(toolkit.Tool)
	if !ok {
		t.Fatalf("Lookup returned %T", v)
	}
	out, err := tk.Call(ctx, tool, resource.Must("input", json.RawMessage(`{"text":"hi"}`)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := out.Read(ctx)
	if err != nil || !strings.Contains(string(data), "echo: hi") {
		t.Fatalf("result %q, %v", data, err)
	}

	// All connectors: the remote is ready, the user connector failed.
	states, err = tk.WaitConnectors(wctx)
	if err != nil || len(states) != 2 || states[0].Status != toolkit.StatusReady || states[1].Status != toolkit.StatusFailed {
		t.Fatalf("WaitConnectors() = %+v, %v", states, err)
	}
	if _, err := tk.WaitConnectors(wctx, "nowhere"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Fatalf("unknown namespace: %v", err)
	}
}
