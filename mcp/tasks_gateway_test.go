package mcp_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/mcpserver"
)

// TestTaskSupportThroughGateway checks what a client of a gateway sees of
// an upstream tool that requires task-augmented execution: the tool is
// listed with a note saying so, and a call fails with a clear error
// without reaching the upstream server. Optional tools are called.
func TestTaskSupportThroughGateway(t *testing.T) {
	up, called := mcp.NewTaskServerForTest(mcp.TaskSupportOfTools)
	m := testserver.NewMemory(up)
	t.Cleanup(m.Close)
	events := make(chan toolkit.ConnectorEvent, 16)
	d, err := mcp.NewDelegate("gateway", "1", mcp.OptDialer(m.Dial), mcp.OptLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	d.Events = func(e toolkit.ConnectorEvent) {
		select {
		case events <- e:
		default:
		}
	}
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(tk, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-runDone; err != nil {
			t.Error(err)
		}
	})
	if err := tk.AddConnectorNS("up", "memory://up"); err != nil {
		t.Fatal(err)
	}
	for e := range events {
		if e.Kind == toolkit.ConnectorEventToolListChanged {
			break
		}
	}
	tk.WaitEvents()

	ct, st := sdk.NewInMemoryTransports()
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "downstream", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); <-serveDone })

	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var must *sdk.Tool
	for _, tl := range res.Tools {
		if strings.HasSuffix(tl.Name, "must") {
			must = tl
		}
	}
	if must == nil {
		t.Fatalf("the task-only tool is not listed: %v", res.Tools)
	}
	if !strings.Contains(must.Description, "requires task-augmented execution") {
		t.Errorf("description %q says nothing of the requirement", must.Description)
	}
	cr, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: must.Name, Arguments: map[string]any{}})
	var msg string
	switch {
	case err != nil:
		msg = err.Error()
	case cr.IsError && len(cr.Content) > 0:
		msg = cr.Content[0].(*sdk.TextContent).Text
	default:
		t.Fatalf("calling the task-only tool succeeded: %+v", cr)
	}
	if !strings.Contains(msg, "requires task-augmented execution") {
		t.Errorf("error %q does not say why", msg)
	}
	if n := called("must"); n != 0 {
		t.Errorf("the upstream server received %d calls of the task-only tool", n)
	}
	var maybe string
	for _, tl := range res.Tools {
		if strings.HasSuffix(tl.Name, "maybe") {
			maybe = tl.Name
		}
	}
	cr, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: maybe, Arguments: map[string]any{}})
	if err != nil || cr.IsError {
		t.Fatalf("calling the optional tool: %v %+v", err, cr)
	}
	if n := called("maybe"); n != 1 {
		t.Errorf("the upstream server received %d calls of the optional tool", n)
	}
	t.Logf("downstream sees %q: %q; call error: %q", must.Name, must.Description, msg)
}
