package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// OptLimits(Limits{MaxConcurrency: 2}): of four blocking calls, two run and two wait for a
// slot; a waiting caller that gives up returns its context's error and its
// call never reaches the server; a finished call lets a waiting one start.
func TestMaxConcurrency(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	queued := make(chan struct{}, 10)
	r := start(t, "memory://limit", false, OptDialer(m.Dial), OptLimits(Limits{MaxConcurrency: 2}),
		func(o *options) error { o.hooks.queued = func() { queued <- struct{}{} }; return nil })

	type caller struct {
		cancel context.CancelFunc
		done   chan error
	}
	callers := map[string]caller{}
	run := func(tag string) {
		ctx, cancel := context.WithCancel(context.Background())
		c := caller{cancel: cancel, done: make(chan error, 1)}
		callers[tag] = c
		go func() {
			_, err := call(t, ctx, r.Connector, "block", fmt.Sprintf(`{"tag":%q}`, tag))
			c.done <- err
		}()
	}
	recv := func(ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(waitLimit):
			t.Fatal("no caller waited for a slot")
		}
	}
	run("c1")
	run("c2")
	got := map[string]bool{recvString(t, s.Started): true, recvString(t, s.Started): true}
	if !got["c1"] || !got["c2"] {
		t.Fatalf("started %v, want c1 and c2", got)
	}
	run("c3")
	run("c4")
	recv(queued)
	recv(queued)
	// Both wait for a slot: neither can have reached the server.
	select {
	case tag := <-s.Started:
		t.Fatalf("%s started beyond the limit", tag)
	default:
	}

	// A waiting caller gives up: it gets its context's error at once.
	callers["c4"].cancel()
	if err := <-callers["c4"].done; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), `tool "block"`) {
		t.Errorf("cancelled waiting call: %v, want context.Canceled naming the tool", err)
	}
	// A running call ends: the other waiting caller takes its slot.
	callers["c1"].cancel()
	if err := <-callers["c1"].done; !errors.Is(err, context.Canceled) {
		t.Errorf("c1: %v", err)
	}
	if tag := recvString(t, s.Cancelled); tag != "c1" {
		t.Errorf("cancelled %q, want c1", tag)
	}
	if tag := recvString(t, s.Started); tag != "c3" {
		t.Errorf("started %q after c1 ended, want c3", tag)
	}
	for _, tag := range []string{"c2", "c3"} {
		callers[tag].cancel()
		<-callers[tag].done
		if got := recvString(t, s.Cancelled); got != "c2" && got != "c3" {
			t.Errorf("cancelled %q", got)
		}
	}
	// c4 never reached the server, and the slots are free again.
	out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"free"}`)
	mustNotErr(t, err)
	if read(t, out) != "free" {
		t.Error("echo after the calls failed")
	}
	select {
	case tag := <-s.Started:
		t.Errorf("%s started", tag)
	default:
	}
}

// Limits.MaxResultBytes: a tool result, a resource read or a rendered prompt
// larger than the limit fails with toolkit.ErrToolFailed naming the limit;
// one of the limit's size passes.
func TestMaxResultBytes(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	big := strings.Repeat("y", 200)
	s.AddResource(&sdk.Resource{URI: "test://big", Name: "big"}, func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://big", Text: big}}}, nil
	})
	s.AddPrompt(&sdk.Prompt{Name: "big_prompt"}, func(ctx context.Context, _ *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: big}}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "big_structured", InputSchema: testserver.ObjectSchema()}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "{}"}}, StructuredContent: map[string]any{"v": big}}, nil
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://big", false, OptDialer(m.Dial), OptLimits(Limits{MaxResultBytes: 100}))
	ctx := context.Background()

	tooBig := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, toolkit.ErrToolFailed) || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), "limit of 100 bytes") {
			t.Errorf("%s: %v, want ErrToolFailed naming it and the limit", what, err)
		}
	}
	out, err := call(t, ctx, r.Connector, "big", `{"size":100}`)
	mustNotErr(t, err)
	if len(read(t, out)) != 100 {
		t.Error("a result of the limit's size was not handed on whole")
	}
	_, err = call(t, ctx, r.Connector, "big", `{"size":101}`)
	tooBig(`tool "big"`, err)
	_, err = call(t, ctx, r.Connector, "big", `{"size":1000000}`)
	tooBig(`tool "big"`, err)
	_, err = call(t, ctx, r.Connector, "big_structured", `{}`)
	tooBig(`tool "big_structured"`, err)

	for _, x := range mustList(r.ListResources(ctx)) {
		if x.URI() == "test://big" {
			_, err := x.Read(ctx)
			tooBig(`resource "test://big"`, err)
		}
	}
	for _, p := range mustList(r.ListPrompts(ctx)) {
		if p.Name() == "big_prompt" {
			_, err := p.(*remotePrompt).Render(ctx, nil)
			tooBig(`prompt "big_prompt"`, err)
		}
	}
	// The session is not thought broken.
	if n := r.states.count(toolkit.StatusReady); n != 1 {
		t.Errorf("%d ready states, want 1", n)
	}
}

func TestLimitOptionsInvalid(t *testing.T) {
	for name, o := range map[string]Option{
		"OptLimits: MaxConcurrency": OptLimits(Limits{MaxConcurrency: -1}),
		"OptLimits: MaxResultBytes": OptLimits(Limits{MaxResultBytes: -1}),
	} {
		_, err := New("http://127.0.0.1:1/mcp", "t", "1", o)
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: New = %v, want ErrBadParameter naming the option", name, err)
		}
	}
}

func ExampleOptLimits() {
	c, err := New("https://tools.example.com/mcp", "app", "1.0",
		OptLimits(Limits{MaxConcurrency: 4}),       // at most 4 requests in flight; others wait
		OptLimits(Limits{MaxResultBytes: 1 << 20}), // refuse results over 1 MiB
	)
	fmt.Println(c != nil, err)
	// Output: true <nil>
}
